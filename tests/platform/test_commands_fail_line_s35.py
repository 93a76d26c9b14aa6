"""Probe s35 nativeloc finding 2, inside a plan host's Commands step: the C machine
(runtime_c/plan_commands.c) stopped a Fail's message at its first NUL while the reference printed
the NUL and every control character raw; both show a control character as '?' now, so the step's
refusal is one line, the same bytes (tests/native/test_native_plan_bytes_lines_s35.py: the native
host)."""
from __future__ import annotations

import shutil

import pytest

from test_commands_step import n, program, run_both, tool  # noqa: F401 (tool: the fixture)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_a_commands_step_fail_message_is_one_line_with_its_nul_shown(tool, tmp_path):  # noqa: F811
    fail = bytes([2]) + n(9) + n(6) + b"x\x00y\nz\x7f"
    c, py = run_both(tool, tmp_path, 0x7000_0000, bytes(64), [(3, program(fail))])
    assert c == py
    assert c[0] == 9
    assert c[1] == b"commands_tool: error: step 3 (commands): command 0 (Fail): x?y?z?; nothing was published\n"
