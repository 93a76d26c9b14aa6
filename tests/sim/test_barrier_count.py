"""A QMD's BARRIER_COUNT is the named barriers its kernel uses, and the simulator holds a kernel to it.

Named barriers are numbered 0..15 (PTX bar.sync a; BAR's 4-bit barrier field), and ptxas's
NUM_BARRIERS, from which the CUDA driver sizes a block's barriers, is the highest number a
kernel's BAR instructions name + 1 (tests/sass/test_cubin.py checks that rule against ptxas's
own cubins).  The QMD's BARRIER_COUNT (clc7c0qmd.h MW(767:763), clcbc0qmd.h MW(1215:1211)) must
carry the same count: a kernel using BAR.SYNC 0x5 needs 6.  The simulator reads the field
through its own reader (bobc.sim.qmd_fields, of bobc.qmd_headers' table) and refuses a BAR at or past it.

Launches of tests/native/kernels/native-mask.sass with a BAR.SYNC inserted before its load,
encoded by bobc.nvidia.encode and run by the simulator's channel (tests/sim/test_launch_order's
helpers)."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim import qmd_fields
from bobc.sim.faults import SimulationFault
from bobc.targets import SM86, SM90

from . import test_launch_order as order

LAYOUTS = {SM86: "V03_00", SM90: "V04_00"}


def _kernel_with_barrier(tmp_path, barrier: int):
    text = order.KERNEL.read_text()
    load = "    LDG.E R4, [R2.64]\n"
    assert load in text
    path = tmp_path / f"native-mask-bar{barrier}.sass"
    path.write_text(text.replace(load, f"    BAR.SYNC.DEFER_BLOCKING {barrier:#x}\n" + load))
    return path


def _built(monkeypatch, target, kernel):
    monkeypatch.setattr(order, "KERNEL", kernel)
    return order.images(target, [(order.B, order.A)])


@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
def test_a_kernel_using_barrier_5_gets_barrier_count_6_and_runs(tmp_path, monkeypatch, target):
    built = _built(monkeypatch, target, _kernel_with_barrier(tmp_path, 5))
    assert qmd_fields.read(built.qmd[:target.qmd_record_bytes], LAYOUTS[target], "BARRIER_COUNT") == 6
    data = order.run(target, built)
    assert len(order.run.channel.log.launches) == 1
    a = np.frombuffer(data[:order.WORDS], "<u4")
    assert (np.frombuffer(data[0x400:0x400 + order.WORDS], "<u4") == (a & 0xFF)).all()


@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
def test_a_kernel_without_named_barriers_keeps_barrier_count_1(monkeypatch, target):
    """BAR 0 or no BAR: 1, what ran on the H200 (and what tinygrad writes)."""
    built = _built(monkeypatch, target, order.KERNEL)
    assert qmd_fields.read(built.qmd[:target.qmd_record_bytes], LAYOUTS[target], "BARRIER_COUNT") == 1


@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
def test_the_simulator_refuses_a_barrier_the_qmd_does_not_count(tmp_path, monkeypatch, target):
    built = _built(monkeypatch, target, _kernel_with_barrier(tmp_path, 5))
    too_few = order.set_field(built.qmd, target, 0, "BARRIER_COUNT", 5)
    with pytest.raises(SimulationFault, match=r"BAR\.SYNC.*uses barrier 5, but the QMD's BARRIER_COUNT is 5 "
                                              r"\(a block has barriers 0\.\.4\): the QMD must declare at least 6"):
        order.run(target, built, qmd=too_few)
