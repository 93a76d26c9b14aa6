"""bobc's user cache (issue 21) gives the same trees, kernels and plans as doing the work
again, is keyed by content (an edit is a miss), never stores a failure, and treats a
damaged entry as a miss."""
from __future__ import annotations

import os
import shutil
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


def test_a_warm_check_imports_no_parser_and_no_heavy_library(cache_dir):
    env = {**os.environ, "BOBC_CACHE_DIR": str(cache_dir)}
    probe = ("import sys; from bobc.cli import main\n"
             "status = main(['check', %r, '--target', 'sm_90'])\n"
             "print(','.join(m for m in ('lark', 'numpy', 'lief', 'jinja2') if m in sys.modules) or '-', status)"
             ) % str(PLAN)
    runs = [subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=REPO)
            for _ in range(2)]
    assert [r.stdout.split()[-2:] for r in runs] == [["lark", "0"], ["-", "0"]], runs[1].stderr


def test_a_stored_kernel_is_the_kernel_the_assembler_makes(cache_dir):
    from bobc import kernel_cache
    from bobc.sass import assemble_kernel

    for name in ("sm_86", "sm_90"):
        target = target_named(name)
        fresh = assemble_kernel(KERNEL, target, launched=True)      # a plan's kernel (launch prologue)
        for _ in range(2):                  # a miss, then a hit
            cached = kernel_cache.assemble_kernel(KERNEL, target)
            assert (cached.code, cached.registers, cached.kernel_name) == \
                   (fresh.code, fresh.registers, fresh.kernel_name)
    entries = list((cache_dir / "kernels").iterdir())
    assert len(entries) == 2
    for entry in entries:
        entry.write_bytes(b"\x80\x05damaged")
    assert kernel_cache.assemble_kernel(KERNEL, target_named("sm_90")).code == fresh.code


def _load(path, target="sm_90"):
    from bobc import pipeline

    return pipeline.load(Path(path), target_named(target))


def test_a_stored_plan_is_the_plan_a_check_extracts(cache_dir, monkeypatch):
    from bobc import pipeline
    from bobc.language.program import Program

    first = pipeline.check_and_certify(_load(PLAN), target_named("sm_90"))
    assert len(list((cache_dir / "plans").iterdir())) == 1
    assert len(list((cache_dir / "checked").iterdir())) == 1

    def refuse(self):
        raise AssertionError("a stored plan needs no type check")

    monkeypatch.setattr(Program, "check", refuse)
    again = pipeline.check_and_certify(_load(PLAN), target_named("sm_90"))
    assert again == first
    # the images encoded from it are the golden ones (tests/golden, bobc.nvidia.golden's oracle)
    from bobc.nvidia.encode import encode_images

    images = encode_images(again.program, target_named("sm_90"))
    golden = REPO / "tests" / "golden" / "bob-sm_90"
    assert images.program == (golden / "program.bin").read_bytes()
    assert images.qmd == (golden / "qmd.bin").read_bytes()


def test_an_edited_module_is_checked_again(cache_dir, tmp_path):
    from bobc import pipeline

    shutil.copytree(REPO / "examples" / "bob" / "Bob", tmp_path / "Bob")
    plan = tmp_path / "Bob" / "Build" / "NativeHost.bob"
    pipeline.check_and_certify(_load(plan), target_named("sm_90"))
    model = tmp_path / "Bob" / "Model.bob"
    model.write_text(model.read_text() + "\n-- an edit\n")
    pipeline.check_and_certify(_load(plan), target_named("sm_90"))
    assert len(list((cache_dir / "checked").iterdir())) == 2
    assert len(list((cache_dir / "plans").iterdir())) == 2


def test_a_refused_proof_is_refused_every_time(cache_dir):
    from bobc import pipeline
    from bobc.errors import BobcError

    plan = REPO / "tests" / "language" / "typecheck" / "failure" / "false_equality.bob"
    for _ in range(2):
        with pytest.raises(BobcError, match="the equality inverseRowsDerived claims does not hold"):
            pipeline.check(_load(plan))
    assert not (cache_dir / "checked").exists() or not list((cache_dir / "checked").iterdir())


def test_other_intrinsics_are_never_cached(cache_dir):
    from bobc import pipeline
    from bobc.plan.intrinsics import default_intrinsics

    program = pipeline.load(PLAN, target_named("sm_90"), intrinsics=default_intrinsics())
    pipeline.check_and_certify(program, target_named("sm_90"))
    assert not (cache_dir / "checked").exists() and not (cache_dir / "plans").exists()


