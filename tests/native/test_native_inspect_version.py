"""`bobc inspect` of a native host shows the build's facts its .bobc.version section carries
(bobc.host.version.native_text: the bobc and commit that built it, target, compute class,
driver branch), as it shows a plan host's: it said "no .bobc.* sections" and showed none of
them (probe s32 paths finding 2).  `bobc dump` lists them as host.version.* lines, `--json`
gives them as `version`; a host made without the section says so."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from native_helpers import PLANS, load_module, program_bytes, write_host


@pytest.fixture(scope="module")
def inspected():
    return load_module(PLANS / "Native" / "Inspected.bob")


def bobc(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True)


@pytest.mark.parametrize("target, facts", [
    ("sm_90", ["target: sm_90 (QMD V04_00)", "compute class: 0xcbc0 (HOPPER_COMPUTE_A)"]),
    ("sm_86", ["target: sm_86 (QMD V03_00)", "compute class: 0xc7c0 (AMPERE_COMPUTE_B)"]),
])
def test_inspect_and_dump_show_the_build_facts_of_the_version_section(inspected, tmp_path, target, facts):
    from bobc import __version__
    from bobc.host.version import native_text, parse
    from bobc.targets import target_named

    host = write_host(tmp_path, "inspected", program_bytes(inspected, "inspected"), target)
    recorded = parse(native_text(target_named(target)))
    assert recorded["driver branch"].startswith("580 ")
    shown = bobc("inspect", host)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "no .bobc.* sections" not in shown.stdout
    assert "  kind     native physical program host (docs/native-host.md)" in lines
    start = lines.index("  needs and provenance (inspected --version):")
    assert lines[start + 1:start + 6] == [f"    {key}: {value}" for key, value in recorded.items()]
    assert lines[start + 1] == f"    bobc version: {__version__}"
    assert [f"    {fact}" for fact in facts] == [line for line in lines[start + 1:start + 6]
                                                 if line.startswith(("    target", "    compute"))]
    info = json.loads(bobc("inspect", host, "--json").stdout)
    assert info["version"] == recorded
    assert list(info["sections"]) == [".bobc.version"]
    dumped = bobc("dump", host)
    assert dumped.returncode == 0, dumped.stderr
    assert [line for line in dumped.stdout.splitlines() if line.startswith("host.version.")] == \
        [f"host.version.{key} = {value}" for key, value in recorded.items()]


def test_a_native_host_without_the_section_says_so(inspected, tmp_path):
    from bobc.native.artifact import trailer
    from bobc.native.interpreter import interpreter_bytes

    host = tmp_path / "bare-host"
    host.write_bytes(interpreter_bytes() + trailer(program_bytes(inspected, "inspected"), "sm_90"))
    shown = bobc("inspect", host)
    assert shown.returncode == 0, shown.stderr
    assert ("  (no .bobc.version section: it was not built by `bobc build`, or was stripped; the host "
            "refuses --version, exit 9)") in shown.stdout.splitlines()
    assert "needs and provenance" not in shown.stdout
    info = json.loads(bobc("inspect", host, "--json").stdout)
    assert info["version"] is None and info["sections"] == {}
    assert "host.version." not in bobc("dump", host).stdout
