"""Per-architecture encoding facts that are not per-opcode (sass-facts.md, checked by learning).

`fixed_bits` names the learned table of each form's fixed bits.  `symbols`
are the names a source may use inside c[0x0][...]: `param` is the kernel
parameter base, `memory_descriptor` the 64-bit global-memory descriptor that
ptxas loads into a uniform register pair for LDG/STG; both are the target
table's (bobc.targets), declared there once.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...targets import SM86, SM90


@dataclass(frozen=True)
class ArchEncoding:
    name: str
    fixed_bits: str            # JSON file next to this module
    branch_split_low8: bool    # sm_90: low 8 bits of the offset at 16..23, the rest at 34..81
    shows_descriptor: bool     # nvdisasm prints desc[URn] on LDG/STG (sm_90) or hides it (sm_86)
    symbols: dict


SM86_ENCODING = ArchEncoding("sm_86", "sm_86.json", branch_split_low8=False, shows_descriptor=False,
                             symbols={"param": SM86.parameter_base, "memory_descriptor": SM86.memory_descriptor})
SM90_ENCODING = ArchEncoding("sm_90", "sm_90.json", branch_split_low8=True, shows_descriptor=True,
                             symbols={"param": SM90.parameter_base, "memory_descriptor": SM90.memory_descriptor})

ENCODINGS = {e.name: e for e in (SM86_ENCODING, SM90_ENCODING)}
