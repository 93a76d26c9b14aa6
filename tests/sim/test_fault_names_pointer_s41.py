"""A simulated access outside what a launch's contract declares names the declared pointer whose
bytes it lies in or nearest to, with that pointer's extent (probe-newuser5 s41: "in parameters,
768 bytes in" left a new user guessing which argument's extent was too small).

Expected values are worked by hand from examples/linear_regression: make_record.py's D = 7
features, so `4*hi[3]` (hi[3] = D) is 28 bytes; linreg-predict reads the bias at W + 4*D, which
is 0 bytes past the end of a 28-byte declaration of param 0."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from bobc.certify.footprints import Footprint

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "linear_regression"


def test_nearest_pointer_says_in_past_and_before():
    from bobc.certify.kernels import Argument

    a = Argument(0, "pointer", extent=16, access="read", what="A")
    b = Argument(1, "pointer", access="write", what="B", rule="4*lo[2]")
    footprint = Footprint([(0x100, 0x110)], [(0x200, 0x240)],
                          [(0x100, 0x110, a, None, 44, None), (0x200, 0x240, b, 3, 45, None)])
    assert footprint.nearest_pointer(0x104) == "param 0 (word 44, A: read 16 = 16 bytes) [0x100, 0x110), 4 bytes in"
    assert footprint.nearest_pointer(0x118) == ("param 0 (word 44, A: read 16 = 16 bytes) [0x100, 0x110), 8 bytes "
                                                "past its end")
    assert footprint.nearest_pointer(0x1f0) == ("param 1 batch 3 (word 45, B: write 4*lo[2] = 64 bytes) [0x200, 0x240), "
                                                "16 bytes before its start")
    assert Footprint([(0, 4)]).nearest_pointer(8) == ""


def test_a_short_extent_is_named_by_its_param_line(tmp_path):
    copy = tmp_path / "linreg"
    shutil.copytree(EXAMPLE / "LinReg", copy / "LinReg")
    sys.path.insert(0, str(EXAMPLE))
    try:
        import make_record
    finally:
        sys.path.remove(str(EXAMPLE))
    (tmp_path / "record.bin").write_bytes(make_record.record_bytes(*make_record.make(3)))
    kernel = copy / "LinReg" / "kernels" / "linreg-predict.sass"
    old = "//@ param 0 pointer read 4*hi[3]+4 the weights then the bias W"
    assert old in kernel.read_text()
    kernel.write_text(kernel.read_text().replace(old, "//@ param 0 pointer read 4*hi[3] the weights then the bias W"))
    line = 1 + kernel.read_text().splitlines().index("//@ param 0 pointer read 4*hi[3] the weights then the bias W")
    done = subprocess.run([sys.executable, "-m", "bobc", "sim", copy / "LinReg/Build/NativeHost.bob", "train",
                           "--target", "sm_86", "--input", "record.bin", "--checkpoint-out", "c.bin",
                           "--predictions", "p.bin", "--result", "r.bin"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 7, done.stderr
    # word 44: sm_86's parameters start at bank 0 byte 0x160 (bobc dump's parameter_base), 0x160 / 8 = 44
    assert (f"the nearest declared pointer: param 0 (word 44, the weights then the bias W: read 4*hi[3] = 28 bytes, "
            f"{kernel.relative_to(tmp_path)}:{line}) [") in done.stderr
    assert "), 0 bytes past its end)" in done.stderr
