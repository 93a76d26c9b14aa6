"""Call-by-need evaluation, the public Program API, deep structures, intrinsics."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.language import Intrinsics, VBytes, VCon, VNat, load_program
from bobc.targets import SM86, SM90

PLAN = """module Plan

family Plan : Type 0
constructor PlanValue
field unrestricted launches : Nat
field unrestricted code : Bytes
end-family

family Box : Type 0
constructor BoxValue
field unrestricted cheap : Nat
field unrestricted costly : Bytes
end-family

family List : Type 0
constructor ListEmpty
constructor ListCons
field unrestricted head : Nat
field unrestricted tail : (family List)
end-family

def plan : (family Plan) = (constructor Plan PlanValue 7 b"kernel")
def code : Bytes = (compiler-native-encode (family Plan) plan)
def box : (family Box) = (record Box (cheap = 3) (costly = code))
def launchCount : Nat = (eliminate Box (lambda unrestricted b : (family Box) . Nat) box
  (branch BoxValue cheap costly . cheap))
def codeLength : Nat = (bytes-length code)
def codeLengthAgain : Nat = (nat-add codeLength (bytes-length code))
def unusedLet : Nat = (let unrestricted boom = (bytes-length code) in 5)
def unusedArgument : Nat = ((lambda unrestricted ignored : Bytes . 11) code)

def upTo = (lambda unrestricted n : Nat .
  (nat-eliminate (lambda unrestricted k : Nat . (family List))
    (constructor List ListEmpty)
    (lambda unrestricted k : Nat . (lambda unrestricted rest : (family List) .
       (constructor List ListCons k rest)))
    n))
def sum = (lambda unrestricted xs : (family List) .
  (eliminate List (lambda unrestricted c : (family List) . Nat) xs
    (branch ListEmpty . 0)
    (branch ListCons h t induction . (nat-add induction h))))
def bigSum : Nat = (sum (upTo 65536))
def countTo = (lambda unrestricted n : Nat .
  (nat-eliminate (lambda unrestricted k : Nat . Nat) 0
    (lambda unrestricted k : Nat . (lambda unrestricted below : Nat . (succ below))) n))
def addThree = (nat-add 3)
"""


@pytest.fixture
def plan_path(tmp_path):
    path = tmp_path / "Plan.bob"
    path.write_text(PLAN, encoding="utf-8")
    return path


class CountingEncoder:
    """A compiler-native-encode handler that counts its calls."""

    def __init__(self):
        self.calls = 0
        self.targets = []

    def __call__(self, value, context):
        self.calls += 1
        self.targets.append(context.target.name)
        plan = context.program.force(value)
        launches = context.program.field(plan, "launches").value
        return VBytes(bytes([launches]) * launches)


def load(plan_path, encoder=None, target=SM86):
    intrinsics = Intrinsics()
    if encoder is not None:
        intrinsics.register("Plan", encoder)
    return load_program(plan_path, intrinsics=intrinsics, target=target)


def test_unused_fields_lets_and_arguments_are_never_forced(plan_path):
    encoder = CountingEncoder()
    program = load(plan_path, encoder)
    assert program.value("launchCount").value == 3
    assert program.value("unusedLet").value == 5
    assert program.value("unusedArgument").value == 11
    box = program.value("box")
    assert program.field(box, "cheap").value == 3
    assert encoder.calls == 0


def test_definitions_are_evaluated_once(plan_path):
    encoder = CountingEncoder()
    program = load(plan_path, encoder, target=SM90)
    assert program.value("codeLengthAgain").value == 14
    assert program.value("code").value == b"\x07" * 7
    assert encoder.calls == 1
    assert encoder.targets == ["sm_90"]


def test_an_unregistered_family_is_an_error_only_when_forced(plan_path):
    program = load(plan_path)
    assert program.value("launchCount").value == 3
    with pytest.raises(BobcError) as caught:
        program.value("codeLength")
    assert "no compiler-native-encode handler for family Plan" in caught.value.render()


def test_constructor_values_expose_family_constructor_and_fields(plan_path):
    program = load(plan_path)
    plan = program.value("plan")
    assert isinstance(plan, VCon)
    assert (plan.family, plan.constructor, plan.field_names) == ("Plan", "PlanValue",
                                                                  ("launches", "code"))
    assert plan.params == ()
    assert [program.force(f).value for f in plan.fields] == [7, b"kernel"]
    with pytest.raises(BobcError):
        program.field(plan, "missing")


def test_apply_with_partial_primitives_and_closures(plan_path):
    program = load(plan_path)
    assert program.apply(program.value("addThree"), VNat(4)).value == 7
    assert program.apply(program.value("countTo"), VNat(12)).value == 12
    listed = program.apply(program.value("upTo"), VNat(3))
    heads = []
    while listed.constructor == "ListCons":
        heads.append(program.field(listed, "head").value)
        listed = program.field(listed, "tail")
    assert heads == [2, 1, 0]


def test_deep_structures_do_not_exhaust_the_stack(plan_path):
    program = load(plan_path)
    # 0 + 1 + ... + 65535 through 65536 nested induction hypotheses
    assert program.value("bigSum").value == 65535 * 65536 // 2


def test_nat_eliminate_iterates_on_literals(plan_path):
    program = load(plan_path)
    assert program.apply(program.value("countTo"), VNat(200_000)).value == 200_000


def test_nat_eliminate_past_its_limit_is_refused_at_once(plan_path):
    """Issue 19 (9): a loop count of 2^64 + 7 ran for minutes; now a message, instantly."""
    import time

    from bobc.language.limits import LimitExceeded
    program = load(plan_path)
    started = time.process_time()
    for count in (2 ** 20 + 1, 2 ** 64 + 7):
        with pytest.raises(LimitExceeded) as caught:
            program.apply(program.value("countTo"), VNat(count))
        assert "1,048,576" in caught.value.message and f"{count:,}" in caught.value.message
    assert time.process_time() - started < 1.0


def test_a_program_past_its_evaluation_steps_is_refused_naming_the_limit(plan_path, monkeypatch):
    """The step limit (docs/limits.md) stops a long evaluation with a message naming it."""
    from bobc.language import limits
    from bobc.language.limits import LimitExceeded
    monkeypatch.setattr(limits, "EVALUATION_STEPS", 50_000)
    program = load(plan_path)
    assert program.apply(program.value("countTo"), VNat(1_000)).value == 1_000
    with pytest.raises(LimitExceeded) as caught:
        program.apply(program.value("countTo"), VNat(200_000))
    assert "evaluation steps" in caught.value.message and "50,000" in caught.value.message


def test_eval_command_prints_and_fails_cleanly(plan_path, capsys):
    from bobc.cli import main
    assert main(["eval", str(plan_path), "plan"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "Plan.PlanValue", "  launches = 7", '  code = b"kernel"']
    assert main(["eval", str(plan_path), "plan", "--hex"]) == 0
    assert capsys.readouterr().out.splitlines()[2] == '  code = x"6b65726e656c" (6 bytes)'
    # printing a box prints every field, so its encoded code is needed: no handler here
    assert main(["eval", str(plan_path), "box"]) == 1
    assert "no compiler-native-encode handler for family Plan" in capsys.readouterr().err
    assert main(["eval", str(plan_path), "nothingHere"]) == 1
    assert "no definition nothingHere" in capsys.readouterr().err
