"""A register read that no path from the kernel's entry writes first is refused by the certifier
(bobc.sass.defined; docs/kernel-contracts.md, rule 4).  Probe s38 newmodel3 finding 6: a kernel
with no `ULDC.64 UR4, c[0x0][memory_descriptor]` before its LDG / STG was certified and built, and
only `bobc sim` refused it, at run time and only on the paths it ran.

The rule is held to ptxas's own code: every kernel of the ptxas corpora (-O0 and -O3, both targets,
the listings and the instruction tables the corpus tests assemble) and every kernel source the
repository ships passes it."""
from __future__ import annotations

import collections
import gzip
from pathlib import Path

import pytest

from bobc.sass import assemble
from bobc.sass.assembler import assemble_kernel, assemble_listing
from bobc.sass.defined import refusals, undefined_reads
from bobc.targets import target_named

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "sass" / "data"

STORE = """.kernel k
{before}
    MOV R2, c[0x0][param+0x0]
    MOV R3, c[0x0][param+0x4]
    MOV R4, 0x7
    STG.E [R2.64], R4
    EXIT
"""


def _refusals(text: str, arch: str = "sm_86"):
    return refusals(assemble(text, arch, source_name="k.sass"), target_named(arch))


@pytest.mark.parametrize("arch, offset", [("sm_86", 0x118), ("sm_90", 0x208)])
def test_a_global_access_without_the_descriptor_load_is_refused_at_its_line(arch, offset):
    found = _refusals(STORE.format(before=""), arch)
    assert len(found) == 1
    (refusal,) = found
    assert (refusal.span.path, refusal.span.line, refusal.span.column) == ("k.sass", 6, 5)
    assert "STG.E [R2.64], R4" in refusal.message and "UR4..UR5" in refusal.message
    assert "no path from the kernel's entry writes" in refusal.message
    assert "ULDC.64 UR4, c[0x0][memory_descriptor]" in refusal.hint and f"c[0x0][{offset:#x}]" in refusal.hint
    assert _refusals(STORE.format(before="    ULDC.64 UR4, c[0x0][memory_descriptor]"), arch) == []


def test_the_descriptor_of_a_loaded_other_pair_is_named():
    # the implicit descriptor follows the last ULDC.64 of the slot (UR6 here): UR6..UR7 read
    assert _refusals(STORE.format(before="    ULDC.64 UR6, c[0x0][memory_descriptor]")) == []
    (refusal,) = _refusals(STORE.format(before="    ULDC.64 UR6, c[0x0][memory_descriptor]\n    ULDC.64 UR8, "
                                               "c[0x0][memory_descriptor]\n    BRA go\ngo:").replace(
        "STG.E [R2.64]", "STG.E desc[UR10][R2.64]"), "sm_90")
    assert "descriptor in UR10..UR11" in refusal.message
    assert "ULDC.64 UR10, c[0x0][memory_descriptor]" in refusal.hint


HEAD = """.kernel k
    ULDC.64 UR4, c[0x0][memory_descriptor]
    S2R R0, SR_TID.X
    MOV R2, c[0x0][param+0x0]
    MOV R3, c[0x0][param+0x4]
    ISETP.NE.AND P0, PT, R0, RZ, PT
    ISETP.GT.AND P1, PT, R0, 0x4, PT
"""


def _problems(body: str):
    return [(r.span.line, r.message) for r in _refusals(HEAD + body + "    EXIT\n")]


def test_a_value_no_path_writes_is_refused():
    found = _problems("""    STG.E [R2.64], R5
""")
    assert found == [(8, "STG.E [R2.64], R5 reads R5, which no path from the kernel's entry writes before it: "
                         "on the GPU it would read an undefined value")]
    # written on the path that skips the branch only: a path that runs may write it (and bobc sim
    # refuses the read of a register no thread wrote on the paths it runs)
    assert _problems("""    @P0 BRA skip
    MOV R5, 0x7
skip:
    STG.E [R2.64], R5
""") == []
    # written after the read, in straight-line code: refused
    assert [line for line, _ in _problems("""    STG.E [R2.64], R5
    MOV R5, 0x7
""")] == [8]


