"""bobc's own messages (check, build, sim and run's compile stage) show a plan's bytes -- a launch's,
region's, phase's or submission's identity, a resident's or buffer's name, a kernel's name or
source -- by one rule (bobc.errors.shown_plan_text, docs/formats.md): printable ASCII without `"`
or `\\` as itself, anything else as the plan's byte-string literal that reads back to the same
bytes, cut past 128 bytes.  They quoted them raw: an identity holding a newline and ESC split an
error over lines and coloured the terminal, a 50 KB identity was quoted whole several times in one
line (probe s37 cinject finding 5, probe s37 quoting)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.errors import SHOWN_PLAN_BYTES, Span, shown_plan_text
from bobc.language.parse import decode_byte_string

REPO = Path(__file__).resolve().parents[1]
MODULE = "LinReg/Build/NativeHost.bob"
# the plan's own literal for L"\ */ %s, a newline, ESC [32m, G
HOSTILE = rb'b"L\"\\ */ %s\n\x1b[32mG"'
SHOWN = r'b"L\"\\ */ %s\n\x1b[32mG"'
CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")      # any control byte but a line's end


def _read_back(shown: str) -> bytes:
    return decode_byte_string(shown, Span("<test>", 1, 1))


@pytest.mark.parametrize("raw", [b"L\"\\ */ %s\n\x1b[32mG", b"\xff\xfe", b"\x00\x01\x7f", b"tab\there",
                                 b"a\rb", b'b"x"', b"\\x1b", "é".encode()])
def test_a_value_not_plain_text_is_the_literal_that_reads_back_to_it(raw):
    shown = shown_plan_text(raw)
    assert "\n" not in shown and not CONTROLS.search(shown), shown
    assert _read_back(shown) == raw                       # the parser is the oracle: which byte it was


def test_plain_text_is_itself_and_cannot_be_taken_for_a_literal():
    assert shown_plan_text("linreg-sgd") == "linreg-sgd"
    assert shown_plan_text(b"objective:mse|lr=1/20") == "objective:mse|lr=1/20"
    assert shown_plan_text(b"") == 'b""'                  # an empty identity is seen
    assert shown_plan_text(b'say "x"') == r'b"say \"x\""'   # a bare value never holds a quote


def test_a_long_value_is_cut_with_its_length():
    shown = shown_plan_text(b"A" * 50_000)
    assert shown == 'b"' + "A" * (SHOWN_PLAN_BYTES // 2) + '"...(50,000 bytes)'
    assert shown_plan_text(b"A" * SHOWN_PLAN_BYTES) == "A" * SHOWN_PLAN_BYTES
    cut = shown_plan_text(b"\x1b" * 20_000)
    assert _read_back(cut[:cut.index('"...') + 1]) == b"\x1b" * (SHOWN_PLAN_BYTES // 2)


def _plan(tmp_path: Path, edits) -> Path:
    folder = tmp_path / "plan"
    shutil.copytree(REPO / "examples/linear_regression/LinReg", folder / "LinReg")
    module = folder / MODULE
    text = module.read_bytes()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    module.write_bytes(text)
    return module


def _check(module: Path) -> str:
    environment = dict(os.environ, BOBC_CACHE_DIR="off")
    done = subprocess.run([sys.executable, "-m", "bobc", "check", str(module)], capture_output=True,
                          env=environment, timeout=600, cwd=module.parents[2])
    assert done.returncode == 1, done.stdout
    return done.stderr.decode("utf-8", "surrogateescape")


# (the plan's bytes replaced, the hostile value's place in the message) -- a sample of the places
PLACES = {
    "launch identity": ([(b'(lrLaunch b"linreg-sgd"', b"(lrLaunch " + HOSTILE)],
                        f"launch 2 ({SHOWN}) names identity {SHOWN}, which no region has"),
    "region identity": ([(b'(lrRegion b"linreg-sgd"', b"(lrRegion " + HOSTILE)],
                        f"launch 2 (linreg-sgd) names identity linreg-sgd, which no region has (the regions: "
                        f"linreg-loss-grad, {SHOWN}, linreg-predict); it runs region {SHOWN}'s code"),
    "kernel name": ([(b'linreg-sgd.sass" b"linreg-sgd"', b'linreg-sgd.sass" ' + HOSTILE)],
                    f"but the plan's SM86Program names it {SHOWN}"),
    "kernel source": ([(b'b"LinReg/kernels/linreg-sgd.sass"', HOSTILE)], f"kernel source {SHOWN} is in none of"),
    "resident name": ([(b'b"gradient"', HOSTILE), (b'b"input-record"', HOSTILE)],
                      f"share the name {SHOWN}: phases"),
    "buffer name": ([(b'b"gpfifo"', HOSTILE), (b'(lrBuffer b"arena"', b"(lrBuffer " + HOSTILE)],
                    f"the host maps two buffers named {SHOWN}: ["),
    "not ASCII": ([(b'(lrLaunch b"linreg-sgd"', rb'(lrLaunch b"sgd\xff\x00"')],
                  "launch 2's identity should be ASCII, got " + r'b"sgd\xff\x00"'),
}


@pytest.mark.parametrize("place", PLACES)
def test_check_names_a_plans_bytes_on_one_line_by_the_rule(tmp_path, place):
    edits, said = PLACES[place]
    module = _plan(tmp_path, edits)
    stderr = _check(module)
    assert not CONTROLS.search(stderr), stderr            # no ESC, CR, NUL: nothing drives the terminal
    lines = [line for line in stderr.splitlines() if said in line]
    assert lines, stderr                                  # the whole sentence on one line ...
    assert re.search(re.escape(MODULE) + r":\d+:\d+: ", lines[0]), lines[0]      # ... with its place


def test_a_50_kb_identity_is_not_quoted_whole(tmp_path):
    module = _plan(tmp_path, [(b'(lrLaunch b"linreg-sgd"', b'(lrLaunch b"' + b"A" * 50_000 + b'"')])
    stderr = _check(module)
    assert "...(50,000 bytes)" in stderr
    assert len(stderr) < 4_000, len(stderr)               # it printed 100 KB: the identity twice
