"""`.shared BYTES`: what a block of a kernel needs in shared memory, declared by its source and read
by a plan for the build's target (Accelerator.SM86.InstructionEncoding.sm86ProgramSharedBytes).

The bundled example's products ask it on both targets (tests/coppelius/test_plan_agrees.py: 39936
/ 41984 / 37888 bytes on sm_86, 66592 on sm_90's own variants); here: the directive itself, its
refusals, and a plan asking a source that declares none."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble_kernel


def _assemble(tmp_path, body: str):
    path = tmp_path / "probe.sass"
    path.write_text(f".kernel probe\n{body}\n    EXIT\n")
    from bobc.targets import SM86
    return assemble_kernel(path, SM86)


def test_declared_bytes_are_read(tmp_path):
    assert _assemble(tmp_path, ".shared 0x9c00").shared_bytes == 0x9C00
    assert _assemble(tmp_path, ".registers 16").shared_bytes is None


@pytest.mark.parametrize("value", ["lots", "-16"])
def test_a_declaration_that_is_no_byte_count_is_refused_at_its_line(tmp_path, value):
    with pytest.raises(BobcError, match=r"\.shared needs a number of bytes") as error:
        _assemble(tmp_path, f".shared {value}")
    assert error.value.span.line == 2 and error.value.span.path.endswith("probe.sass")


def test_a_plan_asking_a_source_without_a_declaration_is_refused_naming_it(tmp_path):
    from bobc.language import load_program
    from bobc.plan.intrinsics import default_intrinsics
    from bobc.targets import SM90
    probe = tmp_path / "Probe.bob"
    probe.write_text("module Probe\n\nimport Accelerator.SM86.InstructionEncoding\n\n"
                     "def shared : Nat = (sm86ProgramSharedBytes (constructor SM86Program SM86ProgramAssembly "
                     "b\"Realization/Nvidia/SM86/bob-adamw.sass\" b\"bob-adamw\"))\n", encoding="utf-8")
    program = load_program(probe, target=SM90, intrinsics=default_intrinsics())
    with pytest.raises(BobcError, match=r"bob-adamw\.sass declares no shared memory") as error:
        program.value("shared")
    assert ".shared BYTES" in (error.value.hint or "")