def test_the_other_half_of_a_pair_is_a_read():
    found = _refusals("""    ULDC.64 UR4, c[0x0][memory_descriptor]
    MOV R2, c[0x0][param+0x0]
    STG.E [R2.64], R2
    EXIT
""")
    assert len(found) == 1 and "reads R3," in found[0].message
    # a .128 store's four data registers, one never written
    found = _problems("""    MOV R8, 0x1
    MOV R9, 0x2
    MOV R11, 0x4
    STG.E.128 [R2.64], R8
""")
    assert [line for line, _ in found] == [11] and "reads R10," in found[0][1]


def test_guards():
    # a guarded write is a write on the path where it runs
    assert _problems("""    @P0 MOV R5, 0x7
    @P1 STG.E [R2.64], R5
""") == []
    # a guard is a read: a predicate no path sets
    found = _problems("""    @P3 STG.E [R2.64], R0
""")
    assert [line for line, _ in found] == [8] and "reads P3," in found[0][1]
    # a guarded read is a read
    assert [line for line, _ in _problems("""    @P0 STG.E [R2.64], R9
""")] == [8]
    # ... but an instruction guarded by !PT never runs
    assert _problems("""    @!PT STG.E [R2.64], R9
""") == []


def test_loops_and_branches():
    # a value the loop's back edge brings round: written on a path (the second trip's)
    assert _problems("""loop:
    @P1 STG.E [R2.64], R6
    MOV R6, R0
    IADD3 R0, R0, -0x1, RZ
    ISETP.GT.AND P1, PT, R0, RZ, PT
    @P1 BRA loop
""") == []
    # only after the loop: not
    assert [line for line, _ in _problems("""loop:
    STG.E [R2.64], R6
    IADD3 R0, R0, -0x1, RZ
    ISETP.GT.AND P1, PT, R0, RZ, PT
    @P1 BRA loop
    MOV R6, R0
""")] == [9]
    # a branch over the only write reaches the read written on no path of its own, but the
    # path through the write reaches it too: not refused
    assert _problems("""    @P0 BRA skip
    MOV R7, 0x1
skip:
    STG.E [R2.64], R7
""") == []
    # a write only on a path that ends before the read
    assert [line for line, _ in _problems("""    @P0 BRA other
    STG.E [R2.64], R7
    EXIT
other:
    MOV R7, 0x1
""")] == [9]


def test_unreachable_code_is_not_held_to_it():
    assert _problems("""    BRA done
    STG.E [R2.64], R9
done:
""") == []


def test_an_in_place_byte_insert_reads_none_of_its_own_register():
    # PRMT R7, R4, 0x7610, R7: R4's low half into R7's, R7's high half left in place
    assert _problems("""    MOV R4, 0x1
    PRMT R7, R4, 0x7610, R7
    STG.E.U16 [R2.64], R7
""") == []
    # 0x5410 moves R7's low half into its high half: R7 is read
    assert [line for line, _ in _problems("""    MOV R4, 0x1
    PRMT R7, R4, 0x5410, R7
""")] == [9]


