"""Runtime.NativeMemoryPlan's nativeMemoryCopyWords leaves the destination holding the source's
words even where the two ranges overlap (probe s39 stdlib finding 6), as memmove does; run by
the independent interpreter tests/specs/native_program.py."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from native_program import Machine  # noqa: E402

BASE = 256
WORDS = [0x1111, 0x2222, 0x3333, 0x4444, 0x5555, 0x6666]


@pytest.mark.parametrize("destination, source, count", [
    (1, 0, 4),      # destination after the source, overlapping: a forward copy smears word 0
    (0, 1, 4),      # destination before the source, overlapping
    (2, 0, 3),
    (0, 3, 3),      # disjoint
    (3, 0, 3),
    (2, 2, 3),      # onto itself
    (1, 0, 0),      # nothing
])
def test_copy_words_is_a_move(probe, destination, source, count):
    program = probe("import Runtime.NativeMemoryPlan\nimport Runtime.NativePhysicalProgram\n\n"
                    f"def host : Bytes = (nativePhysicalCommandsBytes (nativeMemoryCopyWords "
                    f"{BASE + 8 * destination} {BASE + 8 * source} {count} phEnd))\n")
    machine = Machine()
    for i, word in enumerate(WORDS):
        machine.set_word(BASE + 8 * i, word)
    machine.run(program.value("host").value)
    expected = list(WORDS)
    expected[destination:destination + count] = WORDS[source:source + count]
    assert [machine.word(BASE + 8 * i) for i in range(len(WORDS))] == expected
