"""Kernel extents supplied by the plan, and parameter reads taken from the assembled code.

- A pointer's extent is `resident` (to the end of the resident it points into),
  an expression over the launch's own parameter words (`4*hi[7]`), or a size
  the kernel's code fixes; the certifier evaluates it on each launch.
- The words a kernel reads are read off its assembled code's constant-bank
  operands (bank and offset from the encoded bits), so a read the source
  writes as an absolute offset is seen as well as `param+N`.
"""
from __future__ import annotations

import dataclasses

import pytest

import synthetic_bob as bob
from bobc.certify import findings
from bobc.certify.kernels import Argument, ContractError, check_code_reads, code_reads, parse_contract
from bobc.sass import assemble_kernel
from bobc.targets import SM86, SM90

ADAMW_LAUNCH = 7          # the synthetic plan's first bob-adamw launch (launches: loss, 3 x (gather, argmax), adamw)


@pytest.fixture(scope="module")
def plan():
    return bob.bob_plan()


def with_word(plan, launch_index, argument, value):
    program = plan.program
    launch = program.launches[launch_index]
    word = bob.ARGUMENT0 + argument
    patches = tuple(p for p in launch.patches if p.word != word)
    if value is not None:
        patches += (dataclasses.replace(launch.patches[0], word=word, value=value),)
    launches = list(program.launches)
    launches[launch_index] = dataclasses.replace(launch, patches=patches)
    return dataclasses.replace(plan, program=dataclasses.replace(program, launches=tuple(launches)))


def word_of(plan, launch_index, argument):
    return next(p.value for p in plan.program.launches[launch_index].patches if p.word == bob.ARGUMENT0 + argument)


def test_extent_forms_parse_and_evaluate(tmp_path):
    source = tmp_path / "k.sass"
    source.write_text("//@ param 0 pointer read resident the rest of a resident\n"
                      "//@ param 1 pointer write 4*hi[3] count x 4\n"
                      "//@ param 2 pointer read-write word[4]+16 a header and a body\n"
                      "//@ param 3 scalar (scale, count)\n"
                      "//@ param 4 scalar body bytes\n"
                      "//@ param 5 pointer write 0x10 a 16-byte record the code fixes\n")
    arguments = {a.index: a for a in parse_contract(source).arguments}
    words = {3: (1234 << 32) | 0x3F800000, 4: 100}
    assert arguments[0].extent_for(words, 0x5000, 0x4F00) == (0x100, "")
    assert arguments[1].extent_for(words, 0, 0) == (4 * 1234, "")
    assert arguments[2].extent_for(words, 0, 0) == (116, "")
    assert (arguments[5].rule, arguments[5].extent_for(words, 0, 0)) == ("", (16, ""))
    missing, why = arguments[1].extent_for({}, 0, 0)
    assert missing is None and "parameter word 3" in why and "4*hi[3]" in why


def test_a_malformed_extent_is_refused_with_the_forms(tmp_path):
    source = tmp_path / "k.sass"
    source.write_text("//@ param 0 pointer read lots the table\n")
    with pytest.raises(ContractError) as caught:
        parse_contract(source)
    assert "k.sass:1" in str(caught.value) and "resident" in str(caught.value) and "4*hi[7]" in str(caught.value)


def test_adamw_extents_come_from_its_launch(plan):
    """bob-adamw's four pointers touch 4 x the element count at word 7's high half: the plan's
    own launch says 65,536 elements (262,144 bytes, each table's whole resident)."""
    assert word_of(plan, ADAMW_LAUNCH, 7) >> 32 == bob.TABLE // 4
    assert findings(plan, SM86) == []
    one_more = word_of(plan, ADAMW_LAUNCH, 7) + (1 << 32)
    found = [f.message for f in findings(with_word(plan, ADAMW_LAUNCH, 7, one_more), SM86)]
    assert len(found) == 4, found
    assert found[0].startswith(f"launch {ADAMW_LAUNCH} (bob-adamw) argument 0 (word 44, the parameter table W) "
                               f"read-writes {bob.TABLE + 4:,} bytes (4*hi[7]) at ")
    assert "runs 4 bytes past" in found[0]


def test_an_extent_naming_a_word_the_launch_does_not_set_is_refused(plan):
    found = [f.message for f in findings(with_word(plan, ADAMW_LAUNCH, 7, None), SM86)]
    assert any("argument 0" in m and "names parameter word 7, which the launch does not set" in m for m in found), found


SOURCE = """// reads word 0 through param+, word 3 through an absolute bank offset
//@ param 0 pointer write 4 the destination
.kernel absolute_reader
    LDC.64 R2, c[0x0][RZ+param+0x0]
    LDC R4, c[0x0][ABSOLUTE]
    STG.E [R2.64], R4
    EXIT
"""


@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
def test_a_read_the_source_text_hides_is_found_in_the_assembled_code(tmp_path, target):
    source = tmp_path / "absolute-reader.sass"
    source.write_text(SOURCE.replace("ABSOLUTE", hex(target.parameter_base + 0x1C)))
    contract = parse_contract(source)
    assert check_code_reads(contract) == []              # the text has no param+ read of word 3
    code = assemble_kernel(source, target).code
    reads, problems = code_reads(source, code, target.parameter_base)
    assert problems == []
    assert [(r.offset, r.width) for r in reads] == [(0, 8), (0x1C, 4)]
    (found,) = check_code_reads(contract, tuple(reads))
    assert found.message.startswith("kernel absolute-reader reads parameter word 3 (LDC R4, c[0x0]")
    assert found.message.endswith("but its contract does not declare it")


