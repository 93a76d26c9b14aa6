"""`bobc dump` and `bobc diff` name the host plan's fields (probe s29 hostjson): they showed its tables
as raw words (`host.plan.steps[+0x218] (host plan): 0x4 -> 0x0`), and a step inserted into the
schedule was a line for every word of every later step.  Now each member is decoded by the host
plan's one declared layout (bobc.host.sections.PLAN_STRUCTS) and the steps are aligned as a sequence."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples/linear_regression"
PLAN = "LinReg/Build/NativeHost.bob"
RESULT_AT = "(lrWriteAt lrResultFile lrTrainingLossAddress linRegLossBytes linRegLossBytes"
INITIAL_LOSS = "          (lrWrite lrResultFile lrInitialLossAddress linRegLossBytes\n"
TAIL = "NvidiaPlanHostStepOperation lrTrainSteps)))))))"


def bobc(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env={**__import__("os").environ, "PYTHONPATH": str(REPO / "compiler")})


def _edited(text: str, name: str) -> str:
    if name == "offset":          # the training loss's write at offset 4 of the result, now at 0
        assert text.count(RESULT_AT) == 1
        return text.replace(RESULT_AT, RESULT_AT.rsplit(" ", 1)[0] + " 0")
    if name == "inserted":        # one more write of the initial loss: a step inserted at 4
        assert text.count(INITIAL_LOSS) == 1 and text.count(TAIL) == 1
        return text.replace(INITIAL_LOSS, INITIAL_LOSS.rstrip("\n") + " (lrWrite lrResultFile lrInitialLossAddress "
                            "linRegLossBytes\n").replace(TAIL, TAIL + ")")
    return text


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostfields")
    out = {}
    for name in ("base", "offset", "inserted"):
        shutil.copytree(EXAMPLE / "LinReg", root / name / "LinReg")
        source = root / name / PLAN
        source.write_text(_edited(source.read_text(encoding="utf-8"), name), encoding="utf-8")
        done = bobc("build", PLAN, "--target", "sm_86", "-o", root / name / "host", cwd=root / name)
        assert done.returncode == 0, done.stderr
        out[name] = root / name / "host"
    return out


def _plan(lines):
    return [x for x in lines if x.startswith("host.plan")]


def test_a_changed_step_member_is_one_named_line(hosts):
    done = bobc("diff", hosts["base"], hosts["offset"])
    assert done.returncode == 1
    assert _plan(done.stdout.splitlines()) == ["host.plan.steps[9].offset (write_at): 0x4 -> 0x0"], done.stdout


def test_an_inserted_step_is_one_line_and_the_later_steps_one_more(hosts):
    done = bobc("diff", hosts["base"], hosts["inserted"])
    assert done.returncode == 1
    assert _plan(done.stdout.splitlines()) == [
        "host.plan.steps[4]: only in b: write file result, host 0x1100003000, extent 0x4  [a step only in b]",
        "host.plan.steps[4..12]: host.plan.steps[4..12] -> host.plan.steps[5..13]  "
        "[9 steps of the same kinds and members, at +1 place in b]"], done.stdout
    back = bobc("diff", hosts["inserted"], hosts["base"])
    assert _plan(back.stdout.splitlines())[0] == \
        "host.plan.steps[4]: only in a: write file result, host 0x1100003000, extent 0x4  [a step only in a]"


def test_a_step_changed_after_an_insertion_is_named_by_both_places(hosts, tmp_path):
    """Inserted and changed: the changed step is compared with its counterpart (`steps[9->10]`)."""
    folder = tmp_path / "both"
    shutil.copytree(EXAMPLE / "LinReg", folder / "LinReg")
    source = folder / PLAN
    source.write_text(_edited(_edited(source.read_text(encoding="utf-8"), "offset"), "inserted"), encoding="utf-8")
    assert bobc("build", PLAN, "--target", "sm_86", "-o", folder / "host", cwd=folder).returncode == 0
    lines = _plan(bobc("diff", hosts["base"], folder / "host").stdout.splitlines())
    assert "host.plan.steps[9->10].offset (write_at): 0x4 -> 0x0" in lines, lines
    assert len(lines) == 4, lines        # the inserted step, two moved runs around the changed one, the change


def test_dump_names_every_member_and_json_keeps_the_values(hosts):
    text = bobc("dump", "--no-code", hosts["base"]).stdout.splitlines()
    plan = _plan(text)
    for expected in ("host.plan.target = sm_86", "host.plan.identity = linreg-native-host-v1",
                     "host.plan.buffers[5].name = arena", "host.plan.buffers[5].location = video",
                     "host.plan.contract.schema = linreg-w-then-b-f32-v1|features=7",
                     "host.plan.contract.chunk_bytes = 0x20", "host.plan.contract.chunk_count = 0x1",
                     "host.plan.initializers[0].kind = zero", "host.plan.input.record_bytes = 0x810",
                     "host.plan.input.checks[0].data = 4c 49 4e 52 45 47 30 31",
                     "host.plan.input.checks[1].what = version", "host.plan.steps[9] = write_at",
                     "host.plan.steps[9].file = result", "host.plan.steps[9].offset = 0x4",
                     "host.plan.steps[12].updates = 0x14", "host.plan.wait_timeout_ms = 0x2710"):
        assert expected in plan, expected
    assert not any("[+0x" in x for x in plan), plan          # no raw table words
    facts = json.loads(bobc("dump", "--no-code", "--json", hosts["base"]).stdout)
    by_key = {fact["key"]: fact for fact in facts}
    assert by_key["host.plan.contract.chunk_bytes"]["value"] == 0x20
    assert by_key["host.plan.steps[9]"]["value"] == "write_at"
    assert by_key["host.plan.steps[9].offset"] == {"key": "host.plan.steps[9].offset", "kind": "host", "value": 4,
                                                   "note": "", "where": ""}
    assert bobc("dump", "--no-code", hosts["base"]).stdout.splitlines() == text      # deterministic


def test_the_decoded_plan_is_the_plans_own_values(hosts):
    """What the decoder reads back from the binary is what the generator was given."""
    from bobc.host import sections

    data = hosts["base"].read_bytes()
    values = {line.key: line.value for line in sections.plan_lines(data, hosts["base"])}
    assert values["host.plan.contract.learner"] == "objective:mean-squared-error|optimizer:sgd|lr=1/20"
    assert values["host.plan.contract.seed"] == "linreg-zero-v1"
    assert values["host.plan.contract.updates_per_invocation"] == 20
    assert values["host.plan.input.checks[1].kind"] == "word" and values["host.plan.input.checks[1].value"] == 1
    steps = [values[k] for k in values if k.startswith("host.plan.steps[") and k.endswith("]")]
    assert steps == ["read", "read", "submit", "write", "write", "write", "operation", "submit", "write_at",
                     "write_at", "checkpoint_begin", "write", "checkpoint_publish"]


def test_a_host_whose_tables_do_not_decode_is_shown_word_by_word_and_says_why(hosts, monkeypatch):
    from bobc.host import sections

    monkeypatch.setitem(sections.PLAN_ENUMS, "bobc_step_op", ())      # as a bobc of another step table
    data = hosts["base"].read_bytes()
    lines = sections.plan_lines(data, hosts["base"])
    assert lines[0].key == "host.plan" and lines[0].value == "not decoded"
    assert "step 0 has op 2, no step kind of this bobc" in lines[0].note
    assert all(x.key.startswith("host.plan.") and "[+0x" in x.key for x in lines[1:]) and len(lines) > 10
