"""Nothing outside the target tables asks "is this sm_90?" (bobc/targets.py; docs/targets.md).

A target's facts are rows of per-concern tables -- bobc.targets (Target), sass/tables/ (the SASS
encoding and scheduling rows), the simulator's own rows (sim/arch.py, sim/latencies.py) -- so that
adding a target (sm_121) is one row per concern and a missing row is refused by name.  This scans
the AST of every module of compiler/bobc for what puts a target fact elsewhere: a dict keyed by a
target's name, a set or tuple of target names tested for membership, a comparison with a target's
name or with a target's SM number, a parameter that defaults to a target.  A target name is what
CUDA's tools spell one: ptxas's sm_NN[a-z] and nvdisasm's SMNN[a-z] (the Target's name,
ptxas_arch and nvdisasm_arch are such names)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from bobc.targets import TARGETS

PACKAGE = Path(__file__).resolve().parents[1] / "compiler" / "bobc"
TARGET_NAME = re.compile(r"^(sm_|SM)\d{2,3}[a-z]?$")
SM_NUMBERS = {t.sm for t in TARGETS.values()} | {t.spa_version for t in TARGETS.values()}
SM_ATTRIBUTES = {"sm", "spa_version", "sass_version"}
TARGET_OBJECTS = {"SM86", "SM90"}       # bobc.targets' rows by their module names

# The per-concern tables: the only modules whose code may name a target (docs/targets.md)
TABLES = {"targets.py", "sass/tables/arch.py", "sass/tables/layouts.py", "sim/arch.py", "sim/latencies.py"}

# What is left outside the tables, and why: (module, line's source text fragment) -> reason
KEPT: dict = {}         # none: load_program's target=SM86 default went in probe s39 leftovers3 finding 5


def _is_name(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(TARGET_NAME.match(node.value))


def _names_a_target(node) -> bool:
    """A target's name, or a tuple / list / set of them, or a frozenset({...}) of them."""
    if _is_name(node):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_target(e) for e in node.elts)
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("frozenset", "set", "tuple"):
        return any(_names_a_target(a) for a in node.args)
    return False


def findings(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            if any(k is not None and _names_a_target(k) for k in node.keys):
                out.append((node.lineno, "a table keyed by a target's name"))
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_names_a_target(s) for s in sides):
                out.append((node.lineno, "a comparison with a target's name"))
            numbers = [s for s in sides if isinstance(s, ast.Constant) and s.value in SM_NUMBERS
                       and not isinstance(s.value, bool)]
            attributes = [s for s in sides if isinstance(s, ast.Attribute) and s.attr in SM_ATTRIBUTES]
            if numbers and attributes:
                out.append((node.lineno, "a comparison of a target's SM number"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            defaults = node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
            for d in defaults:
                if _names_a_target(d) or (isinstance(d, ast.Name) and d.id in TARGET_OBJECTS):
                    out.append((d.lineno, "a parameter that defaults to a target"))
    return out


def scan(package: Path = PACKAGE) -> list[str]:
    problems = []
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package).as_posix()
        if module in TABLES:
            continue
        text = path.read_text()
        lines = text.splitlines()
        for line, what in findings(ast.parse(text, str(path))):
            source = lines[line - 1]
            if any(module == m and fragment in source for m, fragment in KEPT):
                continue
            problems.append(f"compiler/bobc/{module}:{line}: {what}: {source.strip()}")
    return problems


def test_no_module_outside_the_tables_branches_on_a_target():
    problems = scan()
    assert not problems, ("target facts belong in a per-target table (docs/targets.md):\n"
                          + "\n".join(problems))


def test_the_scan_sees_each_shape(tmp_path):
    """Each shape the rule refuses is found (so the test above is not passing by seeing nothing)."""
    shapes = {
        'FIXED = {"sm_86": 1, "sm_90": 2}\n': "keyed",
        'T = {("VIADD", "sm_86"): "IADD3"}\n': "keyed",
        'def f(arch):\n    return 1 if arch == "SM90" else 2\n': "comparison with a target's name",
        'def f(arch):\n    return arch in frozenset({"SM86"})\n': "comparison with a target's name",
        'def f(t):\n    return t.sm >= 0x90\n': "SM number",
        'def f(op, arch="SM86"):\n    pass\n': "defaults to a target",
        'def f(target=SM86):\n    pass\n': "defaults to a target",
    }
    for source, what in shapes.items():
        found = findings(ast.parse(source))
        assert found and what in found[0][1], (source, found)
    for clean in ('x = {"sm": 1}\n', 'def f(t):\n    return t.sm == other.sm\n', 'n = 0x90 + 1\n',
                  'def f(t):\n    return t.name == name\n'):
        assert findings(ast.parse(clean)) == [], clean


def test_every_sim_and_sass_row_is_a_target_of_the_table():
    """The per-concern rows and the target table name the same targets: a new target adds its row to
    each, and a row for a target the table lacks is a mistake."""
    from bobc.sass.tables.arch import ENCODINGS
    from bobc.sim import arch, latencies
    assert set(ENCODINGS) == set(TARGETS)
    nvdisasm = {t.nvdisasm_arch for t in TARGETS.values()}
    assert set(arch.ARCHES) == nvdisasm and set(latencies.ARCHES) == nvdisasm
    # the simulator's own declaration of the memory descriptor agrees with the target table's
    for t in TARGETS.values():
        assert arch.sim_arch(t.nvdisasm_arch).memory_descriptor == t.memory_descriptor


def test_a_target_without_a_simulator_row_is_refused_by_name():
    """probe s38 targettables findings 1-3: raw_table gave any arch but SM90 sm_86's table, the
    checker defaulted to SM86, and the executor's memory descriptor was None for a missing arch."""
    import inspect

    import pytest

    from bobc.sim import latencies
    from bobc.sim.arch import sim_arch
    from bobc.sim.hazards import Checker
    from bobc.targets import MissingTargetFact
    with pytest.raises(MissingTargetFact, match=r"bobc.sim.latencies.ARCHES has no hazard-checker latencies for "
                                                r"target 'SM121' \(it has rows for SM86, SM90\): add SM121's row"):
        latencies.raw_table("SM121")
    with pytest.raises(MissingTargetFact, match="bobc.sim.arch.ARCHES has no simulator facts for target 'SM121'"):
        sim_arch("SM121")
    with pytest.raises(MissingTargetFact, match="'SM121'"):
        Checker("kernel k", "SM121")
    assert inspect.signature(Checker).parameters["arch"].default is inspect.Parameter.empty
    assert inspect.signature(latencies.uniform_writer_class).parameters["arch"].default is inspect.Parameter.empty
    assert latencies.uniform_writer_class("R2UR", "SM90") == "r2ur" and latencies.uniform_writer_class("R2UR", "SM86") == "uldc"


def test_load_program_names_its_target():
    """probe s39 leftovers3 finding 5: load_program (and Program) defaulted to sm_86 while every
    command defaults to sm_90 (bobc.targets.DEFAULT_TARGET); the target is now always named."""
    import inspect

    import pytest

    from bobc.language import Program, load_program
    for function in (load_program, Program):
        parameter = inspect.signature(function).parameters["target"]
        assert parameter.default is inspect.Parameter.empty and parameter.kind is parameter.KEYWORD_ONLY
    with pytest.raises(TypeError, match="target"):
        load_program(PACKAGE / "no-such-plan.bob")
