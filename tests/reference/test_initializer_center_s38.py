"""A SplitMix64 initializer's center (probe s38 newmodel3, finding 1).  Element i of a fresh chunk is
(u - center) / denominator with u = z_i >> shift, the difference taken as a signed 64-bit integer
(runtime_c/host_runtime.c rt_init_chunk; bobc.reference.host.fresh_payload).  A center past 2^63 - 1
was certified, then `bobc run --reference` died with NumPy's OverflowError traceback while the C host's
int64_t difference overflowed; now the certifier refuses it by name (docs/limits.md), and the largest
center it accepts gives the exact values, computed here with Python's integers."""
from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "linear_regression"
MASK = (1 << 64) - 1
SEED = b"center-probe"


def _plan(tmp_path: Path, shift: int, center: int, denominator: int) -> Path:
    root = tmp_path / "plan"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__"))
    host = root / "LinReg" / "Build" / "NativeHost.bob"
    text = host.read_text()
    zero = "(constructor NvidiaPlanHostInitializer NvidiaPlanHostInitZero)"
    assert text.count(zero) == 1
    host.write_text(text.replace(zero, f'(constructor NvidiaPlanHostInitializer NvidiaPlanHostInitSplitMix64 '
                                       f'b"{SEED.decode()}" {shift} {center} {denominator})'))
    return host


def _bobc(*args, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def _exact(count: int, shift: int, center: int, denominator: int) -> np.ndarray:
    """docs/formats.md's generator over FNV-1a-64 of the seed, in Python integers: no int64 anywhere."""
    state = 0xcbf29ce484222325
    for byte in SEED:
        state = ((state ^ byte) * 0x100000001b3) & MASK
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        out.append(float((z >> shift) - center) / float(denominator))
    return np.array(out, np.float64).astype(np.float32)


def _predict(plan, tmp_path):
    """`bobc run PLAN predict --reference` over a three-record input made by the example's own maker."""
    sys.path.insert(0, str(EXAMPLE))
    try:
        import make_record
    finally:
        sys.path.remove(str(EXAMPLE))
    (tmp_path / "record.bin").write_bytes(make_record.record_bytes(*make_record.make(3)))
    return _bobc("run", plan, "predict", "--reference", "--input", "record.bin", "--checkpoint-out", "c.bin",
                 "--predictions", "p.bin", "--result", "r.bin", cwd=tmp_path)


def test_a_center_past_int64_is_refused_by_name_not_a_traceback(tmp_path):
    plan = _plan(tmp_path, 1, 2 ** 63, 2 ** 63)
    checked = _bobc("check", plan, cwd=tmp_path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "initializer (splitmix64) center is 9,223,372,036,854,775,808: outside 0..9,223,372,036,854,775,807" \
        in checked.stderr
    assert "Traceback" not in checked.stderr
    ran = _predict(plan, tmp_path)
    assert ran.returncode == 1, ran.stderr
    assert "Traceback" not in ran.stderr and "center" in ran.stderr
    assert not (tmp_path / "c.bin").exists()


@pytest.mark.parametrize("shift, center, denominator", [(1, 2 ** 63 - 1, 2 ** 63), (40, 8388608, 16777216)])
def test_an_accepted_center_gives_the_exact_fresh_values(tmp_path, shift, center, denominator):
    plan = _plan(tmp_path, shift, center, denominator)
    checked = _bobc("check", plan, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    ran = _predict(plan, tmp_path)
    assert ran.returncode == 0, ran.stderr
    envelope = (tmp_path / "c.bin").read_bytes()
    header, = struct.unpack_from("<I", envelope, 8)
    payload, = struct.unpack_from("<Q", envelope, 24)
    fresh = np.frombuffer(envelope, "<f4", payload // 4, header)
    assert fresh.tobytes() == _exact(payload // 4, shift, center, denominator).tobytes()
