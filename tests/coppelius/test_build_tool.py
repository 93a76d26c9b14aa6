"""coppelius_host.build's command line (probe s32 stream findings 1 and 5): a run longer than one
host's program holds is refused at once, a usage error naming the count and the longest run that
fits, rather than minutes into `bobc build` ("evaluation nests too deeply"); the program's command
count the rule uses is what a built host's --version prints; --help says its whole description and
what the target and -o are; bobc's own exit code (8: an output it cannot write) comes back."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from coppelius_host import build

from .conftest import EXAMPLE


def run_tool(*arguments):
    return subprocess.run([sys.executable, "-m", "coppelius_host.build", *arguments], cwd=EXAMPLE,
                          capture_output=True, text=True, env=build.bobc_environment(), timeout=120)


@pytest.fixture
def no_bobc(monkeypatch):
    """bobc never started: a refusal must come before any build."""
    started = []
    monkeypatch.setattr(build.subprocess, "run", lambda command, **_: started.append(command) or
                        pytest.fail(f"bobc started: {command}"))
    return started


@pytest.mark.parametrize("interval, publications, config, said", [
    (3072, 1, "small",
     "--interval 3072 --publications 1: 3,072 updates an invocation make a host program of 89,181 commands "
     "(29 an update, 12 a publication, 81 besides: small has 5 checkpoint chunks), more than the 74,333 a build "
     "evaluates (a longer one nests too deeply: docs/limits.md); with --publications 1, --interval at most 2,560 "
     "(docs/coppelius-host.md, \"Building it\")"),
    (2561, 1, "small", "with --publications 1, --interval at most 2,560"),
    (1000, None, "small", "--interval 1000 --publications 4 (the plan's): 4,000 updates an invocation"),
    (1, 4096, "small", "with --interval 1, --publications at most 1,811"),
    (None, 100, "large", "--interval 50 (the plan's) --publications 100: 5,000 updates"),
    (65536, 65536, "small",
     "with --publications 1, --interval at most 2,560; with --interval 1, --publications at most 1,811"),
])
def test_a_run_longer_than_a_program_holds_is_a_usage_error_at_once(interval, publications, config, said, tmp_path,
                                                                  no_bobc, capsys):
    arguments = [word for option, value in (("--interval", interval), ("--publications", publications),
                                            ("--config", config)) if value is not None for word in (option, str(value))]
    with pytest.raises(SystemExit) as stopped:
        build.main(["sm_90", "-o", str(tmp_path / "host"), *arguments])
    error = capsys.readouterr().err
    assert stopped.value.code == 2 and "python -m coppelius_host.build: error: " in error and said in error, error
    assert error.endswith(")\n") and error.count("\n") == 1 + error.split("error: ")[0].count("\n")
    with pytest.raises(ValueError, match=re.escape(said)):     # the function tests and benchmarks call
        build.build("sm_90", tmp_path / "host", interval, publications, config)
    assert not no_bobc and not (tmp_path / "host").exists()


@pytest.mark.parametrize("config, interval, publications", [
    ("small", 2560, 1), ("small", 50, 50), ("small", 1, 1811), ("large", 2557, 1), ("large", 1, 1177)])
def test_the_longest_runs_the_rule_allows_are_exactly_at_the_limit(config, interval, publications):
    chunks = build.shape_chunks(config)
    assert build.length_refusal(interval, publications, config) == ""
    assert build.program_commands(interval, publications, chunks) <= build.MOST_COMMANDS
    assert build.length_refusal(interval + 1, publications, config)
    assert build.length_refusal(interval, publications + 1, config)


def test_the_command_count_is_what_a_built_host_says(tmp_path):
    """The rule's count against `HOST --version` of hosts built for two run lengths and two chunk counts
    (its line `program: NVIDIA H200 (N commands, ...)`), which is where the build's depth grows."""
    for config, interval, publications in (("small", 2, 1), ("1x256x128", 3, 2)):
        host = tmp_path / f"host-{config}"
        build.build("sm_90", host, interval, publications, config)
        said = subprocess.run([str(host), "--version"], capture_output=True, text=True, timeout=60)
        commands = int(re.search(r"^program: .* \((\d+) commands,", said.stdout, re.M).group(1))
        assert commands == build.program_commands(interval, publications, build.shape_chunks(config)), config


def test_help_says_the_whole_description_and_each_argument():
    done = run_tool("--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert ("Build Coppelius's host with bobc, for a target and (for tests and benchmarks) a shorter or longer run "
            "than the plan's.") in text
    assert "the GPU built for: sm_90" in text and "-o HOST, --output HOST the host executable written" in text
    assert "at least 1, and N x P updates no more than a host's program of 74,333 commands holds" in text


def test_bobcs_exit_code_comes_back(tmp_path, monkeypatch, capsys):
    refused = "bobc build: output x: is a folder; nothing was written\n"
    monkeypatch.setattr(build.subprocess, "run", lambda command, **_: subprocess.CompletedProcess(command, 8, "",
                                                                                                   refused))
    assert build.main(["sm_90", "-o", str(tmp_path / "host")]) == 8
    assert build.main(["sm_90", "-o", str(tmp_path / "host"), "--interval", "3"]) == 8     # from the copy
    said = capsys.readouterr().err
    assert "error: bobc build failed (exit 8):\n" + refused in said and "--interval 3" in said


def test_a_shape_of_one_checkpoint_chunk_says_chunk():
    """"2x64x128 has 1 checkpoint chunks" (probe s32 today3 finding 7): one chunk, singular."""
    said = build.length_refusal(65536, 65536, "2x64x128")
    assert "besides: 2x64x128 has 1 checkpoint chunk), more than" in said, said
    assert "has 5 checkpoint chunks)" in build.length_refusal(65536, 65536, "small")
