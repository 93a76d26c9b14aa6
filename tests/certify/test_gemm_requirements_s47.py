"""The generated matrix products declare the shapes they serve (`//@ require`, docs/kernel-contracts.md
"Requirements"), derived from the generator's own tile parameters (probe s47 gemmrequire finding 1).

bobc.sass.generate.gemm's kernels compute whole tile_m x 64 output tiles, 32 k a slice, with no
bounds checks (the epilogue writes every row and column of a tile; the loop runs K / 32 whole
slices), and gemm_sm90's whole 64 x 64 tiles (K any: its tensor maps stop the copies).  Only a
Python caller's gemm.check_shape and one model's shape rule (Coppelius.Model) held a launch to
that: a plan launching a generated product at M = 96 certified and built.  Now each generated
source says so in its contract, and the certifier refuses such a launch naming the word, its
value, the rule and the contract line.  The comment lines change no image (checked here against
the sources with the lines taken out).
"""
from __future__ import annotations

import re

import pytest

from bobc.certify.kernels import parse_contract
from bobc.certify.pointers import check_pointers
from bobc.sass import assemble_kernel
from bobc.sass.generate import gemm, gemm_sm90
from bobc.targets import TARGETS

from .test_conditional_extents import BASE, hand_plan, pair
from .test_contract_requirements_s47 import KERNELS

# (tile height, warps) -> the rows a block's tile holds, by hand: the README's table (64-row tiles of
# 4 or 8 warps, 128-row tiles of 8); columns 64 and k 32 a slice in every tiling
TILINGS = {(64, None): 64, (64, 8): 64, (128, None): 128}


def _words(m: int, n: int, k: int, *, batches: int = 1) -> dict[int, int]:
    """A plain nn launch (no flags) of an m x n x k product, operands and D packed in one resident:
    A at BASE (m x k halves), B after it (k x n halves), D after that (m x n binary32)."""
    a, b = BASE, BASE + 2 * m * k
    d = b + 2 * k * n
    return {0: a, 1: b, 2: d, 3: 0, 4: 0, 5: 0, 6: pair(m, n), 7: pair(k, 0), 8: pair(k, n), 9: pair(n, 0),
            10: 0, 11: 0, 12: pair(0x3f800000, batches), 13: 0, 14: 0, 15: 0, 16: 0}


def _findings(contract, words):
    plan = hand_plan([(contract.kernel, words)], [("operands", BASE, 8 << 20)], [contract.kernel])
    return [f.message for f in check_pointers(plan, {contract.kernel: contract})]


@pytest.mark.parametrize("tile_m, warps", list(TILINGS))
@pytest.mark.parametrize("layout", sorted(gemm.VARIANTS))
def test_every_generated_tiling_declares_its_tile_as_requirements(tmp_path, tile_m, warps, layout):
    source = tmp_path / f"mine-gemm-{layout}.sass"
    source.write_text(gemm.generate(gemm.VARIANTS[layout], "mine-gemm", tile_m, warps), encoding="utf-8")
    contract = parse_contract(source, f"mine-gemm-{layout}")
    # M is lo[6] (byte 0x30), N hi[6] (0x34), K lo[7] (0x38): gemm.PARAMETERS' offsets
    assert [(r.expression, r.rule, r.numbers) for r in contract.requirements] == [
        ("lo[6]", "multiple", (TILINGS[tile_m, warps],)), ("hi[6]", "multiple", (64,)), ("lo[7]", "multiple", (32,))]


@pytest.mark.parametrize("layout", sorted(gemm.VARIANTS))
def test_sm90_products_declare_their_64_by_64_tiles_and_no_k_step(layout):
    contract = parse_contract(KERNELS / f"coppelius-gemm-{layout}.sm_90.sass", f"coppelius-gemm-{layout}")
    assert [(r.expression, r.rule, r.numbers) for r in contract.requirements] == [
        ("lo[6]", "multiple", (64,)), ("hi[6]", "multiple", (64,))]


