"""One writer of a line on stderr (bobc.errors.stderr_line): the CLI's refusals and resource stops
and the reference runner's notices (reference/safe_io.py) write a path's own bytes through the same
function, imported when bobc.cli is.  A refusal said while the reference package cannot be
imported (out of memory, as under `ulimit -v`) is the refusal it is otherwise, never a traceback:
the CLI once imported safe_io to say any refusal, and that import failed again."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]

# every import of the reference runner's package runs out of memory, as under `ulimit -v`
STARVED = """
import sys
from importlib.abc import MetaPathFinder

class Starved(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "bobc.reference" or name.startswith("bobc.reference."):
            raise MemoryError
        return None

if sys.argv.pop(1) == "starved":
    sys.meta_path.insert(0, Starved())
from bobc.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _check(tmp_path: Path, how: str) -> subprocess.CompletedProcess:
    missing = os.fsdecode(b"no-such-plan-\xff.bob")      # a name that is not UTF-8: its own bytes are said
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler"), "BOBC_CACHE_DIR": "off",
           "TMPDIR": str(tmp_path)}
    return subprocess.run([sys.executable, "-c", STARVED, how, "check", missing, "--target", "sm_86"],
                          cwd=tmp_path, env=env, capture_output=True, timeout=300)


def test_a_refusal_is_said_the_same_when_the_reference_package_cannot_be_imported(tmp_path):
    fed = _check(tmp_path, "fed")
    starved = _check(tmp_path, "starved")
    assert b"Traceback" not in starved.stderr and b"MemoryError" not in starved.stderr, starved.stderr
    assert fed.returncode not in (0, 1) and fed.stderr.startswith(b"bobc check: error: "), fed.stderr
    assert b"no-such-plan-\xff.bob" in fed.stderr, fed.stderr        # the byte itself, not an escape
    assert (starved.returncode, starved.stderr) == (fed.returncode, fed.stderr)


def test_one_definition_writes_every_such_line():
    from bobc import cli, errors
    from bobc.reference import safe_io

    assert cli.stderr_line is errors.stderr_line and safe_io.stderr_line is errors.stderr_line
