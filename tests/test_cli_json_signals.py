"""Probe s32 leftovers finding 4: a `--json` command ended by Ctrl-C (or SIGTERM, SIGHUP) printed
nothing on stdout, where a --json user expects exactly one JSON object.  It now prints a refusal's
object (README, "--json": ok false, command, error, where, hint, exit_code; check's plan, module,
target and warnings) with the interruption as its error, its exit code unchanged (130, 143, 129):
while the command runs, while its command line is read, and while bobc starts.  A command that had
begun printing its own output prints no second object."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ENDED = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated"), signal.SIGHUP: (129, "hung up")}


def environment(tmp_path: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": str(tmp_path / "cache"),
            "TMPDIR": str(tmp_path)}


def default_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def test_the_list_of_json_commands_is_the_parsers():
    from bobc import JSON_COMMANDS
    from bobc.cli import build_parser

    parser = build_parser()
    taking = {name for name, sub in parser.subcommand_parsers.items() if "--json" in sub._option_string_actions}
    assert set(JSON_COMMANDS) == taking


# the signal to bobc itself while a command runs: `check` once its refusal keys are set (its plan
# parsed), the others as their command starts
RUNNING = """
import os, signal, sys
sys.argv[0] = "bobc"
import bobc.cli
import bobc.commands.{command} as command
if "{command}" == "check":
    import bobc.language.modules as modules
    parse = modules.parse_cached
    def parse_cached(path, *rest, **options):
        found = parse(path, *rest, **options)
        os.kill(os.getpid(), signal.{name})
        return found
    modules.parse_cached = parse_cached
else:
    def run(args):
        {before}
        os.kill(os.getpid(), signal.{name})
        raise AssertionError("not stopped")
    command.run = run
sys.exit(bobc.cli.main(sys.argv[1:]))
"""
WORDS = {"check": ["check", "--json", "A.bob"], "dump": ["dump", "--json", "A.bob"],
         "diff": ["diff", "--json", "A.bob", "A.bob"], "inspect": ["inspect", "--json", "A.bob"]}


@pytest.mark.parametrize("number", sorted(ENDED))
@pytest.mark.parametrize("command", sorted(WORDS))
def test_a_json_command_ended_by_a_signal_prints_one_object(tmp_path, command, number):
    (tmp_path / "A.bob").write_text("module A\n\ndef answer : Nat = 42\n")
    script = RUNNING.format(command=command, name=signal.Signals(number).name, before="pass")
    done = subprocess.run([sys.executable, "-c", script, *WORDS[command]], cwd=tmp_path, env=environment(tmp_path),
                          capture_output=True, text=True, timeout=300, preexec_fn=default_signals)
    code, words = ENDED[number]
    assert (done.returncode, done.stderr) == (code, f"bobc: {words}\n")
    said = json.loads(done.stdout)          # one object, nothing before or after it
    expected = {"ok": False, "command": command, "error": words, "where": None, "hint": None, "exit_code": code}
    if command == "check":      # its refusal keys as a refusal at that point gives them
        expected.update(plan="A.bob", module=None, target="sm_90", warnings=[])     # the signal came in its parse
    assert said == expected


def test_a_command_that_began_its_output_prints_no_second_object(tmp_path):
    script = RUNNING.format(command="dump", name="SIGINT", before='print("{")')
    done = subprocess.run([sys.executable, "-c", script, "dump", "--json", "A.bob"], cwd=tmp_path,
                          env=environment(tmp_path), capture_output=True, text=True, timeout=300,
                          preexec_fn=default_signals)
    assert (done.returncode, done.stdout, done.stderr) == (130, "{\n", "bobc: interrupted\n")


def test_without_json_stdout_stays_empty(tmp_path):
    script = RUNNING.format(command="dump", name="SIGINT", before="pass")
    done = subprocess.run([sys.executable, "-c", script, "dump", "A.bob"], cwd=tmp_path, env=environment(tmp_path),
                          capture_output=True, text=True, timeout=300, preexec_fn=default_signals)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "bobc: interrupted\n")


def test_ctrl_c_while_the_command_line_is_read(monkeypatch, capsys):
    from bobc import cli

    def interrupted(only=None):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["check", "--json", "x.bob"]) == 130
    out, err = capsys.readouterr()
    assert err == "bobc: interrupted\n"
    assert json.loads(out) == {"ok": False, "command": "check", "error": "interrupted", "where": None, "hint": None,
                               "exit_code": 130, "plan": None, "module": None, "target": None, "warnings": []}
    assert cli.main(["build", "--json", "x.bob"]) == 130         # build takes no --json: nothing on stdout
    assert capsys.readouterr() == ("", "bobc: interrupted\n")


STARTING = """
import os, signal, sys
sys.argv[0] = "bobc"
sys.argv[1:] = {words!r}
signal.signal(signal.SIGINT, signal.default_int_handler)     # as a terminal's command has them: a test run
signal.signal(signal.SIGTERM, signal.SIG_DFL)                 # in the background has SIGINT ignored, under
signal.signal(signal.SIGHUP, signal.SIG_DFL)                  # nohup SIGHUP, and bobc keeps an ignored one so
import bobc                     # its first line: the command's own handling from here on
os.kill(os.getpid(), signal.{name})    # arrives while bobc.cli is imported
import bobc.cli
print("not stopped")
"""


@pytest.mark.parametrize("number", sorted(ENDED))
def test_a_signal_while_bobc_starts(number):
    script = STARTING.format(words=["inspect", "host", "--json"], name=signal.Signals(number).name)
    done = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(REPO / "compiler")},
                          capture_output=True, text=True, timeout=300)
    code, words = ENDED[number]
    assert (done.returncode, done.stderr) == (code, f"bobc: {words}\n")
    assert json.loads(done.stdout) == {"ok": False, "command": "inspect", "error": words, "where": None,
                                       "hint": None, "exit_code": code}
