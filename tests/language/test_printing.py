"""`bobc eval` prints a long list in text linear in its length (probe-lang finding 7: each
cell was indented two more spaces, 800 MB for 20,000 cells)."""
from __future__ import annotations

from bobc.language import load_program
from bobc.targets import SM86
from bobc.language.printing import format_value

PLAN = """module Long

family List : Type 0
constructor ListEmpty
constructor ListCons
field unrestricted head : Nat
field unrestricted tail : (family List)
end-family

def upTo = (lambda unrestricted n : Nat .
  (nat-eliminate (lambda unrestricted k : Nat . (family List))
    (constructor List ListEmpty)
    (lambda unrestricted k : Nat . (lambda unrestricted rest : (family List) .
       (constructor List ListCons k rest)))
    n))
def short = (upTo 2)
def long = (upTo 5000)
"""


def test_a_long_list_prints_in_linear_text(tmp_path):
    path = tmp_path / "Long.bob"
    path.write_text(PLAN, encoding="utf-8")
    program = load_program(path, target=SM86)
    assert program.deep(format_value, program.value("short")).splitlines() == [
        "List.ListCons", "  head = 1", "  tail = List.ListCons", "  head = 0",
        "  tail = List.ListEmpty"]
    text = program.deep(format_value, program.value("long"))
    lines = text.splitlines()
    assert len(lines) == 2 * 5000 + 1
    assert max(len(line) for line in lines) < 40
    assert lines[-2:] == [
        "  head = 0", "  tail = List.ListEmpty"]
