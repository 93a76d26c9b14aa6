"""Every environment variable bobc and the hosts read is documented, and every BOBC_ / NATIVE_
variable the documents name is one something reads (probe s47 docsaudit findings 3 and 4).

`BOBC_PTXAS` (compiler/bobc/nvtools.py find_tool: `BOBC_{NAME}` for nvdisasm and ptxas) was read
and named by no document, and `BOBC_IO_TEST_LOCK_GRACE_MS` (runtime_c/host_io.c,
reference/safe_io.py) was missing from docs/runtime.md's "Environment" table and docs/limits.md's
"Files" table, which list its two siblings.

What is read is found in the sources themselves, by the forms they read a variable in:
`getenv("X")`, `os.environ.get("X")` / `os.environ["X"]`, a `..._VARIABLE` constant or #define,
host_settings.c's rows and reference/settings.py's `Setting("X", ...)`, nvtools' `find_tool("x")`
(as `BOBC_X`), and gcc.py's GCC_ENVIRONMENT (gcc's own variables, which bobc keys its cache by).
"""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", REPO / "compiler/bobc/sass/README.md", *sorted((REPO / "docs").glob("*.md"))]
NAME = r"([A-Z][A-Z0-9_]*[A-Z0-9])"
READS = [rf'getenv\(\s*"{NAME}"', rf'environ\.get\(\s*"{NAME}"', rf'environ\[\s*"{NAME}"\s*\]',
         rf'"{NAME}" in os\.environ', rf'_VARIABLE\s*=?\s*"{NAME}"', rf'Setting\(\s*"{NAME}"',
         rf'\[RT_SETTING_\w+\]\s*=\s*\{{\s*"{NAME}"']


def _sources() -> list[Path]:
    return sorted([*(REPO / "compiler/bobc").rglob("*.py"), *(REPO / "compiler/bobc").rglob("*.j2"),
                   *(REPO / "runtime_c").glob("*.[ch]")])


def read_by_the_code() -> dict[str, set[str]]:
    """Variable -> the files that read it."""
    found: dict[str, set[str]] = {}
    for path in _sources():
        text = path.read_text(encoding="utf-8", errors="replace")
        names = {m for pattern in READS for m in re.findall(pattern, text)}
        if path.name == "nvtools.py":
            assert 'os.environ.get(f"BOBC_{name.upper()}")' in text
            names |= {f"BOBC_{tool.upper()}" for tool in re.findall(r'find_tool\("(\w+)"\)', text)}
        if path.name == "gcc.py" and path.parent.name == "host":
            tuple_text = re.search(r"GCC_ENVIRONMENT = \(([^)]*)\)", text).group(1)
            names |= set(re.findall(NAME, tuple_text))
        for name in names:
            found.setdefault(name, set()).add(str(path.relative_to(REPO)))
    return found


def _documents() -> str:
    return "\n".join(doc.read_text(encoding="utf-8") for doc in DOCS)


def test_the_reader_finds_the_variables():
    found = read_by_the_code()
    for name in ("BOBC_CACHE_DIR", "BOBC_GPU_TRACE", "NATIVE_TRACE", "NATIVE_PEER_TIMEOUT_MS",
                 "BOBC_NVDISASM", "BOBC_PTXAS", "BOBC_IO_TEST_LOCK_GRACE_MS", "NATIVE_GPU_VIDEO_PAGES", "CPATH"):
        assert name in found, name
    assert "runtime_c/host_settings.c" in found["BOBC_GPU_MAPPING"]


def test_every_variable_the_code_reads_is_documented_s47():
    text = _documents()
    missing = sorted(f"{name} ({', '.join(sorted(files))})" for name, files in read_by_the_code().items()
                     if not re.search(rf"(?<![\w$]){name}(?!\w)", text))
    assert not missing, f"environment variables read but named by no document (README.md, docs/): {missing}"


def test_the_tests_only_settings_are_in_both_tables_s47():
    """runtime.md's "Environment" table and limits.md's "Files" table list the hosts' tests-only
    millisecond settings: every `BOBC_IO_TEST_*` variable the code reads is a row of both."""
    tests_only = sorted(name for name in read_by_the_code() if name.startswith("BOBC_IO_TEST_"))
    assert len(tests_only) >= 3, tests_only
    runtime = (REPO / "docs/runtime.md").read_text(encoding="utf-8")
    environment = runtime[runtime.index("\n## Environment"):runtime.index("\n## Tracing an invocation")]
    limits = (REPO / "docs/limits.md").read_text(encoding="utf-8")
    files = limits[limits.index("\n## Files the host"):]
    for name in tests_only:
        assert re.search(rf"^\| `{name}` \|", environment, re.M), f"docs/runtime.md, Environment: no row for {name}"
        assert re.search(rf"^\| `{name}`", files, re.M), f"docs/limits.md, Files: no row for {name}"


def test_every_documented_bobc_or_native_variable_is_read_s47():
    """The other way: a BOBC_ or NATIVE_ name the documents give as a variable (`NAME=...`, `$NAME`,
    or in backquotes) is read by bobc, a host, or the tests' own harness (tests/conftest.py,
    tests/fuzz: `BOBC_TEST_CACHE_DIR`, `BOBC_FUZZ_LONG`) -- or is a C name the code defines."""
    text = _documents()
    named = set(re.findall(r"`\$?((?:BOBC|NATIVE)_[A-Z0-9_]*[A-Z0-9])(?:=[^`]*)?`", text))
    named |= set(re.findall(r"(?<![\w$])\$?((?:BOBC|NATIVE)_[A-Z0-9_]*[A-Z0-9])=", text))
    assert {"BOBC_CACHE_DIR", "NATIVE_TELEMETRY"} <= named
    read = set(read_by_the_code())
    harness = "\n".join(p.read_text(encoding="utf-8") for p in [REPO / "tests/conftest.py", *(REPO / "tests/fuzz").glob("*.py")])
    defined = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in [*_sources(), REPO / "runtime_c/Makefile"])
    stale = sorted(name for name in named
                   if name not in read
                   and not re.search(rf'environ(?:\.get\(|\[)\s*"{name}"', harness)
                   and not re.search(rf"(?:#define\s+|^|\s){name}\b\s*(?:[:?]?=|\d|\()", defined, re.M))
    assert not stale, f"variables the documents name that nothing reads (renamed or removed?): {stale}"
