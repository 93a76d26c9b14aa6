"""Nested repeats: the hosts' unrolling (bobc.plan.schedule.unroll, which the C host's tables, the
reference host and the simulator all carry out) against the plan language's own definition of it,
Platform.Linux.Nvidia.PlanHost.nvidiaPlanHostStepsUnrolled ("each strided field moved by the innermost
repeat's iteration"), evaluated by the plan language's evaluator -- an independent implementation.

The shipped plans and the synthetic schedules nest no repeat in another's body, so a lowering that moved
a field by the outer repeat's iteration as well (or by the outer one's alone) passed every test (probe
s45 mutants11, mutant P3).  The numbers are also hand-checked: a Read at offset 100 with stride 8 in a
Repeat 2 is read at 100 and 108; a Submit to gpPut 1 with stride 1 in a Repeat 3 nested in it reaches 1,
2, 3 in each outer iteration (the outer iteration does not move it)."""
from __future__ import annotations

import synthetic_support

NESTED = """module Synthetic.Nested

import Platform.Linux.Nvidia.PlanHost
import Synthetic.Common

def synNestedSteps : (family NvidiaPlanHostSteps) =
  (constructor NvidiaPlanHostSteps NvidiaPlanHostStepRepeat 2
    (constructor NvidiaPlanHostSteps NvidiaPlanHostStepRead synInput 4096 8 100 8 0
      (constructor NvidiaPlanHostSteps NvidiaPlanHostStepRepeat 3
        (constructor NvidiaPlanHostSteps NvidiaPlanHostStepSubmit 1 1 synEnd)
        (constructor NvidiaPlanHostSteps NvidiaPlanHostStepStamp 4 1 0 synEnd)))
  synEnd)
"""


def test_nested_repeats_unroll_as_the_plan_language_defines(tmp_path):
    from bobc.language import load_program
    from bobc.plan.extract import extract_steps
    from bobc.plan.schedule import unroll
    from bobc.targets import SM86

    (tmp_path / "Synthetic").mkdir()
    (tmp_path / "Synthetic" / "Nested.bob").write_text(NESTED)
    program = load_program(tmp_path / "Synthetic" / "Nested.bob", include=[synthetic_support.plan_support.BOB.parent,
                                                   synthetic_support.SYNTHETIC.parent],
                           intrinsics=synthetic_support.fake_registry(), target=SM86)
    program.check()
    steps = program.value("synNestedSteps")
    language = program.apply(program.value("Platform.Linux.Nvidia.PlanHost.nvidiaPlanHostStepsUnrolled"), steps)
    theirs = [(s.kind.name, {f.name: getattr(s, f.name) for f in s.kind.fields if not f.stride_of})
              for s in extract_steps(program, language)]
    ours = [(kind.name, {k: v for k, v in values.items() if not any(f.name == k and f.stride_of for f in kind.fields)})
            for kind, values in unroll(extract_steps(program, steps))]
    assert ours == theirs
    # by hand: the Read moves with the outer repeat, the Submit with the inner one only, the Stamp
    # (after the inner repeat, in the outer one's body) with the outer one
    assert [(k, v.get("offset", v.get("gp_put"))) for k, v in ours] == [
        ("read", 100), ("submit", 1), ("submit", 2), ("submit", 3), ("stamp", 4),
        ("read", 108), ("submit", 1), ("submit", 2), ("submit", 3), ("stamp", 5)]

