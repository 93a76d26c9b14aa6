"""bobc's user cache (issue 21) gives the same trees and kernels as doing the work again,
is keyed by content (an edit is a miss), never stores a failure, and treats a damaged
entry as a miss."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.language import modules
from bobc.language.parse import ParseError, parse_file
from bobc.targets import target_named

REPO = Path(__file__).resolve().parents[1]
KERNEL = REPO / "specs/Realization/Nvidia/SM86/bob-loss-gradient.sass"
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(folder))
    return folder


def test_a_stored_tree_is_the_tree_a_parse_makes(cache_dir, tmp_path):
    source = REPO / "specs"
    for path in sorted(source.rglob("*.bob"))[:12]:
        fresh = parse_file(path)
        assert repr(modules.parse_stored(path)) == repr(fresh)         # miss: parsed and stored
        stored = modules.parse_stored(path)                             # hit: loaded
        assert repr(stored) == repr(fresh) and stored.source == fresh.source
    assert len(list((cache_dir / "parsed").iterdir())) == 12


def test_an_edit_is_a_new_tree_and_an_error_is_never_stored(cache_dir, tmp_path):
    path = tmp_path / "A" / "M.bob"
    path.parent.mkdir()
    path.write_text("module A.M\n\ndef one : Nat = 1\n")
    first = modules.parse_stored(path)
    path.write_text("module A.M\n\ndef one : Nat = 1\ndef two : Nat = 2\n")
    second = modules.parse_stored(path)
    assert [d.name for d in second.declarations] == ["one", "two"] != [d.name for d in first.declarations]
    path.write_text("module A.M\n\ndef one : Nat = \n")
    for _ in range(2):
        with pytest.raises(ParseError) as error:
            modules.parse_stored(path)
        assert "M.bob:3:17: error: the file ends too early" in error.value.render()
    assert len(list((cache_dir / "parsed").iterdir())) == 2


def test_a_damaged_tree_entry_is_parsed_again(cache_dir, tmp_path):
    path = REPO / "specs/Std/Nat.bob"
    if not path.exists():
        path = sorted((REPO / "specs").rglob("*.bob"))[0]
    modules.parse_stored(path)
    (entry,) = (cache_dir / "parsed").iterdir()
    entry.write_bytes(b"not a pickle")
    assert repr(modules.parse_stored(path)) == repr(parse_file(path))


def test_a_warm_check_does_not_import_the_parser(cache_dir):
    env = {**os.environ, "BOBC_CACHE_DIR": str(cache_dir)}
    probe = ("import sys, runpy; sys.argv = ['bobc', 'check', %r, '--target', 'sm_90']\n"
             "from bobc.cli import main\nstatus = main(sys.argv[1:])\n"
             "print('lark' in sys.modules, status)") % str(PLAN)
    runs = [subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=REPO)
            for _ in range(2)]
    assert [r.stdout.split()[-2:] for r in runs] == [["True", "0"], ["False", "0"]], runs[1].stderr


def test_a_stored_kernel_is_the_kernel_the_assembler_makes(cache_dir):
    from bobc import kernel_cache
    from bobc.sass import assemble_kernel

    for name in ("sm_86", "sm_90"):
        target = target_named(name)
        fresh = assemble_kernel(KERNEL, target)
        for _ in range(2):                  # a miss, then a hit
            cached = kernel_cache.assemble_kernel(KERNEL, target)
            assert (cached.code, cached.registers, cached.kernel_name) == \
                   (fresh.code, fresh.registers, fresh.kernel_name)
    entries = list((cache_dir / "kernels").iterdir())
    assert len(entries) == 2
    for entry in entries:
        entry.write_bytes(b"\x80\x05damaged")
    assert kernel_cache.assemble_kernel(KERNEL, target_named("sm_90")).code == fresh.code
