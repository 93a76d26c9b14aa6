"""The simulator's launch-order check (bobc.sim.channel, docs/simulator.md): the GPU may run a
grid while the one before it still runs unless a WAIT_FOR_IDLE stands between them or the
earlier QMD schedules the later (its dependent QMD), so two launches of one segment that touch
the same word, one writing it, are refused when nothing orders them, and pass when bobc's
encoder ordered them.

Launches of tests/native/kernels/native-mask.sass (out[t] = in[t] & 0xff, 64 words) in one
submission, encoded by bobc.nvidia.encode, run by the channel from the images.  With
`chained=False` every launch also makes a submission of its own, so no launch is always
followed by the same one and the encoder orders them with WAIT_FOR_IDLE instead."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from bobc.nvidia import encode
from bobc.plan.model import Launch, ParameterPatch, Region, Submission, WholeProgramPlan
from bobc.sass import assemble, assemble_kernel
from bobc.sim.channel import Channel, manifest_code_bytes
from bobc.sim import qmd_fields
from bobc.sim.faults import SimulationFault, Unmodeled, UnorderedLaunches
from bobc.sim.memory import Buffer, Memory, Resident
from bobc.targets import SM86, SM90

KERNEL = Path(__file__).resolve().parents[1] / "native" / "kernels" / "native-mask.sass"
CODE, QMD, PUSH, DATA, SEMAPHORE = 0x200000000, 0x200100000, 0x200200000, 0x200300000, 0x200400000
WORDS = 256                                         # 64 u32 words each
A, B, C = DATA, DATA + 0x400, DATA + 0x800          # three residents
SEND = 0x200120AD                                   # INC SEND_PCAS_A, one word, subchannel 1
WAIT = 0x80002044                                   # IMMD WAIT_FOR_IDLE, subchannel 1 (by hand: see test_images_encode)
NOP = 0x80002040                                    # IMMD NO_OPERATION, subchannel 1: the same length, no wait


def images(target, pairs, chained=True, launched=False):
    """The encoded images of one submission launching native-mask once per (out, in) pair;
    `launched`: the kernel assembled as a plan's, opening with the target's launch prologue."""
    word = 0x160 // 8                               # plans are written in the sm_86 layout (bobc.targets)
    region = Region("native-mask", bytes(assemble_kernel(KERNEL, target, launched=launched).code), 24, 64, 0, 0)
    launches = tuple(Launch("native-mask", 0, CODE, (1, 1, 1), (64, 1, 1), 0x200,
                            (ParameterPatch(word, out), ParameterPatch(word + 1, source)))
                     for out, source in pairs)
    program = -(-len(region.code) // 256) * 256 + 0x200 * len(launches)   # code, then a parameter block a launch
    submissions = (Submission("pair", tuple(range(len(launches))), 0),)
    if not chained:
        submissions += tuple(Submission(f"alone {i}", (i,), 16 * (i + 1)) for i in range(len(launches)))
    plan = WholeProgramPlan("program", 0x86, 0xC7C0, 0x806, CODE, QMD, PUSH, SEMAPHORE, 128,
                            program, (region,), launches, len(launches), 0x100 * len(launches),
                            submissions, len(submissions), len(submissions))
    return encode.encode_images(plan, target)


def qmds_without_dependents(target, built) -> bytes:
    """The QMD table with every dependent QMD cleared (read and written through the simulator's
    reader of open-gpu-doc's field table, bobc.qmd_headers, not bobc.nvidia.qmd's codec)."""
    layout = qmd_fields.MAJOR_VERSIONS[3 if target is SM86 else 4]
    enable = "DEPENDENT_QMD0_ENABLE" if layout == "V03_00" else "DEPENDENT_QMD_ENABLE(0)"
    high, low = qmd_fields.all_fields(layout)[enable]
    assert high == low
    table = bytearray(built.qmd)
    for start in range(0, len(table), target.qmd_record_bytes):
        table[start + low // 8] &= ~(1 << low % 8) & 0xFF
    return bytes(table)


def run(target, built, push=None, order=True, qmd=None, code_bytes=None):
    """The prologue, then the submission's ring entry; the data words as the launches left them."""
    data = np.zeros(0x1000, dtype=np.uint8)
    data[:WORDS] = np.arange(WORDS, dtype=np.uint8)[::-1]
    push = bytearray(built.push if push is None else push)
    buffers = [Buffer("program", CODE, np.frombuffer(bytearray(built.program), np.uint8)),
               Buffer("qmd", QMD, np.frombuffer(bytearray(built.qmd if qmd is None else qmd), np.uint8)),
               Buffer("push", PUSH, np.frombuffer(push, np.uint8)),
               Buffer("data", DATA, data), Buffer("semaphore", SEMAPHORE, np.zeros(64, np.uint8))]
    residents = [Resident("a", A, WORDS), Resident("b", B, WORDS), Resident("c", C, WORDS)]
    channel = Channel(Memory(buffers, residents), check_hazards=False, check_order=order,
                      code_bytes=manifest_code_bytes(built.manifest) if code_bytes is None else code_bytes,
                      contracts=None)
    prologue = len(encode.prologue(target).to_bytes())
    channel.run_segment(bytes(push[:prologue]), "prologue")
    channel.run_entry(built.gpfifo[:8], 0)
    run.channel = channel
    return data


