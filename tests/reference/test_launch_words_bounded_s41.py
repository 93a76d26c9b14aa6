"""A reference kernel's `launch.word(i)`, `launch.u32(byte)` and `launch.f32(byte)` refuse a place
outside the launch's parameters by name (probe s41 newuser5, finding 5).

They were struct.unpack_from over the parameter bytes, which reads a negative offset from the end:
LinReg's sgd reading `launch.word(-18)` got word 2 (160 bytes = 20 words; -18 * 8 = -144 = byte 16)
and the run trained and published as if nothing were wrong.  A place past the end was refused in
struct's words ("unpack_from requires a buffer of at least 328 bytes ..."), naming no word.

The expected bounds are the plan's parameter layout, not bobc's output: the plan is written for
sm_86's bank 0, 512 bytes with the parameters from 0x160, so 160 bytes, words 0..19
(docs/kernel-contracts.md, docs/writing-a-plan.md section 5: "at most 20 argument words").  A kernel
that fails is exit 1 naming the kernel, its launch and its file:line, nothing published
(docs/host-steps.md, "Reference kernels")."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.cli import main

from .test_kernels_file_loading_s38 import EXAMPLE, OUTPUTS, PLAN, folder  # noqa: F401

CALL = "count, lr_bits = _counts(launch, 2)"


def _kernels(folder: Path, replacement: str) -> None:
    source = (EXAMPLE / "reference_kernels.py").read_text()
    assert CALL in source
    (folder / "kernels.py").write_text(source.replace(CALL, replacement))


def _run() -> int:
    return main(["run", str(PLAN), "train", "--reference", "--input", "record.bin", *OUTPUTS, "--kernels", "kernels.py"])


@pytest.mark.parametrize("index", [-18, -1, 20, 40])
def test_a_word_outside_the_parameters_is_refused_naming_it(folder, capsys, index):
    _kernels(folder, f"count, lr_bits = _counts(launch, {index})")
    assert _run() == 1
    err = capsys.readouterr().err
    assert err.startswith("bobc run: error: the reference kernel linreg-sgd failed at launch 2 (kernels.py:"), err
    assert f"IndexError: launch.word({index}): the launch's parameters are words 0..19 (160 bytes " in err, err
    assert not any((folder / name).exists() for name in ("c.bin", "p.bin", "r.bin"))


@pytest.mark.parametrize("reader, offset", [("u32", -4), ("u32", 157), ("f32", 160), ("f32", -160)])
def test_a_u32_or_f32_outside_the_parameters_is_refused_naming_it(folder, capsys, reader, offset):
    _kernels(folder, f"count, lr_bits = _counts(launch, 2); launch.{reader}({offset})")
    assert _run() == 1
    err = capsys.readouterr().err
    assert f"IndexError: launch.{reader}({offset}): the launch's parameters are bytes 0..159 " in err, err


def test_the_words_inside_still_read_as_before(folder, capsys):
    # word 2 as word, and its halves as u32 at bytes 16 and 20: the same run as the example's own
    _kernels(folder, "count, lr_bits = launch.u32(16), launch.u32(20); assert (count | lr_bits << 32) == launch.word(2)")
    assert _run() == 0, capsys.readouterr().err


# -- mutants6: the edges themselves, on a LaunchContext of 160 bytes (words 0..19) whose byte i is i:
# word 0 and word 19 (bytes 152..159), u32 / f32 at 0 and 156 (the last four bytes) read; 157 does
# not; a NumPy integer is an index (operator.index), a float is not.  Expected values: little-endian
# bytes i..i+n-1 of the ramp, worked by hand with int.from_bytes.

import numpy as np                                                  # noqa: E402

from bobc.reference.host import LaunchContext                       # noqa: E402

RAMP = LaunchContext(0, None, bytes(range(160)))


def test_the_first_and_last_places_read():
    assert RAMP.word(0) == int.from_bytes(bytes(range(0, 8)), "little")
    assert RAMP.word(19) == int.from_bytes(bytes(range(152, 160)), "little")
    assert RAMP.word(np.int64(19)) == RAMP.word(19)
    assert RAMP.u32(0) == 0x03020100 and RAMP.u32(156) == 0x9F9E9D9C
    assert RAMP.f32(156) == np.frombuffer(bytes([156, 157, 158, 159]), "<f4")[0]


@pytest.mark.parametrize("call", [lambda: RAMP.word(20), lambda: RAMP.u32(157), lambda: RAMP.f32(-1),
                                  lambda: RAMP.word(1.0), lambda: RAMP.u32(4.0)])
def test_a_place_just_outside_or_not_a_whole_number_is_refused(call):
    with pytest.raises(IndexError, match=r"the launch's parameters are (words 0\.\.19|bytes 0\.\.159)"):
        call()
