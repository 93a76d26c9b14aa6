"""docs/partitioned-regression.md, "Admission": the `bobc eval` it writes for a refused address runs as
written and prints the refusal the doc quotes (probe s38 docs7 finding 6: the doc evaluated `why` in
Pair.bob, whose only import, Build.Workers, does not see coordinateWorkerRefusalAt or coordinateH200:
"unknown name").  The module is made from the doc's words alone (its name, its imports, its def; the
UUID placeholder given 16 bytes) and evaluated by bobc; its output is held to the quoted refusal."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "partitioned-regression.md"
SENTENCE = re.compile(
    r'(b"address: [^"]*") \(for `\(coordinateAddress [^`]*\)`: '
    r"`bobc eval (\w+)\.bob (\w+) -I (\S+)` of a module (\w+) that imports (.*?) and says `(def \w+ : Bytes = .*?)`\)")


def test_the_admission_refusal_evaluates_as_written(tmp_path):
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    match = SENTENCE.search(text)
    assert match, "docs/partitioned-regression.md says how to evaluate an address refusal"
    quoted, file, entry, include, module, imports, definition = match.groups()
    assert file == module
    names = [name.strip() for name in re.split(r",| and ", imports) if name.strip()]
    uuid = "b\"" + "".join(f"\\x{i:02x}" for i in range(16)) + "\""
    source = "\n".join([f"module {module}", "", *(f"import {name}" for name in names), "",
                        definition.replace("<UUID>", uuid), ""])
    (tmp_path / f"{file}.bob").write_text(source, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO / "compiler"))
    done = subprocess.run([sys.executable, "-m", "bobc", "eval", f"{file}.bob", entry, "-I", str(REPO / include)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == quoted, (done.stdout, quoted)
