"""The host plan's declared layout (bobc.host.sections.PLAN_STRUCTS, PLAN_ENUMS), by which `bobc dump`
and `diff` decode a host's plan, is the C compiler's: every member's offset and size, every structure's size
and every enum constant's value, from the runtime's own headers (probe s29 hostjson)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / "runtime_c"


def _probe_source():
    from bobc.host.sections import PLAN_ENUMS, PLAN_STRUCTS
    from bobc.plan.host import INTERPRETED

    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "nv_shim.h"', '#include "plan_host.h"',
             "int main(void)", "{"]
    for name, fields in PLAN_STRUCTS.items():
        lines.append(f'    printf("{name} %zu\\n", sizeof({name}));')
        for f in fields:
            lines.append(f'    printf("{name}.{f.name} %zu %zu\\n", offsetof({name}, {f.name}), '
                         f'sizeof((({name} *)0)->{f.name}));')
    lines.append('    printf("bobc_step %zu\\n", sizeof(bobc_step));')
    lines.append('    printf("bobc_step.op %zu\\n", offsetof(bobc_step, op));')
    for kind in INTERPRETED:
        lines.append(f'    printf("bobc_step.u.{kind.name} %zu\\n", offsetof(bobc_step, u.{kind.name}));')
    for enum, rows in PLAN_ENUMS.items():
        for constant, _, _ in rows:
            lines.append(f'    printf("{enum}.{constant} %d\\n", (int){constant});')
    return "\n".join(lines + ["    return 0;", "}", ""])


def _expected():
    from bobc.host.sections import PLAN_ENUMS, PLAN_STRUCTS, c_layout

    out = []
    for name in PLAN_STRUCTS:
        size, _, offsets = c_layout(name)
        out.append(f"{name} {size}")
        out += [f"{name}.{f.name} {offsets[f.name]} {c_layout(f.c_type)[0]}" for f in PLAN_STRUCTS[name]]
    size, _, offsets = c_layout("bobc_step")
    out.append(f"bobc_step {size}")
    out += [f"bobc_step.{member} {offset}" for member, offset in offsets.items()]
    for enum, rows in PLAN_ENUMS.items():
        out += [f"{enum}.{constant} {value}" for constant, value, _ in rows]
    return sorted(out)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_declared_layout_is_the_c_compilers(tmp_path):
    source = tmp_path / "probe.c"
    source.write_text(_probe_source(), encoding="utf-8")
    binary = tmp_path / "probe"
    done = subprocess.run(["gcc", "-std=c11", "-I", str(RUNTIME), str(source), "-o", str(binary)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    printed = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.splitlines()
    assert sorted(printed) == _expected()


def test_the_step_structs_are_the_step_tables():
    """bobc_step_<kind> in the declaration is the step table's C fields, as plan_steps.h renders them."""
    from bobc.host.sections import PLAN_STRUCTS
    from bobc.plan.host import INTERPRETED

    for kind in INTERPRETED:
        names = [f.name for f in PLAN_STRUCTS[f"bobc_step_{kind.name}"]]
        expected = [n for f in kind.c_fields for n in ((f.name, f"{f.name}_bytes") if f.c_type == "bytes"
                                                        else (f.name,))] or ["none"]
        assert names == expected, kind.name


def test_the_generator_refuses_an_enum_name_the_layout_does_not_declare():
    from bobc.host import generate

    assert generate._constant("rt_check", "word", "x") == "RT_CHECK_WORD"
    assert generate.LOCATIONS == {"system": "RT_MEM_SYSTEM", "video": "RT_MEM_VIDEO"}
    with pytest.raises(generate.HostGenerationError, match="'gaussian' is no rt_init this host declares"):
        generate._constant("rt_init", "gaussian", "an initializer")
