"""Did-you-mean for modules, and the import that would bring a name the plan cannot see."""
from __future__ import annotations

import subprocess
import sys


def check(tmp_path, text):
    (tmp_path / "M").mkdir(exist_ok=True)
    plan = tmp_path / "M" / "Top.bob"
    plan.write_text(text)
    return subprocess.run([sys.executable, "-m", "bobc", "check", str(plan)], capture_output=True, text=True)


def test_a_name_from_a_module_not_imported_names_the_import(tmp_path):
    done = check(tmp_path, "module M.Top\n\ndef x : Bytes = float32ExactRational\n")
    assert done.returncode == 1
    assert "unknown name float32ExactRational" in done.stderr
    assert "`import Float32Exact` would bring it" in done.stderr


def test_a_mistyped_module_gets_did_you_mean(tmp_path):
    done = check(tmp_path, "module M.Top\n\nimport Float32Exactt\n\ndef x : Nat = 1\n")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "unknown module Float32Exactt" in done.stderr and "did you mean Float32Exact?" in done.stderr


def test_a_name_defined_nowhere_gets_no_import_hint(tmp_path):
    done = check(tmp_path, "module M.Top\n\ndef x : Nat = noSuchThingAnywhere\n")
    assert done.returncode == 1 and "would bring it" not in done.stderr
