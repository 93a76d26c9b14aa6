"""Bob's loss kernel carries explicit control codes (bench/gpu/variants/make_loss_tight.py):
a scoreboard setter may have a stall of 1 only when the next instruction does not wait on
the scoreboard it sets.  The simulator's hazard checker does not model that rule, so it is
checked here: in ptxas's own code (the corpus listings, the rule's evidence) and in the
kernel as assembled for both targets; and the committed source is the generator's output."""
from __future__ import annotations

import gzip
import importlib.util
import re
from pathlib import Path

import pytest

from bobc.sass import assemble_kernel
from bobc.sass.syntax import Control
from bobc.targets import TARGETS

REPO = Path(__file__).resolve().parents[2]
KERNEL = REPO / "specs" / "Realization" / "Nvidia" / "SM86" / "bob-loss-gradient.sass"
LISTINGS = REPO / "tests" / "sass" / "data" / "listings"
GENERATOR = REPO / "bench" / "gpu" / "variants" / "make_loss_tight.py"
_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);\s*/\* (0x[0-9a-f]{16}) \*/")
_WORD = re.compile(r"/\* (0x[0-9a-f]{16}) \*/")


def early_waits(controls: list[Control]) -> list[int]:
    """Indices of setters with a stall under 2 whose next instruction waits on what they set."""
    bad = []
    for k, (c, n) in enumerate(zip(controls, controls[1:])):
        sets = [b for b in (c.write_barrier, c.read_barrier) if b != 7]
        if c.stall < 2 and any(n.wait_mask >> b & 1 for b in sets):
            bad.append(k)
    return bad


def test_ptxas_sets_a_stall_of_1_only_before_an_instruction_that_does_not_wait():
    stall_one_setters = 0
    for path in sorted(LISTINGS.glob("*.lst.gz")):
        lines = gzip.open(path, "rt").read().splitlines()
        runs, run, last = [], [], None
        for k, line in enumerate(lines):
            m = _LINE.search(line)
            if not m:
                continue
            address = int(m.group(1), 16)
            if last is not None and address != last + 16:
                runs.append(run)
                run = []
            run.append(Control.from_word(int(_WORD.search(lines[k + 1]).group(1), 16)))
            last = address
        runs.append(run)
        for controls in runs:
            assert early_waits(controls) == [], path.name
            stall_one_setters += sum(1 for c in controls[:-1]
                                     if c.stall == 1 and (c.write_barrier != 7 or c.read_barrier != 7))
    assert stall_one_setters > 500   # ptxas does it routinely (688 in these listings)


@pytest.mark.parametrize("arch", sorted(TARGETS))
def test_loss_kernel_waits_two_cycles_after_a_setter_it_depends_on(arch):
    controls = [i.control for i in assemble_kernel(KERNEL, TARGETS[arch]).instructions]
    assert early_waits(controls) == []
    assert sum(1 for c in controls if c.stall == 1 and c.write_barrier != 7) > 300   # the rule is used


def test_loss_kernel_source_is_the_generators_output():
    spec = importlib.util.spec_from_file_location("make_loss_tight", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.VARIANTS[module.BOB]() == KERNEL.read_text(encoding="utf-8")
