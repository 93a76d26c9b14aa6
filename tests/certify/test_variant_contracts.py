"""A per-target variant declares its base's `//@ param` meanings (probe s31 kernel finding 8).

docs/kernel-contracts.md: a variant "must honour ... the plan's parameter words (the same
`//@ param` meanings)", but nothing compared them: a variant declaring `read` where its base
says `read-write` built for both targets.  Now a variant's declared words (kind, a pointer's
access) are compared with its base's, and a mismatch is refused for the variant's target at
the variant's line, naming both files and lines; words only the encoder fills (a tensor map's)
and unused words may be added."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bobc.certify.kernels import check_variant_contract, parse_contract

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples" / "bob" / "Bob" / "Build" / "NativeHost.bob"
ADAMW = Path("Realization") / "Nvidia" / "SM86" / "bob-adamw.sass"
BASE = ("//@ param 0 pointer read 4*lo[2] X\n"
        "//@ param 1 pointer read-write 4*lo[2] Y\n"
        "//@ param 2 scalar N\n"
        "//@ param 3 unused\n")


def contracts(tmp_path, variant_lines: str):
    (tmp_path / "k.sass").write_text(BASE + ".kernel k\n")
    (tmp_path / "k.sm_90.sass").write_text(variant_lines + ".kernel k\n")
    return parse_contract(tmp_path / "k.sm_90.sass", "k"), parse_contract(tmp_path / "k.sass", "k")


def test_a_variant_declaring_its_bases_words_alike_passes(tmp_path):
    assert check_variant_contract(*contracts(tmp_path, BASE)) == []
    added = BASE.replace("//@ param 3 unused\n", "//@ param 5 unused\n//@ param 4 unused\n") + \
        "//@ tensormap 3 of 0 binary32 dims (256) strides () box (32) swizzle none X's map\n"
    assert check_variant_contract(*contracts(tmp_path, added)) == []       # a map's word, words it leaves unused


def test_a_pointers_access_that_differs_is_refused_naming_both_lines(tmp_path):
    (found,) = check_variant_contract(*contracts(tmp_path, BASE.replace("read-write", "read")))
    assert found.message == (f"kernel k's variant {tmp_path / 'k.sm_90.sass'}:2 declares parameter word 1 a read "
                             f"pointer, but its base {tmp_path / 'k.sass'}:2 declares it a read-write pointer: a "
                             f"variant honours its base's //@ param meanings (the plan's launches fill the same "
                             f"words for every target); declare it as the base does, or change both")
    assert (found.at.path, found.at.line) == (str(tmp_path / "k.sm_90.sass"), 2)


@pytest.mark.parametrize("change, said", [
    (("//@ param 2 scalar N", "//@ param 2 unused"), "word 2 unused, but its base"),
    (("//@ param 2 scalar N\n", ""), "word 2 nothing (no //@ param line), but its base"),
    (("//@ param 3 unused", "//@ param 3 scalar M"), "word 3 a scalar, but its base"),
    (("//@ param 0 pointer read 4*lo[2] X", "//@ param 0 scalar X"), "word 0 a scalar, but its base"),
], ids=["scalar-unused", "scalar-missing", "unused-scalar", "pointer-scalar"])
def test_a_words_kind_that_differs_is_refused(tmp_path, change, said):
    (found,) = check_variant_contract(*contracts(tmp_path, BASE.replace(*change)))
    assert said in found.message


def test_the_variants_target_is_refused_and_the_others_build(tmp_path, monkeypatch):
    from bobc import pipeline
    from bobc.certify import CertificationError
    from bobc.targets import SM86, SM90

    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    specs = tmp_path / "specs"
    shutil.copytree(REPO / "specs", specs)
    monkeypatch.setenv("BOBC_SPECS", str(specs))
    base = specs / ADAMW
    text = base.read_text()
    assert "//@ param 0 pointer read-write 4*hi[7]" in text
    variant = base.with_name("bob-adamw.sm_90.sass")
    variant.write_text(text.replace("//@ param 0 pointer read-write 4*hi[7]", "//@ param 0 pointer read 4*hi[7]"))
    with pytest.raises(CertificationError) as error:
        pipeline.compile_plan(PLAN, SM90)
    assert f"kernel bob-adamw's variant {variant}:" in error.value.message
    assert f"declares parameter word 0 a read pointer, but its base {base}:" in error.value.message
    pipeline.compile_plan(PLAN, SM86)                                       # sm_86 reads the base alone
    variant.write_text(text)
    pipeline.compile_plan(PLAN, SM90)
