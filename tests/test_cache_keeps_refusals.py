"""A cache never changes a verdict (probe s33 soundness finding 5): a plan the certifier refuses
cold is refused, with the same message, when its stored plan is recalled (`bobc build` without
loading the program, `bobc check` without type checking it again).  The recalled plan is
certified with every kernel fact a fresh certification is given (bobc.stored.KERNEL_FACTS): here the
source each region's code was assembled from."""
from __future__ import annotations

import shutil
from pathlib import Path

from bobc.cli import main

REPO = Path(__file__).resolve().parents[1]


def _plan_with_another_kernels_code(tmp_path: Path) -> Path:
    """LinReg whose region named linreg-predict holds linreg-sgd's code (well typed)."""
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    plan = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    text = plan.read_text()
    old = 'b"LinReg/kernels/linreg-predict.sass" b"linreg-predict"'
    assert text.count(old) == 1
    plan.write_text(text.replace(old, 'b"LinReg/kernels/linreg-sgd.sass" b"linreg-sgd"'))
    return plan


def _refusal(capsys, argv) -> str:
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 1, err
    return err


def test_a_refused_plan_is_refused_again_when_its_stored_plan_is_recalled(cache_dir, tmp_path, capsys, loads):
    plan = _plan_with_another_kernels_code(tmp_path)
    build = ["build", str(plan), "--target", "sm_86", "-o", str(tmp_path / "host")]
    cold = _refusal(capsys, build)
    assert "region linreg-predict's machine code was encoded from" in cold
    assert "linreg-sgd.sass" in cold and "linreg-predict.sass" in cold
    assert len(loads) == 1
    # the refused run stored the program and its plan (they type check): the second build recalls
    # them without loading the program, and is refused as the first was
    assert (cache_dir / "plans").is_dir() and list((cache_dir / "plans").iterdir())
    warm = _refusal(capsys, build)
    assert len(loads) == 1, "the second build should recall the stored plan, not load the program"
    assert warm == cold
    assert not (tmp_path / "host").exists()
    # a check loads the program but skips its type check and extraction (both stored)
    check = _refusal(capsys, ["check", str(plan), "--target", "sm_86"])
    assert "region linreg-predict's machine code was encoded from" in check
    assert cold.split(": error: ", 1)[1] == check.split(": error: ", 1)[1]


def test_a_stored_plan_without_its_kernel_facts_is_extracted_again(cache_dir, tmp_path, capsys, monkeypatch):
    """A stored plan whose entry lacks what its certification needs (an older layout) is a
    miss: the plan is extracted again, never certified without them."""
    from bobc import stored
    import bobc.plan.extract as extract_module

    plan = _plan_with_another_kernels_code(tmp_path)
    real_keep = stored.keep_plan
    monkeypatch.setattr(stored, "keep_plan",
                        lambda program, entry, found, facts: real_keep(program, entry, found, facts["needs"]))
    calls = []
    real = extract_module.extract_plan
    monkeypatch.setattr(extract_module, "extract_plan", lambda *a, **k: calls.append(1) or real(*a, **k))
    build = ["build", str(plan), "--target", "sm_86", "-o", str(tmp_path / "host")]
    first = _refusal(capsys, build)
    assert _refusal(capsys, build) == first
    assert len(calls) == 2
