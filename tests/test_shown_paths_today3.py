"""Source paths in the certifier's "encoded from PATH ... finds PATH" and in a reference run's
--kernels write refusal (reference/host._contract_line) were written absolute; they now follow
errors.shown_path as every other message does: relative to the working folder when under it
(probe s32 today3; left by fix-paths)."""
from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

from bobc.certify import kernel_contracts
from bobc.reference.host import _contract_line
from bobc.targets import target_named

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "examples/linear_regression/LinReg/kernels"


def test_encoded_from_and_found_sources_are_shown_relative_under_the_working_folder(tmp_path, monkeypatch):
    kernels = tmp_path / "LinReg" / "kernels"
    shutil.copytree(KERNELS, kernels)
    plan = SimpleNamespace(program=SimpleNamespace(regions=[SimpleNamespace(identity="linreg-sgd")], launches=[]))
    encoded = {"linreg-sgd": kernels.resolve() / "linreg-predict.sass"}
    monkeypatch.chdir(tmp_path)
    _, found = kernel_contracts(plan, target_named("sm_90"), [kernels.resolve()], encoded_from=encoded)
    assert [f.message.split(" for the identity")[0] for f in found] == [
        "region linreg-sgd's machine code was encoded from LinReg/kernels/linreg-predict.sass, but the kernel "
        "search finds LinReg/kernels/linreg-sgd.sass"]
    monkeypatch.chdir(ROOT)                   # outside the working folder: absolute
    _, found = kernel_contracts(plan, target_named("sm_90"), [kernels.resolve()], encoded_from=encoded)
    assert f"encoded from {kernels.resolve() / 'linreg-predict.sass'}, " in found[0].message


def test_a_contract_line_is_shown_relative_under_the_working_folder(tmp_path, monkeypatch):
    source = tmp_path.resolve() / "kernels" / "k.sass"
    lines = {0: SimpleNamespace(line=7), 1: SimpleNamespace(line=0)}
    contract = SimpleNamespace(source=source, argument=lines.get)
    monkeypatch.chdir(tmp_path)
    assert [_contract_line(contract, a) for a in (0, 1, 2)] == ["kernels/k.sass:7", "kernels/k.sass",
                                                                "kernels/k.sass"]
    monkeypatch.chdir(ROOT)
    assert _contract_line(contract, 0) == f"{source}:7"
