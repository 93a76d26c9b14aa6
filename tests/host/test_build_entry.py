"""Which native host a build starts from (bobc.pipeline.require_entry): `--entry`
names it; a plan module with one NvidiaPlanHost definition needs none; one with
several and no `--entry` is refused, listing them; no model's name is a default."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.errors import BobcError
from bobc.language import Intrinsics, load_program
from bobc.targets import SM86
from bobc.pipeline import DEFAULT_ENTRY, require_entry

SYNTHETIC = Path(__file__).resolve().parents[1] / "platform"


def plan(tmp_path, body: str):
    path = tmp_path / "Hosts.bob"
    path.write_text("module Hosts\n\nimport Synthetic.Reissue\nimport Platform.Linux.Nvidia.PlanHost\n\n" + body,
                    encoding="utf-8")
    return load_program(path, include=[SYNTHETIC, SYNTHETIC.parents[1] / "examples/bob"], intrinsics=Intrinsics(), target=SM86)


def test_no_default_entry():
    assert DEFAULT_ENTRY is None


def test_one_host_needs_no_entry(tmp_path):
    program = plan(tmp_path, "def onlyHost : (family NvidiaPlanHost) = synReissueHost\n")
    assert require_entry(program, None) == "onlyHost"
    assert require_entry(program, "onlyHost") == "onlyHost"


def test_several_hosts_without_entry_are_refused_by_name(tmp_path):
    program = plan(tmp_path, "def firstHost : (family NvidiaPlanHost) = synReissueHost\n"
                             "def secondHost : (family NvidiaPlanHost) = synReissueHost\n")
    with pytest.raises(BobcError) as caught:
        require_entry(program, None)
    message = caught.value.message
    assert "2 native hosts (firstHost at " in message and ", secondHost at " in message
    assert "Hosts.bob:6:5" in message and "Hosts.bob:7:5" in message      # each host's own place
    assert "--entry" in caught.value.render()
    assert require_entry(program, "secondHost") == "secondHost"


def test_an_entry_the_module_lacks_and_a_module_without_host(tmp_path):
    program = plan(tmp_path, "def notAHost : Nat = 3\n")
    with pytest.raises(BobcError) as caught:
        require_entry(program, "missingHost")
    assert "defines no missingHost" in caught.value.message
    with pytest.raises(BobcError) as caught:
        require_entry(program, None)
    rendered = caught.value.render()
    assert "defines no native host" in rendered and "Bob" not in rendered


def test_a_module_without_host_but_with_bytes_names_them_as_possible_artifacts(tmp_path):
    """A module that builds a native artifact (a Bytes definition holding an ELF) has no host
    plan: the refusal lists its Bytes definitions as what --entry can build."""
    program = plan(tmp_path, "def notAHost : Nat = 3\ndef someTable : Bytes = b\"ab\"\n"
                             "def theExecutable : Bytes = b\"ELF\"\n")
    with pytest.raises(BobcError) as caught:
        require_entry(program, None)
    hint = caught.value.render()
    assert "defines no native host" in hint
    assert "Bytes definitions (someTable, theExecutable) are what --entry can build" in hint
    assert "notAHost" not in hint
