"""The host's exit codes, said the same everywhere (probe s28 docs finding 4): runtime_c/rt_exit.h
is the authority; the host's --help (rt_print_usage, which every plan host prints), docs/runtime.md's
table and README's lists of the host's codes name every one of its codes, 9 (the host file damaged)
included, and runtime.md no longer says the runtime never returns 9."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import make_runtime

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / "runtime_c"


def exit_codes() -> dict[int, str]:
    """rt_exit.h's enum: value -> name."""
    text = (RUNTIME / "rt_exit.h").read_text()
    found = {int(value): name for name, value in re.findall(r"\b(RT_EXIT_\w+)\s*=\s*(\d+)", text)}
    assert found and sorted(found) == list(range(len(found))), found
    return found


def listed(text: str) -> list[int]:
    """The codes an 'exit codes: 0 ok, 1 ..., 9 ...' list names, in order."""
    return [int(n) for n in re.findall(r"(?:^|[:,])\s*(\d+)\s+[A-Za-z]", text)]


def usage_exit_codes(usage: str) -> list[int]:
    assert "exit codes:" in usage, usage
    return listed(" ".join(usage.split("exit codes:", 1)[1].split()))


@pytest.fixture(scope="module")
def host_usage(runtime_build) -> str:
    built = make_runtime(runtime_build, "all")
    assert built.returncode == 0, built.stdout + built.stderr
    done = subprocess.run([str(runtime_build / "rt_tool"), "args", "--help"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_hosts_help_lists_every_exit_code(host_usage):
    """rt_tool's `args --help` prints rt_print_usage, the function plan_host.c calls for --help."""
    assert "rt_print_usage(argv[0]" in (RUNTIME / "plan_host.c").read_text()
    assert usage_exit_codes(host_usage) == sorted(exit_codes())
    assert "9 host file damaged" in " ".join(host_usage.split())


def test_runtime_md_lists_every_exit_code_by_name():
    text = (REPO / "docs/runtime.md").read_text()
    rows = dict((int(code), name) for code, name in re.findall(r"^\| (\d+) \| `(RT_EXIT_\w+)` \|", text, re.M))
    assert rows == exit_codes()
    assert "never returns it" not in text


def test_readmes_lists_of_the_hosts_exit_codes_name_every_code():
    text = " ".join((REPO / "README.md").read_text().split())
    lists = [text[at.end():text.index("docs/runtime.md", at.end())]
             for at in re.finditer(r"The host's exit codes:", text)]
    assert len(lists) == 2, lists
    for found in lists:
        assert listed(found) == sorted(exit_codes()), found
    promised = text[text.index("**Exit codes**"):text.index("`bobc` itself,")]
    assert "1 internal error" in promised and "9 its own file damaged" in promised
