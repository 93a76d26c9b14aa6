"""`bobc run --reference`: a --kernels file whose KERNELS lacks one of the plan's kernels is a
usage error naming the file and the kernel, exit 2, as a missing file or one without KERNELS is
(it was exit 1, naming neither the file); a module with no native host is told so first, not
asked for reference_kernels.py (probe s28 docs, finding 7)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples/linear_regression"
PLAN = LINREG / "LinReg/Build/NativeHost.bob"
FILES = ["--input", "record.bin", "--checkpoint-out", "c", "--predictions", "p", "--result", "r"]


def bobc(*args, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def _kernels_without(tmp_path: Path, *names: str) -> Path:
    kernels = tmp_path / "kernels.py"
    kernels.write_text(
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('lr_kernels', {str(LINREG / 'reference_kernels.py')!r})\n"
        "module = importlib.util.module_from_spec(spec)\nsys.modules['lr_kernels'] = module\n"
        "spec.loader.exec_module(module)\nKERNELS = dict(module.KERNELS)\n"
        + "".join(f"del KERNELS[{name!r}]\n" for name in names))
    return kernels


def test_a_kernels_file_without_one_of_the_plans_kernels_is_a_usage_error(tmp_path):
    (tmp_path / "record.bin").write_bytes(bytes(16))
    kernels = _kernels_without(tmp_path, "linreg-sgd")
    done = bobc("run", PLAN, "train", "--reference", "--kernels", kernels, *FILES, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"bobc run: error: {kernels}: KERNELS has no NumPy implementation of the "
                                  "plan's kernel linreg-sgd\nhint: "), done.stderr
    kernels = _kernels_without(tmp_path, "linreg-sgd", "linreg-predict")
    done = bobc("run", PLAN, "train", "--reference", "--kernels", kernels, *FILES, cwd=tmp_path)
    assert done.returncode == 2 and "the plan's kernels linreg-predict, linreg-sgd\n" in done.stderr, done.stderr
    assert not any((tmp_path / name).exists() for name in "cpr")


def test_a_module_without_a_host_is_told_so_before_kernels_are_asked_for(tmp_path):
    (tmp_path / "M").mkdir()
    (tmp_path / "M/A.bob").write_text("module M.A\ndef x : Nat = zero\n")
    (tmp_path / "record.bin").write_bytes(bytes(16))
    done = bobc("run", tmp_path / "M/A.bob", "train", "--reference", *FILES, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("bobc run: error: M.A defines no native host"), done.stderr
    assert "reference_kernels.py" not in done.stderr
