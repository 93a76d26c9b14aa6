"""Probe s44 checkreq finding 1: `bobc check --entry DEF` of a native artifact only type checked it,
so a request program whose schedule `bobc build --entry DEF` refuses (a write after its Close, a
checkpoint publication short of the contract's payload: tests/certify/test_request_schedule_s43.py)
got a green check ("DEF: Bytes, checked by the type check and the plan's own proofs", exit 0).  A
`check` promises the build's refusals without the writing: check now evaluates the artifact as the
build does (bobc.native.build.checked_artifact) and refuses it with the same faults, nothing written.

The expected values come from the build's own refusal of the same plan (the command a user compares
check with: README's `bobc check` row, "the same refusals as build") and from README's "--json"
(a refusal is one object: ok false, error, where = file:line:column as the message shows it,
exit_code), not from check's implementation."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .test_request_schedule_s43 import CLOSE, PLANS, ROOT, SCHEDULE_END, place

LATE = "  (rqWrite rqPredictions (nat-add rqStaging 1024) 4\n"


def plan_in(tmp_path: Path, *replacements: tuple[str, str]) -> None:
    folder = tmp_path / "Native"
    shutil.copytree(PLANS, folder)
    plan = folder / "Request.bob"
    text = plan.read_text(encoding="utf-8")
    for old, new in replacements:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    plan.write_text(text, encoding="utf-8")


def bobc(tmp_path: Path, *words: str, cache: str = "off") -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "compiler"), BOBC_CACHE_DIR=cache)
    return subprocess.run([sys.executable, "-m", "bobc", *words], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)


def listing(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


def test_check_refuses_what_build_refuses_with_the_same_faults(tmp_path):
    plan_in(tmp_path, (CLOSE, CLOSE + LATE), (SCHEDULE_END, SCHEDULE_END + ")"))
    before = listing(tmp_path)
    checked = bobc(tmp_path, "check", "Native/Request.bob", "--entry", "requestHost")
    assert checked.returncode == 1 and "Traceback" not in checked.stderr, checked.stderr + checked.stdout
    assert listing(tmp_path) == before                      # nothing written
    built = bobc(tmp_path, "build", "Native/Request.bob", "--entry", "requestHost", "-o", "host")
    assert built.returncode == 1, built.stderr
    at = place(tmp_path, "(rqWrite rqPredictions (nat-add rqStaging 1024) 4", after="NvidiaPlanHostStepClose")
    fault = f"  - {at}: the host's step 41 (write) writes predictions after step 40 (close) closed it"
    assert fault in built.stderr
    # the same faults, word for word, but for the command's name
    assert checked.stderr.replace("bobc check:", "bobc build:") == built.stderr


def test_check_json_refusal_names_the_write(tmp_path):
    plan_in(tmp_path, (CLOSE, CLOSE + LATE), (SCHEDULE_END, SCHEDULE_END + ")"))
    done = bobc(tmp_path, "check", "Native/Request.bob", "--entry", "requestHost", "--json")
    assert done.returncode == 1, done.stderr
    refused = json.loads(done.stdout)
    at = place(tmp_path, "(rqWrite rqPredictions (nat-add rqStaging 1024) 4", after="NvidiaPlanHostStepClose")
    assert refused["ok"] is False and refused["command"] == "check" and refused["exit_code"] == 1
    assert refused["where"] == at
    assert "writes predictions after step 40 (close) closed it" in refused["error"]
    assert refused["plan"] == "Native/Request.bob" and refused["module"] == "Native.Request"


def test_a_sound_request_artifact_is_certified_and_a_build_reuses_the_check(tmp_path):
    """The fixture as tests/native/test_native_request.py runs it: certified; the artifact the check
    evaluated is kept, so the build after it writes the same bytes as a build from nothing."""
    plan_in(tmp_path)
    cache = str(tmp_path / "cache")
    done = bobc(tmp_path, "check", "Native/Request.bob", "--entry", "requestHost", "--json", cache=cache)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["ok"] is True and result["certified"] is True and result["native_artifact"] is True
    assert result["entry"] == "requestHost" and result["artifacts"] == ["requestHost"]
    text = bobc(tmp_path, "check", "Native/Request.bob", "--entry", "requestHost", cache=cache)
    assert text.returncode == 0, text.stderr
    assert "requestHost: certified for sm_90 (a native artifact: evaluated and held to what " \
           "`bobc build --entry requestHost` refuses; nothing written)" in text.stdout
    assert bobc(tmp_path, "build", "Native/Request.bob", "--entry", "requestHost", "-o", "kept",
                cache=cache).returncode == 0
    assert bobc(tmp_path, "build", "Native/Request.bob", "--entry", "requestHost", "-o", "fresh").returncode == 0
    assert (tmp_path / "kept").read_bytes() == (tmp_path / "fresh").read_bytes()
