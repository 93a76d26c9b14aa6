"""pyproject.toml's runtime dependencies are what bobc's own code imports (probe s37 floor finding 4).

lief stayed a dependency of every install after bobc stopped importing it (4a2353e writes the host's
sections itself): a user downloaded and installed it for nothing, and the README listed it among
what bobc needs.  The tests still read ELF files with it, so it is in the test extra.  Here, every
module compiler/bobc imports from outside the standard library comes from a distribution pyproject
lists (a dependency, or the tools extra for what bobc finds there when it is installed), and every
dependency provides a module that compiler/bobc imports."""
from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    """A PEP 508 requirement's distribution name, normalized as PEP 503 says."""
    name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1)
    return re.sub(r"[-_.]+", "-", name).lower()


def _imported_top_levels() -> set[str]:
    """Top-level names compiler/bobc imports that are neither the standard library's nor bobc's."""
    names = set()
    for path in (REPO / "compiler" / "bobc").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "bobc"}


def test_the_dependencies_are_what_bobc_imports():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    dependencies = {_name(r) for r in project["dependencies"]}
    tools = {_name(r) for r in project["optional-dependencies"]["tools"]}
    providers = importlib.metadata.packages_distributions()     # top-level module -> distributions
    imported = {}
    for module in sorted(_imported_top_levels()):
        assert module in providers, f"compiler/bobc imports {module}, which no installed distribution provides " \
                                    f"(the tests need the test extra: pip install -e '.[test]')"
        imported[module] = {_name(d) for d in providers[module]}
    unlisted = sorted(m for m, d in imported.items() if not d & (dependencies | tools))
    assert not unlisted, f"compiler/bobc imports {unlisted}, from no distribution pyproject.toml lists"
    unused = sorted(d for d in dependencies if not any(d in ds for ds in imported.values()))
    assert not unused, f"pyproject.toml's dependencies list {unused}, which compiler/bobc never imports"
