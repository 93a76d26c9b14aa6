"""Probe s28 publish2 (notes/s28/probe-publish2.md), the commands' side:

  4. `bobc inspect HOST --extract DIR` refuses a DIR it cannot inspect (a name too long) by name,
     exit 8, one line, as --emit-images does: no traceback;
  6. --emit-images and --extract refusals, and `bobc run --reference`'s success line, show their
     paths as every message does (safe_io.shown: a newline as '?', a long path shortened);
  7. --emit-images DIR is judged before the build, as -o is.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REQUEST = REPO / "tests/native/plans/Native/Request.bob"
BOB = REPO / "examples/bob/Bob/Build/NativeHost.bob"
TIMEOUT_S = 300


def bobc(*arguments, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, arguments)], cwd=cwd, capture_output=True,
                          text=True, timeout=TIMEOUT_S, env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})


def refused(done, starts: str, ends: str) -> None:
    assert done.returncode == 8, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    error = [line for line in done.stderr.splitlines() if not line.startswith("hint: ")]
    assert len(error) == 1, done.stderr              # the refusal is one line (and its hint)
    assert error[0].startswith(starts) and error[0].endswith(ends), error[0]


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    folder = tmp_path_factory.mktemp("native-host")
    done = bobc("build", REQUEST, "--entry", "requestHost", "-o", "host", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / "host"


def test_extract_into_a_name_too_long_is_refused_by_name(host, tmp_path):
    """Finding 4: pathlib's is_dir raised ENAMETOOLONG: a traceback, exit 1."""
    done = bobc("inspect", host, "--extract", "e" * 300, cwd=tmp_path)
    refused(done, f"bobc inspect: error: {'e' * 32}...", ": cannot write output (--extract): cannot inspect it: "
            "File name too long")


@pytest.mark.parametrize("option", ["--extract", "--emit-images"])
def test_a_newline_in_an_image_folder_is_shown_as_a_question_mark(host, tmp_path, option):
    """Finding 6: the folder and its parent were printed raw: a newline split the refusal."""
    arguments = ["inspect", host] if option == "--extract" else ["build", BOB]
    done = bobc(*arguments, option, "no\nsuch/imgs", cwd=tmp_path)
    refused(done, "bobc ", f"no?such/imgs: cannot write output ({option}): its folder no?such does not exist; "
            "create it first")


def test_a_long_image_folder_is_shortened(tmp_path):
    """Finding 6: a 200-byte name was printed twice in full."""
    done = bobc("build", BOB, "--emit-images", f"{'q' * 200}/imgs", cwd=tmp_path)
    refused(done, "bobc build: error: qqq", "does not exist; create it first")
    assert ".../imgs: cannot write output" in done.stderr and "q" * 129 not in done.stderr


def test_emit_images_is_judged_before_the_build(tmp_path):
    """Finding 7: a plan that does not compile shows it: before, the build ran first and failed
    on the plan; now the folder is refused before any work, as -o's is."""
    (tmp_path / "bad.bob").write_text("module Bad where\nx = = 1\n")
    done = bobc("build", "bad.bob", "--emit-images", "nonexistent/imgs", cwd=tmp_path)
    refused(done, "bobc build: error: nonexistent/imgs: cannot write output (--emit-images): ",
            "its folder nonexistent does not exist; create it first")
    (tmp_path / "afile").write_bytes(b"")
    done = bobc("build", "bad.bob", "--emit-images", "afile", cwd=tmp_path)
    refused(done, "bobc build: error: afile: cannot write output (--emit-images): ",
            "is not a folder; --emit-images names a folder to write the image files into")


def test_run_reference_shows_the_checkpoint_as_every_message_does(tmp_path):
    """Finding 6: the success line printed --checkpoint-out raw: a newline split it."""
    from bob_model.formats import InputRecord, encode_input_record
    import numpy as np

    (tmp_path / "record.bin").write_bytes(encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256,
                                                                          [119, 116, 32])))
    done = bobc("run", BOB, "train", "--reference", "--input", "record.bin", "--checkpoint-out", "new\nline",
                "--predictions", "p.bin", "--result", "r.bin", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("train: ") and \
        done.stdout.splitlines()[-1].endswith("checkpoint publication(s); new?line holds step 10"), done.stdout


def test_inspect_judges_the_extract_folder_before_its_report(tmp_path):
    """`bobc inspect HOST --extract DIR` refuses a DIR it cannot write before printing the report
    (it printed the whole report, then refused; probe s28 publish2, finding 7)."""
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    host = tmp_path / "host"
    built = subprocess.run([sys.executable, "-m", "bobc", "build", str(repo / "examples/linear_regression/LinReg/Build/"
                            "NativeHost.bob"), "-o", str(host)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    done = subprocess.run([sys.executable, "-m", "bobc", "inspect", str(host), "--extract",
                           str(tmp_path / "absent" / "images")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 8 and done.stdout == "", done.stdout
    assert "its folder" in done.stderr and "does not exist" in done.stderr


@pytest.mark.parametrize("where, detail", [
    ("nodir/out", "its folder nodir does not exist; create it first"),
    ("afile/out", "afile is not a folder"),
])
def test_every_output_option_says_a_bad_folder_alike(tmp_path, where, detail):
    """Probe s36 newuser2 finding 1: a missing folder was "cannot be reached: No such file or
    directory" for -o (and every output file) but "does not exist; create it first" for
    --emit-images; a file in the folder's place was "is not a folder" for -o but "cannot inspect
    it: Not a directory" for --emit-images.  Now one wording each, whichever option names it."""
    (tmp_path / "afile").write_bytes(b"")
    for option in ("-o", "--emit-images"):
        done = bobc("build", BOB, option, where, cwd=tmp_path)
        refused(done, f"bobc build: error: {where}: cannot write output ({option}): ", detail)
    # a sound record: the host (and so the reference) judges the record before any output path, so
    # an empty one would be refused first, exit 3 (probe s36 simwords finding 3)
    bob = REPO / "examples/bob"
    made = subprocess.run([sys.executable, str(bob / "build_fixture.py"), str(bob / "corpus.txt"), "--prompts-file",
                           str(bob / "prompts.txt"), "-o", str(tmp_path / "record.bin")],
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    assert made.returncode == 0, made.stderr
    done = bobc("run", BOB, "train", "--reference", "--input", "record.bin", "--checkpoint-out", where,
                "--predictions", "p.bin", "--result", "r.bin", cwd=tmp_path)
    said = f"output {where} (--checkpoint-out): {detail}; nothing was written"
    assert done.returncode == 8 and said in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "record.bin"]
