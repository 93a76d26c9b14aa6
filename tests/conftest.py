"""Shared test configuration.

GPU tests (marked `gpu`) need an NVIDIA GPU and its kernel driver: they skip
cleanly where /dev/nvidiactl is absent (CI, developer machines) and run on
the device machine through tests/gpu/run.sh.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# The data the tests read (seeds 000/001, the PyTorch reference case, sass-facts.md's tables)
# is carried in tests/data/shared (tests/data/PROVENANCE); BOBC_SHARED may name another copy.
SHARED = Path(os.environ.get("BOBC_SHARED", REPO / "tests" / "data" / "shared"))
SIBLING_SHARED = REPO.parent / "shared"   # the project's original, where a checkout has it beside


def has_gpu() -> bool:
    if os.environ.get("BOBC_TEST_NO_GPU"):  # tests/test_ci_skips.py: behave as on a machine without one
        return False
    return os.path.exists("/dev/nvidiactl")


GPU_SKIP_REASON = "needs an NVIDIA GPU (/dev/nvidiactl absent); run tests/gpu/run.sh on a GPU machine"


def strict_skips() -> bool:
    """Under CI (CI=true, as .ci/run sets) or BOBC_STRICT_SKIPS=1, a skip for any reason but
    "no GPU" is a failure: a clone carries what its tests need, so data or a tool that is
    missing is a defect, not a reason to pass."""
    return any(os.environ.get(name, "").lower() in ("1", "true", "yes") for name in ("CI", "BOBC_STRICT_SKIPS"))


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _fail_forbidden_skip(report) -> None:
    if report.skipped and not hasattr(report, "wasxfail") and strict_skips():
        reason = _skip_reason(report)
        # tests/gpu/ modules may skip while importing what only the GPU machine has (CuPy, torch)
        gpu_module = report.nodeid.replace("\\", "/").startswith("tests/gpu/") and not has_gpu()
        if reason != GPU_SKIP_REASON and not gpu_module:
            report.outcome = "failed"
            report.longrepr = (f"skipped for a reason other than no GPU, which CI does not allow: {reason}\n"
                               "(carry the data in tests/data, or install the tool through the test extra)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _fail_forbidden_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _fail_forbidden_skip(outcome.get_result())


def pytest_collection_modifyitems(config, items):
    if has_gpu():
        return
    skip = pytest.mark.skip(reason=GPU_SKIP_REASON)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"test data folder not found at {SHARED} (tests/data/shared is part of the repository)")
    return SHARED


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """bobc's cache in a fresh folder of the test's own (BOBC_CACHE_DIR)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def loads(monkeypatch):
    """The plans loaded (parsed, resolved and evaluated) by bobc.pipeline.load while the test runs."""
    from bobc import pipeline

    calls = []
    real = pipeline.load
    monkeypatch.setattr(pipeline, "load", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    return calls
