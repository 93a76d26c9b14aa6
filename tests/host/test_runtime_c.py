"""runtime_c on the CPU: build it, run its C tests, and hold its generator,
plan fills and checkpoint envelope against independent NumPy / zlib code
written here from docs/formats.md."""
from __future__ import annotations

import os
import resource
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import make_runtime

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / "runtime_c"
TOOL = Path("rt_tool")          # in the run's runtime_c build folder, once `built` ran

# runtime_c/tests/rt_sample.h's synthetic plan, restated: 3 chunks of 12,345 binary32
# elements (chunk 0: SplitMix64 of "rt-sample-seed-7", u = z >> 43, (u - 2^20) / 52428800;
# chunk 1 zeros; chunk 2: "rt-sample-seed-9", z >> 41, (u - 2^22) / 419430400), 7 updates
# per invocation; a 258-byte record of 37 key/value pairs and 5 queries.
SEED = b"rt-sample-seed-7"
ELEMENTS = 12345
PAYLOAD = 3 * ELEMENTS * 4
UPDATES = 7


@pytest.fixture(scope="module", autouse=True)
def built(runtime_build):
    global TOOL
    run = make_runtime(runtime_build, "all")
    assert run.returncode == 0, run.stdout + run.stderr
    TOOL = runtime_build / "rt_tool"


def tool(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(TOOL), *map(str, args)], capture_output=True, text=True, **kw)


def test_make_test_passes(runtime_build):
    run = make_runtime(runtime_build, "test")
    assert run.returncode == 0, run.stdout + run.stderr
    assert " 0 failures" in run.stdout


def test_the_c_tests_write_in_a_folder_of_their_own_under_tmpdir_and_remove_it(runtime_build, tmp_path):
    """runtime_c/tests/test_host_runtime.c made its folder under /tmp whatever TMPDIR said, and
    removed it through a shell (`rm -rf '%s'`): now under TMPDIR, removed by nftw, so a TMPDIR with a
    quote in its name is left empty too (probe s37 leftovers finding 6).  A TMPDIR over 64 bytes is
    said and passed over for /tmp: the checks compare messages that show paths whole only up to
    128 bytes (rt_io_shown)."""
    import shutil
    import tempfile

    base = tempfile.gettempdir() if len(tempfile.gettempdir()) <= 40 else "/tmp"
    tmpdir = Path(tempfile.mkdtemp(prefix="rt'q-", dir=base))          # a quote in its name, at most 64 bytes
    try:
        run = subprocess.run([str(runtime_build / "test_host_runtime")], capture_output=True, text=True,
                             env={**os.environ, "TMPDIR": str(tmpdir)}, timeout=600)
        assert run.returncode == 0 and " 0 failures" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
        said = run.stdout + run.stderr
        assert f"{tmpdir}/bobcrt-test-" in said and "/tmp/bobcrt-test-" not in said.replace(str(tmpdir), ""), said[-2000:]
        assert list(tmpdir.iterdir()) == []
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    long = tmp_path / ("x" * 70)
    long.mkdir()
    run = subprocess.run([str(runtime_build / "test_host_runtime")], capture_output=True, text=True,
                         env={**os.environ, "TMPDIR": str(long)}, timeout=600)
    assert run.returncode == 0 and f"(TMPDIR {long} has over 64 bytes" in run.stdout, run.stdout[-2000:]
    assert list(long.iterdir()) == []


def _listing(folder: Path) -> list:
    return sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in folder.iterdir()) if folder.is_dir() else []


def test_make_in_a_folder_of_its_own_leaves_runtime_c_build_alone(runtime_build, tmp_path):
    """The tests build runtime_c in their run's folder (make's B, named absolutely): runtime_c/build,
    the checkout's, is not touched (two runs in one checkout raced there: "ar: unable to copy file
    'build/libbobcrt.a'"; probe s36 parallelsuites finding 2; `./$(B)/...` could not run an absolute B)."""
    assert REPO not in runtime_build.parents
    before = _listing(RUNTIME / "build")
    run = make_runtime(tmp_path / "b", "test")
    assert run.returncode == 0 and " 0 failures" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
    assert (tmp_path / "b" / "libbobcrt.a").is_file()
    assert _listing(RUNTIME / "build") == before


def test_static_link(runtime_build):
    run = make_runtime(runtime_build, "static")
    if run.returncode != 0 and "cannot find -lc" in run.stderr:
        pytest.skip("no static libc on this machine")
    assert run.returncode == 0, run.stderr


# ------------------------------------------------------------ initialization
def numpy_fresh(seed: bytes, count: int, shift: int = 43, center: int = 2 ** 20,
                denominator: float = 52428800.0) -> np.ndarray:
    """The documented generator, written independently with NumPy uint64 arithmetic."""
    h = 0xCBF29CE484222325
    for b in seed:
        h = ((h ^ b) * 0x100000001B3) & (2 ** 64 - 1)
    with np.errstate(over="ignore"):
        i = np.arange(1, count + 1, dtype=np.uint64)
        z = np.uint64(h) + i * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(shift)).astype(np.int64)
    return ((u - center).astype(np.float64) / denominator).astype(np.float32)


