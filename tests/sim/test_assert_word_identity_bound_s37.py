"""Probe s37 stepfuzz (last note): a failed AssertWord names its identity, and the C host shows it
through a name buffer of RT_ERR_BYTES - 128 bytes (runtime_c/plan_host.c step_assert_word), so
it cut an identity past 383 bytes where `bobc run --reference` and `bobc sim` printed it whole:
the three said different things.  The certifier bounds the identity (docs/host-steps.md), at the
step's place in the plan."""
from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from bobc.certify.host_steps import check_host_steps
from bobc.plan.host import ASSERT_IDENTITY_BYTES

REPO = Path(__file__).resolve().parents[2]


def test_the_bound_is_what_the_c_hosts_name_buffer_holds():
    header = (REPO / "runtime_c/host_runtime.h").read_text()
    err_bytes = int(re.search(r"#define RT_ERR_BYTES (\d+)", header).group(1))
    source = (REPO / "runtime_c/plan_host.c").read_text()
    body = source[source.index("static int step_assert_word("):]
    body = body[:body.index("\n}\n")]
    room = re.search(r"char name\[RT_ERR_BYTES - (\d+)\];", body)
    assert room, "step_assert_word's name buffer changed: update plan.host.ASSERT_IDENTITY_BYTES"
    assert "sizeof name - 1" in body                        # the NUL takes one byte of it
    assert ASSERT_IDENTITY_BYTES == err_bytes - int(room.group(1)) - 1


def _with_identity(plan, identity: bytes):
    def put(step):
        if step.kind.name == "assert_word":
            return dataclasses.replace(step, identity=identity)
        return step
    return dataclasses.replace(plan, host=dataclasses.replace(plan.host, steps=tuple(map(put, plan.host.steps))))


def _said(plan) -> list[str]:
    return [f.message for f in check_host_steps(plan) if "(assert_word)" in f.message]


def test_an_identity_the_host_shows_whole_is_certified(all_steps):
    built, _ = all_steps
    assert _said(_with_identity(built.plan, b"A" * ASSERT_IDENTITY_BYTES)) == []


def test_a_longer_identity_is_refused_at_the_step(all_steps, tmp_path):
    built, _ = all_steps
    said = _said(_with_identity(built.plan, b"A" * (ASSERT_IDENTITY_BYTES + 1)))
    assert len(said) == 1 and "384 bytes" in said[0] and "shorten the identity to 383 bytes or fewer" in said[0]
    # through `bobc check`, at the plan's file:line:column of the AssertWord
    shutil.copytree(REPO / "tests/platform/Synthetic", tmp_path / "Synthetic")
    module = tmp_path / "Synthetic/AllSteps.bob"
    text = module.read_bytes()
    assert text.count(b'b"the fill" (naturalAdd') == 1
    module.write_bytes(text.replace(b'b"the fill" (naturalAdd', b'b"' + rb"\x1b" * 400 + b'" (naturalAdd'))
    line = 1 + text[:text.index(b'b"the fill" (naturalAdd')].count(b"\n")
    ran = subprocess.run([sys.executable, "-m", "bobc", "check", "Synthetic/AllSteps.bob", "-I",
                          str(REPO / "examples/bob"), "--entry", "synAllStepsHost"], capture_output=True,
                         cwd=tmp_path, env=dict(os.environ, BOBC_CACHE_DIR="off"), timeout=600)
    assert ran.returncode != 0
    fault = [row for row in ran.stderr.decode().splitlines() if "(assert_word)" in row]
    assert len(fault) == 1 and fault[0].startswith(f"  - Synthetic/AllSteps.bob:{line}:3: "), ran.stderr
    assert "identity of 400 bytes" in fault[0] and "\x1b" not in fault[0]
