"""A plan (or any file a command takes) that is a broken or looping symbolic link, a FIFO or a
folder is named for what it is by every command, not only by check and eval (probe s28 lang,
finding 13; commands/_common.existing_file), exit 2, without blocking on the FIFO."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("command", [["build", "-o", "h"], ["run", "train", "--reference", "--input", "r.bin"],
                                     ["sim", "train", "--input", "r.bin", "--checkpoint-out", "c", "--predictions", "p",
                                      "--result", "r"]])
def test_a_plan_path_is_named_for_what_it_is(tmp_path, command):
    os.symlink(tmp_path / "absent" / "x.bob", tmp_path / "broken.bob")
    os.symlink("loop.bob", tmp_path / "loop.bob")
    os.mkfifo(tmp_path / "pipe.bob")
    (tmp_path / "folder.bob").mkdir()
    expected = {"broken.bob": f"broken.bob is a broken symbolic link (to {tmp_path / 'absent' / 'x.bob'}, which "
                              f"does not exist)",
                "loop.bob": "loop.bob is a symbolic link that loops (to loop.bob)",
                "pipe.bob": "pipe.bob is a FIFO (named pipe), not a regular file",
                "folder.bob": "folder.bob is a folder, not a file"}
    for name, said in expected.items():
        done = subprocess.run([sys.executable, "-m", "bobc", command[0], name, *command[1:]], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr, (name, done.stderr)