def set_field(table: bytes, target, record: int, name: str, value: int) -> bytes:
    """`table` with field `name` of QMD `record` set to `value` (the simulator's field table)."""
    layout = qmd_fields.MAJOR_VERSIONS[3 if target is SM86 else 4]
    high, low = qmd_fields.all_fields(layout)[name]
    start = record * target.qmd_record_bytes
    raw = int.from_bytes(table[start:start + target.qmd_record_bytes], "little")
    raw = raw & ~(((1 << (high - low + 1)) - 1) << low) | value << low
    return table[:start] + raw.to_bytes(target.qmd_record_bytes, "little") + table[start + target.qmd_record_bytes:]


def test_a_qmd_prefetching_for_its_dependent_needs_its_own_code_size_from_the_manifest():
    """sm_90's chained QMD prefetches its dependent's code (PREFETCH_POST: encode.DependentPrefetch),
    so the QMD no longer says where its own code ends: without the manifest's sizes the channel
    refuses to guess, with them both launches run."""
    built = images(SM90, [(B, A), (C, B)])
    assert qmd_fields.read(built.qmd[:SM90.qmd_record_bytes], "V04_00", "PROGRAM_PREFETCH_TYPE") == 1
    with pytest.raises(Unmodeled, match="PREFETCH_POST.*does not say where its own code ends"):
        run(SM90, built, code_bytes={})
    data = run(SM90, built)
    assert len(run.channel.log.launches) == 2
    a = np.frombuffer(data[:WORDS], "<u4")
    assert (np.frombuffer(data[0x800:0x800 + WORDS], "<u4") == (a & 0xFF)).all()


def test_a_bank_other_than_0_is_a_prefetch_or_refused():
    """Constant bank 5 bound with PREFETCH_POST (the dependent's bank 0) must be readable memory;
    bound for the kernel's own reads it is refused, the simulator modelling bank 0 only."""
    built = images(SM90, [(B, A), (C, B)])
    assert qmd_fields.read(built.qmd[:SM90.qmd_record_bytes], "V04_00", "CONSTANT_BUFFER_VALID(5)") == 1
    with pytest.raises(Unmodeled, match="binds constant bank 5 for its kernel"):
        run(SM90, built, qmd=set_field(built.qmd, SM90, 0, "CONSTANT_BUFFER_PREFETCH(5)", 0))
    with pytest.raises(SimulationFault, match="constant bank 5, prefetched for what follows"):
        run(SM90, built, qmd=set_field(built.qmd, SM90, 0, "CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(5)", 0x100))


