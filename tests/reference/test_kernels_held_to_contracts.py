"""`bobc run --reference` holds each NumPy kernel to its launch's kernel contract, as `bobc sim`
holds the SASS (probe s28 newmodel2 finding 3): LinReg's SGD kernel writing 16,000 bytes where
its contract allows 24 (LogReg's) ran to exit 0 with corrupted results, and one writing outside every
buffer was refused naming no kernel, launch or file:line."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bobc.errors import BobcError, shown_path
from bobc.reference.host import ReferenceHost

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "linear_regression"
PLAN = EXAMPLE / "LinReg" / "Build" / "NativeHost.bob"
SGD = EXAMPLE / "LinReg" / "kernels" / "linreg-sgd.sass"
if str(EXAMPLE) not in sys.path:
    sys.path.insert(0, str(EXAMPLE))

import make_record  # noqa: E402
import numpy_model  # noqa: E402


@pytest.fixture(scope="module")
def plan():
    from bobc.commands.run import load_plan
    return load_plan(PLAN)


@pytest.fixture(scope="module")
def kernels():
    from bobc.commands.run import load_kernels
    return load_kernels(EXAMPLE / "reference_kernels.py")


def record():
    return make_record.record_bytes(*make_record.make(3))


def contract_line(text: str) -> int:
    return next(i for i, line in enumerate(SGD.read_text().splitlines(), 1) if line.startswith(text))


def test_linregs_kernels_keep_to_their_contracts(plan, kernels):
    host = ReferenceHost(plan, kernels)
    assert all(extents is not None and extents.spans for extents in host.write_extents)
    assert host.run("train", record(), None).publications[-1][0] == 20


def test_a_kernel_writing_past_its_contracts_extent_is_refused_naming_it(plan, kernels):
    def wide(memory, launch):
        memory.array(launch.word(0), "<f4", 4000)[:] = 1

    first_sgd = next(i for i, launch in enumerate(plan.program.launches)
                     if plan.program.regions[launch.region].identity == "linreg-sgd")
    W = next(p.value for p in plan.program.launches[first_sgd].patches)
    with pytest.raises(BobcError) as caught:
        ReferenceHost(plan, {**kernels, "linreg-sgd": wide}).run("train", record(), None)
    message = caught.value.message
    assert caught.value.exit_code == 1
    assert message.startswith(f"the reference kernel linreg-sgd ({__file__}:{wide.__code__.co_firstlineno}) wrote "
                              f"bytes its contract does not say it writes at launch {first_sgd}: "), message
    assert f"its contract lets it write [{W:#x}, {W + 4 * (numpy_model.D + 1):#x}) (argument 0, the parameters W; " \
           f"{shown_path(SGD)}:{contract_line('//@ param 0 ')})" in message, message
    assert "bobc sim holds the kernel's SASS to the same contract" in caught.value.hint


def test_a_kernel_writing_outside_every_buffer_is_named_with_its_launch_and_line(plan, kernels):
    def stray(memory, launch):
        memory.array(launch.word(0) + 0x100000, "<f4", 4)[:] = 1

    with pytest.raises(BobcError) as caught:
        ReferenceHost(plan, {**kernels, "linreg-sgd": stray}).run("train", record(), None)
    line = stray.__code__.co_firstlineno + 1
    assert caught.value.message.startswith("the reference kernel linreg-sgd failed at launch ")
    assert f" ({__file__}:{line}): 16 bytes at " in caught.value.message
    assert caught.value.message.endswith(" lie in no buffer the plan maps")


def test_bobc_run_refuses_the_wide_kernel_and_publishes_nothing(tmp_path):
    (tmp_path / "record.bin").write_bytes(record())
    (tmp_path / "k.py").write_text(
        f"import sys; sys.path.insert(0, {str(EXAMPLE)!r})\n"
        "from reference_kernels import KERNELS as K\n"
        "def wide(memory, launch):\n"
        "    memory.array(launch.word(0), '<f4', 4000)[:] = 1\n"
        "KERNELS = {**K, 'linreg-sgd': wide}\n")
    done = subprocess.run([sys.executable, "-m", "bobc", "run", str(PLAN), "train", "--reference", "--kernels", "k.py",
                           "--input", "record.bin", "--checkpoint-out", "c.bin", "--predictions", "p.bin",
                           "--result", "r.bin"], capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={**__import__("os").environ, "PYTHONPATH": str(REPO / "compiler")})
    assert done.returncode == 1, done.stderr
    assert "error: the reference kernel linreg-sgd (k.py:3) wrote bytes its contract does not say it writes" \
           in done.stderr, done.stderr
    assert not any((tmp_path / name).exists() for name in ("c.bin", "p.bin", "r.bin"))
