"""`coppelius_host.checkpoint show CKPT --config A --updates-per-invocation U` of a checkpoint of shape
B with the same run length U: the refusal's hint names options that show it.

Probe s45 coppuser: a 2-update checkpoint of 1x256x128 shown with `--config small
--updates-per-invocation 2` was told "show it with --config 1x256x128": the hint left the run length
off because it matched the one asked for under small, but `--config 1x256x128` alone means that
shape's plan run length (200), and was refused again (exit 5, updates per invocation differ).  The
independent check: the options the hint names, given to `show`, show the checkpoint (exit 0)."""
from __future__ import annotations

import re

import pytest

from coppelius_host import checkpoint


@pytest.fixture(scope="module")
def two_updates(tmp_path_factory):
    path = tmp_path_factory.mktemp("hint") / "two.ckpt"
    assert checkpoint.main(["fresh", "-o", str(path), "--config", "1x256x128", "--updates-per-invocation", "2"]) == 0
    return path


@pytest.mark.parametrize("asked", [["--config", "small", "--updates-per-invocation", "2"], ["--config", "small"]])
def test_the_options_the_hint_names_show_it(two_updates, asked, capsys):
    capsys.readouterr()
    assert checkpoint.main(["show", str(two_updates), *asked]) == 5
    said = capsys.readouterr().err
    options = re.search(r"\(a checkpoint of the shape 1x256x128: show it with ([^)]*)\)\n$", said).group(1)
    assert options == "--config 1x256x128 --updates-per-invocation 2"
    assert checkpoint.main(["show", str(two_updates), *options.split()]) == 0
    assert capsys.readouterr().out.startswith(f"{two_updates}: step 0, updates 0")
