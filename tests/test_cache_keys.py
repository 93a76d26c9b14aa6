"""What a stored result is keyed by covers everything the result depends on (docs/cache.md, "a
changed input is a different key").  Probe s30 cache finding 5: the parsed-module key left out
language/limits.py, whose NESTING_DEPTH, NATURAL_LITERAL_DIGITS and NATURAL_BITS parse.py
enforces, so a bobc with a lower limit took a tree stored by one with a higher limit and
accepted a module it refuses with the cache off."""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LANGUAGE = REPO / "compiler" / "bobc" / "language"

# modules parse.py imports that no stored tree depends on, and why
NOT_IN_A_TREE = {
    "resources": "doc() names docs/limits.md in refusals, and a refusal is never stored",
    "suggest": "shown_name cuts a long name a refusal quotes, and a refusal is never stored",
    "cache": "holds lark's tables (docs/cache.md `lark/`, keyed by the grammar, lark and Python)",
}


def _bobc_imports(path: Path) -> set[str]:
    """The bobc modules `path` imports (relative imports, at any depth of its code)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            if node.module:
                found.add(node.module.split(".")[-1])
            else:
                found.update(alias.name for alias in node.names)
    return found


def test_the_parser_key_names_every_module_parse_py_builds_a_tree_with():
    from bobc.language import modules

    named = {Path(source).name.removesuffix(".py") for source in modules.PARSER_SOURCES}
    assert "limits" in named and "modules" in named
    missing = _bobc_imports(LANGUAGE / "parse.py") - named - set(NOT_IN_A_TREE)
    assert not missing, f"parse.py depends on {sorted(missing)}, which the parsed-module key leaves out"
    for source in modules.PARSER_SOURCES:
        assert (LANGUAGE / source).is_file(), source


def _nested(depth: int) -> str:
    return ("module Nest.Deep\n\nimport Std.Natural\ndef deep : Nat = "
            + "(naturalAdd 1 " * depth + "0" + ")" * depth + "\n")


def test_a_tree_stored_under_a_higher_nesting_limit_is_not_taken_under_a_lower_one(tmp_path):
    plan = tmp_path / "plans" / "Nest" / "Deep.bob"
    plan.parent.mkdir(parents=True)
    plan.write_text(_nested(100))
    lower = tmp_path / "lower" / "compiler"                 # a bobc that differs only in its limit
    shutil.copytree(REPO / "compiler" / "bobc", lower / "bobc",
                    ignore=shutil.ignore_patterns("__pycache__"), symlinks=True)
    limits = lower / "bobc" / "language" / "limits.py"
    text = limits.read_text()
    assert "\nNESTING_DEPTH = 200\n" in text
    limits.write_text(text.replace("\nNESTING_DEPTH = 200\n", "\nNESTING_DEPTH = 50\n"))

    def evaluate(compiler: Path, cache):
        env = {"PATH": "/usr/bin:/bin", "BOBC_CACHE_DIR": str(cache), "PYTHONPATH": str(compiler),
               "BOBC_SPECS": str(REPO / "specs")}
        return subprocess.run([sys.executable, "-m", "bobc", "eval", "Nest/Deep.bob", "deep"],
                              capture_output=True, text=True, env=env, cwd=plan.parents[1])

    cache = tmp_path / "cache"
    stored = evaluate(REPO / "compiler", cache)
    assert stored.returncode == 0 and stored.stdout.strip() == "100", stored.stderr
    off = evaluate(lower, "off")
    assert off.returncode == 1 and "parentheses nested 51 deep: more than the limit of 50" in off.stderr
    warm = evaluate(lower, cache)
    assert (warm.returncode, warm.stdout, warm.stderr) == (off.returncode, off.stdout, off.stderr)
