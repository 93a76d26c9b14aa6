"""The step table (bobc.plan.host.STEP_KINDS) is the one declaration of each
host step kind: the spec family's constructors have its fields in its order,
the committed C header is its rendering, and the C interpreter has a handler
for each kind it dispatches."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / "runtime_c"


@pytest.fixture(scope="module")
def steps_family():
    from bobc.language import load_program
    from bobc.targets import SM86

    program = load_program(REPO / "specs/Platform/Linux/Nvidia/PlanHost.bob", target=SM86)
    return program.scopes["Platform.Linux.Nvidia.PlanHost"].families["NvidiaPlanHostSteps"]


def _constructors(family):
    items = family.constructors.values() if isinstance(family.constructors, dict) else family.constructors
    return {c.name: c for c in items}


def test_every_table_row_is_a_constructor_with_its_fields_in_order(steps_family):
    from bobc.plan.host import STEP_KINDS

    constructors = _constructors(steps_family)
    for kind in STEP_KINDS:
        if kind.constructor is None:
            continue
        assert kind.constructor in constructors, kind.name
        declared = list(constructors[kind.constructor].field_names)
        # the last field of every step is its tail (the rest of the schedule)
        assert declared[:-1] == [f.spec for f in kind.fields], kind.name
        assert declared[-1].endswith("Tail"), kind.name


def test_every_step_constructor_has_a_table_row(steps_family):
    from bobc.plan.host import STEP_BY_CONSTRUCTOR

    missing = sorted(set(_constructors(steps_family)) - set(STEP_BY_CONSTRUCTOR) - {"NvidiaPlanHostStepsEnd"})
    assert missing == []


def test_committed_header_is_the_tables_rendering():
    from bobc.host.steps_c import render_header

    assert (RUNTIME / "plan_steps.h").read_text(encoding="utf-8") == render_header(), (
        "runtime_c/plan_steps.h is stale: python -m bobc.host.steps_c > runtime_c/plan_steps.h")


def test_interpreter_defines_one_handler_per_kind():
    from bobc.plan.host import INTERPRETED

    source = (RUNTIME / "plan_host.c").read_text(encoding="utf-8")
    defined = re.findall(r"^static int step_(\w+)\(host \*h, const bobc_step_(\w+) \*s\)", source, re.MULTILINE)
    assert sorted(a for a, b in defined if a == b) == sorted(k.name for k in INTERPRETED)
    assert "BOBC_STEP_DISPATCH(" in source


def test_c_fields_and_enum_codes_follow_the_table():
    from bobc.host.steps_c import c_initializer, render_header
    from bobc.plan.host import FILE_CODES, STEP_KIND

    header = render_header()
    assert "BOBC_STEP_SUBMIT = 1," in header
    # a stride never reaches C: the generator resolves it when it unrolls repeats
    assert "stride" not in re.search(r"typedef struct \{[^}]*\} bobc_step_read;", header).group(0)
    assert c_initializer(STEP_KIND["write_at"], {"file": FILE_CODES["result"], "host": 0x10, "extent": 4,
                                                 "offset": 8}) == (
        "{ .op = BOBC_STEP_WRITE_AT, .u.write_at = { .file = 5, .host = 0x10ull, .extent = 0x4ull, "
        ".offset = 0x8ull } }")


def test_unroll_moves_strides_with_the_innermost_repeat():
    from bobc.plan.schedule import unroll
    from bobc.plan.host import make_step

    body = (make_step("read", file="input", host=0x100, extent=8, offset=16, stride=8, tolerate_empty=0),
            make_step("submit", gp_put=3, stride=2))
    steps = (make_step("repeat", count=3, body=body), make_step("operation"))
    out = [(k.name, v.get("offset", v.get("gp_put"))) for k, v in unroll(steps)]
    assert out == [("read", 16), ("submit", 3), ("read", 24), ("submit", 5), ("read", 32), ("submit", 7),
                   ("operation", None)]
