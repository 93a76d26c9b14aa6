"""Per-target kernel sources (bobc.kernel_search, docs/kernel-contracts.md "Per-target sources"):
`<stem>.<target>.sass` beside `<stem>.sass` replaces it for that target only, by one rule that
every path finding a kernel source uses.  The end-to-end tests build Bob's plan with a variant
of one of its kernels and compare the regions' code with what the assembler makes of each file;
the cache tests show an edited or added variant is a miss for its own target only."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bobc.kernel_search import SourceError, find_named, find_source, variant_of
from bobc.targets import SM86, SM90

REPO = Path(__file__).resolve().parents[1]
PLAN = REPO / "examples" / "bob" / "Bob" / "Build" / "NativeHost.bob"
KERNELS = Path("Realization") / "Nvidia" / "SM86"
STORES = "    STG.E [R6.64], R12\n    STG.E [R8.64], R13\n"
SWAPPED = "    STG.E [R8.64], R13\n    STG.E [R6.64], R12\n"     # two independent stores, the other order


def kernel(path: Path, name: str, extra: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"// {path.name}\n.kernel {name}\n.registers 8\n    S2R R0, SR_TID.X\n{extra}    EXIT\n")
    return path


# ---- the rule

def test_the_variant_is_found_for_its_target_and_the_base_for_the_other(tmp_path):
    base = kernel(tmp_path / "k" / "a" / "x.sass", "x")
    variant = kernel(tmp_path / "k" / "a" / "x.sm_90.sass", "x", "    NOP\n")
    assert find_source("x", [tmp_path / "k"], SM90) == variant
    assert find_source("x", [tmp_path / "k"], "sm_90") == variant          # a target's name will do
    assert find_source("x", [tmp_path / "k"], SM86) == base
    assert variant_of(base, SM90) == variant and variant_of(base, SM86) == base
    assert find_named("a/x.sass", [tmp_path / "k"], SM90) == variant
    assert find_named("a/x.sass", [tmp_path / "k"], SM86) == base


def test_the_target_is_required():
    with pytest.raises(TypeError):
        find_source("x", [])                                                # no silent default
    with pytest.raises(ValueError, match="needs the build's target"):
        find_source("x", [], None)


def test_folder_order_still_rules(tmp_path):
    first, second = tmp_path / "plan", tmp_path / "specs"
    base = kernel(first / "x.sass", "x")
    kernel(second / "deep" / "x.sm_90.sass", "x")
    assert find_source("x", [first, second], SM90) == base                 # the plan's base beats specs' variant
    variant = kernel(first / "sub" / "x.sm_90.sass", "x")
    assert find_source("x", [first, second], SM90) == variant              # searched recursively, as bases are
    assert find_source("x", [second, first], SM86) == base
    named = kernel(second / "a" / "y.sm_90.sass", "y")
    kernel(first / "a" / "y.sass", "y")
    assert find_named("a/y.sass", [second, first], SM90) == named
    assert find_named("a/y.sass", [first, second], SM90) == first / "a" / "y.sass"


def test_another_targets_variant_is_never_returned(tmp_path):
    only = kernel(tmp_path / "x.sm_90.sass", "x")
    assert find_source("x", [tmp_path], SM90) == only                      # a variant without a base is fine
    assert find_source("x", [tmp_path], SM86) is None
    with pytest.raises(SourceError, match="is absent for sm_86: only its variant for sm_90 is there"):
        find_named("x.sass", [tmp_path], SM86)                             # (test_kernel_search_named_variant.py)
    base = kernel(tmp_path / "x.sass", "x")
    kernel(tmp_path / "x.sm_89.sass", "x")                                 # a target bobc does not know (yet)
    assert find_source("x", [tmp_path], SM86) == base
    with pytest.raises(SourceError, match="identity x.sm_89 ends in a target suffix"):
        find_source("x.sm_89", [tmp_path], SM86)                           # never a kernel of its own
    with pytest.raises(SourceError, match="is the variant for sm_90, but the build is for sm_86"):
        variant_of(only, SM86)
    assert variant_of(only, SM90) == only


def test_a_variant_naming_another_kernel_is_refused_with_both_files(tmp_path):
    base = kernel(tmp_path / "x.sass", "x")
    variant = kernel(tmp_path / "x.sm_90.sass", "x_hopper")
    for find in (lambda: find_source("x", [tmp_path], SM90), lambda: variant_of(base, SM90),
                 lambda: find_named("x.sass", [tmp_path], SM90)):
        with pytest.raises(SourceError) as error:
            find()
        assert str(variant) in error.value.message and str(base) in error.value.message
        assert "'x_hopper'" in error.value.message and "'x'" in error.value.message
    assert find_source("x", [tmp_path], SM86) == base                      # the other target is unaffected


def test_find_named_lists_the_candidates_it_found_absent(tmp_path):
    first, second = tmp_path / "plan", tmp_path / "specs"
    base = kernel(second / "a" / "x.sass", "x")
    missing: list = []
    assert find_named("a/x.sass", [first, second], SM90, missing) == base
    assert missing == [first / "a" / "x.sm_90.sass", first / "a" / "x.sass", second / "a" / "x.sm_90.sass"]


# ---- end to end: Bob's plan with a variant of bob-adamw

def specs_with_variant(tmp_path, monkeypatch, target="sm_90", text=None) -> Path:
    """A copy of specs/ (BOBC_SPECS) with `bob-adamw.<target>.sass` beside bob-adamw.sass."""
    specs = tmp_path / "specs"
    if not specs.exists():
        shutil.copytree(REPO / "specs", specs)
    monkeypatch.setenv("BOBC_SPECS", str(specs))
    base = specs / KERNELS / "bob-adamw.sass"
    source = base.read_text()
    assert STORES in source
    variant = base.with_name(f"bob-adamw.{target}.sass")
    variant.write_text(text if text is not None else source.replace(STORES, SWAPPED))
    return variant


def adamw_code(built) -> bytes:
    (region,) = [r for r in built.plan.program.regions if r.identity == "bob-adamw"]
    assert bytes(region.code) in built.images.program                      # placed in the program image
    return bytes(region.code)


def test_each_target_builds_its_own_source(tmp_path, monkeypatch):
    from bobc import pipeline
    from bobc.sass import assemble_kernel

    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    variant = specs_with_variant(tmp_path, monkeypatch)
    base = variant.with_name("bob-adamw.sass")
    for target, used, other in ((SM90, variant, base), (SM86, base, variant)):
        built = pipeline.compile_plan(PLAN, target)
        expected, unused = (assemble_kernel(used, target, launched=True).code,
                            assemble_kernel(other, target, launched=True).code)
        assert expected != unused                                           # the two files' code differs
        assert adamw_code(built) == bytes(expected), target.name


def test_a_variant_is_certified_on_its_own(tmp_path, monkeypatch):
    from bobc import pipeline
    from bobc.certify import CertificationError

    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    base = REPO / "specs" / KERNELS / "bob-adamw.sass"
    broken = base.read_text().replace("//@ param 1 pointer read 4*hi[7]", "//@ param 1 unused", 1)
    assert broken != base.read_text()
    specs_with_variant(tmp_path, monkeypatch, text=broken)
    with pytest.raises(CertificationError, match="bob-adamw reads parameter word 1"):
        pipeline.compile_plan(PLAN, SM90)
    pipeline.compile_plan(PLAN, SM86)                                       # the base's contract holds


# ---- the caches: a variant edited or added is a miss for its target only

def test_an_edited_variant_is_a_miss_for_its_target_only(cache_dir, loads, tmp_path, monkeypatch):
    from bobc import pipeline
    from bobc.sass import assemble_kernel

    variant = specs_with_variant(tmp_path, monkeypatch)
    for target in (SM90, SM86, SM90, SM86):
        pipeline.compile_plan(PLAN, target, recalled=True)
    assert len(loads) == 2                                                  # one load per target, then recalled
    variant.write_text(variant.read_text().replace("    EXIT\n", "    NOP\n    EXIT\n", 1))
    sm86 = pipeline.compile_plan(PLAN, SM86, recalled=True)
    assert len(loads) == 2                                                  # sm_86 never read the variant
    sm90 = pipeline.compile_plan(PLAN, SM90, recalled=True)
    assert len(loads) == 3
    assert adamw_code(sm90) == bytes(assemble_kernel(variant, SM90, launched=True).code)
    assert adamw_code(sm86) == bytes(assemble_kernel(variant.with_name("bob-adamw.sass"), SM86, launched=True).code)


def test_an_added_variant_is_a_miss_for_its_target(cache_dir, loads, tmp_path, monkeypatch):
    from bobc import pipeline
    from bobc.sass import assemble_kernel

    specs_with_variant(tmp_path, monkeypatch)                               # sm_90's; sm_86 has none yet
    for _ in range(2):
        pipeline.compile_plan(PLAN, SM86, recalled=True)
    assert len(loads) == 1
    added = specs_with_variant(tmp_path, monkeypatch, target="sm_86")
    built = pipeline.compile_plan(PLAN, SM86, recalled=True)
    assert len(loads) == 2
    assert adamw_code(built) == bytes(assemble_kernel(added, SM86, launched=True).code)


def test_a_checks_stored_outcome_covers_the_variant(cache_dir, loads, tmp_path, monkeypatch, capsys):
    from bobc.cli import main

    variant = specs_with_variant(tmp_path, monkeypatch)

    def check(target):
        status = main(["check", str(PLAN), "--target", target])
        return status, capsys.readouterr()

    assert check("sm_90")[0] == 0 and check("sm_86")[0] == 0
    assert check("sm_90")[0] == 0 and check("sm_86")[0] == 0 and len(loads) == 2
    variant.write_text(variant.read_text().replace("//@ param 1 pointer read 4*hi[7]", "//@ param 1 unused", 1))
    assert check("sm_86")[0] == 0 and len(loads) == 2
    status, out = check("sm_90")
    assert len(loads) == 3 and status == 1 and "bob-adamw" in out.err


def test_decode_names_the_arguments_of_the_targets_source(tmp_path, monkeypatch):
    from bobc.nvidia.decode import argument_names

    base = (REPO / "specs" / KERNELS / "bob-adamw.sass").read_text()
    old = "//@ param 1 pointer read 4*hi[7] the gradients G"
    assert old in base
    specs_with_variant(tmp_path, monkeypatch, text=base.replace(old, old + " (sm_90's own)", 1))
    assert argument_names("bob-adamw", "sm_90")[1].startswith("argument 1: the gradients G (sm_90's own)")
    assert "sm_90's own" not in argument_names("bob-adamw", "sm_86")[1]
