"""Build the reference corpus: (nvdisasm text, 128-bit word) pairs produced by ptxas.

For every PTX file here, for sm_86 and sm_90, at -O3 and -O0: ptxas compiles it,
the .text.<kernel> sections are cut out of the cubin (with lief), and nvdisasm
-hex decodes each raw stream.  The pairs land in tests/sass/data/corpus-<arch>.tsv
as `text<TAB>lo<TAB>hi<TAB>reference` (reference = file:kernel:-On:offset), which
is what the encoding tables are learned from and what tests/sass re-encodes.

A PTX file whose first line is `// targets: sm_90` (sm90_async.ptx: TMA, mbarrier, warpgroup
MMA) is compiled for sm_90 alone, with ptxas -arch=sm_90a (the architecture-specific features
wgmma and setmaxnreg need), and skipped for sm_86.

    python tools/ptx_corpus/build_corpus.py [--ptx] [--listings]
    (--ptx: regenerate the *.ptx of the *.cu with nvcc; --listings: only the whole-cubin
    nvdisasm listings, tests/sass/data/listings/*.lst.gz)
"""
from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "compiler"))

from bobc.nvtools import ptxas, find_tool  # noqa: E402
from bobc.sass.learn import ONLY_SM90  # noqa: E402
from bobc.sass.oracle import disassemble  # noqa: E402
from bobc.targets import SM86, SM90  # noqa: E402


def corpus_files(target) -> list[tuple[Path, str]]:
    """The PTX files compiled for `target`, each with its ptxas -arch: every file for both
    targets, except those whose first line is ONLY_SM90 (sm_90 alone, as sm_90a)."""
    chosen = []
    for ptx in sorted(HERE.glob("*.ptx")):
        first = ptx.read_text().split("\n", 1)[0].strip()
        if first == ONLY_SM90:
            if target is SM90:
                chosen.append((ptx, "sm_90a"))
        else:
            chosen.append((ptx, target.ptxas_arch))
    return chosen


def text_sections(cubin: Path) -> dict[str, bytes]:
    import lief
    lief.logging.disable()
    binary = lief.parse(str(cubin))
    return {s.name[len(".text."):]: bytes(s.content)
            for s in binary.sections if s.name.startswith(".text.")}


def write_listings(tool: str, out_dir: Path) -> None:
    """nvdisasm -hex of each whole cubin (-O3), gzipped: what tests/sass/test_listings.py
    assembles as printed (labels, annotations, every section)."""
    import gzip
    folder = out_dir / "listings"
    folder.mkdir(parents=True, exist_ok=True)
    for target in (SM86, SM90):
        for ptx, arch in corpus_files(target):
            with tempfile.TemporaryDirectory() as temp:
                cubin = Path(temp) / "k.cubin"
                subprocess.run([tool, f"-arch={arch}", "-O3", str(ptx), "-o", str(cubin)],
                               check=True, capture_output=True)
                done = subprocess.run([find_tool("nvdisasm"), "-hex", str(cubin)], check=True,
                                      capture_output=True, text=True)
            path = folder / f"{ptx.stem}.{target.name}.lst.gz"
            path.write_bytes(gzip.compress(done.stdout.encode(), 9, mtime=0))


def main() -> int:
    if "--ptx" in sys.argv:
        nvcc = find_tool("nvcc")
        for source in sorted(HERE.glob("*.cu")):
            subprocess.run([nvcc, "-ptx", "-arch=sm_86", str(source),
                            "-o", str(source.with_suffix(".ptx"))], check=True)
    tool = ptxas()
    if tool is None:
        print("ptxas not installed", file=sys.stderr)
        return 1
    out_dir = REPO / "tests" / "sass" / "data"
    out_dir.mkdir(parents=True, exist_ok=True)
    write_listings(tool, out_dir)
    if "--listings" in sys.argv:
        return 0
    for target in (SM86, SM90):
        rows: list[str] = []
        counts: list[str] = []
        for ptx, arch in corpus_files(target):
            for opt in ("-O3", "-O0"):
                with tempfile.TemporaryDirectory() as folder:
                    cubin = Path(folder) / "k.cubin"
                    done = subprocess.run([tool, f"-arch={arch}", opt, "-v", str(ptx),
                                           "-o", str(cubin)], check=True, capture_output=True, text=True)
                    # each entry's "Compiling entry function 'k'" is followed by its "Used N registers"
                    for kernel, count in re.findall(
                            r"Compiling entry function '(\w+)'(?:(?!Compiling)[\s\S])*?Used (\d+) registers", done.stdout + done.stderr):
                        counts.append(f"{ptx.name}:{kernel}:{opt}\t{count}")
                    for kernel, code in sorted(text_sections(cubin).items()):
                        listing = disassemble(code, target.nvdisasm_arch)
                        if listing.errors:
                            raise SystemExit(f"nvdisasm complained on ptxas output: {listing.errors}")
                        for d in listing.lines:
                            rows.append(f"{d.text}\t{d.lo:#018x}\t{d.hi:#018x}\t"
                                        f"{ptx.name}:{kernel}:{opt}:{d.offset:#06x}")
        path = out_dir / f"corpus-{target.name}.tsv"
        path.write_text("\n".join(rows) + "\n")
        print(f"{path.relative_to(REPO)}: {len(rows)} instructions")
        registers = out_dir / f"registers-{target.name}.tsv"   # ptxas -v: REGCOUNT per kernel
        registers.write_text("\n".join(sorted(counts)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
