"""A plan's four images share one extraction (probe s29 speed, hot spot 3).

A plan asks for its program table, QMD table, pushbuffer and GPFIFO as four applications of one
function to the component, `(bobComponent (constructor NvidiaWholeProgramComponent ...))`, so
call by need shares nothing between them: each extraction forced and walked every launch anew.
bobc.plan.extract.ProgramMemo keys a value by its fields but the component, before anything is
forced; the plan of a value of the same key is the same plan, with its own component and places.
"""
from __future__ import annotations

import dataclasses
import textwrap

from plan_support import BOB, NATIVE_HOST, fake_kernels


def _places(thing):
    """Every `at` of a plan (they are out of its equality), with the path to it."""
    if dataclasses.is_dataclass(thing):
        return [(type(thing).__name__, thing.at),
                *[(f.name, _places(getattr(thing, f.name))) for f in dataclasses.fields(thing) if f.name != "at"]]
    if isinstance(thing, tuple):
        return [_places(item) for item in thing]
    return None


def _count_extractions(monkeypatch) -> list:
    """Each extraction walks the launch schedule once (extract._launches): one entry per walk."""
    from bobc.plan import extract

    walks, launches = [], extract._launches

    def counted(*args, **kwargs):
        walks.append(1)
        return launches(*args, **kwargs)

    monkeypatch.setattr(extract, "_launches", counted)
    return walks


def test_the_four_images_of_a_plan_are_extracted_once(monkeypatch):
    """Bob's bobImages: four encodes of one plan, one extraction; each plan the encoder got is the
    one its value extracts to on its own (component and places included), so the images are
    unchanged."""
    from bobc.language import load_program
    from bobc.nvidia.encode import encode_images
    from bobc.plan import intrinsics
    from bobc.plan.extract import extract_whole_program
    from bobc.targets import SM86

    registry = intrinsics.default_intrinsics()
    registry.register("SM86Program", fake_kernels().lookup("SM86Program"))
    program = load_program(NATIVE_HOST, target=SM86, intrinsics=registry)
    given = []

    def recorded(program, value, where, **memo):
        plan = extract_whole_program(program, value, where, **memo)
        given.append((value, plan))
        return plan

    monkeypatch.setattr(intrinsics, "extract_whole_program", recorded)
    walks = _count_extractions(monkeypatch)
    images = program.value("bobImages")
    got = [program.force(value).value for value in images.fields]
    assert len(walks) == 1
    assert [plan.component for _, plan in given] == ["program", "qmd", "push", "gpfifo"]
    for value, plan in given:
        alone = extract_whole_program(program, value, "alone")
        assert plan == alone and plan.component == alone.component
        assert _places(plan) == _places(alone)
    expected = encode_images(given[0][1], SM86)
    assert got == [expected.program, expected.qmd, expected.push, expected.gpfifo]


SCRATCH = """\
    module Scratch.Plans

    import Bob.ArenaPlan
    import Bob.Build.NativeHost
    import Bob.Build.PhysicalComponents
    import Hardware.Nvidia.SM86.Command.WholeProgramPlan
    import Model.Word32
    import Model.Word64
    import Std.Natural

    -- Bob's plan, its semaphore base a parameter
    def plansWith =
      (lambda unrestricted component : (family NvidiaWholeProgramComponent) .
        (lambda unrestricted semaphores : Nat .
          (constructor NvidiaWholeProgramPlan NvidiaWholeProgramPlanValue
            component bobArchitecture bobComputeClass bobSPAVersion
            (bobWord64 bobProgramBase) (bobWord64 bobQMDBase) (bobWord64 bobPushbufferBase) (bobWord64 semaphores)
            bobRegionAlignment bobProgramBytes bobRegions bobLaunchSchedule bobLaunchCount bobQMDTableBytes
            bobSubmissionSchedule bobSubmissionCount bobSubmissionCount)))

    def plansTable = (plansWith (constructor NvidiaWholeProgramComponent NvidiaWholeProgramProgramTable) bobSemaphoreBase)
    def plansQMD = (plansWith (constructor NvidiaWholeProgramComponent NvidiaWholeProgramQMDTable) bobSemaphoreBase)
    def plansMoved =
      (plansWith (constructor NvidiaWholeProgramComponent NvidiaWholeProgramProgramTable) (naturalAdd bobSemaphoreBase 4096))
    """


