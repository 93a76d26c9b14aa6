"""The fills and initializers a host writes before it trains, evaluated by every copy there is, at
their edges (probe s41 fillunify).

A SplitMix64 initializer's chunk is computed by runtime_c/host_runtime.c rt_init_chunk (the C hosts:
plan_host.c and native_request.c) and in Python by bobc.reference.host.fresh_payload (the plan host's
reference runner and the simulator) and bobc.reference.native_request.fresh_payload (a native
request's).  A scalar fill's value is computed by runtime_c/plan_fill.c and in Python by
bobc.plan.host.Fill.encode (the reference host) and bobc.sim.invocation.fill_bytes (the simulator).

The expected initializer bytes come from neither: `documented_stream` below is docs/formats.md's
generator ("Fresh initialization") and docs/host-steps.md's element formula written out with Python
integers (exact, masked to 64 bits) and one float division, packed with struct.  Every copy, the C
one compiled here with a small driver, must give exactly those bytes."""
from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from bobc.native.request import FRESH_SPLITMIX64, FRESH_ZERO, Initializer as RequestInitializer
from bobc.plan.host import Fill, Scalar
from bobc.reference import host as reference_host
from bobc.reference import native_request
from bobc.sim.host_adapter import HostFill
from bobc.sim.invocation import fill_bytes

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))      # tests/: the shared C oracle
import plan_fill_driver  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
U64 = (1 << 64) - 1

INIT_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host_runtime.h"
/* per stdin line: kind seed-hex ("-" for none) shift center denominator bytes; prints the chunk as hex
   (bytes rt_init_chunk leaves alone stay 0xab) */
