"""Byte counts in the certifier's and simulator's messages read as counts: "1 byte", "N bytes" with
commas, and a distance between addresses from 64 KiB on also in hex, as the addresses beside it are.
The pointer-into-no-resident message once said "the address 270582918912 byte(s) past its end".

The expected texts are worked by hand: 0x3f00000000 = 63 * 2^32 = 270,582,939,648."""
import dataclasses

import synthetic_bob as bob
from bobc.certify import findings
from bobc.certify.limits import shown_bytes
from bobc.targets import SM90


def with_loss_pointer(plan, value):
    """The training-loss launch (8) with its loss block pointer (argument 3) set to `value`."""
    program = plan.program
    launch = program.launches[8]
    word = bob.ARGUMENT0 + 3
    patches = tuple(dataclasses.replace(p, value=value) if p.word == word else p for p in launch.patches)
    launches = list(program.launches)
    launches[8] = dataclasses.replace(launch, patches=patches)
    return dataclasses.replace(plan, program=dataclasses.replace(program, launches=tuple(launches)))


def test_counts_read_as_counts():
    assert shown_bytes(0) == "0 bytes"
    assert shown_bytes(1) == "1 byte"
    assert shown_bytes(28) == "28 bytes"
    assert shown_bytes(4096) == "4,096 bytes"
    assert shown_bytes(4096, True) == "4,096 bytes"               # under 64 KiB: the count alone
    assert shown_bytes(65536, True) == "65,536 bytes (0x10000)"
    assert shown_bytes(270582939648, True) == "270,582,939,648 bytes (0x3f00000000)"


def test_a_pointer_far_past_every_resident_shows_the_distance_as_a_count_and_in_hex():
    plan = bob.bob_plan()
    last = max(plan.arena.globals, key=lambda r: r.address + r.size)
    end = last.address + last.size
    (message,) = [f.message for f in findings(with_loss_pointer(plan, end + 0x3f00000000), SM90)]
    assert message.endswith(f"nearest: {last.name} [{last.address:#x}, {end:#x}), the address "
                            f"270,582,939,648 bytes (0x3f00000000) past its end"), message


def test_one_byte_past_is_one_byte():
    plan = bob.bob_plan()
    last = max(plan.arena.globals, key=lambda r: r.address + r.size)
    end = last.address + last.size
    (message,) = [f.message for f in findings(with_loss_pointer(plan, end + 1), SM90)]
    assert message.endswith("the address 1 byte past its end"), message
