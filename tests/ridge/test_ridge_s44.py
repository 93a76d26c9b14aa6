"""examples/ridge (probe s44 newuser9): a model of one's own with a kernel taken from ptxas's listing,
a shared-memory kernel and a two-chunk checkpoint.  Held to its float64 model (examples/ridge/
numpy_model.py: its own record and envelope readers and its own SplitMix64 fresh state, nothing of
bobc's), fresh and resumed; `bobc sim` on each target writes the reference's bytes; and the listing
is ptxas's code of the PTX beside it (compiled again here, when ptxas is installed)."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "ridge"
PLAN = EXAMPLE / "Ridge" / "Build" / "NativeHost.bob"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"ridge_{name}", EXAMPLE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bobc(*args, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ridge")
    make = _module("make_record")
    (folder / "record.bin").write_bytes(make.record_bytes(*make.make()))
    for name, checkpoint in (("fresh", None), ("resumed", "fresh-c.bin")):
        extra = ["--checkpoint", checkpoint] if checkpoint else []
        done = _bobc("run", PLAN, "train", "--reference", "--input", "record.bin", *extra, "--checkpoint-out",
                     f"{name}-c.bin", "--predictions", f"{name}-p.bin", "--result", f"{name}-r.bin", cwd=folder)
        assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.parametrize("name, checkpoint_in", [("fresh", "-"), ("resumed", "fresh-c.bin")])
def test_the_reference_run_is_the_float64_model(runs, name, checkpoint_in):
    model = _module("numpy_model")
    found = model.compare(runs / "record.bin", checkpoint_in if checkpoint_in == "-" else runs / checkpoint_in,
                          runs / f"{name}-c.bin", runs / f"{name}-p.bin", runs / f"{name}-r.bin")
    assert found["step"][0] == found["step"][1]
    # binary32 arithmetic of 25 (50) momentum updates against binary64: a few ulp of values near 1
    assert max(found[k] for k in ("W", "V", "losses", "predictions")) < 2e-6, found
    assert found["loss"] < 0.06            # it trains: the loss falls from about 1.95


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_the_simulator_writes_the_references_bytes(runs, target):
    done = _bobc("sim", PLAN, "train", "--target", target, "--input", "record.bin", "--checkpoint", "fresh-c.bin",
                 "--checkpoint-out", f"s-{target}-c.bin", "--predictions", f"s-{target}-p.bin", "--result",
                 f"s-{target}-r.bin", cwd=runs)
    assert done.returncode == 0, done.stderr
    for kind in "cpr":
        assert (runs / f"s-{target}-{kind}.bin").read_bytes() == (runs / f"resumed-{kind}.bin").read_bytes(), kind


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_the_momentum_kernel_is_ptxas_code_of_its_ptx(tmp_path, target):
    from bobc.nvtools import nvdisasm, ptxas
    from bobc.sass import assemble_kernel
    from bobc.sass.assembler import assemble_listing
    from bobc.targets import target_named

    if ptxas() is None or nvdisasm() is None:
        pytest.skip("ptxas / nvdisasm not installed (pip install nvidia-cuda-nvcc nvidia-cuda-nvdisasm)")
    source = EXAMPLE / "Ridge" / "kernels" / ("ridge-momentum.sass" if target == "sm_86" else
                                              "ridge-momentum.sm_90.sass")
    # the ptxas release that wrote the listing (its .note.nv.tkinfo); another release may schedule otherwise
    wrote = re.search(r'"Cuda compilation tools, release ([\d.]+), (V[\d.]+)"', source.read_text()).group(2)
    # the test extra holds ptxas to the listing's release series (pyproject.toml, nvidia-cuda-nvcc <13.6):
    # another release means the listing is to be written again
    assert wrote in subprocess.run([ptxas(), "--version"], capture_output=True, text=True).stdout, \
        f"the listing is ptxas {wrote}'s and this ptxas is another release: write {source.name} again from its PTX"
    ptx = (EXAMPLE / "ptx" / "ridge-momentum.ptx").read_text()
    (tmp_path / "m.ptx").write_text(re.sub(r"^\.target sm_86$", f".target {target}", ptx, flags=re.M))
    subprocess.run([ptxas(), "-O3", f"-arch={target}", "-o", str(tmp_path / "m.cubin"), str(tmp_path / "m.ptx")],
                   check=True, capture_output=True)
    listing = subprocess.run([nvdisasm(), "-hex", str(tmp_path / "m.cubin")], check=True, capture_output=True,
                             text=True).stdout
    fresh = assemble_listing(listing, target_named(target))["ridge_momentum"]
    shipped = assemble_kernel(source, target_named(target))
    # the instructions ptxas writes now (nvdisasm's words) are those of the shipped listing
    assert bytes(shipped.code) == bytes(fresh.code)
