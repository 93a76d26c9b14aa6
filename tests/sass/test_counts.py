"""The counts compiler/bobc/sass/README.md states are the tables' and the corpus's own.

Forms learned from ptxas, borrowed from the other architecture, derived from encoding
classes; corpus instructions and kernels (tests/sass/data/corpus-*.tsv).  The README's
"Counts" table is read and compared, so it cannot go stale; the test prints them.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from bobc.sass.learn import TABLES, read_corpus, streams

README = Path(__file__).resolve().parents[2] / "compiler" / "bobc" / "sass" / "README.md"


def counts(arch: str) -> dict[str, int]:
    forms = json.loads((TABLES / f"{arch}.json").read_text())["forms"].values()
    rows = read_corpus(arch)
    return {"forms learned": sum("reference" in f and "borrowed_from" not in f for f in forms),
            "forms borrowed": sum("borrowed_from" in f for f in forms),
            "forms derived": sum("derived_from" in f for f in forms),
            "corpus instructions": len(rows),
            "corpus kernels": len(streams(rows))}


def test_readme_counts_are_the_real_ones(capsys):
    stated = {}
    for line in README.read_text().splitlines():
        m = re.match(r"^\| ([a-z ]+) \| (\d+) \| (\d+) \|$", line)
        if m:
            stated[m.group(1)] = {"sm_86": int(m.group(2)), "sm_90": int(m.group(3))}
    real = {arch: counts(arch) for arch in ("sm_86", "sm_90")}
    with capsys.disabled():
        for arch, c in real.items():
            print(f"\n{arch}: " + ", ".join(f"{v} {k}" for k, v in c.items()))
    assert set(stated) == set(real["sm_86"])
    for name, per_arch in stated.items():
        for arch, value in per_arch.items():
            assert real[arch][name] == value, f"README says {value} {name} on {arch}, the tables say {real[arch][name]}"


def test_the_top_readme_states_the_corpus_as_it_is():
    """README.md's table of what is verified repeats the corpus's size: it said 60 kernels and
    13,976 / 14,032 instructions long after the corpus grew (session 34)."""
    text = " ".join((README.parents[3] / "README.md").read_text().split())
    real = {arch: counts(arch) for arch in ("sm_86", "sm_90")}
    k86, k90 = real["sm_86"]["corpus kernels"], real["sm_90"]["corpus kernels"]
    i86, i90 = real["sm_86"]["corpus instructions"], real["sm_90"]["corpus instructions"]
    assert f"a ptxas corpus of {k86} sm_86 and {k90} sm_90 kernels" in text
    assert f"{i86:,}/{i86:,} sm_86 and {i90:,}/{i90:,} sm_90 instructions" in text