@pytest.mark.parametrize("m, n, k", [(64, 64, 32), (128, 192, 96), (96, 64, 32), (64, 80, 32), (64, 64, 48),
                                     (192, 128, 16), (128, 128, 64)])
@pytest.mark.parametrize("tile_m, warps", list(TILINGS))
def test_the_requirements_refuse_exactly_what_check_shape_refuses(tmp_path, m, n, k, tile_m, warps):
    source = tmp_path / "mine-gemm-nn.sass"
    source.write_text(gemm.generate(gemm.VARIANTS["nn"], "mine-gemm", tile_m, warps), encoding="utf-8")
    contract = parse_contract(source, "mine-gemm-nn")
    broken = [r for r in contract.requirements if not r.check(_words(m, n, k))[0]]
    try:
        gemm.check_shape(m, n, k, tile_m)
        refused = False
    except ValueError:
        refused = True
    assert bool(broken) == refused
    # and by hand: rows whole tiles of TILINGS' height, columns of 64, k slices of 32
    assert refused == bool(m % TILINGS[tile_m, warps] or n % 64 or k % 32)


@pytest.mark.parametrize("layout, shape, word, value, rule, line", [
    ("nn", (96, 64, 32), "lo[6]", 96, "a multiple of 64", "//@ require lo[6] multiple of 64: M: whole 64-row tiles"),
    ("nt", (64, 96, 32), "hi[6]", 96, "a multiple of 64", "//@ require hi[6] multiple of 64: N: whole 64-column"),
    ("tn", (64, 64, 48), "lo[7]", 48, "a multiple of 32", "//@ require lo[7] multiple of 32: K: whole slices of 32"),
])
def test_a_plan_launching_a_generated_product_off_its_tiling_is_refused(layout, shape, word, value, rule, line):
    """The user's case: a plan (not Coppelius's, past any model's shape rule) launches the committed
    coppelius-gemm kernel at a shape that is not whole tiles; its extents lie in the resident, so
    before the requirements it certified.  Now refused, naming the word, its value and the line."""
    kernel = f"coppelius-gemm-{layout}"
    contract = parse_contract(KERNELS / f"{kernel}.sass", kernel)
    found = _findings(contract, _words(*shape))
    assert len(found) == 1, found
    written = (KERNELS / f"{kernel}.sass").read_text(encoding="utf-8").splitlines()
    number = next(i for i, text in enumerate(written, start=1) if text.startswith(f"//@ require {word} "))
    assert found[0].startswith(f"launch 0 ({kernel}): {word} is {value} on this launch, and its kernel {kernel} "
                               f"serves only {word} {rule} ({kernel}.sass:{number}: {line}"), found[0]


@pytest.mark.parametrize("layout", sorted(gemm.VARIANTS))
def test_a_launch_of_whole_tiles_is_certified(layout):
    kernel = f"coppelius-gemm-{layout}"
    assert _findings(parse_contract(KERNELS / f"{kernel}.sass", kernel), _words(128, 192, 96)) == []


def _without_requirements(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("//@ require "))


@pytest.mark.parametrize("stem, arch", [(f"coppelius-gemm-{v}{s}", a) for v in sorted(gemm.VARIANTS)
                                        for s, a in (("", "sm_86"), ("", "sm_90"), (".sm_90", "sm_90"))])
def test_the_requirement_lines_change_no_image(tmp_path, stem, arch):
    committed = KERNELS / f"{stem}.sass"
    text = committed.read_text(encoding="utf-8")
    assert re.search(r"^//@ require ", text, re.M)
    bare = tmp_path / committed.name
    bare.write_text(_without_requirements(text), encoding="utf-8")
    budget = gemm.REGISTERS if stem.endswith(tuple(gemm.VARIANTS)) else gemm_sm90.REGISTERS
    assert assemble_kernel(committed, TARGETS[arch], register_budget=budget).code == \
        assemble_kernel(bare, TARGETS[arch], register_budget=budget).code
