"""The simulator's launch-order check (bobc.sim.channel, docs/simulator.md): the GPU may run a
grid while the one before it still runs unless a WAIT_FOR_IDLE stands between them, so two
launches of one segment that touch the same word, one writing it, are refused when nothing
orders them, and pass when bobc's encoder ordered them.

Two launches of tests/native/kernels/native-mask.sass (out[t] = in[t] & 0xff, 64 words) in one
submission, encoded by bobc.nvidia.encode, run by the channel from the images."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bobc.nvidia import encode
from bobc.plan.model import Launch, ParameterPatch, Region, Submission, WholeProgramPlan
from bobc.sass import assemble_kernel
from bobc.sim.channel import Channel
from bobc.sim.faults import UnorderedLaunches
from bobc.sim.memory import Buffer, Memory, Resident
from bobc.targets import SM86, SM90

KERNEL = Path(__file__).resolve().parents[1] / "native" / "kernels" / "native-mask.sass"
CODE, QMD, PUSH, DATA, SEMAPHORE = 0x200000000, 0x200100000, 0x200200000, 0x200300000, 0x200400000
WORDS = 256                                         # 64 u32 words each
A, B, C = DATA, DATA + 0x400, DATA + 0x800          # three residents
WAIT = 0x80002044                                   # IMMD WAIT_FOR_IDLE, subchannel 1 (by hand: see test_images_encode)
NOP = 0x80002040                                    # IMMD NO_OPERATION, subchannel 1: the same length, no wait


def images(target, pairs):
    """The encoded images of one submission launching native-mask once per (out, in) pair."""
    word = 0x160 // 8                               # plans are written in the sm_86 layout (bobc.targets)
    region = Region("native-mask", bytes(assemble_kernel(KERNEL, target).code), 24, 64, 0, 0)
    launches = tuple(Launch("native-mask", 0, CODE, (1, 1, 1), (64, 1, 1), 0x200,
                            (ParameterPatch(word, out), ParameterPatch(word + 1, source)))
                     for out, source in pairs)
    program = -(-len(region.code) // 256) * 256 + 0x200 * len(launches)   # code, then a parameter block a launch
    plan = WholeProgramPlan("program", 0x86, 0xC7C0, 0x806, CODE, QMD, PUSH, SEMAPHORE, 128,
                            program, (region,), launches, len(launches), 0x100 * len(launches),
                            (Submission("pair", tuple(range(len(launches))), 0),), 1, 1)
    return encode.encode_images(plan, target)


def run(target, built, push=None, order=True):
    """The prologue, then the submission's ring entry; the data words as the launches left them."""
    data = np.zeros(0x1000, dtype=np.uint8)
    data[:WORDS] = np.arange(WORDS, dtype=np.uint8)[::-1]
    push = bytearray(built.push if push is None else push)
    buffers = [Buffer("program", CODE, np.frombuffer(bytearray(built.program), np.uint8)),
               Buffer("qmd", QMD, np.frombuffer(bytearray(built.qmd), np.uint8)),
               Buffer("push", PUSH, np.frombuffer(push, np.uint8)),
               Buffer("data", DATA, data), Buffer("semaphore", SEMAPHORE, np.zeros(64, np.uint8))]
    residents = [Resident("a", A, WORDS), Resident("b", B, WORDS), Resident("c", C, WORDS)]
    channel = Channel(Memory(buffers, residents), check_hazards=False, check_order=order)
    prologue = len(encode.prologue(target).to_bytes())
    channel.run_segment(bytes(push[:prologue]), "prologue")
    channel.run_entry(built.gpfifo[:8], 0)
    return data


def without_waits(built) -> bytes:
    words = np.frombuffer(built.push, "<u4").copy()
    assert (words == WAIT).sum() >= 1
    words[words == WAIT] = NOP
    return words.tobytes()


@pytest.mark.parametrize("target", (SM86, SM90), ids=lambda t: t.name)
def test_launches_the_encoder_ordered_run_and_the_second_sees_the_first(target):
    built = images(target, [(B, A), (C, B)])        # b = a & 0xff, then c = b & 0xff
    data = run(target, built)
    a = np.frombuffer(data[:WORDS], "<u4")
    assert (np.frombuffer(data[0x800:0x800 + WORDS], "<u4") == (a & 0xFF)).all()


@pytest.mark.parametrize("target", (SM86, SM90), ids=lambda t: t.name)
def test_a_read_of_what_an_unordered_launch_wrote_is_refused(target):
    built = images(target, [(B, A), (C, B)])
    with pytest.raises(UnorderedLaunches) as caught:
        run(target, built, without_waits(built))
    message = caught.value.message
    assert "reads the word at 0x200300400 (in b, 0 bytes in)" in message, message
    assert "wrote before it" in message and "WAIT_FOR_IDLE" in message


def test_a_write_over_what_an_unordered_launch_reads_is_refused():
    built = images(SM90, [(B, A), (A, C)])           # the second overwrites what the first reads
    with pytest.raises(UnorderedLaunches) as caught:
        run(SM90, built, without_waits(built))
    assert "writes the word at 0x200300000 (in a, 0 bytes in)" in caught.value.message
    assert "read before it" in caught.value.message


def test_a_write_over_what_an_unordered_launch_wrote_is_refused():
    built = images(SM90, [(B, A), (B, C)])
    with pytest.raises(UnorderedLaunches) as caught:
        run(SM90, built, without_waits(built))
    assert "writes the word at 0x200300400 (in b, 0 bytes in)" in caught.value.message
    assert "wrote before it" in caught.value.message


def test_unordered_launches_on_disjoint_words_and_reads_of_the_same_words_pass():
    built = images(SM90, [(B, A), (C, A)])           # both read a, each writes its own
    data = run(SM90, built, without_waits(built))
    a = np.frombuffer(data[:WORDS], "<u4")
    for at in (0x400, 0x800):
        assert (np.frombuffer(data[at:at + WORDS], "<u4") == (a & 0xFF)).all()


def test_the_check_can_be_turned_off():
    built = images(SM90, [(B, A), (C, B)])
    run(SM90, built, without_waits(built), order=False)
