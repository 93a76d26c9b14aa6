"""A warm `bobc check` / `bobc build` that loads no module (bobc/recall.py, issue 21) says and
builds exactly what loading the plan does, and is used only while everything it was made
from holds: an edited, shadowing or damaged anything is a miss, a refusal is found again
with its message every time, and BOBC_CACHE_DIR=off stores nothing."""
from __future__ import annotations

import re

import shutil
from pathlib import Path

import pytest

from bobc import pipeline
from bobc.cli import main
from bobc.targets import target_named

REPO = Path(__file__).resolve().parents[1]
PLAN = REPO / "examples" / "bob" / "Bob" / "Build" / "NativeHost.bob"


def check(capsys, plan, *flags):
    status = main(["check", str(plan), "--target", "sm_90", *flags])
    out = capsys.readouterr()
    return status, out.out, out.err


def bob_copy(tmp_path) -> Path:
    shutil.copytree(REPO / "examples" / "bob" / "Bob", tmp_path / "Bob")
    return tmp_path / "Bob" / "Build" / "NativeHost.bob"


def test_a_warm_check_says_what_loading_says_and_loads_nothing(cache_dir, loads, capsys, monkeypatch):
    first = check(capsys, PLAN)
    assert first[0] == 0 and "bobNativeHost: certified for sm_90 (9 residents" in first[1]
    first_json = check(capsys, PLAN, "--json")
    assert len(loads) == 1                      # --json prints the outcome the first check stored
    assert check(capsys, PLAN) == first and check(capsys, PLAN, "--json") == first_json
    assert len(loads) == 1
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    assert check(capsys, PLAN) == first and check(capsys, PLAN, "--json") == first_json
    assert len(loads) == 3


def test_cache_off_stores_nothing_and_loads_every_time(tmp_path, loads, capsys, monkeypatch):
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    runs = [check(capsys, PLAN) for _ in range(2)]
    assert runs[0] == runs[1] and runs[0][0] == 0
    assert len(loads) == 2
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home").exists()


def test_an_edited_module_is_loaded_and_checked_again(cache_dir, loads, capsys, tmp_path):
    plan = bob_copy(tmp_path)
    before = check(capsys, plan)
    model = tmp_path / "Bob" / "Model.bob"
    model.write_text(model.read_text() + "\ndef anAddedNatural : Nat = 7\n")
    after = check(capsys, plan)
    assert len(loads) == 2
    count = int(re.search(r"(\d+) definitions", before[1]).group(1))
    assert after[0] == 0 and after[1] == before[1].replace(f"{count} definitions", f"{count + 1} definitions") != before[1]
    assert check(capsys, plan) == after and len(loads) == 2      # the edited program is stored in turn


def test_a_refusal_after_an_edit_is_found_again_with_its_message(cache_dir, loads, capsys, tmp_path):
    """A warm entry of the sound plan never answers for the edited one, and the refusal itself
    is never stored: the certifier is asked, and names the fault, on every run."""
    plan = bob_copy(tmp_path)
    sound = check(capsys, plan)
    assert sound[0] == 0
    physical = tmp_path / "Bob" / "Build" / "PhysicalComponents.bob"
    text = physical.read_text()
    anchor = '(bobRegion b"bob-adamw" bobAdamMachineBytes 32 256)'
    assert anchor in text
    physical.write_text(text.replace(anchor, '(bobRegion b"bob-adamw" bobAdamMachineBytes 8 256)', 1))
    refusals = [check(capsys, plan) for _ in range(2)]
    assert refusals[0] == refusals[1]
    status, out, err = refusals[0]
    assert status == 1 and out == "" and "region bob-adamw needs" in err and "but declares 8" in err
    assert len(loads) == 3
    physical.write_text(text)                   # undone: the sound plan passes, and is stored again
    assert check(capsys, plan) == sound and check(capsys, plan) == sound
    assert len(loads) == 4


def test_a_type_error_after_an_edit_is_found_again_with_its_message(cache_dir, loads, capsys, tmp_path):
    plan = bob_copy(tmp_path)
    assert check(capsys, plan)[0] == 0
    model = tmp_path / "Bob" / "Model.bob"
    model.write_text(model.read_text() + '\ndef notANatural : Nat = b"x"\n')
    refusals = [check(capsys, plan) for _ in range(2)]
    assert refusals[0] == refusals[1] and len(loads) == 3
    status, out, err = refusals[0]
    assert status == 1 and out == "" and "Model.bob" in err and "notANatural" in err


def test_a_module_shadowing_one_found_before_is_a_miss(cache_dir, loads, capsys, tmp_path):
    """A file that now comes first in the search path (the plan's own root before specs/)
    changes the program even though no file it read changed."""
    plan = bob_copy(tmp_path)
    status, out, _ = check(capsys, plan)
    assert status == 0
    count = int(re.search(r"(\d+) definitions", out).group(1))
    spec = REPO / "specs" / "Checkpoint" / "Envelope.bob"
    shadow = tmp_path / "Checkpoint" / "Envelope.bob"
    shadow.parent.mkdir()
    shadow.write_text(spec.read_text() + "\ndef aShadowingNatural : Nat = 3\n")
    status, out, _ = check(capsys, plan)
    assert len(loads) == 2
    assert status == 0 and f"{count + 1} definitions" in out


