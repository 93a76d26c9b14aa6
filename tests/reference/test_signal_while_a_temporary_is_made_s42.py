"""A signal that ends bobc while an output's temporary is being made leaves no `.NAME.tmp-XXXXXX`
(probe s42 cli3 finding 2).  SIGINT 1.8 s into `bobc build LinReg/Build/NativeHost.bob -o out/h
--emit-images out/imgs --emit-c out/h.c` (exit 130, "bobc: interrupted") left
out/imgs/.program.bin.tmp-ZldcdY: a temporary was created, then returned to the publication that
removes its temporaries on failure, and a signal between the two (or during its write, where only
an OSError removed it) left it where it was.  README, "Exit codes": "Ended by a signal, every command
cleans up (no temporary left ...)".  Here the signal is delivered at the exact places: right after the
temporary's file is created (os.open returns), and in the middle of writing it; the expected result
is the promise itself: the folder holds what it held before, and the signal still ends the call."""
from __future__ import annotations

import os
import signal

import pytest

from bobc.reference import safe_io


@pytest.fixture(autouse=True)
def _sigint_as_a_terminal_gives_it():
    """SIGINT raises KeyboardInterrupt here, as in a terminal's command: a test run in the background
    has it ignored (tests/test_cli_signals.py), and then no signal would end the call."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def _outputs(folder, names):
    outputs = safe_io.OutputSet()
    for name in names:
        outputs.add(str(folder / name), "--emit-images")
        outputs.outputs[-1].data = b"x" * 4096
    return outputs


def _signal_after_create(monkeypatch, which):
    """os.open as safe_io calls it, SIGINT raised once the `which`-th temporary's file exists."""
    real = os.open
    made = []

    def opened(path, flags, *rest, **named):
        fd = real(path, flags, *rest, **named)
        if ".tmp-" in os.fspath(path) and flags & os.O_CREAT:
            made.append(path)
            if len(made) == which:
                signal.raise_signal(signal.SIGINT)
        return fd

    monkeypatch.setattr(safe_io.os, "open", opened)


@pytest.mark.parametrize("which", [1, 2, 3])
def test_a_signal_just_after_a_temporary_is_created(tmp_path, monkeypatch, which):
    _signal_after_create(monkeypatch, which)
    outputs = _outputs(tmp_path, ["program.bin", "qmd.bin", "manifest.json"])
    with pytest.raises(KeyboardInterrupt):      # the signal still ends the publication
        outputs.publish()
    assert sorted(os.listdir(tmp_path)) == []


def test_a_signal_just_after_a_single_file_temporary_is_created(tmp_path, monkeypatch):
    """publish_file with a mode (`bobc build -o HOST`, `bobc asm -o OUT`): the same."""
    _signal_after_create(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        safe_io.publish_file(str(tmp_path / "host"), b"\x7fELF" + b"\0" * 4096, "-o", mode=0o755)
    assert sorted(os.listdir(tmp_path)) == []


def test_a_signal_while_a_temporary_is_written(tmp_path, monkeypatch):
    """The signal's exception out of the write itself (not an OSError): the temporary is removed
    and its descriptor closed."""
    def interrupted(fd, data):
        raise KeyboardInterrupt

    monkeypatch.setattr(safe_io, "write_all", interrupted)
    before = set(os.listdir("/proc/self/fd"))
    outputs = _outputs(tmp_path, ["program.bin", "qmd.bin"])
    with pytest.raises(KeyboardInterrupt):
        outputs.publish()
    assert sorted(os.listdir(tmp_path)) == []
    assert set(os.listdir("/proc/self/fd")) <= before


def test_a_signal_while_a_prepared_temporary_is_created(tmp_path, monkeypatch):
    """OutputSet.prepare (a native program's outputs): the temporary is the output's from its
    creation on, so discard() removes it."""
    _signal_after_create(monkeypatch, 1)
    outputs = safe_io.OutputSet()
    outputs.add(str(tmp_path / "out"), "argument 1")
    with pytest.raises(KeyboardInterrupt):
        outputs.prepare({"argument 1": b"y" * 100})
    outputs.discard()
    assert sorted(os.listdir(tmp_path)) == []