def without_waits(built) -> bytes:
    words = np.frombuffer(built.push, "<u4").copy()
    assert (words == WAIT).sum() >= 1
    words[words == WAIT] = NOP
    return words.tobytes()


@pytest.mark.parametrize("chained", (True, False), ids=("chained", "waits"))
@pytest.mark.parametrize("target", (SM86, SM90), ids=lambda t: t.name)
def test_launches_the_encoder_ordered_run_and_the_second_sees_the_first(target, chained):
    built = images(target, [(B, A), (C, B)], chained)    # b = a & 0xff, then c = b & 0xff
    first = built.manifest["submissions"][0]
    words = np.frombuffer(built.push[first["push_offset"]:first["push_offset"] + first["push_length"]], "<u4")
    # chained: one send starts both; otherwise two sends with a wait between
    assert ((words == SEND).sum(), (words == WAIT).sum()) == ((1, 0) if chained else (2, 1))
    data = run(target, built)
    assert [name for _, name in run.channel.log.launches] == [
        f"launch of the QMD at {QMD + i * target.qmd_record_bytes:#x}" for i in range(2)]
    a = np.frombuffer(data[:WORDS], "<u4")
    assert (np.frombuffer(data[0x800:0x800 + WORDS], "<u4") == (a & 0xFF)).all()


@pytest.mark.parametrize("target", (SM86, SM90), ids=lambda t: t.name)
def test_a_chain_with_its_dependent_qmds_cleared_runs_one_launch(target):
    """The second launch runs only because the first QMD schedules it: cleared, it never runs."""
    built = images(target, [(B, A), (C, B)])
    data = run(target, built, qmd=qmds_without_dependents(target, built))
    assert len(run.channel.log.launches) == 1
    assert not np.frombuffer(data[0x800:0x800 + WORDS], "<u4").any()


