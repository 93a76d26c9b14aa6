"""Every `//@` line of a kernel source is a contract line (docs/kernel-contracts.md): its first
word is one of param, block, table, tensormap, and it parses.  A misspelt line was dropped
without a word, so a plan was certified without the check the line meant to declare (probe s28
docs finding 3: `//@ blok 128` certified a plan whose block the line meant to hold)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bobc.certify.kernels import CONTRACT_KEYWORDS, ContractError, parse_contract

REPO = Path(__file__).resolve().parents[2]

KERNEL = ("// a kernel\n"
          "//@ block 64\n"
          "//@ param 0 pointer write 4*lo[1] the output\n"
          "//@ param 1 scalar N\n"
          ".kernel k\n"
          "    LDC.64 R2, c[0x0][RZ+param+0x0]\n"
          "    LDC R4, c[0x0][RZ+param+0x8]\n"
          "    EXIT\n")


def refusal(tmp_path, old: str, new: str) -> str:
    source = tmp_path / "k.sass"
    assert old in KERNEL
    source.write_text(KERNEL.replace(old, new, 1))
    with pytest.raises(ContractError) as caught:
        parse_contract(source)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(source) + ":")
    return message[len(str(source)):]


def test_the_kernel_as_written_parses(tmp_path):
    source = tmp_path / "k.sass"
    source.write_text(KERNEL)
    contract = parse_contract(source)
    assert contract.block == (64, 1, 1)
    assert [(a.index, a.kind) for a in contract.arguments] == [(0, "pointer"), (1, "scalar")]


@pytest.mark.parametrize("old, new, says", [
    ("//@ block 64", "//@ blok 128", ":2:5: unknown contract line '//@ blok' (did you mean block?): a contract line "
                                     "is one of //@ param, //@ block, //@ table, //@ tensormap"),
    ("//@ param 1 scalar", "//@ parm 1 scalar", ":4:5: unknown contract line '//@ parm' (did you mean param?)"),
    ("//@ block 64", "  //@ Block 64", ":2:7: unknown contract line '//@ Block' (did you mean block?)"),
    ("//@ param 1 scalar", "//@ tensor-map 1 scalar", ":4:5: unknown contract line '//@ tensor-map' "
                                                      "(did you mean tensormap?)"),
    ("//@ param 1 scalar", "//@ params 1 scalar", ":4:5: unknown contract line '//@ params' (did you mean param?)"),
    ("//@ block 64", "//@ contract 64", ":2:5: unknown contract line '//@ contract': a contract line is one of"),
    ("//@ block 64", "//@ 64", ":2:5: a contract line starts with what it declares (one of //@ param, //@ block, "
                               "//@ table, //@ tensormap, //@ copy, //@ require), found '64' after '//@'"),
    ("//@ block 64", "//@", ":2:4: a contract line starts with what it declares"),
])
def test_an_unknown_contract_line_is_refused_naming_the_word_and_the_nearest_keyword(tmp_path, old, new, says):
    message = refusal(tmp_path, old, new)
    assert message.startswith(says), message
    assert "a plain comment is written // without @" in message


@pytest.mark.parametrize("old, new, says", [
    ("//@ param 1 scalar N", "//@ param 1 scalars N", ":4:13: unknown kind 'scalars' of parameter word 1 "
                                                      "(did you mean scalar?): a parameter word is a pointer, a "
                                                      "scalar or unused ('//@ param 1 scalar what')"),
    ("//@ param 1 scalar N", "//@ param 1 scaler N", ":4:13: unknown kind 'scaler' of parameter word 1 "
                                                     "(did you mean scalar?)"),
    ("//@ param 1 scalar N", "//@ param 1 scalar, N", ":4:13: unknown kind 'scalar,' of parameter word 1 "
                                                      "(did you mean scalar?)"),
    ("//@ param 1 scalar N", "//@ param 1 N", ":4:13: unknown kind 'N' of parameter word 1: a parameter word"),
    ("//@ param 1 scalar N", "//@ param 1", ":4:12: expected the kind of parameter word 1 (pointer, scalar or "
                                            "unused), found the end of the line"),
    ("//@ param 0 pointer", "//@ param two pointer", ":3:11: expected the parameter word's number after "
                                                     "'//@ param', found 'two'"),
    ("//@ param 1 scalar N", "//@ param", ":4:10: expected the parameter word's number after '//@ param', found "
                                          "the end of the line"),
    ("//@ param 0 pointer write", "//@ param 0 pointer writ", ":3:21: unknown access 'writ' of pointer word 0 "
                                                              "(did you mean write?); a pointer is declared as"),
    ("//@ param 0 pointer write 4*lo[1]", "//@ param 0 pointer write lots", ":3:27: unknown extent 'lots' of pointer word 0; "
                                                                           "a pointer is declared as"),
    ("//@ param 0 pointer write 4*lo[1] the output", "//@ param 0 pointer write", ":3:26: a pointer is declared"),
    ("//@ param 0 pointer write 4*lo[1]", "//@ param 0 pointer write 4*lo[1] +4", ":3:35: pointer word 0's extent "
                                                                                 "is written with a space"),
    ("//@ param 0 pointer write 4*lo[1]", "//@ param 0 pointer write 4*lo[1] whenever hi[1]&1",
     ":3:35: pointer word 0's 'each COUNT by STRIDE' and condition come in that order"),
    ("//@ param 1 scalar N", "//@ param 0 scalar N", ":4:11: parameter word 0 is declared twice"),
    ("//@ block 64", "//@ block sixty-four", ":2:11: 'sixty-four' is not a number of threads; a "
                                                     "kernel's block is declared as '//@ block X [Y [Z]]'"),
    ("//@ block 64", "//@ block 64 1 1 1", ":2:18: a block has at most three dimensions, and '1' "
                                                   "would be a fourth; a kernel's block is declared as"),
    ("//@ block 64", "//@ block 64 0", ":2:14: a block has at least 1 thread in each dimension, "
                                               "not 0; a kernel's block is declared as"),
    ("//@ block 64", "//@ block", ":2:10: the block's threads are missing; a kernel's block "
                                          "is declared as"),
    ("//@ block 64", "//@ block 64\n//@ block 64", ":3:5: a kernel's block is declared once, and this is a "
                                                             "second //@ block line"),
    ("//@ block 64", "//@ table 1 row 2 of 1", ":2:13: a table is declared as '//@ table FIRST rows ROWS of WORDS"),
    ("//@ block 64", "//@ table 1 rows 0 of 1", ":2:18: a table has at least 1 row, not 0; a table is "
                                                        "declared as"),
    ("//@ block 64", "//@ table 1 rows 2", ":2:19: a table is declared as"),
])
def test_a_malformed_line_of_a_known_keyword_is_refused_at_its_column(tmp_path, old, new, says):
    message = refusal(tmp_path, old, new)
    assert message.startswith(says), message


def test_a_misspelt_block_line_no_longer_certifies_a_plan_without_its_check(tmp_path):
    """The probe's reproduction, through `bobc check` of the linear regression example."""
    import shutil
    import sys
    example = tmp_path / "lr"
    shutil.copytree(REPO / "examples/linear_regression", example)
    kernel = example / "LinReg/kernels/linreg-predict.sass"
    text = kernel.read_text()
    assert "\n//@ block 64\n" in text
    command = [sys.executable, "-m", "bobc", "check", "LinReg/Build/NativeHost.bob"]
    env = {"PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": "off", "PATH": "/usr/bin:/bin"}
    kernel.write_text(text.replace("\n//@ block 64\n", "\n//@ blok 128\n"))
    refused = subprocess.run(command, cwd=example, env=env, capture_output=True, text=True)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    line = text.split("\n").index("//@ block 64") + 1
    assert (f"LinReg/kernels/linreg-predict.sass:{line}:5: unknown contract line '//@ blok' (did you mean block?)" in refused.stderr), \
        refused.stderr
    assert "Traceback" not in refused.stderr


