"""Bob's kernels: the committed golden images are what the assembler makes, and nvdisasm reads them cleanly.

tests/golden/kernels/<kernel>.<arch>.bin are the raw instruction streams of
specs/Realization/Nvidia/SM86/<kernel>.sass for sm_86 and sm_90.  Regenerate with
    python -m bobc.sass.golden
after a deliberate change (and say why in the commit).
"""
from __future__ import annotations

import pytest

from bobc.sass import assemble_kernel
from bobc.sass.golden import GOLDEN, KERNELS, REGISTER_BUDGETS, golden_path, source
from bobc.sass.oracle import disassemble
from bobc.targets import TARGETS

CASES = [(k, a) for k in KERNELS for a in ("sm_86", "sm_90")]


@pytest.mark.parametrize("kernel,arch", CASES, ids=[f"{k}.{a}" for k, a in CASES])
def test_assembler_reproduces_golden_image(kernel, arch):
    assembled = assemble_kernel(source(kernel, arch), TARGETS[arch], register_budget=REGISTER_BUDGETS[kernel])
    assert assembled.code == golden_path(kernel, arch).read_bytes()
    assert assembled.registers <= REGISTER_BUDGETS[kernel]


@pytest.mark.parametrize("kernel,arch", CASES, ids=[f"{k}.{a}" for k, a in CASES])
def test_golden_image_decodes_cleanly(kernel, arch, needs_nvdisasm):
    image = golden_path(kernel, arch).read_bytes()
    decoded = disassemble(image, TARGETS[arch].nvdisasm_arch)
    assert decoded.errors == []
    assert len(decoded.lines) == len(image) // 16
    texts = [d.text for d in decoded.lines]
    assert "EXIT" in texts or any(t.endswith(" EXIT") for t in texts)
    # portable sources, per-target parameters: no reads of constant bank 0 below the
    # parameter base except the memory descriptor slot
    base = TARGETS[arch].parameter_base
    import re
    for text in texts:
        for offset in re.findall(r"c\[0x0\]\[(?:RZ\+)?(0x[0-9a-f]+)\]", text):
            value = int(offset, 16)
            assert value >= base or value == {"sm_86": 0x118, "sm_90": 0x208}[arch], text


def test_goldens_exist_for_every_kernel():
    assert sorted(p.name for p in GOLDEN.glob("*.bin")) == sorted(
        f"{k}.{a}.bin" for k, a in CASES)


@pytest.mark.parametrize("kernel,arch", CASES, ids=[f"{k}.{a}" for k, a in CASES])
def test_nvdisasm_listing_assembles_back_to_the_golden_image(kernel, arch, needs_nvdisasm):
    from bobc.sass import assemble
    from bobc.sass.syntax import Control
    image = golden_path(kernel, arch).read_bytes()
    decoded = disassemble(image, TARGETS[arch].nvdisasm_arch)
    text = "\n".join(f"{Control.from_word(d.hi).text()} {d.text} ;" for d in decoded.lines)
    assert assemble(text, arch).code == image
