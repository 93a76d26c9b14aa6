"""The edge of a native program's naturals (probe s40 mutants4): a natural is 8 bytes little-endian
(docs/platform.md), so 2^64 - 1 is the largest it holds and 2^64 itself -- which the 8 bytes would
keep as 0 -- is refused like any wider one.  The s39 tests used 2^64 + 1 and 2^64 + 256 only, so a
check of `> 2^64` instead of `>= 2^64` passed them."""
from __future__ import annotations

import pytest

PLAN = '''module Native.Edge
import Runtime.NativePhysicalProgram
def atBound : (family NativePhysicalCommands) = (phStore 18446744073709551616 (phImm 7) phEnd)
def belowBound : (family NativePhysicalCommands) = (phStore 18446744073709551615 (phImm 7) phEnd)
'''


def _bytes(tmp_path, name: str):
    from bobc.language import load_program
    from bobc.plan.commands import program_bytes
    from bobc.plan.intrinsics import default_intrinsics
    from bobc.targets import SM90

    path = tmp_path / "Native" / "Edge.bob"
    path.parent.mkdir(exist_ok=True)
    path.write_text(PLAN)
    program = load_program(path, intrinsics=default_intrinsics(), target=SM90)
    program.check()
    return program_bytes(program, program.definition(f"Native.Edge.{name}").thunk, "step 1")


def test_two_to_the_64_is_refused(tmp_path):
    from bobc.errors import BobcError
    with pytest.raises(BobcError) as refused:
        _bytes(tmp_path, "atBound")
    assert (f"command 0 (Store): nativePhysicalStoreAddress is {1 << 64}, 2^64 or more" in str(refused.value)
            and "wrap to 0" in str(refused.value)), str(refused.value)


def test_two_to_the_64_minus_one_passes_the_width_check(tmp_path):
    """It fits the 8 bytes, so what refuses it is the state's bounds (a Store there is outside any
    state), not the width."""
    from bobc.errors import BobcError
    with pytest.raises(BobcError) as refused:
        _bytes(tmp_path, "belowBound")
    message = str(refused.value)
    assert "2^64 or more" not in message and f"[{(1 << 64) - 1}, +8) is outside" in message, message
