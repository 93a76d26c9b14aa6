"""What Bob's plan host refuses at start-up, before any input is trusted or any GPU looked
for (probe s27): a host file without one of its .bobc.* sections -- its version section
too -- is damaged (exit 9, naming the host by its path); a misspelt BOBC_GPU_MAPPING is a
usage error (exit 2) on any machine, and so are a misspelt BOBC_GPU_TRACE and NATIVE_TELEMETRY
(session 28); BOBC_HOST_TIMING naming one of the inputs is refused
(exit 8) with nothing written; an option whose value is missing is named as such.  On this
GPU-less machine a host that passes every check stops at "no GPU" (exit 6)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
OUTPUTS = ["--checkpoint-out", "c.bin", "--predictions", "p.bin", "--result", "r.bin"]


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    out = tmp_path_factory.mktemp("host") / "bob-host"
    done = subprocess.run([sys.executable, "-m", "bobc", "build", str(PLAN), "-o", str(out)], capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture
def folder(tmp_path):
    from bob_model.formats import InputRecord, encode_input_record

    (tmp_path / "record.bin").write_bytes(encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256,
                                                                          [119, 116, 32])))
    return tmp_path


def run(host, folder, *arguments, env=None):
    import os
    return subprocess.run([str(host), *map(str, arguments)], cwd=folder, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})


def files(folder):
    return sorted(p.name for p in folder.iterdir())


# ---- finding 8 ----

@pytest.mark.parametrize("section", [".bobc.version", ".bobc.qmd"])
def test_a_host_without_one_of_its_sections_is_damaged(host, folder, section):
    if shutil.which("objcopy") is None:
        pytest.fail("objcopy (binutils, which gcc needs) is not on PATH")
    damaged = folder / "damaged-host"
    done = subprocess.run(["objcopy", "--remove-section", section, str(host), str(damaged)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    said = (f"damaged-host: error: damaged host file: {damaged} has no section {section}: it was not built by "
            f"`bobc build`, or was stripped; rebuild it (bobc build)\n")
    out = run(damaged, folder, "train", "--input", "record.bin", *OUTPUTS)
    assert (out.returncode, out.stderr) == (9, said)
    assert "/proc/self/exe" not in out.stderr
    assert files(folder) == ["damaged-host", "record.bin"]
    if section == ".bobc.version":        # --version reads that section: the same verdict
        out = run(damaged, folder, "--version")
        assert (out.returncode, out.stderr, out.stdout) == (9, said, "")


# ---- finding 9 ----

def test_a_misspelt_gpu_mapping_is_a_usage_error_before_the_inputs(host, folder):
    said = "bob-host: error: BOBC_GPU_MAPPING=bogus: expected rm or uvm (or leave it unset)\n"
    for record in ("record.bin", "absent.bin"):           # a good record, or none at all: usage first
        out = run(host, folder, "train", "--input", record, *OUTPUTS, env={"BOBC_GPU_MAPPING": "bogus"})
        assert (out.returncode, out.stderr) == (2, said)
    assert files(folder) == ["record.bin"]
    for good in ("rm", "uvm", ""):
        out = run(host, folder, "train", "--input", "record.bin", *OUTPUTS, env={"BOBC_GPU_MAPPING": good})
        assert out.returncode in (0, 6) and "BOBC_GPU_MAPPING" not in out.stderr, out.stderr


# ---- the other settings a plan host reads (session 28: judged at start-up as BOBC_GPU_MAPPING is;
# runtime_c/host_settings.c), and `bobc run --reference` judges them alike ----

@pytest.mark.parametrize("variable, value, expected", [
    ("BOBC_GPU_TRACE", "yes", "expected 1 (each bring-up step), ioctl (each ioctl too) or 0 (or leave it unset)"),
    ("BOBC_GPU_TRACE", "2", "expected 1 (each bring-up step), ioctl (each ioctl too) or 0 (or leave it unset)"),
    ("NATIVE_TELEMETRY", "-1", "expected a level, a decimal number 0 to 9223372036854775807 (or leave it unset: "
                               "no telemetry)"),
    ("NATIVE_TELEMETRY", "high", "expected a level, a decimal number 0 to 9223372036854775807 (or leave it unset: "
                                 "no telemetry)"),
])
def test_a_misspelt_trace_or_telemetry_is_a_usage_error_before_the_inputs(host, folder, variable, value, expected):
    out = run(host, folder, "train", "--input", "absent.bin", *OUTPUTS, env={variable: value})
    assert (out.returncode, out.stderr) == (2, f"bob-host: error: {variable}={value}: {expected}\n")
    assert files(folder) == ["record.bin"]
    reference = run(sys.executable, folder, "-m", "bobc", "run", PLAN, "train", "--reference", "--input", "absent.bin",
                    *OUTPUTS, env={variable: value})
    assert reference.returncode == 2 and reference.stderr.endswith(f"{variable}={value}: {expected}\n"), \
        reference.stderr
    assert files(folder) == ["record.bin"]


@pytest.mark.parametrize("variable, value", [("BOBC_GPU_TRACE", "0"), ("BOBC_GPU_TRACE", "ioctl"),
                                             ("NATIVE_TELEMETRY", "3"), ("NATIVE_TELEMETRY", "")])
def test_a_documented_trace_or_telemetry_value_runs(host, folder, variable, value):
    out = run(host, folder, "train", "--input", "record.bin", *OUTPUTS, env={variable: value})
    assert out.returncode in (0, 6) and variable not in out.stderr, out.stderr


# ---- finding 7 ----

def test_a_timing_file_naming_an_input_is_refused(host, folder):
    record = (folder / "record.bin").read_bytes()
    out = run(host, folder, "train", "--input", "record.bin", *OUTPUTS, env={"BOBC_HOST_TIMING": "record.bin"})
    assert (out.returncode, out.stderr) == (8, "bob-host: error: BOBC_HOST_TIMING record.bin: is the input "
                                               "record.bin; a diagnostic file never replaces an input; nothing was "
                                               "written\n")
    assert (folder / "record.bin").read_bytes() == record and files(folder) == ["record.bin"]
    # the checkpoint it resumes from, by another spelling
    (folder / "in.ckpt").write_bytes(b"not read: the timing file is judged after the inputs")
    out = run(host, folder, "train", "--input", "record.bin", "--checkpoint", "in.ckpt", *OUTPUTS,
              env={"BOBC_HOST_TIMING": str(folder / "in.ckpt")})
    assert out.returncode == 4, out.stderr         # the bad checkpoint is the first refusal
    from bob_model.formats import Checkpoint, encode_checkpoint, fresh_parameters
    from bob_model.model import BobConfig
    from bobc.commands.run import load_plan

    config = BobConfig.from_plan(load_plan(PLAN))
    zeros = np.zeros(65536, np.float32)
    checkpoint = encode_checkpoint(config.contract,
                                   Checkpoint(fresh_parameters(config.seed_identity), zeros, zeros, 20))
    (folder / "in.ckpt").write_bytes(checkpoint)
    out = run(host, folder, "train", "--input", "record.bin", "--checkpoint", "in.ckpt", *OUTPUTS,
              env={"BOBC_HOST_TIMING": str(folder / "in.ckpt")})
    assert out.returncode == 8 and f"BOBC_HOST_TIMING {folder / 'in.ckpt'}: is the input in.ckpt;" in out.stderr
    assert (folder / "in.ckpt").read_bytes() == checkpoint and files(folder) == ["in.ckpt", "record.bin"]
    # a timing file that is no input: the run goes on (to "no GPU" here)
    out = run(host, folder, "train", "--input", "record.bin", *OUTPUTS, env={"BOBC_HOST_TIMING": "timing.txt"})
    assert out.returncode in (0, 6) and "BOBC_HOST_TIMING" not in out.stderr, out.stderr


# ---- section 10: an option whose value is missing ----

def test_an_option_without_its_value_is_named(host, folder):
    out = run(host, folder, "train", "--input", "--checkpoint-out", "c.bin", "--predictions", "p.bin", "--result",
              "r.bin")
    assert (out.returncode, out.stderr) == (2, "bob-host: error: option --input needs a value; the next word, "
                                               "'--checkpoint-out', is an option (write --input=VALUE for a value "
                                               "starting with '-') (see --help)\n")
    shutil.copy(folder / "record.bin", folder / "-record.bin")
    out = run(host, folder, "train", "--input=-record.bin", *OUTPUTS)
    assert out.returncode in (0, 6) and "--input" not in out.stderr, out.stderr