static int hex(char c) { return c <= '9' ? c - '0' : (c | 32) - 'a' + 10; }
int main(void)
{
    static char text[8192], seed[4096];
    int kind;
    unsigned shift;
    unsigned long long center, denominator, bytes;
    while (scanf("%d %8191s %u %llu %llu %llu", &kind, text, &shift, &center, &denominator, &bytes) == 6) {
        size_t n = strcmp(text, "-") ? strlen(text) / 2 : 0;
        for (size_t i = 0; i < n; i++)
            seed[i] = (char)(hex(text[2 * i]) * 16 + hex(text[2 * i + 1]));
        seed[n] = 0;
        rt_initializer init = { kind, seed, shift, center, denominator };
        unsigned char *p = malloc(bytes + 1);
        memset(p, 0xab, bytes + 1);
        rt_init_chunk(&init, p, bytes);
        for (unsigned long long i = 0; i < bytes; i++)
            printf("%02x", p[i]);
        printf("\n");
        free(p);
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def c_chunks(tmp_path_factory):
    """rt_init_chunk, compiled: chunks([(kind, seed, shift, center, denominator, bytes)]) -> bytes each."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("needs a C compiler (the C host is built with one)")
    folder = tmp_path_factory.mktemp("init-chunk")
    (folder / "driver.c").write_text(INIT_DRIVER)
    runtime = REPO / "runtime_c"
    made = subprocess.run([cc, "-std=c11", "-O1", "-D_DEFAULT_SOURCE", "-ffunction-sections", "-Wl,--gc-sections",
                           f"-I{runtime}", str(folder / "driver.c"), str(runtime / "host_runtime.c"),
                           str(runtime / "host_io.c"), "-lm", "-o", str(folder / "driver")],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr

    def chunks(cases):
        lines = "".join(f"{kind} {seed.hex() or '-'} {shift} {center} {denominator} {size}\n"
                        for kind, seed, shift, center, denominator, size in cases)
        said = subprocess.run([str(folder / "driver")], input=lines, capture_output=True, text=True, check=True)
        return [bytes.fromhex(line) for line in said.stdout.splitlines()]
    return chunks


def documented_stream(seed: bytes, shift: int, center: int, denominator: int, count: int) -> bytes:
    """docs/formats.md: state = FNV-1a-64(seed) (offset basis 0xcbf29ce484222325, prime 0x100000001b3);
    per element state += 0x9E3779B97F4A7C15, z mixed by the two multiplies and three xor-shifts;
    docs/host-steps.md: (binary32)((binary64)((z >> shift) - center) / denominator), the difference
    a signed 64-bit integer (docs/limits.md's bounds keep it there)."""
    state = 0xcbf29ce484222325
    for byte in seed:
        state = ((state ^ byte) * 0x100000001b3) & U64
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & U64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & U64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & U64
        z ^= z >> 31
        difference = (z >> shift) - center
        assert -(1 << 63) <= difference < (1 << 63)
        out.append(struct.pack("<f", float(difference) / float(denominator)))
    return b"".join(out)


SEEDS = [b"", b"bob-seed-v1", b"\xff\x80\x01", b"x" * 300]
# docs/limits.md's bounds: shift 1..63, center 0..2^63 - 1, denominator 1..2^64 - 1
SHAPES = [(1, 0, 1), (63, 0, 1), (40, 8388608, 838860800), (40, 8388608, 16777216), (11, 1 << 62, 3),
          (1, (1 << 63) - 1, U64), (63, (1 << 63) - 1, 1), (32, 12345, (1 << 53) + 1), (20, 0, 1 << 63)]
CASES = [(seed, *shape) for seed in SEEDS for shape in SHAPES]
COUNT = 33


def plan_with(chunk_bytes: int, initializers) -> SimpleNamespace:
    return SimpleNamespace(checkpoint=SimpleNamespace(chunk_bytes=chunk_bytes, payload_bytes=chunk_bytes * len(initializers)),
                           host=SimpleNamespace(initializers=tuple(initializers)))


def request_with(chunk_bytes: int, payload_bytes: int, fresh) -> SimpleNamespace:
    return SimpleNamespace(contract=SimpleNamespace(chunk_bytes=chunk_bytes, payload_bytes=payload_bytes),
                           fresh=list(fresh))


@pytest.mark.parametrize("seed, shift, center, denominator", CASES)
def test_a_splitmix64_chunk_is_the_documented_stream_in_every_copy(c_chunks, seed, shift, center, denominator):
    expected = documented_stream(seed, shift, center, denominator, COUNT)
    plan_init = SimpleNamespace(kind="splitmix64", seed=seed, shift=shift, center=center, denominator=denominator)
    request_init = RequestInitializer(FRESH_SPLITMIX64, seed, shift, center, denominator)
    assert reference_host.fresh_payload(plan_with(4 * COUNT, [plan_init])) == expected
    assert native_request.fresh_payload(request_with(4 * COUNT, 4 * COUNT, [request_init])) == expected
    assert c_chunks([(2, seed, shift, center, denominator, 4 * COUNT)]) == [expected]


def test_zero_chunks_and_zero_lengths(c_chunks):
    """A zero initializer's chunk is zeros; a chunk of 0 bytes (a payload of none) is empty."""
    zero = SimpleNamespace(kind="zero")
    assert reference_host.fresh_payload(plan_with(12, [zero, zero])) == bytes(24)
    assert native_request.fresh_payload(request_with(12, 24, [RequestInitializer(FRESH_ZERO)] * 2)) == bytes(24)
    assert native_request.fresh_payload(request_with(4, 0, [RequestInitializer(FRESH_SPLITMIX64, b"s", 40, 0, 1)])) == b""
    assert c_chunks([(1, b"", 1, 0, 1, 12), (2, b"s", 40, 0, 1, 0)]) == [bytes(12), b""]


@pytest.mark.parametrize("payload, chunk", [(6, 4), (7, 8), (10, 3), (1, 1), (9, 4), (13, 5)])
def test_a_native_requests_tails_hold_whole_elements_then_zeros(c_chunks, payload, chunk):
    """native_request.c fresh_payload: chunk i from byte i * chunk, the last a tail; each holds its
    size // 4 elements (rt_init_chunk given size & ~3 bytes), the bytes past them zeros, and the
    chunks past the initializers' list zeros too."""
    seeds = [b"a", b"b", b"c"]
    expected = bytearray(payload)
    for i, seed in enumerate(seeds):
        start = i * chunk
        if start >= payload:
            break
        elements = min(chunk, payload - start) // 4
        stream = documented_stream(seed, 40, 8388608, 838860800, elements)
        assert c_chunks([(2, seed, 40, 8388608, 838860800, 4 * elements)]) == [stream]
        expected[start:start + 4 * elements] = stream
    fresh = [RequestInitializer(FRESH_SPLITMIX64, seed, 40, 8388608, 838860800) for seed in seeds]
    assert native_request.fresh_payload(request_with(chunk, payload, fresh)) == bytes(expected)


def test_rt_init_chunk_leaves_the_bytes_past_its_elements_alone(c_chunks):
    """rt_init_chunk over 10 bytes writes 2 elements; the 2 bytes past them are the caller's (the plan
    host never gives it such a chunk: bobc check refuses a chunk of no whole binary32 elements)."""
    [chunk] = c_chunks([(2, b"s", 40, 8388608, 838860800, 10)])
    assert chunk == documented_stream(b"s", 40, 8388608, 838860800, 2) + b"\xab\xab"


# ---- scalar fills: the reference host's Fill.encode and the simulator's fill_bytes, against C ----

def tree(terms) -> Scalar:
    stack: list[Scalar] = []
    for op, value in terms:
        if op in ("constant", "step"):
            stack.append(Scalar(op, (), float(value)))
        elif op == "sqrt":
            stack.append(Scalar(op, (stack.pop(),)))
        else:
            b, a = stack.pop(), stack.pop()
            stack.append(Scalar(op, (a, b)))
    return stack[0]


@pytest.fixture(scope="module")
def c_fill(tmp_path_factory):
    return plan_fill_driver.compiled(tmp_path_factory.mktemp("plan-fill"))


FILLS = [
    ("binary32", 0, 0, [("constant", -3.4028234663852886e38), ("constant", 2.0), ("multiply", 0.0)]),  # -inf
    ("binary32", 0, 0, [("constant", 3.4028235677973366e38)]),               # rounds up to binary32's inf
    ("binary32", 0, 0, [("constant", 1e-46)]),                                # below binary32's least: 0
    ("binary32", 0, 0, [("constant", -1e-46)]),                               # -0
    ("binary32", 0, 0, [("constant", 0.0), ("constant", -1.0), ("multiply", 0.0)]),
    ("binary32", 0, 0, [("constant", -0.0), ("sqrt", 0.0)]),                  # sqrt(-0) is -0
    ("binary32", 0, 0, [("constant", 1.0), ("constant", -0.0), ("divide", 0.0)]),  # -inf
    ("binary32", U64, U64, [("step", 0.0)]),                                  # t = 2^65 - 2, exact then rounded
    ("binary32", 0, 0, [("constant", 0.8999999761581421), ("step", 0.0), ("power", 0.0)]),  # 0.9f^0 = 1
    ("binary32", 4, 0, [("constant", 2.0), ("step", 0.0), ("power", 0.0)]),
    ("word32", 0, 0, [("constant", 4294967295.0)]),
    ("word32", 0, 0, [("constant", 4294967295.5)]),                           # refused
    ("word32", 4294967295, 0, [("step", 0.0)]),
    ("word32", 4294967295, 1, [("step", 0.0)]),                               # 2^32: refused
    ("word32", 0, 0, [("constant", -0.0)]),
    ("word32", 0, 0, [("constant", 3.0), ("constant", 20.0), ("power", 0.0)]),   # 3486784401
    ("word32", 0, 0, [("constant", 0.0), ("constant", 0.0), ("divide", 0.0)]),   # NaN: refused
]


def simulator_says(encoding, input_step, step, terms) -> str:
    from bobc.sim.faults import HostStepFault

    try:
        return fill_bytes(HostFill(0, step, encoding, tuple(terms), "n"), input_step).hex()
    except HostStepFault as refused:
        return f"{plan_fill_driver.REFUSED}{refused.message}"


def reference_says(encoding, input_step, step, terms) -> str:
    from bobc.plan.host import FillValueError

    try:
        return Fill(0, 0, step, encoding, tree(terms)).encode(input_step + step).hex()
    except FillValueError as refused:
        return f"{plan_fill_driver.REFUSED}{refused}"


@pytest.mark.parametrize("encoding, input_step, step, terms", FILLS)
def test_a_fill_is_the_c_hosts_in_the_reference_and_the_simulator(c_fill, encoding, input_step, step, terms):
    said = c_fill(encoding, input_step, step, terms)
    assert reference_says(encoding, input_step, step, terms) == said
    assert simulator_says(encoding, input_step, step, terms) == said


# ---- a fill's power is the C library's pow, not NumPy's ----

# C99 Annex F.9.4.4, which glibc's pow follows: pow(+-0, y) is +0 for y > 0 not an odd integer, and
# pow(-inf, y) is +inf for y > 0 not an odd integer; binary32 +0 is 00000000, +inf 0000807f
# little-endian.  NumPy's np.power gave -0.0 (00000080) and a NaN (probe s41 fillunify).
POWER_EDGES = [
    ([("constant", 0.0), ("constant", -1.0), ("multiply", 0.0), ("constant", 0.5), ("power", 0.0)], "00000000"),
    ([("constant", -1e300), ("constant", 1e300), ("multiply", 0.0), ("constant", 0.5), ("power", 0.0)], "0000807f"),
]


@pytest.mark.parametrize("terms, annex_f", POWER_EDGES)
def test_a_fills_power_at_its_special_cases_is_c99s(c_fill, terms, annex_f):
    assert c_fill("binary32", 0, 0, terms) == annex_f
    assert reference_says("binary32", 0, 0, terms) == annex_f
    assert simulator_says("binary32", 0, 0, terms) == annex_f


# beta^t for a binary32 beta and an integer t is an exact rational: Fraction's power, rounded once to
# binary64 by float(), is the correctly rounded value, which the C library's pow gives at these
# (AdamW's bias corrections: PlanHostAdamW's 1 - beta^t); NumPy's np.power was a unit in the last
# place off at each on an AVX-512 machine.
@pytest.mark.parametrize("beta, t", [(0.95, 4), (0.99, 5), (0.999, 23), (0.9, 56)])
def test_a_fills_power_is_the_c_librarys_correctly_rounded_one(beta, t):
    import numpy as np
    from fractions import Fraction

    from bobc.plan.host import scalar_value
    from bobc.sim.invocation import evaluate

    b = float(np.float32(beta))
    exact = float(Fraction(b) ** t)
    terms = (("constant", b), ("step", 0.0), ("power", 0.0))
    assert scalar_value(terms, t) == exact
    assert tree(terms).evaluate(t) == exact
    assert evaluate(HostFill(0, 0, "binary64", terms, "n"), t) == exact


# ---- a large chunk ----

def test_a_chunk_past_one_block_is_the_c_hosts_across_the_block_edges(c_chunks):
    """splitmix64_chunk draws its elements a block at a time: a chunk of 2 blocks and 3 elements is
    rt_init_chunk's, its elements at each block edge the documented stream's."""
    from bobc.reference.host import SPLITMIX64_BLOCK, splitmix64_chunk

    count = 2 * SPLITMIX64_BLOCK + 3
    ours = splitmix64_chunk(b"bob-seed-v1", 40, 8388608, 838860800, 4 * count)
    assert c_chunks([(2, b"bob-seed-v1", 40, 8388608, 838860800, 4 * count)]) == [ours]
    stream = documented_stream(b"bob-seed-v1", 40, 8388608, 838860800, SPLITMIX64_BLOCK + 2)
    edge = 4 * (SPLITMIX64_BLOCK - 1)
    assert ours[edge:edge + 12] == stream[edge:edge + 12]


def test_a_large_chunk_takes_about_its_own_size_to_draw():
    """docs/limits.md lets a payload be 1 GiB; the generator drawn whole took ten times the chunk in
    NumPy temporaries (160 MiB for a 16 MiB chunk, so some 10 GiB for the largest).  Now the output
    and its bytes (twice the chunk) and one block's temporaries; NumPy reports its arrays to
    tracemalloc."""
    import tracemalloc

    from bobc.reference.host import splitmix64_chunk

    size = 16 << 20
    tracemalloc.start()
    try:
        chunk = splitmix64_chunk(b"bob-seed-v1", 40, 8388608, 838860800, size)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(chunk) == size
    assert peak < 3 * size, f"{peak / 2 ** 20:.0f} MiB to draw a 16 MiB chunk"


# -- mutants6: what the cases above let pass (mutants of splitmix64_chunk / scalar_value)

def _first_draw(seed: bytes) -> int:
    """docs/formats.md's first z of `seed`'s stream, Python integers (as documented_stream)."""
    state = 0xcbf29ce484222325
    for byte in seed:
        state = ((state ^ byte) * 0x100000001b3) & U64
    z = (state + 0x9E3779B97F4A7C15) & U64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & U64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & U64
    return z ^ (z >> 31)


def test_the_difference_is_taken_in_64_bit_integers_before_binary64(c_chunks):
    """A center 3 below the first draw's z >> 1 (about 2^62): the signed 64-bit difference is exactly 3,
    so element 0 is 3.0 (docs/host-steps.md: "the difference a signed 64-bit integer").  Subtracting
    in binary64 (both operands rounded to multiples of 2^9 or more first, as NumPy does for a uint64
    less an int64) gives 0 or a multiple of 512, not 3."""
    u = _first_draw(b"s") >> 1
    assert u > 1 << 60
    element = reference_host.splitmix64_chunk(b"s", 1, u - 3, 1, 4)
    assert struct.unpack("<f", element) == (3.0,)
    assert c_chunks([(2, b"s", 1, u - 3, 1, 4)]) == [element]


def test_a_scalar_program_leaving_two_values_is_refused():
    # plan_fill.c eval_at: "a scalar program leaves N values" -- exactly one is the value
    from bobc.plan.host import ScalarProgramError, scalar_value
    with pytest.raises(ScalarProgramError, match="leaves 2 values, not one"):
        scalar_value([("constant", 1.0), ("constant", 2.0)], 0)
    with pytest.raises(ScalarProgramError, match="leaves 0 values, not one"):
        scalar_value([], 0)
