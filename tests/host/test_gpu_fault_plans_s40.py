"""The CPU half of tests/gpu/test_gpu_fault_s40.py (its plans and why they fault: that file's
docstring): `bobc build` accepts each faulting plan -- the certifier holds launches to their
`//@ param` contracts, not to the code, so it cannot see an address the kernel computes or a trap
-- and `bobc sim` refuses it, exit 7, naming the kernel's line and the instruction.  Here, not
under tests/gpu/, whose tests all count as GPU tests (tests/conftest.py)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "gpu_fault_s40", Path(__file__).resolve().parents[1] / "gpu" / "test_gpu_fault_s40.py")
fault = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fault)
FAULTS, TARGET, bobc, outputs, plan_tree, record = (fault.FAULTS, fault.TARGET, fault.bobc, fault.outputs,
                                                    fault.plan_tree, fault.record)


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_build_accepts_the_fault_and_sim_refuses_it(tmp_path, name):
    """The certifier cannot see the computed address or the trap (it checks contracts, not code), so
    `bobc build` accepts the plan; the simulator runs the code and refuses it, exit 7, at the line."""
    plan = plan_tree(tmp_path, name)
    built = bobc("build", plan, "--target", TARGET, "-o", tmp_path / "host", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    simulated = bobc("sim", plan, "predict", "--target", TARGET, "--input", record(tmp_path), *outputs(tmp_path),
                     cwd=tmp_path)
    assert simulated.returncode == 7, simulated.stderr
    assert "linreg-predict.sass:" in simulated.stderr and "launch 1 (linreg-predict)" in simulated.stderr
    if name == "far-store":
        assert "STG.E" in simulated.stderr and "lies outside every arena resident" in simulated.stderr
    else:
        assert "BPT.TRAP" in simulated.stderr
    assert not (tmp_path / "pred.bin").exists()
