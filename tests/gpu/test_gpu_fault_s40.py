"""A real GPU fault, and what the host says about it (docs/runtime.md, "GPU faults").

Two plans, LinReg (examples/linear_regression) with its predict kernel changed:

- `far-store`: the kernel adds 2^40 to the predictions pointer it computed (IADD3 on the address's
  high word, 0x100 << 32) before its STG: the certifier holds launches to their `//@ param`
  contracts, not to the code, so `bobc build` accepts the plan; the store lands 1 TiB past every
  buffer, where nothing is mapped (the shim's own VA range is [0xFC_0000_0000, 0xFE_0000_0000)),
  so the GPU's MMU faults: Xid 31, "GPU memory page fault" in NVIDIA's Xid catalogue;
- `trap`: a BPT.TRAP 0x1 (what PTX's `trap` compiles to) before the store: the assembler accepts
  it, the SM stops the warp: Xid 13, "Graphics Engine Exception".

The line also names that submission's launches (kernel, grid, where the plan wrote them), checked
against what `bobc dump` says of the host (session 41; the CPU half of that is
tests/host/test_gpu_fault_launches_s41.py).

On the CPU (tests/host/test_gpu_fault_plans_s40.py: every test under tests/gpu counts as a GPU
test): `bobc build` accepts both, and `bobc sim` refuses both with exit 7, naming the kernel's line
and the instruction (the simulator checks every address against the residents, and does not model
BPT.TRAP).  On the GPU: the built host exits 7 (RT_EXIT_GPU_FAULT,
runtime_c/rt_exit.h) with one line naming the Xid by name, the step and the submission that had
not finished, and what to do.

The device machine has no lark: `python tests/gpu/test_gpu_fault_s40.py FOLDER` builds the hosts
there beforehand (tests/gpu/prepare.sh: .device/gpu-fault, exported as GPU_FAULT_HOSTS by
tests/gpu/run.sh, which runs this file as its last step: a fault must not disturb the others).
No test here waits for a timeout: a hung channel could wedge the device for later tests.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "linear_regression"
KERNEL = "LinReg/kernels/linreg-predict.sass"
PLAN = "LinReg/Build/NativeHost.bob"
STORE = "    IMAD.WIDE.U32 R6, R0, 0x4, R6\n    STG.E [R6.64], R14\n"
FAULTS = {   # name -> (the predict kernel's store, as changed; the Xid NVIDIA's catalogue gives it)
    "far-store": ("    IMAD.WIDE.U32 R6, R0, 0x4, R6\n    IADD3 R7, R7, 0x100, RZ\n    STG.E [R6.64], R14\n",
                  "Xid 31: GPU memory page fault"),
    "trap": ("    IMAD.WIDE.U32 R6, R0, 0x4, R6\n    BPT.TRAP 0x1\n    STG.E [R6.64], R14\n",
             "Xid 13: graphics engine exception"),
}
TARGET = "sm_90"


def plan_tree(folder: Path, name: str) -> Path:
    """A copy of LinReg whose predict kernel faults as FAULTS[name] says; its plan's path."""
    tree = folder / f"linreg-{name}"
    shutil.copytree(EXAMPLE, tree, ignore=shutil.ignore_patterns("__pycache__"))
    kernel = tree / KERNEL
    text = kernel.read_text()
    assert text.count(STORE) == 1, "LinReg's predict kernel changed: update this test's STORE"
    kernel.write_text(text.replace(STORE, FAULTS[name][0]))
    return tree / PLAN


def record(folder: Path) -> Path:
    sys.path.insert(0, str(EXAMPLE))
    import make_record
    path = folder / "record.bin"
    path.write_bytes(make_record.record_bytes(*make_record.make(3)))
    return path


def bobc(*args, cwd: Path) -> subprocess.CompletedProcess:
    environment = dict(os.environ, PYTHONPATH=str(REPO / "compiler"))
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=600, env=environment)


def outputs(folder: Path) -> list[str]:
    return ["--checkpoint-out", str(folder / "ckpt.bin"), "--predictions", str(folder / "pred.bin"),
            "--result", str(folder / "result.bin")]


def build(folder: Path) -> None:
    """Each fault's sm_90 host, FOLDER/NAME, and the record it runs on, FOLDER/record.bin."""
    folder = folder.resolve()          # bobc runs in FOLDER: a relative FOLDER would name FOLDER/FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    record(folder)
    for name in FAULTS:
        plan = plan_tree(folder / "trees", name)
        built = bobc("build", plan, "--target", TARGET, "-o", folder / name, cwd=folder)
        if built.returncode != 0:
            raise SystemExit(f"bobc build {plan}: {built.stderr}")


@pytest.fixture(scope="module")
def hosts(tmp_path_factory) -> Path:
    prebuilt = os.environ.get("GPU_FAULT_HOSTS")
    if prebuilt:
        return Path(prebuilt).resolve()
    folder = tmp_path_factory.mktemp("gpu-fault")
    build(folder)
    return folder


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(FAULTS))
def test_the_host_names_the_xid_the_step_and_what_to_do(hosts, tmp_path, name):
    """Exit 7, one line: the step (the Submit that issued the predict launch), the submission not
    finished, the Xid by name, and what to do (`bobc sim`, dmesg); nothing published."""
    run = subprocess.run([str(hosts / name), "predict", "--input", str(hosts / "record.bin"), *outputs(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    print(run.stderr)
    assert run.returncode == 7, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    line = lines[0]
    assert line.startswith(f"{name}: error: step "), line
    assert re.search(r"step \d+ of \d+ \(Submit of submissions? [\d.]+\): submission \d+ \(semaphore at GPU VA "
                     r"0x[0-9a-f]+\) did not finish: GPU fault while waiting", line), line
    assert FAULTS[name][1] in line, line
    assert "what to do: " in line and "`bobc sim`" in line and "dmesg" in line, line
    assert f"`bobc dump {hosts / name}` lists submission[" in line, line
    assert_names_the_launches(hosts / name, line)
    assert not (tmp_path / "pred.bin").exists() and not (tmp_path / "ckpt.bin").exists()


def assert_names_the_launches(host: Path, line: str) -> None:
    """The line names the unfinished submission's launches in `bobc dump`'s words (session 41):
    each `launch[L] (kernel NAME, grid [X, Y, Z], ...)` as the dump's launch[L].kernel and .grid
    (from the images' manifest and QMDs, run here on the CPU: `bobc dump` needs no lark), the
    launches those of the dump's submission[K].launches; and one of them runs the kernel this
    plan changed (KERNEL's name), which is the one that faults."""
    import json

    submission = int(re.search(r": submission (\d+) \(semaphore at", line).group(1))
    dumped = subprocess.run([sys.executable, "-m", "bobc", "dump", str(host), "--no-code", "--json"],
                            capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, PYTHONPATH=str(REPO / "compiler")))
    assert dumped.returncode == 0, dumped.stderr
    facts = {fact["key"]: fact["value"] for fact in json.loads(dumped.stdout)}
    launches = facts[f"submission[{submission}].launches"]
    named = re.findall(r"launch\[(\d+)\] \(kernel ([^,]+), grid \[([^]]*)\]", line)
    assert [int(index) for index, _, _ in named] == launches[:3], line
    for index, kernel, grid in named:
        assert kernel == facts[f"launch[{index}].kernel"], line
        assert [int(n, 16) for n in grid.split(", ")] == facts[f"launch[{index}].grid"], line
    assert Path(KERNEL).name.removesuffix(".sass") in {kernel for _, kernel, _ in named}, line


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    build(Path(sys.argv[1]))
