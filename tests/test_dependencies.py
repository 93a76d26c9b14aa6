"""pyproject.toml's runtime dependencies are what bobc's own code imports (probe s37 floor finding 4).

lief stayed a dependency of every install after bobc stopped importing it (4a2353e writes the host's
sections itself): a user downloaded and installed it for nothing, and the README listed it among
what bobc needs.  The tests still read ELF files with it, so it is in the test extra.  Here, every
module compiler/bobc imports from outside the standard library comes from a distribution pyproject
lists (a dependency, or the tools extra for what bobc finds there when it is installed), and every
dependency provides a module that compiler/bobc imports.

The test extra's nvidia-cuda-nvcc floor gives a ptxas that takes every PTX the tests compile:
CUDA 13.N's ptxas takes PTX ISA up to 9.N (ptxas 13.0, 13.1, 13.4 and 13.5 each refuse a later
.version with "current version is '9.N'"), and the floor said 13.0 while tools/ptx_corpus/corpus*.ptx
(nvcc 13.5's output, which the tests compile) say .version 9.5: with 13.0 the corpus tests failed
(probe s37 floor finding 5)."""
from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

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


# the PTX ISA's .version directive (its major and minor numbers), where a PTX module states it
PTX_VERSION = re.compile(rb"(?m)^\s*\.version\s+(\d+)\.(\d+)\b")


def _isa_of_cuda_13(release: tuple[int, int]) -> tuple[int, int]:
    """The newest PTX ISA CUDA 13.N's ptxas takes: 9.N (test_ptxas_takes_the_isa_of_its_release)."""
    assert release[0] == 13, f"CUDA {release}: the pairing here is CUDA 13's; check it for this release"
    return 9, release[1]


def test_the_ptxas_floor_takes_every_ptx_the_tests_compile():
    test = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    (floor,) = [re.fullmatch(r"nvidia-cuda-nvcc>=(\d+)\.(\d+),<\d+\.\d+", r.replace(" ", "")) for r in test
                if _name(r) == "nvidia-cuda-nvcc"]
    isa = _isa_of_cuda_13((int(floor[1]), int(floor[2])))
    sources = [*(REPO / "tools" / "ptx_corpus").glob("*.ptx"), *(REPO / "tests").rglob("*.ptx"),
               *(p for p in (REPO / "tests").rglob("*.py") if "logs" not in p.parts)]
    newer = sorted({f"{p.relative_to(REPO)}: .version {m[1].decode()}.{m[2].decode()}"
                    for p in sources for m in PTX_VERSION.finditer(p.read_bytes())
                    if (int(m[1]), int(m[2])) > isa})
    assert not newer, f"the test extra's nvidia-cuda-nvcc>={floor[1]}.{floor[2]} gives a ptxas of PTX ISA " \
                      f"{isa[0]}.{isa[1]}, older than {newer}"


def test_ptxas_takes_the_isa_of_its_release(tmp_path):
    """The pairing above, asked of the ptxas installed: its release (--version) and the newest
    .version it takes (what it says refusing a later one)."""
    from bobc.nvtools import ptxas

    tool = ptxas()
    if tool is None or not os.access(tool, os.X_OK):
        pytest.skip("ptxas not installed (pip install nvidia-cuda-nvcc)")
    release = re.search(r"release (\d+)\.(\d+)", subprocess.run([tool, "--version"], capture_output=True,
                                                                 text=True, check=True).stdout)
    source = tmp_path / "k.ptx"
    source.write_text(".version 99.0\n.target sm_86\n.address_size 64\n")
    refused = subprocess.run([tool, "-arch=sm_86", "-o", str(tmp_path / "k.cubin"), str(source)],
                             capture_output=True, text=True)
    newest = re.search(r"current version is '(\d+)\.(\d+)'", refused.stdout + refused.stderr)
    assert refused.returncode != 0 and release and newest, (refused.stdout, refused.stderr)
    assert (int(newest[1]), int(newest[2])) == _isa_of_cuda_13((int(release[1]), int(release[2])))
