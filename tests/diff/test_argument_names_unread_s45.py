"""`bobc dump` / `bobc diff`: a launch's parameter word whose kernel source WAS found under -I but
gives no contract says why, not "no NAME.sass found; pass -I with the folder that holds it" (probe
s45 determinism3 finding 2).

The -I folder here holds linreg-sgd.sass -- twice (a backup copy in a subfolder), or once with a
`//@ param` line that does not parse -- so telling the user that no such file was found and to pass
-I with its folder is false: they did.  The kernel search refuses two copies under one folder
(docs/kernel-contracts.md, bobc.kernel_search: "which one the plan means is not certain"), and a
contract line of an unknown kind is refused by its parser; the note names those reasons (the two
paths, the line), as `bobc build` would."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
KERNEL = REPO / "examples/linear_regression/LinReg/kernels/linreg-sgd.sass"


def word_note(images: Path, folder: Path) -> str:
    dumped = subprocess.run([sys.executable, "-m", "bobc", "dump", str(images), "--no-code", "-I", str(folder)],
                            capture_output=True, text=True, timeout=600)
    assert dumped.returncode == 0, dumped.stderr
    line = next(x for x in dumped.stdout.splitlines() if x.startswith("launch[2].bank0[0x170] = "))
    return line.partition("  # ")[2]


def test_a_found_source_without_a_contract_says_why(tmp_path):
    images = tmp_path / "images"
    done = subprocess.run([sys.executable, "-m", "bobc", "build", str(PLAN), "--target", "sm_86",
                           "--emit-images", str(images)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr

    twice = tmp_path / "twice"
    (twice / "backup").mkdir(parents=True)
    shutil.copy(KERNEL, twice)
    shutil.copy(KERNEL, twice / "backup")
    note = word_note(images, twice)
    assert "no linreg-sgd.sass found" not in note and "pass -I" not in note, note
    assert note.startswith("parameter word 2 (the kernel's argument names unknown: kernel linreg-sgd has 2 sources "
                           "named linreg-sgd.sass under "), note
    assert str(twice / "backup" / "linreg-sgd.sass") in note and str(twice / "linreg-sgd.sass") in note, note

    broken = tmp_path / "broken"
    broken.mkdir()
    text = KERNEL.read_text()
    assert "//@ param 2 scalar" in text
    (broken / "linreg-sgd.sass").write_text(text.replace("//@ param 2 scalar", "//@ param 2 scalr"))
    note = word_note(images, broken)
    assert "no linreg-sgd.sass found" not in note, note
    assert note.startswith("parameter word 2 (the kernel's argument names unknown: its contract does not parse: "
                           f"{broken / 'linreg-sgd.sass'}:"), note
    assert "'scalr'" in note, note
