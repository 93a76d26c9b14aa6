"""A plan names a kernel's base source, never a variant (probe s31 kernel finding 6).

With only `x.sm_90.sass` beside the `x.sass` a plan names, an sm_86 build suggested "did you
mean x.sm_90.sass?", following it was refused ("is the variant for sm_90") at the plan's host
definition, and naming x.sm_90.sass built for sm_90 though docs/kernel-contracts.md says a source
of that shape is refused.  Now the three agree: a source named as a variant is refused for every
target, an absent base beside another target's variant is refused naming that variant, both at
the source's name in the plan, and a did-you-mean offers a base."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bobc.kernel_search import SourceError, find_named
from bobc.targets import SM86, SM90

REPO = Path(__file__).resolve().parents[1]
LINREG = REPO / "examples" / "linear_regression" / "LinReg"
NAMED = 'b"LinReg/kernels/linreg-predict.sass"'


def kernel(path: Path, name: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f".kernel {name}\n.registers 8\n    S2R R0, SR_TID.X\n    EXIT\n")
    return path


@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
def test_a_source_named_as_a_variant_is_refused_for_every_target(tmp_path, target):
    kernel(tmp_path / "k" / "x.sm_90.sass", "x")
    with pytest.raises(SourceError) as error:
        find_named("k/x.sm_90.sass", [tmp_path], target)
    assert error.value.message == ("kernel source k/x.sm_90.sass is kernel x's variant for sm_90: a plan names "
                                   "the base source, never a variant")
    assert error.value.hint.startswith("name k/x.sass: a build for sm_90 finds x.sm_90.sass beside it")


def test_a_base_absent_beside_another_targets_variant_is_refused_naming_it(tmp_path):
    variant = kernel(tmp_path / "k" / "x.sm_90.sass", "x")
    assert find_named("k/x.sass", [tmp_path], SM90) == variant
    with pytest.raises(SourceError) as error:
        find_named("k/x.sass", [tmp_path], SM86)
    assert error.value.message == (f"kernel source k/x.sass is absent for sm_86: only its variant for sm_90 is "
                                   f"there ({variant}), and a target never gets another target's variant")
    assert "write the base x.sass beside it" in error.value.hint and "or build for sm_90" in error.value.hint
    assert find_named("k/y.sass", [tmp_path], SM86) is None                # nothing of that name at all
    kernel(tmp_path / "k" / "xy.sm_90.sass", "xy")                          # another kernel's variant
    kernel(tmp_path / "k" / "x.sass", "x")
    assert find_named("k/x.sass", [tmp_path], SM86) == tmp_path / "k" / "x.sass"


@pytest.fixture
def linreg(tmp_path):
    shutil.copytree(LINREG, tmp_path / "LinReg")
    kernels = tmp_path / "LinReg" / "kernels"
    (kernels / "linreg-predict.sass").rename(kernels / "linreg-predict.sm_90.sass")
    return tmp_path / "LinReg" / "Build" / "NativeHost.bob"


def build(plan: Path, target: str, capsys):
    from bobc.cli import main

    status = main(["build", str(plan), "--target", target, "-o", str(plan.parent / "host")])
    return status, capsys.readouterr().err


def test_the_refusals_are_at_the_source_named_and_agree(linreg, capsys, monkeypatch):
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    line = next(n for n, text in enumerate(linreg.read_text().splitlines(), 1) if NAMED in text)
    column = linreg.read_text().splitlines()[line - 1].index(NAMED) + 1
    status, err = build(linreg, "sm_86", capsys)
    assert status == 1 and f"NativeHost.bob:{line}:{column}: error: kernel source " \
                           f"LinReg/kernels/linreg-predict.sass is absent for sm_86: only its variant for sm_90" in err
    assert "did you mean" not in err
    assert build(linreg, "sm_90", capsys)[0] == 0                           # the variant, for its own target
    linreg.write_text(linreg.read_text().replace(NAMED, 'b"LinReg/kernels/linreg-predict.sm_90.sass"'))
    for target in ("sm_86", "sm_90"):
        status, err = build(linreg, target, capsys)
        assert status == 1 and f"NativeHost.bob:{line}:{column}: error: kernel source " \
                               f"LinReg/kernels/linreg-predict.sm_90.sass is kernel linreg-predict's variant for " \
                               f"sm_90: a plan names the base source, never a variant" in err, err


def test_a_did_you_mean_offers_the_base(linreg, capsys, monkeypatch):
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    linreg.write_text(linreg.read_text().replace(NAMED, 'b"LinReg/kernels/linreg-predikt.sass"'))
    status, err = build(linreg, "sm_90", capsys)
    assert status == 1 and "hint: did you mean LinReg/kernels/linreg-predict.sass?" in err, err


def test_the_hint_offers_only_targets_bobc_builds_for(tmp_path):
    # probe s32 targets finding 1: a variant for sm_89 alone was answered "or build for sm_89",
    # a target `--target` refuses
    variant = kernel(tmp_path / "k" / "x.sm_89.sass", "x")
    with pytest.raises(SourceError) as error:
        find_named("k/x.sass", [tmp_path], SM86)
    assert error.value.message == (f"kernel source k/x.sass is absent for sm_86: only its variant for sm_89 is "
                                   f"there ({variant}), and a target never gets another target's variant")
    assert error.value.hint == ("write the base x.sass beside it (the kernel for every target without a variant "
                                "of its own); sm_89 is not a target bobc builds for (it builds for sm_86, sm_90)")
    kernel(tmp_path / "k" / "x.sm_90.sass", "x")                             # one known, one not
    with pytest.raises(SourceError) as error:
        find_named("k/x.sass", [tmp_path], SM86)
    assert error.value.hint.endswith("variant of its own), or build for sm_90; sm_89 is not a target bobc "
                                     "builds for (it builds for sm_86, sm_90)")
    assert "build for sm_89" not in error.value.hint
