"""The host-step checks ask whether a repeat's body begins or publishes a checkpoint
(certify.host_steps._publishes) at every nesting level; each answer walked the whole body, so a
schedule of repeats nested N deep cost N^2 body walks (probe s43 scale: 96 s of CPU for
`bobc check` at N = 5,000, 2.4 s at 1,000).  Each body is now walked once a check: the number of
_publishes calls grows with N, not N^2.  Counted, not timed: a nesting of N levels, each level's
body asked about a bounded number of times (by _checkpoint_bytes, _checkpoint_homes,
_publication_updates, each once a level), gives at most a small multiple of N calls."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bobc.certify import host_steps
from bobc.plan.host import make_step
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
DEPTH = 150      # within pytest's recursion limit (bobc check runs the certifier with a deep stack)


@pytest.fixture(scope="module")
def linreg():
    from bobc import pipeline

    return pipeline.extract(pipeline.load(LINREG, SM86), None)


def _nested(plan, depth: int):
    """LinReg's schedule after `depth` Repeat 1 nested one in another's body, the innermost body
    LinReg's last Write of the result (a step the schedule already has, so nothing new is refused)."""
    steps = plan.host.steps
    write = next(s for s in steps if s.kind.name in ("write", "write_at"))
    body = (write,)
    for _ in range(depth):
        body = (make_step("repeat", count=1, body=body, at=None),)
    return dataclasses.replace(plan, host=dataclasses.replace(plan.host, steps=(*body, *steps)))


def test_nested_repeats_are_asked_about_once_a_level(linreg, monkeypatch):
    calls = 0
    real = host_steps._publishes

    def counted(steps):
        nonlocal calls
        calls += 1
        return real(steps)

    monkeypatch.setattr(host_steps, "_publishes", counted)
    host_steps.check_host_steps(_nested(linreg, DEPTH))
    # linear: a handful of calls a level; N^2 / 2 (about 30,000 at 150 levels) before the fix
    assert calls < 20 * DEPTH, calls
