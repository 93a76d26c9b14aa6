"""compiler/bobc/sass/README.md's table of the control codes ptxas writes around sm_90's asynchronous
opcodes is what the sm_90 corpus (ptxas -O3) says: the most common stall, yield and scoreboard use of each."""
from __future__ import annotations

import collections
import re

from tests.conftest import REPO

CORPUS = REPO / "tests" / "sass" / "data" / "corpus-sm_90.tsv"
README = REPO / "compiler" / "bobc" / "sass" / "README.md"
ROW = re.compile(r"^\| (HGMMA|WARPGROUP\.\w+|SYNCS\.\w+|UTMALDG|ELECT|FENCE\.VIEW) \| (\d+) \| (yes|no) \| "
                 r"(yes|none) \| (yes|none) \|")


def _corpus_codes() -> dict[str, collections.Counter]:
    codes: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for line in CORPUS.read_text().splitlines():
        text, _lo, hi, reference = line.split("\t")
        if ":-O3:" not in reference:
            continue
        mnemonic = text.split()[1] if text.startswith("@") else text.split()[0]
        control = int(hi, 16) >> 41
        code = (control & 15, "no" if control >> 4 & 1 else "yes",
                "none" if (control >> 5 & 7) == 7 else "yes", "none" if (control >> 8 & 7) == 7 else "yes")
        for name in ("HGMMA", "WARPGROUP.ARRIVE", "WARPGROUP.DEPBAR", "SYNCS.PHASECHK", "SYNCS.EXCH",
                     "SYNCS.ARRIVE", "UTMALDG", "ELECT", "FENCE.VIEW"):
            if mnemonic.startswith(name):
                codes[name][code] += 1
    return codes


def test_readme_table_is_ptxas_most_common_code():
    stated = {m.group(1): (int(m.group(2)), m.group(3), m.group(4), m.group(5))
              for m in map(ROW.match, README.read_text().splitlines()) if m}
    assert len(stated) == 9
    codes = _corpus_codes()
    for name, code in stated.items():
        assert codes[name], f"{name} is not in the sm_90 corpus"
        assert codes[name].most_common(1)[0][0] == code, (name, codes[name].most_common(3))
