"""Evaluation conformance: eval/success/<name>A.bob's `result` prints as
<name>B.txt; eval/failure/<name>.bob fails (loading or evaluating `result`)
with every line of <name>.txt in its message."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86
from bobc.language.printing import format_value

from .conftest import cases, expected_fragments


@pytest.mark.parametrize("path", cases("eval/success", "*A.bob"))
def test_eval_success(path):
    expected = path.with_name(path.name[:-len("A.bob")] + "B.txt").read_text(encoding="utf-8")
    program = load_program(path, target=SM86)
    assert format_value(program.value("result")) + "\n" == expected


@pytest.mark.parametrize("path", cases("eval/failure", "*.bob"))
def test_eval_failure(path):
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).value("result")
    rendered = caught.value.render()
    for fragment in expected_fragments(path.with_suffix(".txt")):
        assert fragment in rendered
