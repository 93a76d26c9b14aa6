"""A native host entry that evaluates to b"" (the plan refused the request) is told what an empty
program means, which of the plan's definitions built it, and the library's refusal functions
that say why -- found by the convention of docs/native-host.md ("When the plan builds no host"),
also in a module of the same folder the plan does not import.  Before: one generic hint
(probe s32 partnet finding 4; s32 minor finding 2)."""
from __future__ import annotations

import pytest

from bobc.cli import main

HOSTS = """module Shop.Build.Hosts

import Std.Natural

def widgetHostAt = (lambda unrestricted port : Nat .
  (nat-eliminate (lambda unrestricted current : Nat . Bytes) b"" (lambda unrestricted p : Nat . (lambda unrestricted ignored : Bytes . b"\\x7fELF")) (naturalLessOrEqual port 9)))
def widgetPort : Nat = 3
def widgetNothing : Bytes = b""
"""
ADMISSION = """module Shop.Build.Admission

import Shop.Build.Hosts

def widgetRefusalAt = (lambda unrestricted port : Nat . b"port: above 9")
def otherRefusal : Bytes = b""
"""
PLAN = """module Shop.Plan

import Shop.Build.Hosts

def host : Bytes = (widgetHostAt 12)
def plain : Bytes = (bytes-append widgetNothing widgetNothing)
"""


@pytest.fixture
def shop(tmp_path):
    (tmp_path / "Shop/Build").mkdir(parents=True)
    (tmp_path / "Shop/Build/Hosts.bob").write_text(HOSTS)
    (tmp_path / "Shop/Build/Admission.bob").write_text(ADMISSION)
    (tmp_path / "Shop/Plan.bob").write_text(PLAN)
    return tmp_path


def refusal(capsys, argv):
    assert main(argv) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[1].startswith("hint: "), err
    return err


@pytest.mark.parametrize("how", ["build", "run"])
def test_an_empty_host_names_what_built_it_and_the_refusal_function(shop, capsys, how):
    plan = str(shop / "Shop/Plan.bob")
    argv = (["build", plan, "--entry", "host", "-o", str(shop / "out")] if how == "build" else
            ["run", plan, "native", "--reference", "--entry", "host", "x"])
    error, hint = refusal(capsys, argv)
    assert error == f"bobc {how}: error: host evaluates to empty bytes: the plan built no host for this request"
    assert "an empty program is how a plan refuses a request it does not admit" in hint
    assert "host is built by widgetHostAt (Shop.Build.Hosts), which gave b\"\" in place of the host" in hint
    # the refusal function of an unimported module of the same folder; not otherRefusal (no shared name)
    assert "refusal function widgetRefusalAt (Shop.Build.Admission) with the host's arguments" in hint
    assert "otherRefusal" not in hint
    assert not (shop / "out").exists()


def test_without_a_refusal_function_the_hint_says_where_to_look(shop, capsys):
    (shop / "Shop/Build/Admission.bob").unlink()
    _, hint = refusal(capsys, ["build", str(shop / "Shop/Plan.bob"), "--entry", "plain", "-o", str(shop / "out")])
    assert "plain is built by widgetNothing (Shop.Build.Hosts)" in hint
    assert "evaluate the parts the host is made of (`bobc eval`) to find the one that answers b\"\"" in hint
