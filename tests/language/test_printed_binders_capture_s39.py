"""A type read back after a substitution prints so that it reads back as itself (probe s39
typerules finding 3).  `(K A)`, with `K = (lambda B . (pi A : Type 0 . (pi x : B . A)))`, is
`(pi A' : Type 0 . (pi x : A . A'))`; it printed as `(pi A : Type 0 . (pi x : A . A))`, whose
`x : A` means the inner A: `bobc eval` printed another type than the value's, and a mismatch
message showed the expected type wrongly."""
from __future__ import annotations

import pytest

from bobc.cli import main
from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86

CAPTURE = """def K = (lambda unrestricted B : Type 0 . (pi unrestricted A : Type 0 . (pi unrestricted x : B . A)))
def T : Type 1 = (pi unrestricted A : Type 0 . (K A))
def KN = (lambda unrestricted B : Type 0 . (pi unrestricted Nat : Type 0 . (pi unrestricted x : B . Nat)))
def W : Type 1 = (KN Nat)
def Br = (lambda unrestricted n : Nat . (lambda unrestricted m : Nat . (pi unrestricted n : Nat . (equal Nat n m))))
def X : Type 0 = (pi unrestricted n : Nat . (Br 0 n))
"""


def _printed(tmp_path, capsys, name):
    path = tmp_path / "Capture.bob"
    path.write_text("module Capture\n\n" + CAPTURE, encoding="utf-8")
    assert main(["eval", str(path), name]) == 0
    return path, capsys.readouterr().out.strip()


@pytest.mark.parametrize("name, level", [("T", 1), ("W", 1), ("X", 0)])
def test_a_printed_type_reads_back_as_the_same_type(tmp_path, capsys, name, level):
    path, printed = _printed(tmp_path, capsys, name)
    again = tmp_path / "Again.bob"
    again.write_text(f"module Again\n\nimport Capture\n\ndef printed : Type {level} = {printed}\n"
                     f"def same : (equal (Type {level}) {name} printed) = "
                     f"(refl (Type {level}) {name})\n", encoding="utf-8")
    load_program(again, target=SM86).check()        # the printed text is the same type as the value


def test_the_shadowing_binder_is_renamed_in_eval_and_in_a_message(tmp_path, capsys):
    path, printed = _printed(tmp_path, capsys, "T")
    assert printed == ("(pi unrestricted A : Type 0 . (pi unrestricted A' : Type 0 . "
                       "(pi unrestricted x : A . A')))")
    path.write_text("module Capture\n\n" + CAPTURE + "def bad : T = 3\n", encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    assert "(pi unrestricted A' : Type 0 . (pi unrestricted x : A . A'))" in caught.value.message
