"""Kernel contracts (the //@ param comments of each .sass) and host buffer aliases.

The certifier refuses, by name, a kernel whose code reads a parameter word its
contract does not declare, and a host layout whose buffers overlap where the
plan declares no alias."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import synthetic_bob as bob
from bobc.certify import findings
from bobc.certify.kernels import check_code_reads, parse_contract
from bobc.plan.model import HostBuffer
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
SOURCES = REPO / "specs/Realization/Nvidia/SM86"


@pytest.fixture(scope="module")
def plan():
    return bob.bob_plan(host_buffers=bob.host_buffers())


def messages(found):
    return [f.message for f in found]


def test_bobs_kernels_read_exactly_what_they_declare():
    for source in sorted(SOURCES.glob("*.sass")):
        contract = parse_contract(source)
        assert contract.arguments, source.name
        assert check_code_reads(contract) == [], source.name
    adamw = parse_contract(SOURCES / "bob-adamw.sass")
    assert [(a.index, a.kind, a.access, a.rule) for a in adamw.arguments[:4]] == [
        (0, "pointer", "read-write", "4*hi[7]"), (1, "pointer", "read", "4*hi[7]"),
        (2, "pointer", "read-write", "4*hi[7]"), (3, "pointer", "read-write", "4*hi[7]")]


def test_a_new_kernel_reading_an_undeclared_word_is_refused_by_name(tmp_path):
    source = tmp_path / "scratch-copy.sass"
    source.write_text("// scratch-copy: copies one word\n"
                      "//@ param 0 pointer write 4 the destination\n"
                      "//@ param 1 pointer read 4 the source\n"
                      ".kernel scratch_copy\n"
                      "    LDC.64 R2, c[0x0][RZ+param+0x0]\n"
                      "    LDC.64 R4, c[0x0][RZ+param+0x8]\n"
                      "    LDC R6, c[0x0][RZ+param+0x14]   // word 2: declared nowhere\n"
                      "    EXIT\n")
    found = messages(check_code_reads(parse_contract(source)))
    assert found == ["kernel scratch-copy reads parameter word 2 (LDC R6, c[0x0][RZ+param+0x14] at "
                     "scratch-copy.sass:7), but its contract does not declare it"]


def test_the_certifier_finds_each_regions_contract_and_checks_it(plan, tmp_path):
    """A copy of bob-row-gather.sass without its word 2 in a folder searched first."""
    text = (SOURCES / "bob-row-gather.sass").read_text()
    (tmp_path / "bob-row-gather.sass").write_text(
        "\n".join(line for line in text.splitlines() if not line.startswith("//@ param 2")) + "\n")
    assert findings(plan, SM86) == []
    found = messages(findings(plan, SM86, folders=[tmp_path]))
    assert any(m.startswith("kernel bob-row-gather reads parameter word 2 (LDC.64 R8, c[0x0][RZ+param+0x10]")
               for m in found), found


def test_overlapping_buffers_without_an_alias_are_refused_naming_both(plan):
    buffers = tuple(dataclasses.replace(b, gpu_address=b.gpu_address + 0x800) if b.name == "gpfifo" else b
                    for b in plan.host_buffers)
    overlapping = buffers + (HostBuffer("doorbell", bob.GPFIFO_BASE + 0x1000, 0x1000),)
    found = messages(findings(dataclasses.replace(plan, host_buffers=overlapping), SM86))
    assert any("gpfifo" in m and "doorbell" in m and "overlap" in m for m in found), found


def test_a_declared_alias_may_lie_inside_one_buffer_only(plan):
    gpfifo = next(b for b in plan.host_buffers if b.name == "gpfifo")
    inside = plan.host_buffers + (HostBuffer("userd-alias", gpfifo.gpu_address + 0x200, 0x200),)
    assert findings(dataclasses.replace(plan, host_buffers=inside), SM86) == []
    straddling = plan.host_buffers + (HostBuffer("userd-alias", gpfifo.gpu_address + gpfifo.size - 0x100, 0x200),)
    found = messages(findings(dataclasses.replace(plan, host_buffers=straddling), SM86))
    assert any(m.startswith("alias userd-alias") and "inside 0 other buffers" in m for m in found), found


def test_an_undeclared_read_is_placed_at_its_constant_operand(tmp_path):
    """The refusal's place is the constant operand's column under an indented instruction, not
    column 1 (probe s31 kernel finding 10)."""
    source = tmp_path / "scratch-copy.sass"
    source.write_text("//@ param 0 pointer write 4 the destination\n"
                      ".kernel scratch_copy\n"
                      "    LDC.64 R2, c[0x0][RZ+param+0x0]\n"
                      "    LDC R6, c[0x0][RZ+param+0x14]\n"
                      "    EXIT\n")
    (found,) = check_code_reads(parse_contract(source))
    line = source.read_text().splitlines()[3]
    assert (found.at.line, found.at.column) == (4, line.index("c[0x0]") + 1)