def test_code_that_is_not_its_source_is_named(tmp_path):
    source = tmp_path / "absolute-reader.sass"
    source.write_text(SOURCE.replace("ABSOLUTE", "0x17c"))
    code = assemble_kernel(source, SM86).code
    reads, problems = code_reads(source, code + code[:16], SM86.parameter_base)
    assert reads == [] and problems == ["its code has 5 instructions, its source absolute-reader.sass 4"]


def _indexed_reader(tmp_path, table: str = ""):
    source = tmp_path / "indexed-reader.sass"
    source.write_text("//@ param 0 pointer write 4 the destination\n"
                      "//@ param 1 scalar an entry: one u32 to copy\n"
                      "//@ param 2 scalar an entry: one u32 to copy\n"
                      + table +
                      ".kernel indexed_reader\n"
                      "    S2R R5, SR_TID.X\n"
                      "    LDC R4, c[0x0][R5+param+0x8]\n"
                      "    LDC.64 R2, c[0x0][RZ+param+0x0]\n"
                      "    STG.E [R2.64], R4\n"
                      "    EXIT\n")
    return source


def test_a_register_indexed_parameter_read_is_refused_outside_a_table(tmp_path):
    source = _indexed_reader(tmp_path)
    reads, problems = code_reads(source, assemble_kernel(source, SM86).code, SM86.parameter_base)
    assert problems == [] and [r.indexed for r in reads] == [True, False]
    (finding,) = [f for f in check_code_reads(parse_contract(source), tuple(reads))]
    assert "register-indexed" in finding.message and "indexed-reader.sass:" in finding.message
    assert "//@ table" in finding.message


def test_a_register_indexed_read_of_a_declared_table_reads_every_row(tmp_path):
    """`//@ table 1 rows 2 of 1`: the indexed read of word 1 counts for words 1 and 2, both declared;
    a table over an undeclared word is refused by name at the table's line (whatever the code reads:
    probe s32 contracts finding 9), and one over a word declared unused at the read."""
    source = _indexed_reader(tmp_path, "//@ table 1 rows 2 of 1 the entries\n")
    reads, _ = code_reads(source, assemble_kernel(source, SM86).code, SM86.parameter_base)
    contract = parse_contract(source)
    assert contract.tables[0].rows == 2 and check_code_reads(contract, tuple(reads)) == []
    wider = _indexed_reader(tmp_path, "//@ table 1 rows 3 of 1 the entries\n")
    with pytest.raises(ContractError, match=r"indexed-reader.sass:4:18: table 1 rows 3 of 1 reaches word 3, which "
                                            r"no //@ param line declares"):
        parse_contract(wider)
    unused = _indexed_reader(tmp_path, "//@ param 3 unused\n//@ table 1 rows 3 of 1 the entries\n")
    (finding,) = check_code_reads(parse_contract(unused), tuple(reads))
    assert "word 3 through its table" in finding.message and "declares it unused" in finding.message


def test_argument_without_rule_keeps_its_fixed_extent():
    assert Argument(0, "pointer", 8, "write").extent_for({}, 0, 0) == (8, "")


def test_batched_pointer_forms_parse_and_evaluate(tmp_path):
    """`each COUNT by STRIDE` after a pointer's extent: the kernel moves the pointer per batch;
    count and stride are expressions over the launch's words like the extent."""
    source = tmp_path / "k.sass"
    source.write_text("//@ param 0 pointer read 4*lo[6] each lo[10] by 4*lo[7] x, per batch\n"
                      "//@ param 1 pointer write 16 one record\n")
    first, second = parse_contract(source).arguments
    assert (first.rule, first.batches, first.stride, first.what) == ("4*lo[6]", "lo[10]", "4*lo[7]", "x, per batch")
    assert first.batch_offsets({10: 3, 7: 100}, 64) == ([0, 400, 800], "")
    assert second.batch_offsets({}, 64) == ([0], "")
    missing, why = first.batch_offsets({10: 3}, 64)
    assert missing is None and "batch stride 4*lo[7]" in why and "parameter word 7" in why
    too_many, why = first.batch_offsets({10: 65, 7: 1}, 64)
    assert too_many is None and "lo[10] = 65" in why and "limit of 64" in why


def test_every_batch_of_a_batched_pointer_is_certified(plan):
    """A pointer declared per batch is held to its extent at every batch's address: bob-adamw's
    table pointer declared as two batches half a table apart puts batch 1's table past the
    resident, and the finding names the batch; two batches a whole table apart do not (batch 1
    is the next table)."""
    from bobc.certify import kernel_contracts
    from bobc.certify.pointers import check_pointers
    contracts, faults = kernel_contracts(plan, target=SM86)
    assert faults == []
    adamw = contracts["bob-adamw"]

    def batched(stride):
        table = tuple(dataclasses.replace(a, batches="2", stride=str(stride)) if a.index == 0 else a
                      for a in adamw.arguments)
        return dict(contracts, **{"bob-adamw": dataclasses.replace(adamw, arguments=table)})

    half = [f.message for f in check_pointers(plan, batched(bob.TABLE // 2))]
    adamw_launches = [i for i, l in enumerate(plan.program.launches) if l.identity == "bob-adamw"]
    assert len(half) == len(adamw_launches) and ADAMW_LAUNCH in adamw_launches, half
    assert all("(bob-adamw) argument 0" in m and f", batch 1 (+{bob.TABLE // 2:#x})" in m
               and "runs" in m and "past" in m for m in half), half
    whole = [f.message for f in check_pointers(plan, batched(bob.TABLE))]
    assert all("batch 1" not in m for m in whole), whole