def test_a_kernel_source_without_the_descriptor_load_is_refused_by_bobc_check(tmp_path):
    """The certifier, which bobc check and bobc build run: the linear-regression example with its
    SGD kernel's ULDC.64 taken out."""
    import os
    import shutil
    import subprocess
    import sys

    plan = tmp_path / "LinReg"
    shutil.copytree(ROOT / "examples" / "linear_regression" / "LinReg", plan)
    kernel = plan / "kernels" / "linreg-sgd.sass"
    text = kernel.read_text()
    line = "    ULDC.64 UR4, c[0x0][memory_descriptor]\n"
    assert line in text
    kernel.write_text(text.replace(line, "    // no descriptor\n"))
    first = next(i for i, l in enumerate(text.splitlines(), 1) if "LDG" in l or "STG" in l)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "compiler")}
    done = subprocess.run([sys.executable, "-m", "bobc", "check", "--target", "sm_86",
                           "LinReg/Build/NativeHost.bob"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert "not certified" in done.stderr
    assert f"linreg-sgd.sass:{first}:5: kernel linreg-sgd:" in done.stderr, done.stderr
    assert "accesses global memory through the descriptor in UR4..UR5" in done.stderr
    assert "ULDC.64 UR4, c[0x0][memory_descriptor] (c[0x0][0x118] on sm_86)" in done.stderr


def _shipped_sources():
    skip = {".venv", ".git"}
    return sorted(p for p in ROOT.rglob("*.sass") if not skip & set(p.relative_to(ROOT).parts))


def test_every_kernel_source_the_repository_ships_passes():
    checked = 0
    for path in _shipped_sources():
        for arch in ("sm_86", "sm_90"):
            if ".sm_90." in path.name and arch == "sm_86":
                continue
            try:
                assembled = assemble_kernel(path, target_named(arch), launched=True)
            except Exception:       # an sm_90-only opcode in a base built for sm_90 alone
                continue
            assert refusals(assembled, target_named(arch)) == [], (path, arch)
            checked += 1
    assert checked > 100


def test_every_product_kernel_the_generators_write_passes():
    from bobc.sass.generate import gemm, gemm_sm90

    checked = 0
    for name, variant in gemm.VARIANTS.items():
        for tile_m, warps in gemm.TILINGS:
            text = gemm.generate(variant, "g", tile_m=tile_m, warps=warps)
            for arch in ("sm_86", "sm_90"):
                assert undefined_reads(assemble(text, arch, "g.sass").flow) == [], (name, tile_m, warps, arch)
                checked += 1
        text = gemm_sm90.generate(variant, "g")
        assert undefined_reads(assemble(text, "sm_90", "g.sass").flow) == [], (name, "sm_90 TMA")
        checked += 1
    assert checked >= 20


def _corpus_kernels():
    """ptxas's code: the listings' kernels and the corpus tables' (-O0 and -O3)."""
    for path in sorted((DATA / "listings").glob("*.lst.gz")):
        arch = path.name.split(".")[1]
        for name, assembled in assemble_listing(gzip.decompress(path.read_bytes()).decode(), arch,
                                                path.name).items():
            yield f"{path.name}:{name}", assembled
    for arch in ("sm_86", "sm_90"):
        kernels = collections.defaultdict(list)
        for row in (DATA / f"corpus-{arch}.tsv").read_text().splitlines():
            text, lo, hi, where = row.split("\t")
            kernel, address = where.rsplit(":", 1)
            kernels[kernel].append((int(address, 16), text, lo, hi))
        for kernel, rows in kernels.items():
            rows.sort()
            assert [a for a, *_ in rows] == [16 * i for i in range(len(rows))], kernel
            text = "\n".join(f"/*{a:04x}*/ {t} ; /* {lo} */\n/* {hi} */" for a, t, lo, hi in rows)
            yield f"{arch}:{kernel}", assemble(text, arch, kernel)


def test_ptxas_code_passes():
    """No kernel of the corpora reads a register no path writes before it: its -O0 code inserts a
    16-bit value into a register whose high half is never set (PRMT R7, R4, 0x7610, R7: no read of
    R7), and its sm_90 HGMMA with A in registers names a descriptor block UR8..UR11 whose A half
    UR8..UR9 it never sets (not a value read).  (Its -O3 code does read registers that some path
    reaches unwritten -- `@!UP1 UTMALDG.2D [UR8], [UR4]`, UR10..UR11 written under a correlated
    predicate -- which is why the rule is "no path", bobc.sass.defined.)"""
    count = 0
    opt = collections.Counter()
    for name, assembled in _corpus_kernels():
        assert undefined_reads(assembled.flow) == [], name
        count += 1
        opt["-O0" if ":-O0" in name else "other"] += 1
    assert count > 300 and opt["-O0"] > 100