def test_initialization_matches_numpy_bit_for_bit():
    run = tool("init", ELEMENTS)
    assert run.returncode == 0, run.stderr
    bits = np.array([int(line.split()[1], 16) for line in run.stdout.splitlines()], dtype=np.uint32)
    expected = numpy_fresh(SEED, ELEMENTS).view(np.uint32)
    assert bits.shape == expected.shape
    assert np.array_equal(bits[:16], expected[:16]), "first values differ"
    assert np.array_equal(bits, expected)
    assert np.all(np.abs(bits.view(np.float32)) <= 0.02)


# ------------------------------------------------------------ fills
@pytest.mark.parametrize("t", [1, 2, 10])
def test_adamw_step_size_fill_matches_numpy(t):
    """alpha_t = (lr sqrt(1 - beta2^t)) / (1 - beta1^t) as a postfix fill (enum bobc_scalar_op:
    1 constant, 2 step, 4 subtract, 5 multiply, 6 divide, 7 power, 8 sqrt)."""
    lr, b1, b2 = (float(np.float32(x)) for x in (0.1, 0.9, 0.999))
    terms = [f"1:{lr.hex()}", f"1:{1.0.hex()}", f"1:{b2.hex()}", "2", "7", "4", "8", "5",
             f"1:{1.0.hex()}", f"1:{b1.hex()}", "2", "7", "4", "6"]
    run = tool("fill", t, "BINARY32", *terms)
    assert run.returncode == 0, run.stderr
    want = np.float32(np.float64(lr) * np.sqrt(1.0 - np.float64(b2) ** t) / (1.0 - np.float64(b1) ** t))
    assert int(run.stdout, 16) == int(np.array(want, dtype=np.float32).view(np.uint32))


def test_malformed_fill_is_refused():
    run = tool("fill", 1, "BINARY32", "3")
    assert run.returncode != 0 and "operands" in run.stderr


# ------------------------------------------------------------ envelope
CONTRACT = {"--schema": "test-schema", "--learner": "test-learner", "--data": "test-data", "--seed": SEED.decode()}


