"""The simulator's own per-target facts that are not latencies (those are latencies.ARCHES).

Declared here, not read from bobc.targets or bobc.sass's tables: the simulator checks the
encoder's images against its own reading of NVIDIA's formats (see the package docstring), so
a wrong row in bobc.targets shows up as a wrong launch.  One row per target, by nvdisasm's name
for it (Target.nvdisasm_arch); a target without a row is refused (sim_arch), never given
another target's facts.  tests/test_target_facts.py holds the rows to the target table's names.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..targets import target_row


@dataclass(frozen=True)
class SimArch:
    # where ptxas's code reads the global memory descriptor in constant bank 0 (ULDC.64 URn,
    # c[0x0][...]): sm_80/86 0x118, sm_90 0x208 (public ptxas output, e.g. any cuobjdump -sass
    # of an sm_86 / sm_90 cubin)
    memory_descriptor: int
    # nvdisasm prints a global access's memory descriptor (desc[URn]); where it does not (sm_86)
    # the uniform register is read from the word (sass_frontend._encoded_descriptor)
    descriptor_printed: bool


ARCHES = {
    "SM86": SimArch(memory_descriptor=0x118, descriptor_printed=False),
    "SM90": SimArch(memory_descriptor=0x208, descriptor_printed=True),
}


def sim_arch(arch: str) -> SimArch:
    """The simulator's row for the target nvdisasm calls `arch`; MissingTargetFact without one."""
    return target_row(ARCHES, arch, "bobc.sim.arch.ARCHES", "simulator facts")
