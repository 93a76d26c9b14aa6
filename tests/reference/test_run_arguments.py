"""`bobc run PLAN train|predict --reference` refuses exactly the arguments the host refuses,
with the same exit codes (README: "same arguments, same refusals and exit codes as the
host"), and a bad --kernels file is one line, not a traceback (probe s26)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
sys.path.insert(0, str(REPO / "examples" / "bob"))


def run(argv, cwd):
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    import numpy as np
    from bob_model.formats import InputRecord, encode_input_record

    folder = tmp_path_factory.mktemp("run-arguments")
    (folder / "record.bin").write_bytes(
        encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256, [119, 116, 32])))
    host = folder / "bob-host"
    done = run([sys.executable, "-m", "bobc", "build", str(PLAN), "-o", str(host)], folder)
    assert done.returncode == 0, done.stderr
    return folder, host


GOOD = ["--input", "record.bin", "--checkpoint-out", "c", "--predictions", "p", "--result", "r"]
CASES = {
    "empty checkpoint": ["train", *GOOD, "--checkpoint", ""],
    "empty input": ["train", "--input", "", *GOOD[2:]],
    "empty checkpoint-out": ["train", *GOOD[:2], "--checkpoint-out", "", *GOOD[4:]],
    "empty with =": ["train", *GOOD, "--checkpoint="],
    "repeated": ["train", *GOOD, "--checkpoint-out", "d"],
    "repeated input": ["predict", *GOOD, "--input", "record.bin"],
    "same output twice": ["train", *GOOD[:2], "--checkpoint-out", "p", *GOOD[4:]],
    "missing result": ["train", *GOOD[:6]],
    "extra word": ["train", *GOOD, "extra"],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_reference_refuses_what_the_host_refuses(setup, name):
    folder, host = setup
    argv = CASES[name]
    native = run([str(host), *argv], folder)
    operation, rest = argv[0], argv[1:]
    reference = run([sys.executable, "-m", "bobc", "run", str(PLAN), operation, "--reference", *rest], folder)
    assert native.returncode == 2, native.stderr
    assert reference.returncode == native.returncode, (reference.stderr, native.stderr)
    assert "Traceback" not in reference.stderr
    assert not any((folder / name).exists() for name in ("c", "d", "p", "r"))


def test_host_usage_error_is_one_line(setup):
    folder, host = setup
    done = run([str(host), "train"], folder)
    assert done.returncode == 2
    assert done.stderr == "bob-host: error: missing --input RECORD (see --help)\n"
    for argv, said in ((["--version", "extra"], "--version is given alone"), (["train", "--version"], "--version is given alone"),
                       (["-v"], "unknown option '-v'")):
        done = run([str(host), *argv], folder)
        assert done.returncode == 2 and said in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    assert "--version" in run([str(host), "--help"], folder).stdout


def test_an_oversized_record_is_refused_unread_by_both(setup):
    folder, host = setup
    (folder / "big.bin").write_bytes(bytes(100_000))
    argv = ["--input", "big.bin", *GOOD[2:]]
    native = run([str(host), "train", *argv], folder)
    reference = run([sys.executable, "-m", "bobc", "run", str(PLAN), "train", "--reference", *argv], folder)
    assert native.returncode == reference.returncode == 3
    size = len((folder / "record.bin").read_bytes())        # the plan's record, as the fixture wrote it
    assert f"big.bin: 100,000 bytes, expected exactly {size:,}\n" in native.stderr   # grouped (s42)
    assert f"big.bin: 100,000 bytes, expected exactly {size:,}\n" in reference.stderr


@pytest.mark.parametrize("source,said", [
    ("x = (\n", "SyntaxError at line 1"),
    ("import math\nraise RuntimeError('boom')\n", "RuntimeError at line 2: boom"),
    ("from __future__ import annotations\nfrom dataclasses import dataclass\n@dataclass\nclass K:\n    x: int\n"
     "KERNELS = 3\n", "defines no KERNELS"),      # a dataclass needs its module in sys.modules
])
def test_a_bad_kernels_file_is_one_line(setup, tmp_path, source, said):
    folder, _ = setup
    kernels = tmp_path / "kernels.py"
    kernels.write_text(source)
    done = run([sys.executable, "-m", "bobc", "run", str(PLAN), "train", "--reference", *GOOD,
                "--kernels", str(kernels)], folder)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr


def test_a_reference_kernel_that_raises_is_one_line_naming_the_kernel_launch_and_line(setup):
    folder, _ = setup
    kernels = folder / "raising_kernels.py"
    kernels.write_text(
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('bob_kernels', {str(REPO / 'examples/bob/reference_kernels.py')!r})\n"
        "module = importlib.util.module_from_spec(spec)\nsys.modules['bob_kernels'] = module\n"
        "spec.loader.exec_module(module)\nKERNELS = dict(module.KERNELS)\n\n\n"
        "def broken(memory, launch):\n    return 1 / 0\n\n\nKERNELS['bob-adamw'] = broken\n")
    done = run([sys.executable, "-m", "bobc", "run", str(PLAN), "train", "--reference", "--kernels", str(kernels),
                *GOOD], folder)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"the reference kernel bob-adamw failed at launch 7 ({kernels}:10): ZeroDivisionError" in done.stderr
    assert not any((folder / name).exists() for name in ("c", "p", "r"))



# "extra word" is refused by bobc run's own argument parser before the host's rules are asked
WORDED = {**{k: v for k, v in CASES.items() if k != "extra word"}, "missing input": ["train"]}


@pytest.mark.parametrize("name", sorted(WORDED))
def test_the_reference_words_a_usage_error_as_the_host_does(setup, name):
    """The same line after the program's name: the plan host ends a usage error with
    " (see --help)" (runtime_c/plan_host.c), which `bobc run` left off (probe s28 newmodel2
    finding 7)."""
    folder, host = setup
    argv = WORDED[name]
    native = run([str(host), *argv], folder)
    reference = run([sys.executable, "-m", "bobc", "run", str(PLAN), argv[0], "--reference", *argv[1:]], folder)
    assert native.returncode == reference.returncode == 2, (native.stderr, reference.stderr)
    assert native.stderr.startswith("bob-host: error: ") and reference.stderr.startswith("bobc run: error: ")
    assert native.stderr.partition(": error: ")[2] == reference.stderr.partition(": error: ")[2]
