"""A host step's integer fields are held to the C type the generated host declares them as
(plan_steps.h), not to uint64_t alone (probe s39 genc finding 1): a Read's tolerateEmpty of 2^32
was certified, then failed inside gcc (`-Werror=overflow`: "conversion ... changes value from
'4294967296' to '0'") with "this is a bobc bug"."""
from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from bobc.certify.limits import C_TYPE_MOST, check_limits
from bobc.host import gcc, steps_c
from bobc.plan.host import INTERPRETED
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]


LINREG = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"


@pytest.fixture(scope="module")
def linreg():
    from bobc import pipeline

    return pipeline.extract(pipeline.load(LINREG, SM86), None)


def _with_tolerate_empty(plan, value: int):
    steps = list(plan.host.steps)
    index = next(i for i, step in enumerate(steps) if step.kind.name == "read")
    steps[index] = dataclasses.replace(steps[index], tolerate_empty=value)
    return dataclasses.replace(plan, host=dataclasses.replace(plan.host, steps=tuple(steps)))


def _messages(plan) -> list[str]:
    return [f.message for f in check_limits(plan, SM86)]


def test_a_uint32_step_field_past_its_type_is_refused(linreg):
    messages = _messages(_with_tolerate_empty(linreg, 2 ** 32))
    said = [m for m in messages if "tolerate_empty" in m]
    assert len(said) == 1, messages
    assert "4,294,967,296" in said[0] and "uint32_t" in said[0] and "docs/limits.md" in said[0]


def test_a_uint32_step_field_at_its_largest_value_is_not(linreg):
    assert not [m for m in _messages(_with_tolerate_empty(linreg, 2 ** 32 - 1)) if "tolerate_empty" in m]


def _fields():
    for kind in INTERPRETED:
        for f in kind.c_fields:
            if f.kind == "nat":
                yield kind, f


@pytest.mark.skipif(shutil.which("gcc") is None and shutil.which("cc") is None, reason="no C compiler")
def test_the_bound_of_each_c_type_is_what_gcc_takes(tmp_path):
    """gcc, with the host's own flags, is the judge: each step field's largest value per C_TYPE_MOST
    compiles into its step, one more does not."""
    kinds = {}
    for kind, f in _fields():
        kinds.setdefault(kind.name, (kind, []))[1].append(f)
    assert any(f.c_type == "uint32_t" for _, fs in kinds.values() for f in fs)

    def source(extra: int) -> str:
        lines = ['#include <stddef.h>\n#include "plan_steps.h"']
        for n, (kind, fields) in enumerate(kinds.values()):
            for m, f in enumerate(fields):
                values = {g.name: (C_TYPE_MOST[g.c_type] + extra if g is f else 0) if g.kind == "nat" else
                          (b"" if g.c_type == "bytes" else 1) for g in kind.c_fields}
                lines.append(f"const bobc_step s_{n}_{m} = {steps_c.c_initializer(kind, values, lambda d: 'NULL')};")
        return "\n".join(lines) + "\n"

    def compiles(text: str) -> bool:
        path = tmp_path / "steps.c"
        path.write_text(text)
        return subprocess.run([gcc.compiler(), *gcc.CFLAGS, "-I", str(REPO / "runtime_c"), "-c", str(path),
                               "-o", str(tmp_path / "steps.o")], capture_output=True).returncode == 0

    assert compiles(source(0))
    for kind, fields in kinds.values():
        for f in fields:
            one = steps_c.c_initializer(kind, {g.name: (C_TYPE_MOST[g.c_type] + 1 if g is f else 0)
                                               if g.kind == "nat" else (b"" if g.c_type == "bytes" else 1)
                                               for g in kind.c_fields}, lambda d: "NULL")
            assert not compiles(f'#include <stddef.h>\n#include "plan_steps.h"\nconst bobc_step s = {one};\n'), (kind.name, f.name)
