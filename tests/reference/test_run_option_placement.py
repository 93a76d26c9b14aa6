"""Probe s31 today finding 1: bobc's own options of `bobc run` (--reference, --target, -I, --kernels,
--max-evaluation-steps, --entry) may stand anywhere -- before the plan, between the plan and the
operation, after the operation, among the host's options or at the end -- as they could before
the host's words were handed to the host's parser: `bobc run PLAN --reference train ...` was
refused with "unexpected argument 'train' (the operation is already given)"."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples/linear_regression"
PLAN = EXAMPLE / "LinReg/Build/NativeHost.bob"
ENV = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}


def bobc_run(words, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", "run", *map(str, words)], capture_output=True, text=True,
                          cwd=cwd, env=ENV, timeout=300)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    sys.path.insert(0, str(EXAMPLE))
    try:
        from make_record import make, record_bytes
    finally:
        sys.path.remove(str(EXAMPLE))
    folder = tmp_path_factory.mktemp("run-option-placement")
    (folder / "rec.bin").write_bytes(record_bytes(*make(3)))
    (folder / "inc").mkdir()
    return folder


def own(folder) -> list[list[str]]:
    """bobc's options, each with its value: every one `bobc run` has besides the host's."""
    return [["--reference"], ["--target", "sm_86"], ["-I", str(folder / "inc")], ["--max-evaluation-steps", "99999999"],
            ["--kernels", str(EXAMPLE / "reference_kernels.py")], ["--entry", "linRegNativeHost"]]


def placed(placement: str, operation: str, options: list[list[str]], host: list[str]) -> list[str]:
    every = [word for option in options for word in option]
    if placement == "before the plan":
        return [*every, PLAN, operation, *host]
    if placement == "between the plan and the operation":
        return [PLAN, *every, operation, *host]
    if placement == "after the operation":
        return [PLAN, operation, *every, *host]
    if placement == "among the host's options":
        return [PLAN, operation, *host[:2], *every, *host[2:]]
    if placement == "at the end":
        return [PLAN, operation, *host, *every]
    assert placement == "spread", placement        # one in each place, --target as --target=T
    first, target, include, steps, kernels, entry = options
    return [*first, PLAN, f"--target={target[1]}", *include, operation, *steps, *host[:2], *kernels, *host[2:],
            *entry]


PLACEMENTS = ["before the plan", "between the plan and the operation", "after the operation",
              "among the host's options", "at the end", "spread"]


def outputs(folder, name: str) -> list[str]:
    return ["--checkpoint-out", f"{name}-c", "--predictions", f"{name}-p", "--result", f"{name}-r"]


def files(folder, name: str) -> list[bytes]:
    return [(folder / f"{name}-{part}").read_bytes() for part in "cpr"]


@pytest.fixture(scope="module")
def expected(folder):
    """Each operation's files with the options after the host's (where they always worked)."""
    said = {}
    done = bobc_run([PLAN, "train", "--input", "rec.bin", *outputs(folder, "base-train"),
                     *[w for option in own(folder) for w in option]], folder)
    assert done.returncode == 0, done.stderr
    said["train"] = files(folder, "base-train")
    done = bobc_run([PLAN, "predict", "--input", "rec.bin", "--checkpoint", "base-train-c",
                     *outputs(folder, "base-predict"), *[w for option in own(folder) for w in option]], folder)
    assert done.returncode == 0, done.stderr
    said["predict"] = files(folder, "base-predict")
    return said


@pytest.mark.parametrize("operation", ["train", "predict"])
@pytest.mark.parametrize("placement", PLACEMENTS)
def test_bobcs_options_run_wherever_they_stand(folder, expected, placement, operation):
    name = f"{operation}-{PLACEMENTS.index(placement)}"
    host = ["--input", "rec.bin", *(["--checkpoint", "base-train-c"] if operation == "predict" else []),
            *outputs(folder, name)]
    done = bobc_run(placed(placement, operation, own(folder), host), folder)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith(f"{operation}: ")
    assert files(folder, name) == expected[operation]


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_a_missing_input_is_named_wherever_bobcs_options_stand(folder, placement):
    name = f"missing-{PLACEMENTS.index(placement)}"
    done = bobc_run(placed(placement, "train", own(folder), ["--input", "nothere.bin", *outputs(folder, name)]),
                    folder)
    assert (done.returncode, done.stderr) == (3, "bobc run: error: input record nothere.bin: cannot open: "
                                                 "No such file or directory\n")
    assert not any((folder / f"{name}-{part}").exists() for part in "cpr")
