"""A reference kernel's `memory.array(address, dtype, count)` (and the views under it) refuses a
negative count by name (probe s41 newuser5, finding 6).

The view was a slice of the buffer's bytearray, [offset, offset + size), and a negative size made a
negative stop: an empty view, or -- for an address at a buffer's start -- the buffer up to that many
bytes before its end.  LinReg's parameters are the arena's first bytes (lrParametersAddress =
lrArenaBase = 0x1100000000, LinReg/Build/NativeHost.bob), so an sgd whose count came out negative,
`memory.array(W, "<f4", -count)[:count]`, read and wrote W through a view of most of the arena and
the run trained and published as if nothing were wrong.  The expected refusal follows from the
documented API (docs/host-steps.md, "Reference kernels": `count` elements at `address`): no count of
elements is negative; a kernel's failure is exit 1 naming the kernel, launch and line, nothing
published.  LinReg's count is D + 1 = 8 (LinReg/Model.bob: 7 features and the bias)."""
from __future__ import annotations

import pytest

from bobc.cli import main

from .test_kernels_file_loading_s38 import EXAMPLE, OUTPUTS, PLAN, folder  # noqa: F401

LINE = 'W = memory.array(launch.word(0), "<f4", count)'


@pytest.mark.parametrize("written, shown", [("-count)[:count]", "-8"), ("count - 9)", "-1"),
                                            ("float(count))", "8.0")])
def test_a_count_that_is_not_a_whole_number_of_elements_is_refused(folder, capsys, written, shown):
    source = (EXAMPLE / "reference_kernels.py").read_text()
    assert LINE in source
    (folder / "kernels.py").write_text(source.replace(LINE, LINE.replace("count)", written)))
    code = main(["run", str(PLAN), "train", "--reference", "--input", "record.bin", *OUTPUTS, "--kernels", "kernels.py"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.startswith("bobc run: error: the reference kernel linreg-sgd failed at launch 2 (kernels.py:"), err
    assert f"memory.array(0x1100000000, '<f4', {shown}): the count of elements is a whole number, 0 or more" in err, err
    assert not any((folder / name).exists() for name in ("c.bin", "p.bin", "r.bin"))


# -- mutants6: the edges, on a 16-byte buffer at 0x1000 directly: size / count 0 is an empty view
# (0 or more, the doc's words), -1 is refused (it was the buffer less its last byte), NumPy
# integers are whole numbers, 4.0 is not.

import numpy as np                                                  # noqa: E402

from bobc.reference.host import Memory, ReferenceHostError          # noqa: E402


def _memory():
    return Memory([(0x1000, bytearray(range(16)))])


def test_zero_is_an_empty_view_and_numpy_integers_count():
    memory = _memory()
    assert bytes(memory.view(0x1000, 0)) == b"" and memory.array(0x1000, "<u4", 0).size == 0
    assert bytes(memory.view(0x1000, np.int64(3))) == bytes([0, 1, 2])
    assert memory.array(0x1004, "<u4", np.uint32(1)).tolist() == [0x07060504]


@pytest.mark.parametrize("size", [-1, 4.0])
def test_a_view_of_minus_one_or_a_float_is_refused(size):
    with pytest.raises(ReferenceHostError, match=r"a view's size is a whole number of bytes, 0 or more"):
        _memory().view(0x1000, size)