def three_launches(pairs, alone: int, launched: bool = False) -> WholeProgramPlan:
    """An sm_90 plan of native-mask once per (out, in) pair in one submission, and launch `alone`
    sent again in a submission of its own (so it is pinned: it names no dependent)."""
    word = 0x160 // 8
    region = Region("native-mask", bytes(assemble_kernel(KERNEL, SM90, launched=launched).code), 24, 64, 0, 0)
    launches = tuple(Launch("native-mask", 0, CODE, (1, 1, 1), (64, 1, 1), 0x200,
                            (ParameterPatch(word, out), ParameterPatch(word + 1, source)))
                     for out, source in pairs)
    program = -(-len(region.code) // 256) * 256 + 0x200 * len(launches)
    submissions = (Submission("three", tuple(range(len(launches))), 0), Submission("alone", (alone,), 16))
    return WholeProgramPlan("program", 0x86, 0xC7C0, 0x806, CODE, QMD, PUSH, SEMAPHORE, 128, program, (region,),
                            launches, len(launches), 0x100 * len(launches), submissions, 2, 2)


def test_a_chained_launch_still_races_a_launch_sent_before_its_chain_without_a_wait():
    """x; then a -> b chained: b starts after a ends, but x (sent with no wait) may still run."""
    plan = three_launches([(B, A), (C, A), (A, B)], alone=0)
    assert encode.plan_launch_order(plan).dependents == {1: (2,)}
    built = encode.encode_images(plan, SM90)
    run(SM90, built)                                 # as encoded: ordered
    with pytest.raises(UnorderedLaunches) as caught:
        run(SM90, built, without_waits(built))       # launch 2 (chained after 1) reads b, which 0 wrote
    assert "scheduled by the QMD before it" in caught.value.message
    assert "reads the word at 0x200300400 (in b, 0 bytes in)" in caught.value.message


def test_a_dependent_qmd_that_loops_is_refused():
    built = images(SM90, [(B, A), (C, B)])
    fields = qmd_fields.all_fields("V04_00")           # open-gpu-doc clcbc0qmd.h, as the simulator reads it

    def put(record: int, name: str, value: int):
        high, low = fields[name]
        at = SM90.qmd_record_bytes * record
        whole = int.from_bytes(table[at:at + SM90.qmd_record_bytes], "little")
        whole = whole & ~(((1 << (high - low + 1)) - 1) << low) | value << low
        table[at:at + SM90.qmd_record_bytes] = whole.to_bytes(SM90.qmd_record_bytes, "little")
    table = bytearray(built.qmd)
    put(1, "DEPENDENT_QMD_ENABLE(0)", 1)               # the second launch schedules the first again
    put(1, "DEPENDENT_QMD_ACTION(0)", 3)
    put(1, "DEPENDENT_QMD0_POINTER", QMD >> 8)
    with pytest.raises(SimulationFault, match="the dependent QMDs loop"):
        run(SM90, built, qmd=bytes(table))
    put(1, "DEPENDENT_QMD_ACTION(0)", 4)               # DECREMENT_DEPENDENCE: not modeled, refused by name
    with pytest.raises(Unmodeled, match=r"dependent QMD action \(DEPENDENT_QMD_ACTION\(0\)\) is 4"):
        run(SM90, built, qmd=bytes(table))


@pytest.mark.parametrize("target", (SM86, SM90), ids=lambda t: t.name)
def test_a_read_of_what_an_unordered_launch_wrote_is_refused(target):
    built = images(target, [(B, A), (C, B)], chained=False)
    with pytest.raises(UnorderedLaunches) as caught:
        run(target, built, without_waits(built))
    message = caught.value.message
    assert "reads the word at 0x200300400 (in b, 0 bytes in)" in message, message
    assert "wrote before it" in message and "WAIT_FOR_IDLE" in message


def test_a_write_over_what_an_unordered_launch_reads_is_refused():
    built = images(SM90, [(B, A), (A, C)], chained=False)           # the second overwrites what the first reads
    with pytest.raises(UnorderedLaunches) as caught:
        run(SM90, built, without_waits(built))
    assert "writes the word at 0x200300000 (in a, 0 bytes in)" in caught.value.message
    assert "read before it" in caught.value.message


def test_a_write_over_what_an_unordered_launch_wrote_is_refused():
    built = images(SM90, [(B, A), (B, C)], chained=False)
    with pytest.raises(UnorderedLaunches) as caught:
        run(SM90, built, without_waits(built))
    assert "writes the word at 0x200300400 (in b, 0 bytes in)" in caught.value.message
    assert "wrote before it" in caught.value.message


def test_unordered_launches_on_disjoint_words_and_reads_of_the_same_words_pass():
    built = images(SM90, [(B, A), (C, A)], chained=False)           # both read a, each writes its own
    data = run(SM90, built, without_waits(built))
    a = np.frombuffer(data[:WORDS], "<u4")
    for at in (0x400, 0x800):
        assert (np.frombuffer(data[at:at + WORDS], "<u4") == (a & 0xFF)).all()


def test_the_check_can_be_turned_off():
    built = images(SM90, [(B, A), (C, B)], chained=False)
    run(SM90, built, without_waits(built), order=False)


def test_a_channel_that_overrides_launch_is_refused_where_it_is_written():
    """Overriding launch would skip every launch a QMD schedules; run_qmd is the extension point."""
    with pytest.raises(TypeError, match="override run_qmd instead"):
        class Skipping(Channel):                    # noqa: F841
            def launch(self, qmd_address, compute_class, at):
                pass

    class Counting(Channel):
        def run_qmd(self, qmd_address, compute_class, at):
            self.count = getattr(self, "count", 0) + 1
            return super().run_qmd(qmd_address, compute_class, at)
    built = images(SM90, [(B, A), (C, B)])
    data = np.zeros(0x1000, dtype=np.uint8)
    buffers = [Buffer("program", CODE, np.frombuffer(bytearray(built.program), np.uint8)),
               Buffer("qmd", QMD, np.frombuffer(bytearray(built.qmd), np.uint8)),
               Buffer("push", PUSH, np.frombuffer(bytearray(built.push), np.uint8)),
               Buffer("data", DATA, data), Buffer("semaphore", SEMAPHORE, np.zeros(64, np.uint8))]
    channel = Counting(Memory(buffers, [Resident("a", A, WORDS), Resident("b", B, WORDS), Resident("c", C, WORDS)]),
                       check_hazards=False, code_bytes=manifest_code_bytes(built.manifest), contracts=None)
    channel.run_segment(bytes(built.push[:len(encode.prologue(SM90).to_bytes())]), "prologue")
    channel.run_entry(built.gpfifo[:8], 0)
    assert channel.count == 2                       # the sent QMD and the one it schedules


# ---- forks: a QMD that starts two launches (sm_90's DEPENDENT_QMD_ENABLE(1)) ----
NAMES = "abcdef"
AT = {name: DATA + 0x100 * i for i, name in enumerate(NAMES)}      # six residents of 64 words
FORKED = [("b", "a"), ("c", "b"), ("d", "b"), ("e", "b"), ("f", "d"), ("b", "f")]      # (out, in)


def by_buffers(pairs):
    """The conflict rule on (out, in) pairs: one writes what the other reads or writes."""
    def conflicts(x, y):
        (ox, ix), (oy, iy) = pairs[x], pairs[y]
        return ox in (oy, iy) or oy == ix
    return conflicts


def forked_images(conflicts):
    word = 0x160 // 8
    region = Region("native-mask", bytes(assemble_kernel(KERNEL, SM90).code), 24, 64, 0, 0)
    launches = tuple(Launch("native-mask", 0, CODE, (1, 1, 1), (64, 1, 1), 0x200,
                            (ParameterPatch(word, AT[out]), ParameterPatch(word + 1, AT[source])))
                     for out, source in FORKED)
    program = -(-len(region.code) // 256) * 256 + 0x200 * len(launches)
    plan = WholeProgramPlan("program", 0x86, 0xC7C0, 0x806, CODE, QMD, PUSH, SEMAPHORE, 128, program, (region,),
                            launches, len(launches), 0x100 * len(launches),
                            (Submission("six", tuple(range(len(launches))), 0),), 1, 1)
    return encode.encode_images(plan, SM90, conflicts)


def run_forked(built):
    data = np.zeros(0x1000, dtype=np.uint8)
    data[:WORDS] = np.arange(WORDS, dtype=np.uint8)[::-1] + 7
    buffers = [Buffer("program", CODE, np.frombuffer(bytearray(built.program), np.uint8)),
               Buffer("qmd", QMD, np.frombuffer(bytearray(built.qmd), np.uint8)),
               Buffer("push", PUSH, np.frombuffer(bytearray(built.push), np.uint8)),
               Buffer("data", DATA, data), Buffer("semaphore", SEMAPHORE, np.zeros(64, np.uint8))]
    channel = Channel(Memory(buffers, [Resident(name, address, WORDS) for name, address in AT.items()]),
                      check_hazards=False, code_bytes=manifest_code_bytes(built.manifest), contracts=None)
    channel.run_segment(bytes(built.push[:len(encode.prologue(SM90).to_bytes())]), "prologue")
    channel.run_entry(built.gpfifo[:8], 0)
    return channel, data


def test_a_forked_qmd_starts_both_launches_and_the_join_waits():
    """b <- a; then c <- b and e <- b beside the chain d <- b, f <- d; b <- f joins them after a
    wait (it overwrites what c and e read).  The QMDs say so and the simulator, which refuses
    any two unordered launches that touch one word, runs them to the right values."""
    from bobc.sim import qmd_fields as independent
    built = forked_images(by_buffers(FORKED))
    assert [launch["schedules"] for launch in built.manifest["launches"]] == [[2, 1], [3], [4], [], [], []]
    record = built.qmd[:SM90.qmd_record_bytes]
    assert independent.read(record, "V04_00", "DEPENDENT_QMD_ENABLE(1)") == 1
    assert independent.read(record, "V04_00", "DEPENDENT_QMD1_POINTER") << 8 == QMD + SM90.qmd_record_bytes
    words = np.frombuffer(built.push, "<u4")
    assert ((words == SEND).sum(), (words == WAIT).sum()) == (2, 1)
    channel, data = run_forked(built)
    assert len(channel.log.launches) == 6
    a = np.frombuffer(data[:WORDS], "<u4")
    for name in "bcdef":
        at = AT[name] - DATA
        assert (np.frombuffer(data[at:at + WORDS], "<u4") == (a & 0xFF)).all(), name


def test_a_fork_the_footprints_wrongly_allow_is_caught_by_the_simulator():
    """Told that c <- b does not touch what b <- a writes, the encoder sends it beside b <- a:
    the simulator refuses the race."""
    honest = by_buffers(FORKED)
    built = forked_images(lambda x, y: False if {x, y} == {0, 1} else honest(x, y))
    with pytest.raises(UnorderedLaunches):
        run_forked(built)


def field(table: bytes, target, record: int, name: str) -> int:
    return qmd_fields.read(table[record * target.qmd_record_bytes:(record + 1) * target.qmd_record_bytes],
                           qmd_fields.MAJOR_VERSIONS[3 if target is SM86 else 4], name)


def test_a_dependent_launched_early_waits_on_its_parents_latch_and_sees_its_writes():
    """sm_90 (programmatic dependent launch, encode.ProgrammaticLaunch): the first QMD lets its
    dependent launch once its blocks have begun (PREEXIT) and arrives at a latch when its grid
    has ended; the dependent waits on that latch and opens with ACQBULK.  The channel runs both and
    the second reads what the first wrote."""
    built = images(SM90, [(B, A), (C, B)], launched=True)
    latch = field(built.qmd, SM90, 0, "ARRIVE_AT_LATCH_ID")
    assert [field(built.qmd, SM90, 0, name) for name in ("ENABLE_PROGRAM_PRE_EXIT", "ARRIVE_AT_LATCH_VALID",
                                                          "WAIT_ON_LATCH_VALID")] == [1, 1, 0]
    assert [field(built.qmd, SM90, 1, name) for name in (
        "WAIT_ON_LATCH_VALID", "WAIT_ON_LATCH_ID", "LATCH_ACQUIRE_INVALIDATE_SHADER_DATA_CACHE",
        "LATCH_ACQUIRE_INVALIDATE_TEXTURE_DATA_CACHE", "ENABLE_PROGRAM_PRE_EXIT", "ARRIVE_AT_LATCH_VALID")] == \
        [1, latch, 1, 1, 0, 0]
    data = run(SM90, built)
    assert len(run.channel.log.launches) == 2
    a = np.frombuffer(data[:WORDS], "<u4")
    assert (np.frombuffer(data[0x800:0x800 + WORDS], "<u4") == (a & 0xFF)).all()


def test_only_a_kernel_that_waits_first_is_launched_early():
    """Without the launch prologue (the kernel does not open with ACQBULK) no QMD launches its
    dependent early; sm_86's kernels have no prologue and its QMDs no latches."""
    plain = images(SM90, [(B, A), (C, B)])
    assert not any(field(plain.qmd, SM90, r, name) for r in (0, 1)
                   for name in ("ENABLE_PROGRAM_PRE_EXIT", "ARRIVE_AT_LATCH_VALID", "WAIT_ON_LATCH_VALID"))
    assert images(SM86, [(B, A), (C, B)], launched=True).program == images(SM86, [(B, A), (C, B)]).program


def test_a_launch_the_pushbuffer_also_sends_is_not_launched_early():
    """Launch 1 is launch 0's dependent in one submission and sent alone in another: a send would
    wait on a latch no grid arrives at, so its QMD waits on none and launch 0 starts it when it ends."""
    plan = three_launches([(B, A), (C, B), (A, C)], alone=1, launched=True)
    order = encode.plan_launch_order(plan)
    assert order.dependents == {0: (1,)}            # (1 is pinned: alone, it names no dependent)
    assert encode.programmatic_latches(plan, order, SM90) == {}
    built = encode.encode_images(plan, SM90)
    assert not any(field(built.qmd, SM90, r, name) for r in range(3)
                   for name in ("ENABLE_PROGRAM_PRE_EXIT", "ARRIVE_AT_LATCH_VALID", "WAIT_ON_LATCH_VALID"))
    run(SM90, built)


def test_a_launch_one_of_its_parents_starts_beside_another_is_not_launched_early():
    """Probe s37 orderfuzz finding 1.  Launch C = (c <- a) follows A = (a <- s) alone in one
    submission, and follows B = (b <- s) in another, where B's QMD also starts X = (x <- b)
    beside it (nothing after X needs x).  A QMD naming two dependents arrives at no latch, so a
    latch on C's QMD would hold C forever in B's submission: C waits on none, and Y = (y <- c),
    the only dependent of C's QMD wherever C runs, still starts early.  The channel runs both
    submissions (it refuses a QMD waiting on a latch its parent does not arrive at)."""
    names = "sabxcy"
    at = {name: DATA + 0x100 * i for i, name in enumerate(names)}
    pairs = [("a", "s"), ("b", "s"), ("x", "b"), ("c", "a"), ("y", "c")]        # A, B, X, C, Y
    word = 0x160 // 8
    region = Region("native-mask", bytes(assemble_kernel(KERNEL, SM90, launched=True).code), 24, 64, 0, 0)
    launches = tuple(Launch("native-mask", 0, CODE, (1, 1, 1), (64, 1, 1), 0x200,
                            (ParameterPatch(word, at[out]), ParameterPatch(word + 1, at[source])))
                     for out, source in pairs)
    program = -(-len(region.code) // 256) * 256 + 0x200 * len(launches)
    submissions = (Submission("after a", (0, 3, 4), 0), Submission("after b", (1, 2, 3, 4), 16))
    plan = WholeProgramPlan("program", 0x86, 0xC7C0, 0x806, CODE, QMD, PUSH, SEMAPHORE, 128, program, (region,),
                            launches, len(launches), 0x100 * len(launches), submissions, 2, 2)
    conflicts = by_buffers(pairs)
    order = encode.plan_launch_order(plan, conflicts, slots=2)
    assert order.dependents == {0: (3,), 1: (3, 2), 3: (4,)}
    assert set(encode.programmatic_latches(plan, order, SM90)) == {4}
    built = encode.encode_images(plan, SM90, conflicts)
    assert field(built.qmd, SM90, 3, "WAIT_ON_LATCH_VALID") == 0
    assert field(built.qmd, SM90, 1, "ARRIVE_AT_LATCH_VALID") == 0          # B names two: it arrives at none
    assert field(built.qmd, SM90, 4, "WAIT_ON_LATCH_ID") == field(built.qmd, SM90, 3, "ARRIVE_AT_LATCH_ID")
    data = np.zeros(0x1000, dtype=np.uint8)
    data[:WORDS] = np.arange(WORDS, dtype=np.uint8)[::-1] + 7
    buffers = [Buffer("program", CODE, np.frombuffer(bytearray(built.program), np.uint8)),
               Buffer("qmd", QMD, np.frombuffer(bytearray(built.qmd), np.uint8)),
               Buffer("push", PUSH, np.frombuffer(bytearray(built.push), np.uint8)),
               Buffer("data", DATA, data), Buffer("semaphore", SEMAPHORE, np.zeros(64, np.uint8))]
    channel = Channel(Memory(buffers, [Resident(name, address, WORDS) for name, address in at.items()]),
                      check_hazards=False, code_bytes=manifest_code_bytes(built.manifest), contracts=None)
    channel.run_segment(bytes(built.push[:len(encode.prologue(SM90).to_bytes())]), "prologue")
    for entry in range(2):
        channel.run_entry(built.gpfifo[8 * entry:8 * entry + 8], entry)
    assert len(channel.log.launches) == 7
    s = np.frombuffer(data[:WORDS], "<u4")
    for name in "abxcy":
        where = at[name] - DATA
        assert (np.frombuffer(data[where:where + WORDS], "<u4") == (s & 0xFF)).all(), name


def test_an_early_launch_that_could_run_beside_its_parent_is_refused():
    """What the channel holds an early launch to, each broken in the QMDs or the code."""
    built = images(SM90, [(B, A), (C, B)], launched=True)
    with pytest.raises(SimulationFault, match="launched before its parent's grid has ended .* waits on no latch"):
        run(SM90, built, qmd=set_field(built.qmd, SM90, 1, "WAIT_ON_LATCH_VALID", 0))
    with pytest.raises(SimulationFault, match="waits on latch 99 where its parent arrives at latch"):
        run(SM90, built, qmd=set_field(built.qmd, SM90, 1, "WAIT_ON_LATCH_ID", 99))
    with pytest.raises(SimulationFault, match="no grid launches it early .* hold it forever"):
        run(SM90, built, qmd=set_field(built.qmd, SM90, 0, "ENABLE_PROGRAM_PRE_EXIT", 0))
    early = dataclasses.replace(built, program=_without_prologue(built))   # the same QMDs, no ACQBULK
    with pytest.raises(SimulationFault, match="opens with NOP, not ACQBULK"):
        run(SM90, early)


def _without_prologue(built) -> bytes:
    """The program table with each ACQBULK of the kernel turned into a NOP (same length)."""
    program = bytearray(built.program)
    acquire = assemble("ACQBULK", SM90).code[:8]
    nop = assemble("NOP", SM90).code[:8]
    at = program.find(acquire)
    assert at >= 0
    while at >= 0:
        program[at:at + 8] = nop
        at = program.find(acquire, at + 16)
    return bytes(program)


def test_bobc_dump_shows_each_latch():
    """decode.lines (what `bobc dump` prints) names the latch a parent arrives at and the one its
    early dependent waits on, from the QMDs' own fields."""
    from bobc.nvidia import decode
    built = images(SM90, [(B, A), (C, B)], launched=True)
    found = {line.key: line for line in decode.lines(built)}
    latch = field(built.qmd, SM90, 0, "ARRIVE_AT_LATCH_ID")
    assert found["launch[0].arrives_at_latch"].value == latch
    assert "starts when its last block exits" in found["launch[0].arrives_at_latch"].note
    assert found["launch[1].waits_on_latch"].value == latch
    assert "launch[1].arrives_at_latch" not in found and "launch[0].waits_on_latch" not in found
    plain = {line.key for line in decode.lines(images(SM90, [(B, A), (C, B)]))}
    assert not any(key.endswith(("arrives_at_latch", "waits_on_latch")) for key in plain)


def test_a_launchs_words_are_each_counted_once_in_order():
    """LaunchAccesses.sets: every word a launch touched, sorted, once (np.unique's answer, by a
    sort rather than its hashing), whatever the width, order and repetition of the accesses."""
    from bobc.sim.memory import LaunchAccesses
    rng = np.random.default_rng(7)
    accesses = LaunchAccesses()
    assert [s.size for s in accesses.sets()] == [0, 0]
    expected = {"read": [], "write": []}
    for _ in range(40):
        kind = "read" if rng.random() < 0.5 else "write"
        size = int(rng.choice([1, 2, 4, 8, 16]))
        addresses = (0x7F00_0000_0000 + rng.integers(0, 4096, 32) * size).astype(np.uint64)
        getattr(accesses, kind)(addresses, size)
        first = addresses // 4
        expected[kind].append((first[:, None] + np.arange(max(1, size // 4), dtype=np.uint64)).ravel())
    for got, kind in zip(accesses.sets(), ("read", "write")):
        np.testing.assert_array_equal(got, np.unique(np.concatenate(expected[kind])))
        assert got.dtype == np.uint64
