"""A plan whose checkpoint Read says tolerateEmpty 0 starts no request from its fresh state: the C host,
`bobc run --reference` and `bobc sim` refuse a request without --checkpoint alike (session 44 tolerate).

specs/Platform/Linux/Nvidia/PlanHost.bob, NvidiaPlanHostStepRead: "With `tolerateEmpty` 1 a request
without the file is accepted: the checkpoint's place receives the plan's fresh state", so 0 is a request
without --checkpoint refused.  Before, no host read the field: every host trained such a plan from the
fresh state, exit 0 (probe s44 newuser9), and the certifier refused 0 as a stopgap.

The plan is LinReg with its checkpoint Read's flag 0 (nothing else changed).  What is expected, and why:
- without --checkpoint, train and predict alike (the Read comes before the Operation step): exit 2, the
  README's "2 usage" -- an option the plan needs is missing from the command line, as `missing --input
  RECORD` is exit 2 (a 4 is a checkpoint given that is bad, a 3 an input record given that is bad) --
  one line naming the option, the step and the flag and saying to pass --checkpoint; nothing written;
- with --checkpoint, the run is the shipped plan's (flag 1) with that checkpoint, byte for byte: the flag
  says only what a request without the file gets.  The C host on this GPU-less machine reads the
  checkpoint and stops at its no-GPU line (exit 6), as every plan host here does
  (tests/host/test_plan_host_start_up.py); a damaged checkpoint is its exit 4, so it was read.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples/linear_regression"
SHIPPED = EXAMPLE / "LinReg/Build/NativeHost.bob"
FLAG_1 = "lrParametersAddress linRegCheckpointPayloadBytes 0 0 1"
OUTPUTS = ["--checkpoint-out", "c.bin", "--predictions", "p.bin", "--result", "r.bin"]


def _said(operation: str) -> str:
    return (f"missing --checkpoint CHECKPOINT: the schedule's step 1 (read) reads the input checkpoint with "
            f"tolerateEmpty 0, so this plan starts no {operation} request from its fresh state; pass --checkpoint "
            f"FILE, a checkpoint a run of this plan wrote with --checkpoint-out\n")


def _bobc(*arguments, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, arguments)], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """(the flag-0 plan, the record, a checkpoint the shipped plan wrote, the folder they are in)."""
    root = tmp_path_factory.mktemp("flag0")
    shutil.copytree(EXAMPLE, root / "linear_regression")
    plan = root / "linear_regression/LinReg/Build/NativeHost.bob"
    text = plan.read_text()
    assert text.count(FLAG_1) == 1                 # LinReg's checkpoint Read, its flag last
    plan.write_text(text.replace(FLAG_1, FLAG_1[:-1] + "0"))
    done = subprocess.run([sys.executable, str(EXAMPLE / "make_record.py"), "-o", str(root / "record.bin")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    done = _bobc("run", SHIPPED, "train", "--reference", "--input", root / "record.bin", "--checkpoint-out",
                 root / "ckpt.bin", "--predictions", root / "p0.bin", "--result", root / "r0.bin", cwd=root)
    assert done.returncode == 0, done.stderr
    return plan, root / "record.bin", root / "ckpt.bin", root


def _folder(root: Path, name: str) -> Path:
    folder = root / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    return folder


def _files(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


RUNNERS = {"reference": ("run", ["--reference"], "bobc run"), "sim": ("sim", ["--target", "sm_86"], "bobc sim")}


@pytest.mark.parametrize("runner", sorted(RUNNERS))
@pytest.mark.parametrize("operation", ["train", "predict"])
def test_the_reference_and_sim_refuse_a_request_without_a_checkpoint(setup, runner, operation):
    plan, record, _, root = setup
    command, options, name = RUNNERS[runner]
    folder = _folder(root, f"{runner}-{operation}-fresh")
    done = _bobc(command, plan, operation, *options, "--input", record, *OUTPUTS, cwd=folder)
    assert (done.returncode, done.stderr, done.stdout) == (2, f"{name}: error: " + _said(operation), "")
    assert _files(folder) == {}


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_the_reference_and_sim_with_a_checkpoint_run_as_the_shipped_plan(setup, runner):
    plan, record, checkpoint, root = setup
    command, options, _ = RUNNERS[runner]
    ran = {}
    for which, path in (("flag 0", plan), ("shipped", SHIPPED)):
        folder = _folder(root, f"{runner}-{'zero' if path == plan else 'one'}-resumed")
        done = _bobc(command, path, "train", *options, "--input", record, "--checkpoint", checkpoint, *OUTPUTS,
                     cwd=folder)
        assert done.returncode == 0, (which, done.stderr)
        ran[which] = _files(folder)
    assert sorted(ran["flag 0"]) == ["c.bin", "p.bin", "r.bin"]
    assert ran["flag 0"] == ran["shipped"]


@pytest.fixture(scope="module")
def host(setup):
    plan, _, _, root = setup
    out = root / "flag0-host"
    done = _bobc("build", plan, "--target", "sm_86", "-o", out, cwd=root)
    assert done.returncode == 0, done.stderr
    return out


def _host(host, folder, *arguments):
    return subprocess.run([str(host), *map(str, arguments)], cwd=folder, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("operation", ["train", "predict"])
def test_the_c_host_refuses_a_request_without_a_checkpoint(setup, host, operation):
    _, record, _, root = setup
    folder = _folder(root, f"host-{operation}-fresh")
    done = _host(host, folder, operation, "--input", record, *OUTPUTS)
    assert (done.returncode, done.stderr, done.stdout) == (2, "flag0-host: error: " + _said(operation), "")
    assert _files(folder) == {}


def test_the_c_host_with_a_checkpoint_reads_it_and_goes_on(setup, host):
    _, record, checkpoint, root = setup
    folder = _folder(root, "host-resumed")
    done = _host(host, folder, "train", "--input", record, "--checkpoint", checkpoint, *OUTPUTS)
    assert "--checkpoint" not in done.stderr, done.stderr
    if not os.path.exists("/dev/nvidiactl"):
        assert (done.returncode, done.stderr) == (6, "flag0-host: error: no NVIDIA GPU here (/dev/nvidiactl is "
                                                     "absent): this host (sm_86) needs the NVIDIA kernel driver "
                                                     "and a GPU\n")
        assert _files(folder) == {}
    else:
        assert done.returncode == 0, done.stderr
    # the checkpoint given is read before the GPU is looked for: a damaged one is the host's 4
    damaged = folder / "damaged.bin"
    damaged.write_bytes(checkpoint.read_bytes()[:-1])
    done = _host(host, folder, "train", "--input", record, "--checkpoint", damaged, "--checkpoint-out", "c2.bin",
                 "--predictions", "p2.bin", "--result", "r2.bin")
    assert done.returncode == 4, done.stderr


# ---- --help: the usage's brackets mark an optional word, so a plan that needs --checkpoint shows it bare ----

NEEDED = ("--input RECORD --checkpoint IN --checkpoint-out OUT",
          "  --checkpoint IN       resume from this checkpoint (required: this plan starts no request from its "
          "fresh state)\n")
OPTIONAL = ("--input RECORD [--checkpoint IN] --checkpoint-out OUT",
            "  --checkpoint IN       resume from this checkpoint (default: fresh initialization)\n")


def test_the_c_hosts_help_says_the_checkpoint_is_required(setup, host):
    done = _host(host, setup[3], "--help")
    assert done.returncode == 0 and all(part in done.stdout for part in NEEDED), done.stdout
    assert not any(part in done.stdout for part in OPTIONAL)


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_the_reference_and_sims_help_say_it_as_the_host_does(setup, runner):
    plan, _, _, root = setup
    command, options, _ = RUNNERS[runner]
    for path, expected in ((plan, NEEDED), (SHIPPED, OPTIONAL)):
        done = _bobc(command, path, "train", *options, "--help", cwd=root)
        assert done.returncode == 0 and all(part in done.stdout for part in expected), done.stdout