def shipped_kernel_sources() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "*.sass"], cwd=REPO, capture_output=True, text=True)
    if listed.returncode != 0:          # not a git checkout: every .sass under the repository
        return sorted(p for p in REPO.rglob("*.sass") if ".git" not in p.parts)
    return [REPO / name for name in listed.stdout.split()]


def test_every_shipped_kernel_source_parses_and_uses_only_known_keywords():
    """specs/, examples/ (the generated products under examples/coppelius), the compiler's own
    program stage, bench/ variants: every `//@` line is one the grammar knows."""
    sources = shipped_kernel_sources()
    assert len(sources) > 20 and any("coppelius-gemm-nn.sm_90" in p.name for p in sources)
    refused = []
    for source in sources:
        try:
            parse_contract(source)
        except ContractError as error:
            refused.append(str(error))
        for line in source.read_text(encoding="utf-8").splitlines():
            if line.lstrip().startswith("//@"):
                assert line.lstrip()[3:].split()[0] in CONTRACT_KEYWORDS, (source, line)
    assert refused == []


def test_the_keywords_are_the_ones_the_doc_lists():
    doc = (REPO / "docs/kernel-contracts.md").read_text()
    for keyword in CONTRACT_KEYWORDS:
        assert f"//@ {keyword} " in doc, keyword
