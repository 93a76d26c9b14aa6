"""Probe s44 checkreq finding 1, on seed 004: `bobc check --entry coppeliusHost` of the copy of the
seed whose checkpoint gather takes chunk k from chunk k-1's offset (tests/coppelius/
test_staged_request_s43.py's mutant, which `bobc build` refuses) passed, exit 0, "checked by the
type check and the plan's own proofs".  check now evaluates the artifact as the build does and
refuses it with the build's faults (the expected text is the s43 test's, from the plan's own
arithmetic), as one JSON object with --json (README, "--json"), nothing written.

Probe s44 checkreq finding 3: the finding named the launch whose copy put the bytes in staging by
index only ("launch 176 (coppelius-copy)'s //@ copy 0 to 1"), and pointed at NativeHost.bob's Write,
while the mistake is in the gather; it now says where the plan wrote that launch.  Expected: the
place of the text that schedules the gathers, Graph.bob cgGatherLaunches's `(cgGather place c)`,
found in the file (not from the implementation)."""
from __future__ import annotations

import json

from .test_staged_request_s43 import bobc, expected, mutant, write_place  # noqa: F401 (mutant: the fixture)


def test_check_refuses_the_mutant_as_build_does(mutant):
    before = sorted(str(path) for path in mutant.rglob("*"))
    done = bobc(mutant, "check", "Coppelius/Build/DirectArtifact.bob", "--entry", "coppeliusHost",
                "--target", "sm_86", "--json")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    for part in expected(mutant):
        assert part in done.stderr, done.stderr
    refused = json.loads(done.stdout)
    assert refused["ok"] is False and refused["exit_code"] == 1 and refused["command"] == "check"
    assert refused["where"] == write_place(mutant)
    assert "the plan is not certified (8 faults)" in refused["error"]
    assert sorted(str(path) for path in mutant.rglob("*")) == before       # nothing written
    lines = (mutant / "Coppelius" / "Build" / "Graph.bob").read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines) if "(cgThen earlier (cgGather place c))" in text)
    gather = f"Coppelius/Build/Graph.bob:{line + 1}:{lines[line].index('(cgGather place c)') + 1}"
    assert f"(coppelius-copy)'s //@ copy 0 to 1 (Realization/Nvidia/SM86/coppelius-copy.sass:10; the launch: " \
           f"{gather}))" in refused["error"], refused["error"]
