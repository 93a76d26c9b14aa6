"""The certifier reads the parameter reads off the build's own assembly (probe s29 speed, hot
spot 4): the build assembles each kernel as a plan's (on sm_90 with the launch prologue, one
ACQBULK, before it), and the certifier used to assemble the same source once more as written.
Its findings are the same either way, the prologue accounted for."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BOB_HOST = REPO / "examples" / "bob" / "Bob" / "Build" / "NativeHost.bob"
ADAMW = REPO / "specs" / "Realization" / "Nvidia" / "SM86" / "bob-adamw.sass"


def _kernel_sources() -> list[Path]:
    return sorted({*REPO.glob("specs/**/*.sass"), *REPO.glob("examples/**/*.sass")})


@pytest.mark.parametrize("target_name", ["sm_86", "sm_90"])
def test_a_plans_kernel_past_its_prologue_is_the_kernel_as_written(target_name):
    """Every kernel of specs/ and examples/ for each target (its variant's own): the build's code
    without the launch prologue is, word for word, the source assembled as written."""
    from bobc.certify.kernels import as_written
    from bobc.sass import assemble_kernel
    from bobc.targets import target_named

    target = target_named(target_name)
    checked = 0
    for source in _kernel_sources():
        parts = source.name.split(".")
        if len(parts) == 3 and parts[1] != target_name:
            continue                        # another target's variant
        if len(parts) == 2 and source.with_name(f"{parts[0]}.{target_name}.sass").is_file():
            continue                        # a base this target's variant replaces (an sm_86 listing:
                                            # examples/ridge's ridge-momentum), never built for it
        built = assemble_kernel(source, target, launched=True)
        assert len(built.code) == 16 * (len(built.instructions)), source
        assert as_written(built, target) == assemble_kernel(source, target, launched=False).code, source
        checked += 1
    assert checked >= 20


def _bob_with_adamw_contract(tmp_path, target_name: str, change: tuple[str, str] | None):
    """Bob's plan loaded for `target_name`, its AdamW kernel a copy (on an -I folder, found before
    specs/) whose contract has `change` (old, new) made."""
    from bobc import pipeline
    from bobc.targets import target_named

    folder = tmp_path / "kernels" / "Realization" / "Nvidia" / "SM86"
    folder.mkdir(parents=True, exist_ok=True)
    text = ADAMW.read_text()
    if change is not None:
        assert change[0] in text
        text = text.replace(*change)
    (folder / ADAMW.name).write_text(text)
    target = target_named(target_name)
    program = pipeline.load(BOB_HOST, target, include=(tmp_path / "kernels",))
    plan = pipeline.extract(program, "bobNativeHost")
    return program, plan, target


@pytest.mark.parametrize("target_name", ["sm_86", "sm_90"])
@pytest.mark.parametrize("change", [None, ("//@ param 5 scalar decay", "//@ param 5 unused decay")],
                         ids=["sound", "word-5-unused"])
def test_the_findings_are_those_of_the_source_assembled_again(tmp_path, monkeypatch, target_name, change):
    """With the cache off, the certifier's findings from the build's assembly are those it finds
    by assembling each source again, on sm_90 (whose code opens with the prologue) as on sm_86;
    a contract that declares unused a word the code reads is refused the same way."""
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    from bobc import kernel_cache, pipeline
    from bobc.certify import findings

    program, plan, target = _bob_with_adamw_contract(tmp_path, target_name, change)
    folders = program.search_path
    encoded_from = pipeline.kernel_sources(program, plan)
    assembled = pipeline.kernel_assemblies(program, plan)
    assert set(assembled) == {region.identity for region in plan.program.regions} == set(encoded_from)
    assert encoded_from["bob-adamw"] == tmp_path / "kernels" / "Realization" / "Nvidia" / "SM86" / ADAMW.name
    needs = pipeline.kernel_needs(program, plan)

    again = []
    assemble = kernel_cache.assemble_kernel

    def counted(source, target, launched=True):
        again.append((Path(source).name, launched))
        return assemble(source, target, launched)

    monkeypatch.setattr(kernel_cache, "assemble_kernel", counted)
    from_build = findings(plan, target, needs, folders=folders, encoded_from=encoded_from, assembled=assembled)
    assert again == []                                      # nothing assembled a second time
    from_sources = findings(plan, target, needs, folders=folders, encoded_from=encoded_from)
    assert len(again) == len(plan.program.regions)          # the old way: each source as written
    assert [(f.kind, f.message, f.at) for f in from_build] == [(f.kind, f.message, f.at) for f in from_sources]
    if change is None:
        assert from_build == []
    else:
        assert [f.message for f in from_build if f.kind == "contract"] == [
            "kernel bob-adamw reads parameter word 5 (LDC.64 R18, c[0x0][RZ+param+0x28] at bob-adamw.sass:40), "
            "but its contract declares it unused"]


def test_a_build_certifies_without_assembling_a_kernel_again(monkeypatch):
    """`bobc check` of Bob with the cache off: each kernel is assembled once, as the plan's."""
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    from bobc import kernel_cache, pipeline
    from bobc.targets import target_named

    launched = []
    assemble = kernel_cache.assemble_kernel

    def counted(source, target, launched_=True):
        launched.append(launched_)
        return assemble(source, target, launched_)

    monkeypatch.setattr(kernel_cache, "assemble_kernel", counted)
    program = pipeline.load(BOB_HOST, target_named("sm_90"))
    plan = pipeline.check_and_certify(program, target_named("sm_90"), "bobNativeHost")
    assert len(plan.program.regions) == 4 and launched == [True] * 4
