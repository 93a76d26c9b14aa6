"""Contract lines that were taken without a word, or refused without saying what is wrong
(probe s32 contracts findings 2, 9 and 10; docs/kernel-contracts.md, "Contract lines: the whole
grammar"):

- a condition whose mask can select no bit of its term (`when lo[2]&0`, `when lo[2]&0x100000000`)
  made the pointer inactive on every launch, so its extent was never checked (finding 2);
- `// @ block 64` was a plain comment, so the block check went away; a word number past every
  launch's parameters was refused only per launch; `//@ block 0` and `4*lo[-1]` got only the
  form; a table whose rows reach undeclared words was certified when the code read none of them
  (finding 9);
- an extent dividing by the number 0 was refused per launch as "(0 is 0 on this launch)" (finding 10).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.certify.kernels import ContractError, _evaluate, parse_contract

REPO = Path(__file__).resolve().parents[2]

KERNEL = ("// a kernel\n"
          "//@ block 64\n"
          "//@ param 0 pointer write 4*lo[1] the output\n"
          "//@ param 1 scalar N\n"
          ".kernel k\n"
          "    LDC.64 R2, c[0x0][RZ+param+0x0]\n"
          "    LDC R4, c[0x0][RZ+param+0x8]\n"
          "    EXIT\n")


def parsed(tmp_path, old: str, new: str):
    source = tmp_path / "k.sass"
    assert old in KERNEL
    source.write_text(KERNEL.replace(old, new, 1))
    return parse_contract(source)


def refusal(tmp_path, old: str, new: str) -> str:
    with pytest.raises(ContractError) as caught:
        parsed(tmp_path, old, new)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(tmp_path / "k.sass") + ":")
    return message[len(str(tmp_path / "k.sass")):]


@pytest.mark.parametrize("new, says", [
    ("4*lo[1] when lo[1]&0 the", ":3:46: pointer word 0's condition 'when lo[1]&0' tests no bit (the mask is 0): the "
                                 "pointer would be inactive on every launch, its extent never checked"),
    ("4*lo[1] when lo[1]&0x100000000 the", ":3:46: pointer word 0's condition 'when lo[1]&0x100000000' tests only "
                                           "bits lo[1] cannot hold (lo[1] is 32 bits: 0x100000000 lies past them): "
                                           "the pointer would be inactive on every launch"),
    ("4*lo[1] when  hi[1]&0x0 the", ":3:47: pointer word 0's condition 'when hi[1]&0x0' tests no bit"),
    ("4*lo[1] unless lo[1]&0 the", ":3:48: pointer word 0's condition 'unless lo[1]&0' tests no bit (the mask is 0): "
                                   "the condition would hold on every launch"),
    ("4*lo[1] unless hi[1]&0x100000001 the", ":3:48: pointer word 0's condition 'unless hi[1]&0x100000001' tests "
                                             "bits hi[1] cannot hold (hi[1] is 32 bits: 0x100000000 lies past them), "
                                             "which are never set"),
    ("4*lo[1] when word[1]&0x10000000000000000 the", ":3:48: pointer word 0's condition "
                                                     "'when word[1]&0x10000000000000000' tests only bits word[1] cannot "
                                                     "hold (word[1] is 64 bits"),
])
def test_a_condition_whose_mask_selects_no_bit_of_its_term_is_refused_at_the_mask(tmp_path, new, says):
    message = refusal(tmp_path, "4*lo[1] the", new)
    assert message.startswith(says), message


def test_a_mask_within_the_term_is_taken(tmp_path):
    contract = parsed(tmp_path, "4*lo[1] the", "4*lo[1] when word[1]&0x100000000 the")
    assert contract.argument(0).condition == "when word[1]&0x100000000"
    assert parsed(tmp_path, "4*lo[1] the", "4*lo[1] unless hi[1]&0x80000000 the").argument(0).condition


def test_a_tensor_map_condition_whose_mask_is_zero_is_refused(tmp_path):
    source = tmp_path / "k.sass"
    source.write_text("//@ param 1 pointer read resident the tensor\n"
                      "//@ tensormap 9 of 1 binary32 dims (256, 4) strides (1024) box (32, 4) swizzle 128b "
                      "when hi[7]&0 G\n")
    with pytest.raises(ContractError, match=r"k.sass:2:96: tensor map word 9's condition 'when hi\[7\]&0' tests "
                                            r"no bit \(the mask is 0\): the tensor map would be inactive"):
        parse_contract(source)


@pytest.mark.parametrize("new, says", [
    ("// @ block 64", ":2:4: '// @ block' is a plain comment, not a contract line: a contract line is written //@ "
                      "with no space (//@ param, //@ block, //@ table, //@ tensormap, //@ copy, //@ require); write '//@ block 64', or "
                      "leave out the @ for a plain comment"),
    ("   //   @block 64", ":2:9: '//   @block' is a plain comment, not a contract line"),
    ("#@ block 64", ":2:2: '#@ block' is a plain comment, not a contract line"),
    ("// @ blok 64", ":2:4: '// @ blok' is a plain comment, not a contract line: a contract line is written //@ with "
                     "no space (//@ param, //@ block, //@ table, //@ tensormap, //@ copy, //@ require); write '//@ block 64'"),
])
def test_a_contract_line_written_with_a_space_after_the_slashes_is_refused(tmp_path, new, says):
    message = refusal(tmp_path, "//@ block 64", new)
    assert message.startswith(says), message


def test_a_comment_whose_at_sign_starts_another_word_stays_a_comment(tmp_path):
    assert parsed(tmp_path, "// a kernel", "// @todo unroll; # @see the reference").block == (64, 1, 1)


@pytest.mark.parametrize("old, new, says", [
    ("//@ param 1 scalar N", "//@ param 99999999999999999999999 scalar N",
     ":4:11: parameter word 99999999999999999999999 is past every launch's parameters (at most 496 bytes: words 0 "
     "to 61)"),
    ("//@ param 1 scalar N", "//@ param 128 unused", ":4:11: parameter word 128 is past every launch's parameters"),
    ("//@ block 64", "//@ block 0", ":2:11: a block has at least 1 thread in each dimension, not 0; a kernel's block "
                                    "is declared as '//@ block X [Y [Z]]'"),
    ("//@ block 64", "//@ block 64 2 0", ":2:16: a block has at least 1 thread in each dimension, not 0"),
    ("//@ block 64", "//@ block 64 32", ":2:11: a block of 64 x 32 x 1 threads is more than a block holds (at most "
                                        "1024 threads: x and y up to 1024, z up to 64)"),
    ("4*lo[1] the", "4*lo[-1] the", ":3:32: pointer word 0's extent 4*lo[-1]: lo[-1] names word -1: words are "
                                    "numbered from 0"),
    ("4*lo[1] the", "4*(lo[1]+1) the", ":3:29: pointer word 0's extent 4*(lo[1]+1): an expression has no "
                                       "parentheses"),
    ("4*lo[1] the", "4*Lo[1] the", ":3:29: pointer word 0's extent 4*Lo[1]: unknown term 'Lo[1]' (did you mean lo?)"),
    ("4*lo[1] the", "4*lo[1]- the", ":3:34: pointer word 0's extent 4*lo[1]-: nothing follows the last '-'"),
    ("4*lo[1] the", "residnet the", ":3:27: unknown extent 'residnet' of pointer word 0 (did you mean resident?)"),
    ("4*lo[1] the", "4*lo[1]*hi[200] the", ":3:38: pointer word 0's extent 4*lo[1]*hi[200]: hi[200] names word "
                                           "200, past every launch's parameters"),
    ("4*lo[1] the", "4*lo[1]/0 the", ":3:35: pointer word 0's extent 4*lo[1]/0: it divides by the number 0: every "
                                     "launch would divide by zero"),
    ("4*lo[1] the", "4*lo[1] each lo[1] by 4/0x0 the", ":3:51: pointer word 0's batch stride 4/0x0: it divides by "
                                                       "the number 0x0"),
    ("//@ param 1 scalar N", "//@ param 1 scalar N\n//@ table 0 rows 2 of 3 the entries",
     ":5:18: table 0 rows 2 of 3 reaches words 2 to 5, which no //@ param line declares: declare each entry's words"),
    ("//@ param 1 scalar N", "//@ param 1 scalar N\n//@ table 0 rows 3 of 1 the entries\n//@ param 3 unused",
     ":5:18: table 0 rows 3 of 1 reaches word 2, which no //@ param line declares"),
    ("//@ param 1 scalar N", "//@ param 1 scalar N\n//@ table 120 rows 5 of 2 the entries",
     ":5:11: table 120 rows 5 of 2 reaches word 129, past every launch's parameters"),
])
def test_a_contract_line_says_what_is_wrong_at_its_column(tmp_path, old, new, says):
    message = refusal(tmp_path, old, new)
    assert message.startswith(says), message


def test_a_table_over_declared_words_is_taken_whatever_their_kind(tmp_path):
    contract = parsed(tmp_path, "//@ param 1 scalar N", "//@ param 1 scalar N\n//@ param 2 unused\n"
                                                        "//@ table 1 rows 2 of 1 the entries")
    assert [(t.first, t.rows, t.words) for t in contract.tables] == [(1, 2, 1)]


def test_a_division_by_zero_on_a_launch_says_which_word_is_zero_and_only_then():
    assert _evaluate("4*lo[2]/lo[3]", {2: 8, 3: 0}, "extent") == (
        None, "its extent 4*lo[2]/lo[3] divides by zero (lo[3] is 0 on this launch)")
    # (a contract line cannot divide by the number 0; an Argument built otherwise says it plainly)
    assert _evaluate("4*lo[2]/0", {2: 8}, "extent") == (None, "its extent 4*lo[2]/0 divides by zero")


def test_a_plan_whose_pointer_condition_can_never_hold_is_not_certified(tmp_path):
    """The probe's repro: linreg-sgd's gradient extent 1000 times the resident, under `when lo[2]&0`,
    was certified (the pointer inactive on every launch)."""
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    kernel = tmp_path / "LinReg" / "kernels" / "linreg-sgd.sass"
    text = kernel.read_text()
    assert "//@ param 1 pointer read 4*lo[2] " in text
    kernel.write_text(text.replace("//@ param 1 pointer read 4*lo[2] ",
                                   "//@ param 1 pointer read 4000*lo[2] when lo[2]&0 ", 1))
    result = subprocess.run([sys.executable, "-m", "bobc", "check", "LinReg/Build/NativeHost.bob"],
                            capture_output=True, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "linreg-sgd.sass:6:48: pointer word 1's condition 'when lo[2]&0' tests no bit" in result.stderr
