"""Representation.ParticipantGroup's participantIdentity names one worker (probe s39 stdlib
finding 1): b"<name>/<rank>-of-<size>" with every digit of the rank and the size, at least
three each (as C's "%03d" prints them), so no two workers of one group share an identity,
however large the group."""
from __future__ import annotations

RANKS = [0, 1, 9, 99, 999, 1000, 1001, 12345, 10 ** 24, 2 ** 64]


def test_identities_of_a_large_group_are_distinct_and_print_every_digit(probe):
    size = 10 ** 24 + 1
    text = "import Representation.ParticipantGroup\n\n"
    text += f"def group : (family ParticipantGroup) = (constructor ParticipantGroup ParticipantGroupValue b\"g\" {size})\n"
    text += "".join(f"def id{i} : Bytes = (participantIdentity group {rank})\n" for i, rank in enumerate(RANKS))
    text += ("def pair : Bytes = (participantIdentity (participantPair b\"coordinates\") 1)\n"
             "def thousand0 : Bytes = (participantIdentity (constructor ParticipantGroup ParticipantGroupValue b\"g\" 1001) 0)\n"
             "def thousand1000 : Bytes = (participantIdentity (constructor ParticipantGroup ParticipantGroupValue b\"g\" 1001) 1000)\n")
    program = probe(text)
    program.check()
    got = [program.value(f"id{i}").value for i in range(len(RANKS))]
    assert got == [b"g/%03d-of-%03d" % (rank, size) for rank in RANKS]
    assert len(set(got)) == len(RANKS)
    # a pair's identities keep their three-digit form
    assert program.value("pair").value == b"coordinates/001-of-002"
    # the probe's case: ranks 0 and 1000 of a 1001-worker group were both b"g/000-of-001"
    assert program.value("thousand0").value == b"g/000-of-1001"
    assert program.value("thousand1000").value == b"g/1000-of-1001"