def test_only_a_value_that_differs_in_its_component_alone_shares_the_extraction(tmp_path, monkeypatch):
    """Two applications that differ in the component share one extraction; one that also
    passes another semaphore base (a variable a field uses) is extracted on its own.  Each plan
    is its own value's: its component, its fields and where it was written."""
    from bobc.language import load_program
    from bobc.targets import SM86
    from bobc.plan.extract import ProgramMemo, extract_whole_program

    folder = tmp_path / "Scratch"
    folder.mkdir()
    (folder / "Plans.bob").write_text(textwrap.dedent(SCRATCH))
    program = load_program(folder / "Plans.bob", include=[BOB.parent], intrinsics=fake_kernels(), target=SM86)
    walks = _count_extractions(monkeypatch)
    memo = ProgramMemo()

    def raw(name):          # the definition's value as a field holds it: where it was written
        return program.definition(name).thunk

    table = extract_whole_program(program, raw("plansTable"), "plansTable", memo)
    qmd = extract_whole_program(program, raw("plansQMD"), "plansQMD", memo)
    assert len(walks) == 1
    moved = extract_whole_program(program, raw("plansMoved"), "plansMoved", memo)
    assert len(walks) == 2
    assert (table.component, qmd.component, moved.component) == ("program", "qmd", "program")
    assert qmd.semaphore_base == table.semaphore_base and moved.semaphore_base == table.semaphore_base + 4096
    assert dataclasses.replace(qmd, component="program") == table and moved != table
    assert (table.at[""].line, qmd.at[""].line) == (program.definition("plansTable").span.line,
                                                    program.definition("plansQMD").span.line)
    for name, plan in (("plansTable", table), ("plansQMD", qmd), ("plansMoved", moved)):
        alone = extract_whole_program(program, raw(name), name)
        assert plan == alone and _places(plan) == _places(alone)


def test_the_variables_a_term_uses():
    """The key of a delayed value names the variables of its environment its expression uses:
    under a binder, the binder's own variable is not one of them."""
    from bobc.errors import Span
    from bobc.language import core
    from bobc.plan.extract import _free_locals

    at = Span("x.bob", 1, 1)
    body = core.App(at, core.Local(at, 2, "c"), [core.Local(at, 0, "x"), core.Local(at, 1, "b")])
    lam = core.Lam(at, "unrestricted", "x", core.Local(at, 3, "t"), body)
    assert _free_locals(lam, {}) == (0, 1, 3)        # b, c (shifted out of the binder) and the domain's t
    unknown = core.App(at, lam, [object()])
    assert _free_locals(unknown, {}) is None


def test_a_value_asked_for_again_is_its_plan(tmp_path, monkeypatch):
    """The same value, extracted again once its fields are forced, is the plan extracted before."""
    from bobc.language import load_program
    from bobc.targets import SM86
    from bobc.plan.extract import ProgramMemo, extract_whole_program

    folder = tmp_path / "Scratch"
    folder.mkdir()
    (folder / "Plans.bob").write_text(textwrap.dedent(SCRATCH))
    program = load_program(folder / "Plans.bob", include=[BOB.parent], intrinsics=fake_kernels(), target=SM86)
    walks = _count_extractions(monkeypatch)
    memo = ProgramMemo()
    value = program.definition("plansQMD").thunk
    first = extract_whole_program(program, value, "plansQMD", memo)
    again = extract_whole_program(program, value, "plansQMD", memo)
    assert len(walks) == 1 and again == first and _places(again) == _places(first)


def test_a_deeply_nested_value_is_keyed_without_deep_recursion(tmp_path):
    """A field holding a constructor value nested thousands deep is keyed (past the bound, as
    itself), not a RecursionError."""
    from bobc.language import load_program
    from bobc.targets import SM86
    from bobc.language.values import VCon, VNat
    from bobc.plan.extract import ProgramMemo

    folder = tmp_path / "Scratch"
    folder.mkdir()
    (folder / "Plans.bob").write_text(textwrap.dedent(SCRATCH))
    program = load_program(folder / "Plans.bob", include=[BOB.parent], intrinsics=fake_kernels(), target=SM86)
    plan = program.value("plansTable")
    deep = VNat(0)
    for _ in range(20_000):
        deep = VCon(plan.declaration, plan.ctor, (), (deep,))
    shallow = VCon(plan.declaration, plan.ctor, (), (VNat(1),) * len(plan.fields))
    memo = ProgramMemo()
    outer = VCon(plan.declaration, plan.ctor, (), (deep,) * len(plan.fields))
    assert memo.key(outer) == ProgramMemo().key(outer)          # the same value, the same key
    assert memo.key(shallow) == ProgramMemo().key(VCon(plan.declaration, plan.ctor, (), shallow.fields))
