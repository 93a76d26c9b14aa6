"""Probe s31 hostexe finding 11: an output's folder that cannot be entered (writable, no search
permission) and one on a read-only mount were both refused as "not writable".  The C host and
`bobc run --reference` now say which, byte for byte; a folder that is simply not writable keeps
its words.  Needs root (capabilities dropped with setpriv, a tmpfs mounted read-only)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
sys.path.insert(0, str(REPO / "examples" / "bob"))
NO_DAC = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]     # root that honours modes

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                                reason="needs root and setpriv")


def run(argv, cwd):
    return subprocess.run(list(map(str, argv)), capture_output=True, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def bob(tmp_path_factory):
    import numpy as np
    from bob_model.formats import InputRecord, encode_input_record

    folder = tmp_path_factory.mktemp("folder-reasons")
    (folder / "record.bin").write_bytes(encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256,
                                                                        [119, 116, 32])))
    host = folder / "bob-host"
    done = run([sys.executable, "-m", "bobc", "build", PLAN, "-o", host], folder)
    assert done.returncode == 0, done.stderr
    return folder, host


def both(bob, out_folder):
    folder, host = bob
    words = ["train", "--input", "record.bin", "--checkpoint-out", f"{out_folder}/c.bin", "--predictions", "p.bin",
             "--result", "r.bin"]
    native = run([*NO_DAC, host, *words], folder)
    reference = run([*NO_DAC, sys.executable, "-m", "bobc", "run", PLAN, *words, "--reference"], folder)
    assert native.returncode == reference.returncode == 8, (native.stderr, reference.stderr)
    assert native.stderr.startswith(b"bob-host: error: ") and reference.stderr.startswith(b"bobc run: error: ")
    said = native.stderr.partition(b": error: ")[2]
    assert said == reference.stderr.partition(b": error: ")[2]
    assert not any((folder / n).exists() for n in ("p.bin", "r.bin"))
    return said.decode()


@pytest.mark.parametrize("mode", [0o600, 0o200])
def test_a_folder_that_cannot_be_entered_says_so(bob, mode):
    folder, _ = bob
    name = f"noenter{mode:o}"
    (folder / name).mkdir()
    (folder / name).chmod(mode)
    said = both(bob, name)
    assert said == (f"output {name}/c.bin (--checkpoint-out): its folder {name} cannot be entered: its mode "
                    f"{mode:04o} gives no search (x) permission; nothing was written\n")


def test_a_folder_without_write_permission_is_not_writable(bob):
    folder, _ = bob
    (folder / "readonly").mkdir()
    (folder / "readonly").chmod(0o555)
    said = both(bob, "readonly")
    assert said == "output readonly/c.bin (--checkpoint-out): its folder readonly is not writable; nothing was written\n"


def test_a_read_only_mount_says_so(bob):
    folder, _ = bob
    mount = folder / "rofs"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        said = both(bob, "rofs")
    finally:
        subprocess.run(["umount", str(mount)], check=True)
    assert said == "output rofs/c.bin (--checkpoint-out): its folder rofs is on a read-only file system; nothing was written\n"