def python_envelope(step: int, payload: bytes, **ids) -> bytes:
    names = dict(schema=b"test-schema", learner=b"test-learner", data=b"test-data", seed=SEED)
    names.update(ids)
    idents = names["schema"] + names["learner"] + names["data"] + names["seed"]
    h = -(-(64 + len(idents)) // 16) * 16
    header = struct.pack("<8sIIQQQQ4I", b"BOBCENV1", h, 3, step, len(payload), len(payload) // 3, UPDATES,
                         *(len(names[k]) for k in ("schema", "learner", "data", "seed")))
    body = header + idents + bytes(h - 64 - len(idents)) + payload
    return body + struct.pack("<I", zlib.crc32(body)) + b"BOBCEND1"


def fresh_payload() -> bytes:
    return (numpy_fresh(SEED, ELEMENTS).astype("<f4").tobytes() + bytes(ELEMENTS * 4)
            + numpy_fresh(b"rt-sample-seed-9", ELEMENTS, 41, 2 ** 22, 419430400.0).astype("<f4").tobytes())


def test_envelope_written_by_c_equals_python(tmp_path):
    out = tmp_path / "ck.bin"
    run = tool("envelope-write", out, 17)
    assert run.returncode == 0, run.stderr
    assert out.read_bytes() == python_envelope(17, fresh_payload())
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_envelope_written_by_python_is_read_by_c(tmp_path):
    path = tmp_path / "ck.bin"
    path.write_bytes(python_envelope(5, fresh_payload()))
    run = tool("envelope-read", path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("ok step 5")


def test_corrupted_checkpoint_refused(tmp_path):
    data = bytearray(python_envelope(5, fresh_payload()))
    data[200] ^= 0x40
    path = tmp_path / "bad.bin"
    path.write_bytes(bytes(data))
    run = tool("envelope-read", path)
    assert run.returncode == 4
    assert "corrupted" in run.stderr and "bad.bin" in run.stderr


@pytest.mark.parametrize("cut", [0, 10, 63, 64, 1000, -1, -12])
def test_truncated_checkpoint_refused(tmp_path, cut):
    data = python_envelope(5, fresh_payload())
    path = tmp_path / "short.bin"
    path.write_bytes(data[:cut])
    run = tool("envelope-read", path)
    assert run.returncode == 4, run.stderr
    assert "short.bin" in run.stderr
    assert "truncated" in run.stderr or "not a checkpoint" in run.stderr


@pytest.mark.parametrize("part,override,expect", [
    ("schema", {"schema": b"other-schema"}, "schema"),
    ("learner", {"learner": b"sgd"}, "learner"),
    ("data", {"data": b"other-data"}, "data"),
    ("seed", {"seed": b"rt-sample-seed-8"}, "seed"),
])
def test_foreign_identity_refused_by_name(tmp_path, part, override, expect):
    path = tmp_path / "foreign.bin"
    path.write_bytes(python_envelope(5, fresh_payload(), **override))
    run = tool("envelope-read", path)
    assert run.returncode == 5, run.stderr
    assert "foreign checkpoint" in run.stderr and f"{expect} identity differs" in run.stderr


@pytest.mark.parametrize("option,value,expect", [
    ("--payload", PAYLOAD - 48, "payload bytes differ"),
    ("--chunk", ELEMENTS * 2, "chunk bytes differ"),
    ("--chunks", 2, "chunk count differs"),
    ("--updates", UPDATES + 1, "updates per invocation differ"),
])
def test_foreign_sizes_refused_by_name(tmp_path, option, value, expect):
    path = tmp_path / "ck.bin"
    assert tool("envelope-write", path, 1).returncode == 0
    run = tool("envelope-read", path, option, value)
    assert run.returncode == 5, run.stderr
    assert expect in run.stderr


def test_first_differing_part_is_named(tmp_path):
    path = tmp_path / "two.bin"
    path.write_bytes(python_envelope(5, fresh_payload(), data=b"x", seed=b"y"))
    run = tool("envelope-read", path)
    assert run.returncode == 5 and "data identity differs" in run.stderr


# ------------------------------------------------------------ atomic publish
def _limit_file_size():
    # SIGXFSZ keeps its default disposition (subprocess restores it before exec): the runtime
    # ignores it itself, so a write past the limit is refused, not a silent kill (probe s33
    # resources finding 4)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))


def test_failed_publish_leaves_old_file_and_no_partial(tmp_path):
    out = tmp_path / "ck.bin"
    out.write_bytes(b"previous checkpoint")
    run = subprocess.run([str(TOOL), "envelope-write", str(out), "3"], capture_output=True, text=True,
                         preexec_fn=_limit_file_size)
    assert run.returncode == 8, (run.returncode, run.stderr)
    assert "nothing was published" in run.stderr
    assert "File too large (the file size limit, ulimit -f, is 100000 bytes: raise it, then run again)" in run.stderr
    assert run.stderr.count("\n") == 1, run.stderr
    assert out.read_bytes() == b"previous checkpoint"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck.bin"]


def test_publish_into_missing_folder_fails_cleanly(tmp_path):
    run = tool("envelope-write", tmp_path / "missing" / "ck.bin", 3)
    assert run.returncode == 8
    assert "ck.bin" in run.stderr


# ------------------------------------------------------------ input record, CLI, no GPU
def record(values: bytes, queries=(3, 40, 0, 9, 17)) -> bytes:
    pairs = b"".join(bytes([k, values[k]]) for k in range(37))
    words = struct.pack("<37I", *values)
    return b"RTSAMPLE" + struct.pack("<Q", 3) + pairs + words + struct.pack("<5I", *queries)


def test_input_record_checks(tmp_path):
    values = bytes((5 * k + 2) % 41 for k in range(37))
    good = tmp_path / "in.rec"
    good.write_bytes(record(values))
    assert len(record(values)) == 258
    run = tool("input-check", good)
    assert run.returncode == 0 and run.stdout.strip() == "ok queries 3 40 0 9 17"
    bad = tmp_path / "bad.rec"
    for data, words in [(record(values)[:-1], "257 bytes"), (b"X" + record(values)[1:], "magic"),
                        (record(values, (3, 41, 0, 9, 17)), "query 1"),
                        (record(values[:36] + bytes([41])), "value word 36")]:
        bad.write_bytes(data)
        run = tool("input-check", bad)
        assert run.returncode == 3 and words in run.stderr and "bad.rec" in run.stderr


def test_cli_parser():
    run = tool("args", "train", "--input", "r", "--checkpoint-out", "o", "--predictions", "p", "--result", "s")
    assert run.returncode == 0 and run.stdout.startswith("op train input r checkpoint -")
    run = tool("args", "--help")
    assert run.returncode == 0 and "usage:" in run.stdout and "exit codes" in run.stdout
    run = tool("args", "predict", "--input", "r")
    assert run.returncode == 2 and "missing --checkpoint-out" in run.stderr


@pytest.mark.skipif(os.path.exists("/dev/nvidiactl"), reason="this machine has a GPU")
def test_no_gpu_says_so_with_its_exit_code():
    run = tool("gpu-open", "sm_90")
    assert run.returncode == 6
    assert "no GPU" in run.stderr and "/dev/nvidiactl" in run.stderr