def test_an_edited_contract_source_is_certified_again(cache_dir, loads, capsys, tmp_path, monkeypatch):
    """The stored outcome names each kernel contract source the certifier read, by SHA-256."""
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    monkeypatch.setenv("BOBC_SPECS", str(tmp_path / "specs"))
    first = check(capsys, PLAN)
    assert check(capsys, PLAN) == first and len(loads) == 1
    kernel = tmp_path / "specs" / "Realization" / "Nvidia" / "SM86" / "bob-adamw.sass"
    text = kernel.read_text()
    assert "//@ param 0 " in text
    kernel.write_text(text.replace("//@ param 0 ", "//@ param 0 unused ", 1))
    status, out, err = check(capsys, PLAN)
    assert len(loads) == 2 and status == 1 and "bob-adamw" in err


def test_an_edited_base_of_a_variant_is_compared_again(cache_dir, loads, capsys, tmp_path, monkeypatch):
    """A variant's contract is compared with its base's (docs/kernel-contracts.md), so the stored
    outcome names the base too: an edit of the base alone that the variant no longer honours is
    refused on the next check, not recalled as passed (probe s31 kernelcert's note)."""
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    monkeypatch.setenv("BOBC_SPECS", str(tmp_path / "specs"))
    base = tmp_path / "specs" / "Realization" / "Nvidia" / "SM86" / "bob-adamw.sass"
    shutil.copy(base, base.with_name("bob-adamw.sm_90.sass"))
    first = check(capsys, PLAN)
    assert first[0] == 0 and check(capsys, PLAN) == first
    text = base.read_text()
    assert "pointer read-write" in text
    base.write_text(text.replace("pointer read-write", "pointer read", 1))
    status, out, err = check(capsys, PLAN)
    assert status == 1 and "bob-adamw.sm_90.sass" in err and "its base" in err


def test_a_damaged_entry_is_a_miss(cache_dir, loads, capsys):
    first = check(capsys, PLAN)
    for kind in ("programs", "outcomes"):
        (entry,) = (cache_dir / kind).iterdir()
        entry.write_bytes(b'{"format": 1, "plan": ')
    assert check(capsys, PLAN) == first and len(loads) == 2
    for kind in ("programs", "outcomes"):       # well-formed JSON of the wrong shape
        (entry,) = (cache_dir / kind).iterdir()
        entry.write_bytes(b'{"format": 1, "modules": [["Bob.Model", 99]], "outcome": 3, "contracts": [1]}')
    assert check(capsys, PLAN) == first and len(loads) == 3
    (entry,) = (cache_dir / "outcomes").iterdir()     # an outcome that lacks what check prints
    entry.write_bytes(b'{"format": 1, "outcome": {"warnings": [], "certified": true}, "contracts": []}')
    assert check(capsys, PLAN) == first and len(loads) == 4


def test_a_recalled_build_encodes_what_a_loaded_one_does(cache_dir, loads, monkeypatch, tmp_path):
    target = target_named("sm_90")
    pipeline.compile_plan(PLAN, target, recalled=True)
    recalled = pipeline.compile_plan(PLAN, target, recalled=True)
    assert len(loads) == 1                      # the second build loaded no module
    assert recalled.program.plan_name == "Bob.Build.NativeHost"
    # a caller that may evaluate the program (recalled not asked for) gets it loaded
    assert pipeline.compile_plan(PLAN, target).program.value("bobQMDTableBytes").value == 27 * 256
    assert len(loads) == 2
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    loaded = pipeline.compile_plan(PLAN, target, recalled=True)
    assert len(loads) == 3
    assert recalled.plan == loaded.plan
    for image in ("program", "qmd", "push", "gpfifo", "manifest"):
        assert getattr(recalled.images, image) == getattr(loaded.images, image), image


def test_a_recalled_build_of_an_edited_plan_loads_it_and_certifies_every_time(cache_dir, loads, tmp_path):
    plan = bob_copy(tmp_path)
    target = target_named("sm_90")
    pipeline.compile_plan(plan, target, recalled=True)
    physical = tmp_path / "Bob" / "Build" / "PhysicalComponents.bob"
    anchor = '(bobRegion b"bob-adamw" bobAdamMachineBytes 32 256)'
    physical.write_text(physical.read_text().replace(anchor, '(bobRegion b"bob-adamw" bobAdamMachineBytes 8 256)', 1))
    from bobc.errors import BobcError

    for _ in range(2):      # well typed, so the second build recalls it: its plan is certified again
        with pytest.raises(BobcError, match="but declares 8"):
            pipeline.compile_plan(plan, target, recalled=True)
    assert len(loads) == 2
