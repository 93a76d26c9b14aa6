"""With overlapping residents (refused on their own), an access that lies wholly inside one of
them is that resident's, not a stray run past the other (probe s28 newmodel2 finding 6: LogReg
with its gradient 8 bytes into its parameters gave 61 "runs 16 bytes past parameters" faults
besides the overlap, for accesses wholly inside `gradient`)."""
from __future__ import annotations

from bobc.certify.kernels import Argument
from bobc.certify.pointers import _check_address
from bobc.plan.model import Resident

PARAMETERS = Resident("parameters", 0x1100000000, 24, 8)
GRADIENT = Resident("gradient", 0x1100000008, 24, 8)
READ_24 = Argument(1, "pointer", 24, "read", "the gradient G")


def test_an_access_inside_the_overlapping_resident_is_that_residents():
    assert _check_address([PARAMETERS, GRADIENT], None, READ_24, "launch 3 (sgd) argument 1", GRADIENT.address,
                          {}) == []


def test_an_access_inside_neither_still_runs_past():
    wide = Argument(1, "pointer", 32, "read", "the gradient G")
    faults = _check_address([PARAMETERS, GRADIENT], None, wide, "launch 3 (sgd) argument 1", GRADIENT.address, {})
    assert [f.kind for f in faults] == ["extent"]
    assert "runs 16 bytes past parameters" in faults[0].message

