"""LinReg (examples/linear_regression), the guide's model (docs/writing-a-plan.md): it certifies
and builds for both targets, byte for byte the same twice; its kernels alone on the simulator,
and its whole invocations through the reference runner and the simulator, are
examples/linear_regression/numpy_model.py's binary32 arithmetic bit for bit (fresh, resumed,
predicting); nvdisasm decodes every instruction of its kernels."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "linear_regression"
PLAN = EXAMPLE / "LinReg" / "Build" / "NativeHost.bob"
KERNELS = EXAMPLE / "LinReg" / "kernels"
if str(EXAMPLE) not in sys.path:
    sys.path.insert(0, str(EXAMPLE))

import make_record  # noqa: E402
import numpy_model  # noqa: E402

N, D = numpy_model.N, numpy_model.D
FILES = ["--checkpoint-out", "ckpt.bin", "--predictions", "pred.bin", "--result", "result.bin"]


def bobc(*args, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    folder = tmp_path_factory.mktemp("linreg")
    (folder / "record.bin").write_bytes(make_record.record_bytes(*make_record.make(3)))
    return folder / "record.bin"


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_it_certifies_and_builds_the_same_bytes_twice(tmp_path, target):
    checked = bobc("check", PLAN, "--target", target, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert f"linRegNativeHost: certified for {target} (6 residents, 42 launches, 43 submissions)" in checked.stdout
    for name in ("a", "b"):
        built = bobc("build", PLAN, "--target", target, "-o", name, cwd=tmp_path)
        assert built.returncode == 0, built.stderr
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


def _outputs(folder: Path, prefix: str = ""):
    return tuple((folder / f"{prefix}{name}").read_bytes() for name in ("ckpt.bin", "pred.bin", "result.bin"))


def test_the_reference_runner_trains_resumes_and_predicts_as_numpy_does(tmp_path, record):
    fresh = bobc("run", PLAN, "train", "--reference", "--input", record, *FILES, cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    assert numpy_model.main([str(record), *(str(tmp_path / f) for f in ("ckpt.bin", "pred.bin", "result.bin"))]) == 0
    losses = np.frombuffer((tmp_path / "result.bin").read_bytes(), "<f4")
    assert losses[1] < losses[0] / 10                       # it learns
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    done = bobc("run", PLAN, "train", "--reference", "--input", record, "--checkpoint", tmp_path / "ckpt.bin",
                *FILES, cwd=resumed)
    assert done.returncode == 0, done.stderr
    assert numpy_model.main([str(record), *(str(resumed / f) for f in ("ckpt.bin", "pred.bin", "result.bin")),
                             str(tmp_path / "ckpt.bin")]) == 0
    predicted = tmp_path / "predicted"
    predicted.mkdir()
    done = bobc("run", PLAN, "predict", "--reference", "--input", record, "--checkpoint", resumed / "ckpt.bin",
                *FILES, cwd=predicted)
    assert done.returncode == 0, done.stderr
    step, W = numpy_model.read_checkpoint(resumed / "ckpt.bin")
    X, _ = numpy_model.read_record(record)
    assert (predicted / "pred.bin").read_bytes() == numpy_model.predict(W, X).astype("<f4").tobytes()
    assert (predicted / "ckpt.bin").read_bytes() == (resumed / "ckpt.bin").read_bytes() and step == 40


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_the_simulator_runs_the_hosts_images_to_the_reference_runners_bytes(tmp_path, record, target):
    reference = bobc("run", PLAN, "train", "--reference", "--input", record, *FILES, cwd=tmp_path)
    assert reference.returncode == 0, reference.stderr
    simulated = bobc("sim", PLAN, "train", "--target", target, "--input", record, "--checkpoint-out", "s-ckpt.bin",
                     "--predictions", "s-pred.bin", "--result", "s-result.bin", cwd=tmp_path)
    assert simulated.returncode == 0, simulated.stderr
    assert "no control-code hazard, no unordered launches, no out-of-bounds access" in simulated.stdout
    assert _outputs(tmp_path, "s-") == _outputs(tmp_path)


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_each_kernel_alone_is_the_numpy_arithmetic(target):
    from bobc.sim.kernel import Pointer, run_kernel

    rng = np.random.default_rng(1)
    X = rng.standard_normal((N, D)).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    W = rng.standard_normal(D + 1).astype(np.float32)
    out = run_kernel((KERNELS / "linreg-predict.sass").read_text(), target, grid=(1, 1, 1), block=(64, 1, 1),
                     params=[Pointer("W"), Pointer("X"), Pointer("P"), np.uint32(N), np.uint32(D)],
                     buffers={"W": W, "X": X, "P": np.zeros(N, np.float32)})
    assert np.array_equal(out["P"], numpy_model.predict(W, X))
    G, loss = numpy_model.loss_grad(W, X, y)
    out = run_kernel((KERNELS / "linreg-loss-grad.sass").read_text(), target, grid=(1, 1, 1), block=(32, 1, 1),
                     params=[Pointer("W"), Pointer("X"), Pointer("y"), Pointer("G"), Pointer("L"),
                             np.uint32(N), np.uint32(D), np.float32(2 / N), np.float32(1 / N)],
                     buffers={"W": W, "X": X, "y": y, "G": np.zeros(D + 1, np.float32), "L": np.zeros(1, np.float32)})
    assert np.array_equal(out["G"], G) and out["L"][0] == loss
    out = run_kernel((KERNELS / "linreg-sgd.sass").read_text(), target, grid=(1, 1, 1), block=(32, 1, 1),
                     params=[Pointer("W"), Pointer("G"), np.uint32(D + 1), numpy_model.LR],
                     buffers={"W": W, "G": G})
    assert np.array_equal(out["W"], W - numpy_model.LR * G)


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
@pytest.mark.parametrize("kernel", ["linreg-loss-grad", "linreg-predict", "linreg-sgd"])
def test_nvdisasm_decodes_every_instruction(kernel, target):
    from bobc.sass import assemble_kernel
    from bobc.sass.oracle import disassemble
    from bobc.targets import TARGETS

    assembled = assemble_kernel(KERNELS / f"{kernel}.sass", TARGETS[target])
    decoded = disassemble(bytes(assembled.code), TARGETS[target].nvdisasm_arch)
    assert decoded.errors == []
    assert len(decoded.lines) == len(assembled.instructions)


def test_a_simulated_fault_names_the_kernels_source_line(tmp_path, record):
    """A predict kernel storing at twice its stride (its contract's extent unchanged, so the
    certifier passes it): the simulator stops at the store, named by its source line."""
    import shutil
    copy = tmp_path / "linreg"
    shutil.copytree(EXAMPLE / "LinReg", copy / "LinReg")
    kernel = copy / "LinReg" / "kernels" / "linreg-predict.sass"
    text = kernel.read_text()
    assert "IMAD.WIDE.U32 R6, R0, 0x4, R6" in text
    kernel.write_text(text.replace("IMAD.WIDE.U32 R6, R0, 0x4, R6", "IMAD.WIDE.U32 R6, R0, 0x8, R6"))
    store = 1 + next(i for i, line in enumerate(kernel.read_text().splitlines()) if line.strip().startswith("STG"))
    done = bobc("sim", copy / "LinReg/Build/NativeHost.bob", "train", "--target", "sm_86", "--input", record,
                *FILES, cwd=tmp_path)
    assert done.returncode == 7, done.stderr
    # the kernel lies under the working folder, so it is shown relative to it (errors.shown_path)
    shown = kernel.relative_to(tmp_path)
    assert done.stderr.startswith(f"bobc sim: {shown}:{store}:5: error: launch 1 (linreg-predict): instruction at ")
    assert "lies outside every arena resident" in done.stderr and "its contract's extents" in done.stderr


@pytest.mark.parametrize("old, new, says", [
    ("//@ param 0 pointer read-write 4*lo[2]", "//@ param 0 pointer read 4*lo[2]",
     "writes bytes its kernel's contract does not say it writes"),
    ("//@ param 1 pointer read 4*lo[2]", "//@ param 1 pointer read 4*lo[2]-4",
     "reads bytes its kernel's contract does not say it reads or writes")])
def test_the_simulator_holds_each_access_to_its_kernels_contract(tmp_path, record, old, new, says):
    """A contract that declares less than its code does (W read where the SGD kernel writes it,
    G one element short) passes the certifier, which reads contracts, not code; the simulator
    runs the code and stops at the first access the contract does not cover."""
    import shutil
    copy = tmp_path / "linreg"
    shutil.copytree(EXAMPLE / "LinReg", copy / "LinReg")
    kernel = copy / "LinReg" / "kernels" / "linreg-sgd.sass"
    assert old in kernel.read_text()
    kernel.write_text(kernel.read_text().replace(old, new))
    assert bobc("check", copy / "LinReg/Build/NativeHost.bob", cwd=tmp_path).returncode == 0
    done = bobc("sim", copy / "LinReg/Build/NativeHost.bob", "train", "--target", "sm_86", "--input", record,
                *FILES, cwd=tmp_path)
    assert done.returncode == 7 and says in done.stderr, done.stderr
    assert f"{kernel.relative_to(tmp_path)}:" in done.stderr.splitlines()[0] and "launch 2 (linreg-sgd)" in done.stderr
