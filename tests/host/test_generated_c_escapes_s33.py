"""Plan text never becomes C of its own in the generated host (probe s33 canalyze): a host
identity holding `*/` went unescaped into the source's header comment (a certified plan either
failed in gcc, "this is a bobc bug", or put a constructor into the host that ran before main),
and a buffer name holding `"` went unescaped into a C string literal.  Both are plan bytes the
host carries as data only."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INJECTED = b'x */ __attribute__((constructor)) static void injected(void) { __builtin_exit(42); } /*'


def _plan(tmp_path: Path, identity: bytes | None = None, buffer: bytes | None = None) -> Path:
    folder = tmp_path / "plan"
    shutil.copytree(REPO / "examples/linear_regression/LinReg", folder / "LinReg")
    module = folder / "LinReg/Build/NativeHost.bob"
    text = module.read_bytes()
    if identity is not None:
        assert text.count(b'b"linreg-native-host-v1"') == 1
        text = text.replace(b'b"linreg-native-host-v1"', b'b"' + identity.replace(b'"', b'\\"') + b'"')
    if buffer is not None:
        assert text.count(b'(lrBuffer b"arena"') == 1
        text = text.replace(b'(lrBuffer b"arena"', b'(lrBuffer b"' + buffer.replace(b'"', b'\\"') + b'"')
    module.write_bytes(text)
    return module


def _build(module: Path, output: Path) -> subprocess.CompletedProcess:
    environment = dict(os.environ, BOBC_CACHE_DIR="off")
    return subprocess.run([sys.executable, "-m", "bobc", "build", str(module), "--target", "sm_90", "-o", str(output)],
                          capture_output=True, text=True, env=environment, timeout=600)


def test_an_identity_holding_a_comment_end_builds_a_host_that_runs_only_the_runtime(tmp_path):
    module = _plan(tmp_path, identity=INJECTED)
    host = tmp_path / "host"
    built = _build(module, host)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(host), "--help"], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, (ran.returncode, ran.stderr)      # 42: the plan's constructor ran
    assert "usage" in ran.stdout.lower()


def test_a_buffer_name_holding_a_quote_builds(tmp_path):
    module = _plan(tmp_path, buffer=b'ar"ena')
    built = _build(module, tmp_path / "host")
    assert built.returncode == 0, built.stderr


def test_comment_text_cannot_close_or_open_a_comment():
    from bobc.host.generate import c_comment

    for text in (b"*/", b"/*", b"a*/b", b"**//", b"/*/", INJECTED, bytes(range(256))):
        inside = c_comment(text)
        assert "*/" not in inside and "/*" not in inside
        assert all(0x20 <= ord(c) < 0x7F for c in inside)
    assert c_comment("Bob.Build/NativeHost") == "Bob.Build/NativeHost"
