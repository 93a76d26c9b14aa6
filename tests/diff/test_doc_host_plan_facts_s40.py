"""docs/host-plan-facts.md's examples are what `bobc dump` prints for Bob's host (probe s40 docs9).

The table gave a fill's terms as `[constant 0.1 (0x1.99999a0000000p-4), step, power, ...]`, while
dump prints each constant as the binary64 the host computes with -- Bob's learning rate is the
binary32 0.1, which widens to 0.10000000149011612 (0x1.99999a0000000p-4: float32's 24-bit
significand of 0.1, computed here with struct, not by bobc) -- and alpha_t's terms go on with
1 - beta2^t, not `step, power` (docs/formats.md, "AdamW parameter block": alpha_t = lr *
sqrt(1 - beta2^t) / (1 - beta1^t), in postfix lr 1 beta2 t ^ - sqrt * ...).  A buffer's size was
said as "(pages)"; dump prints bytes, each a whole number of 4 KiB pages (the certifier's page,
docs/limits.md)."""
from __future__ import annotations

import re
import struct
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FACTS = (REPO / "docs" / "host-plan-facts.md").read_text(encoding="utf-8")


def _dump(host: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-m", "bobc", "dump", str(host)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_terms_example_is_the_start_of_bobs_first_fill(host):
    lr = struct.unpack("<f", struct.pack("<f", 0.1))[0]          # the binary32 0.1, widened
    assert repr(lr) == "0.10000000149011612" and lr.hex() == "0x1.99999a0000000p-4"
    example = re.search(r"`terms` in postfix, [^`]*`\[(.*?)\]  # postfix: operands first`", FACTS)
    assert example, "docs/host-plan-facts.md: no terms example"
    shown = example.group(1).removesuffix(", ...").split(", ..., ")
    line = next(text for text in _dump(host) if text.startswith("host.plan.fills[0].terms = "))
    terms = line.split(" = ", 1)[1]
    assert terms.startswith("[" + shown[0] + ", "), (shown[0], terms)
    assert f"constant {lr!r} ({lr.hex()})" in shown[0]
    assert all(part in terms for part in shown[1:]), (shown, terms)   # the later part, in the line too
    assert terms.endswith("]  # postfix: operands first")


def test_a_buffers_size_is_bytes_in_whole_pages(host):
    assert "size (in bytes, whole 4 KiB pages)" in FACTS
    sizes = [int(text.split(" = ")[1], 16) for text in _dump(host)
             if re.match(r"host\.plan\.buffers\[\d+\]\.size = ", text)]
    assert sizes and all(size % 4096 == 0 and size >= 4096 for size in sizes), sizes
