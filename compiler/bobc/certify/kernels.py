"""What each of Bob's kernels does with its arguments: the certifier's pointer table.

Argument i is the 64-bit word `44 + i` of the launch's constant bank 0 as the
plan writes it (seed 001: `bobArgument i`).  A pointer argument names the
bytes the kernel touches from that address (its extent) and whether it reads
or writes them; a scalar argument holds binary32 values (two to a word) and
is never an address; an unused argument is a slot the kernel never reads.

The extents follow bob.md and seed 001's blocks:
- bob-row-gather: writes the prompt's 256-float logit row (1024 bytes) at
  argument 0, reads the prompt's last byte (a u32) at argument 1, reads the
  row W[byte] of the 256 x 256 table; which row depends on data, so the whole
  table (262144 bytes) at argument 2.
- bob-loss-gradient: reads W (262144) at 0, writes G (262144) at 1, reads the
  256 u32 targets (1024) at 2, writes the 256-float loss block (1024) at 3;
  4 and 5 are pointer slots it does not use; 6 and 7 are its scalars
  (log2 e and ln 2; 1/256).
- bob-adamw: reads and writes W at 0, reads G at 1, reads and writes M at 2
  and V at 3 (262144 each); words 4..8 are its nine binary32 scalars.
- bob-greedy-argmax: writes one prediction {token, validity} (8 bytes) at 0,
  reads a logit row (1024) at 1.
"""
from __future__ import annotations

from dataclasses import dataclass

TABLE_BYTES = 256 * 256 * 4
ROW_BYTES = 256 * 4


@dataclass(frozen=True)
class Argument:
    index: int                 # argument i = plan bank 0 word 44 + i
    kind: str                  # "pointer", "scalar" or "unused"
    extent: int = 0            # bytes touched from the pointer
    access: str = ""           # "read", "write" or "read-write"
    what: str = ""

    @property
    def reads(self) -> bool:
        return "read" in self.access

    @property
    def writes(self) -> bool:
        return "write" in self.access


def _p(index: int, access: str, extent: int, what: str) -> Argument:
    return Argument(index, "pointer", extent, access, what)


def _s(index: int, what: str) -> Argument:
    return Argument(index, "scalar", what=what)


def _u(index: int) -> Argument:
    return Argument(index, "unused", what="not read by the kernel")


KERNEL_ARGUMENTS: dict[str, tuple[Argument, ...]] = {
    "bob-row-gather": (
        _p(0, "write", ROW_BYTES, "the prompt's logit row"),
        _p(1, "read", 4, "the prompt's last byte (u32)"),
        _p(2, "read", TABLE_BYTES, "the parameter table W"),
    ),
    "bob-loss-gradient": (
        _p(0, "read", TABLE_BYTES, "the parameter table W"),
        _p(1, "write", TABLE_BYTES, "the gradients G"),
        _p(2, "read", ROW_BYTES, "the 256 targets (u32)"),
        _p(3, "write", ROW_BYTES, "the loss block (256 binary32)"),
        _u(4), _u(5),
        _s(6, "log2 e, ln 2"),
        _s(7, "1/256"),
    ),
    "bob-adamw": (
        _p(0, "read-write", TABLE_BYTES, "the parameter table W"),
        _p(1, "read", TABLE_BYTES, "the gradients G"),
        _p(2, "read-write", TABLE_BYTES, "the first moments M"),
        _p(3, "read-write", TABLE_BYTES, "the second moments V"),
        *(_s(i, "AdamW scalars") for i in range(4, 9)),
    ),
    "bob-greedy-argmax": (
        _p(0, "write", 8, "the prediction {token, validity}"),
        _p(1, "read", ROW_BYTES, "the logit row"),
    ),
}
