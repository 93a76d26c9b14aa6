"""`bobc sim` refuses a word32 fill whose value is no natural below 2^32 with the C host's own line
(probe s37 quoting2, finding 1's leftover): runtime_c/plan_fill.c bobc_fill_bytes writes `a fill's
value %.17g at step T is no natural below 2^32`, naming no fill.  Before, the simulator wrote
`fill (NOTE): its value V at step T ...`: other words, Python's repr of the value, and the plan's note
raw (a newline or an escape sequence in it split the line and drove the terminal).

The oracle is the C host's code itself: plan_fill.c compiled with a small driver, run on the same
fills as the simulator's invocation.fill_bytes."""
from __future__ import annotations

import sys
from pathlib import Path
import struct

import pytest

from bobc.sim.faults import HostStepFault
from bobc.sim.host_adapter import HostFill
from bobc.sim.invocation import fill_bytes

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))      # tests/: the shared C oracle
import plan_fill_driver  # noqa: E402



@pytest.fixture(scope="module")
def c_host(tmp_path_factory):
    """The C host's word32 fill at (input step, step, terms): its refusal, else "accepted"."""
    says = plan_fill_driver.compiled(tmp_path_factory.mktemp("plan-fill"))

    def refusal(input_step, step, terms):
        said = says("word32", input_step, step, terms)
        return said[len(plan_fill_driver.REFUSED):] if said.startswith(plan_fill_driver.REFUSED) else "accepted"
    return refusal


# (input step, fill step, terms): values that are no natural below 2^32, each a way the line's value
# and step can be written
CASES = [
    (0, 0, [("constant", 0.5)]),
    (0, 0, [("constant", -1.0)]),                                      # C: -1, Python's repr: -1.0
    (0, 0, [("constant", 2.0 ** 32)]),                                 # 4294967296, not 4294967296.0
    (1, 2, [("constant", 0.1), ("step", 0.0), ("multiply", 0.0)]),     # 17 digits: 0.30000000000000004
    (0, 0, [("constant", 1.0), ("constant", 3.0), ("divide", 0.0)]),
    (0, 0, [("constant", 1e300), ("constant", 1e300), ("multiply", 0.0)]),            # inf
    (0, 0, [("constant", -4.0), ("sqrt", 0.0)]),                                      # a NaN
    (2 ** 64 - 1, 1, [("step", 0.0)]),                                 # the step past 2^64, exact
]


@pytest.mark.parametrize("input_step, step, terms", CASES)
def test_the_simulator_refuses_a_fill_in_the_c_hosts_words(c_host, input_step, step, terms):
    said = c_host(input_step, step, terms)
    assert said.startswith("a fill's value ") and said.endswith(" is no natural below 2^32"), said
    fill = HostFill(0, step, "word32", tuple(terms), "launch 0 (L\n\x1b[31mG) + 0x10")
    with pytest.raises(HostStepFault) as caught:
        fill_bytes(fill, input_step)
    assert caught.value.message == said


def test_a_natural_is_accepted_by_both(c_host):
    terms = [("step", 0.0), ("constant", 1.0), ("add", 0.0)]
    assert c_host(41, 0, terms) == "accepted"
    assert fill_bytes(HostFill(0, 0, "word32", tuple(terms), "n"), 41) == struct.pack("<I", 42)
