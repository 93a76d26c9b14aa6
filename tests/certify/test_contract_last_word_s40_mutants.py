"""Word 61 is the last a contract may name in every form, not only `//@ param` (probe s40 mutants5).

tests/certify/test_contract_last_word_s40.py puts `//@ param 61` / `62` at the bound, but an
extent's `lo[N]`, a tensor map's `W of P` and a table's last row were tried only far past it (or
not at all), so a bound off by one in any of those passed.  The bound, as there: sm_90's bank 0
image is 1024 bytes and its parameters start at c[0x0][0x210], (1024 - 0x210) / 8 = 62 words,
0..61 (docs/kernel-contracts.md says "past word 61").
"""
from __future__ import annotations

import pytest

from bobc.certify.kernels import ContractError, parse_contract

HEAD = "// a kernel\n//@ block 64\n"
CODE = (".kernel k\n"
        "    LDC.64 R2, c[0x0][RZ+param+0x0]\n"
        "    LDC R4, c[0x0][RZ+param+0x8]\n"
        "    EXIT\n")

FORMS = {
    "extent": lambda w: f"//@ param 0 pointer write 4*lo[{w}] the output\n//@ param 1 scalar N\n",
    "tensormap word": lambda w: ("//@ param 0 pointer read 4*lo[1] the tensor\n//@ param 1 scalar N\n"
                                 f"//@ tensormap {w} of 0 binary32 dims (256) strides () box (32) swizzle none T\n"),
    "tensormap pointer": lambda w: (f"//@ param 0 pointer write 4*lo[1] the output\n//@ param 1 scalar N\n"
                                    f"//@ tensormap 2 of {w} binary32 dims (256) strides () box (32) swizzle none T\n"),
    "table": lambda w: (f"//@ param 0 pointer write 4*lo[1] the output\n//@ param 1 scalar N\n"
                        f"//@ table {w - 1} rows 1 of 2 the rows\n"),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_word_62_is_refused_in_every_form(tmp_path, form):
    source = tmp_path / "k.sass"
    source.write_text(HEAD + FORMS[form](62) + CODE)
    with pytest.raises(ContractError, match=r"past every launch's parameters \(at most 496 bytes: words 0 to 61\)"):
        parse_contract(source)


@pytest.mark.parametrize("form", ["extent", "table", "tensormap word"])
def test_word_61_is_taken_where_nothing_else_is_wrong(tmp_path, form):
    source = tmp_path / "k.sass"
    text = FORMS[form](61)
    # the words a table's rows reach are declared too (a table's entries are parameter words)
    text += {"extent": "//@ param 61 scalar M\n", "table": "//@ param 60 scalar A\n//@ param 61 scalar B\n"}.get(form, "")
    source.write_text(HEAD + text + CODE)
    parse_contract(source)