def test_an_edited_kernel_source_is_extracted_again(cache_dir, tmp_path, monkeypatch):
    """The plan carries assembled kernels, whose sources are not modules: a stored plan is
    reused only while every kernel source it was made from has the same bytes."""
    from bobc import pipeline
    import bobc.plan.extract as extract_module

    shutil.copytree(REPO / "specs", tmp_path / "specs")
    monkeypatch.setenv("BOBC_SPECS", str(tmp_path / "specs"))
    calls = []
    real = extract_module.extract_plan
    monkeypatch.setattr(extract_module, "extract_plan", lambda *a, **k: calls.append(1) or real(*a, **k))
    for _ in range(2):
        pipeline.check_and_certify(_load(PLAN), target_named("sm_90"))
    assert len(calls) == 1
    kernel = tmp_path / "specs" / "Realization" / "Nvidia" / "SM86" / "bob-adamw.sass"
    kernel.write_text(kernel.read_text() + "// an edit\n")
    pipeline.check_and_certify(_load(PLAN), target_named("sm_90"))
    assert len(calls) == 2


def test_the_parse_tables_come_from_the_cache_and_errors_read_the_same(cache_dir, tmp_path):
    """lark's LALR tables are kept in the cache (lark checks the grammar's hash in the file); a
    parser loaded from them reports a syntax error with the same words as one built afresh."""
    source = tmp_path / "A" / "M.bob"
    source.parent.mkdir()
    source.write_text("module A.M\n\ndef one : Nat = \n")
    env = {**os.environ, "BOBC_CACHE_DIR": str(cache_dir)}
    runs = [subprocess.run([sys.executable, "-m", "bobc", "check", str(source)], capture_output=True, text=True,
                           env=env) for _ in range(2)]
    assert len(list((cache_dir / "lark").iterdir())) == 1
    assert runs[0].returncode == runs[1].returncode == 1
    assert runs[0].stderr == runs[1].stderr
    assert "expected one of '(', 'Type', a byte string (b\"...\"), a name or a natural number" in runs[1].stderr


@pytest.mark.parametrize("argv", [["--help"], ["--version"], [], ["chekc"]])
def test_the_command_lines_own_answers_import_no_heavy_library(argv):
    """`bobc --help` lists every subcommand's options, `sim`'s step limit among them: naming it
    imported the simulator and NumPy, five times the start-up of `bobc check --help`."""
    probe = ("import sys\nfrom bobc.cli import main\n"
             "try:\n    main(%r)\nexcept SystemExit:\n    pass\n"
             "print(','.join(m for m in ('lark', 'numpy', 'lief', 'jinja2') if m in sys.modules) or '-',"
             " file=sys.stderr)") % (argv,)
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO)
    assert run.stderr.splitlines()[-1] == "-", run.stderr


def test_a_kernel_source_edited_while_it_is_assembled_leaves_no_entry_for_its_old_bytes(tmp_path, monkeypatch):
    """The assembler reads the source itself after kernel_cache read it for the key: an edit in
    between (an editor saving while a build runs) stored the new bytes' code under the old bytes'
    key, so a later build of the old bytes got the new code (probe s34 cache34 finding 5)."""
    import bobc.sass as sass
    from bobc import kernel_cache
    from bobc.targets import target_named

    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    kernels = REPO / "examples" / "linear_regression" / "LinReg" / "kernels"
    source = tmp_path / "k.sass"
    old, new = (kernels / "linreg-predict.sass").read_bytes(), (kernels / "linreg-sgd.sass").read_bytes()
    source.write_bytes(old)
    target = target_named("sm_90")
    real, edits = sass.assemble_kernel, []

    def edited_meanwhile(path, *args, **kwargs):
        if not edits:
            edits.append(1)
            source.write_bytes(new)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(sass, "assemble_kernel", edited_meanwhile)
    got = kernel_cache.assemble_kernel(source, target)
    assert got.code == real(source, target, launched=True).code      # the bytes there now, assembled
    monkeypatch.setattr(sass, "assemble_kernel", real)
    source.write_bytes(old)
    assert kernel_cache.assemble_kernel(source, target).code == real(source, target, launched=True).code
