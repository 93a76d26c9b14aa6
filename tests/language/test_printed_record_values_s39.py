"""The value of a record of a family with parameters prints as a record (probe s39 typerules
finding 4).  Its parameters come from its type, not from the form, so the value holds none;
a message printed it `(constructor P MkP 4)`, a constructor form without the parameter, which
does not read back (constructor P MkP takes 1 parameter and 1 field)."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86

FAMILY = """family P (A : Type 0) : Type 0
constructor MkP
field unrestricted a : A
end-family

def y = (the (family P Nat) (record P (a = 4)))
"""


def test_a_record_value_in_a_failed_claim_prints_as_a_record_that_reads_back(tmp_path):
    path = tmp_path / "Rec.bob"
    path.write_text("module Rec\n\n" + FAMILY + "def diff : (equal (family P Nat) y (constructor P "
                    "MkP Nat 3)) = (refl (family P Nat) y)\n", encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    left = next(line for line in caught.value.message.splitlines() if "left:" in line)
    printed = left.split("left:", 1)[1].strip()
    assert printed == "(record P (a = 4))"
    # what is printed is y's value, read back
    path.write_text("module Rec\n\n" + FAMILY + f"def again : (family P Nat) = {printed}\n"
                    "def same : (equal (family P Nat) y again) = (refl (family P Nat) y)\n",
                    encoding="utf-8")
    load_program(path, target=SM86).check()
