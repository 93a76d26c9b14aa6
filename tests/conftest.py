"""Shared test configuration.

GPU tests (marked `gpu`) need an NVIDIA GPU and its kernel driver: they skip
cleanly where /dev/nvidiactl is absent (CI, developer machines) and run on
the device machine through tests/gpu/run.sh.
"""
from __future__ import annotations

import os
import subprocess
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


# A run's own folder: two runs on one machine at once (or a run beside the user's own bobc) share
# nothing but the checkout's git-ignored files.  The outermost pytest takes its basetemp
# (/tmp/pytest-of-USER/pytest-N, locked by pytest while the run lives, so no other run's
# retention removes it) and puts there the run's TMPDIR (bobc's temporaries, every tempfile and
# subprocess) and the run's bobc cache (removed when the run ends: nothing left in ~/.cache/bobc).
# BOBC_TEST_CACHE_DIR names a cache to use instead and keep (runs may share one: entries are
# content-keyed and written by rename).  A pytest a test starts inherits the run's (RUN_VARIABLE).
# The run's TMPDIR is private (pytest makes pytest-of-USER 0700): a test that runs code as another
# user makes its folder with reachable_folder, in the machine's temporary folder (REACHABLE_VARIABLE).
RUN_VARIABLE = "BOBC_TEST_RUN"
REACHABLE_VARIABLE = "BOBC_TEST_REACHABLE_TMPDIR"
_RUN_VARIABLES = ("TMPDIR", "BOBC_CACHE_DIR", RUN_VARIABLE, REACHABLE_VARIABLE)


@pytest.hookimpl(trylast=True)          # after pytest's tmpdir plugin made config._tmp_path_factory
def pytest_configure(config):
    inherited = os.environ.get(RUN_VARIABLE)
    factory = getattr(config, "_tmp_path_factory", None)     # absent under -p no:tmpdir
    # a pytest-xdist worker (`-n N`: config.workerinput) is a run of its own, in its own basetemp
    # (the controller's /popen-gwK): sharing the controller's TMPDIR and cache, one worker's
    # temporaries and cache entries were seen by the tests of another that count them
    worker = hasattr(config, "workerinput")
    if inherited and os.path.isdir(inherited) and not worker or factory is None:
        if inherited and os.path.isdir(inherited):
            _hypothesis_home(Path(inherited))
        return
    import tempfile

    run = Path(factory.getbasetemp())
    temporary = run / "tmp"
    temporary.mkdir(exist_ok=True)
    chosen = os.environ.get("BOBC_TEST_CACHE_DIR")
    own_cache = None if chosen else run / "bobc-cache"
    config.stash[_RUN_KEY] = ({name: os.environ.get(name) for name in _RUN_VARIABLES}, own_cache)
    # the machine's temporary folder: a worker's TMPDIR is already its controller's private run/tmp
    # (pytest-of-USER is 0700), so it keeps the one its controller found; reachable_folder had made
    # the other user's folders in the controller's private TMPDIR, where setuid code could not reach them
    reachable = (os.environ.get(REACHABLE_VARIABLE) if worker else None) or tempfile.gettempdir()
    os.environ.update({REACHABLE_VARIABLE: reachable, "TMPDIR": str(temporary),
                       "BOBC_CACHE_DIR": chosen or str(own_cache), RUN_VARIABLE: str(run)})
    tempfile.tempdir = None             # gettempdir() reads TMPDIR again
    _hypothesis_home(run)


def _hypothesis_home(run: Path) -> None:
    """Hypothesis keeps what it stores (its example database, the `constants` it collects from the
    sources it runs) in ./.hypothesis, the checkout when pytest runs there: the run's folder
    instead, so a test run writes nothing into the clone (the property tests also pass
    database=None and derandomize=True: tests/language/test_roundtrip_properties_s40.py)."""
    try:
        from hypothesis.configuration import set_hypothesis_home_dir
    except ImportError:                 # pragma: no cover - a dev dependency (pyproject.toml)
        return
    set_hypothesis_home_dir(run / "hypothesis")


def pytest_unconfigure(config):
    if _RUN_KEY not in config.stash:
        return
    import shutil
    import tempfile

    before, own_cache = config.stash[_RUN_KEY]
    if own_cache is not None:
        shutil.rmtree(own_cache, ignore_errors=True)
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    tempfile.tempdir = None


_RUN_KEY = pytest.StashKey[tuple]()


def reachable_folder(prefix: str) -> Path:
    """A new folder (tempfile.mkdtemp's, 0700) that another user can reach once the test opens it
    (chmod): in the machine's temporary folder, not the run's private TMPDIR.  The test removes it."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix=prefix, dir=os.environ.get(REACHABLE_VARIABLE) or None))


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


def _umask() -> int:
    """The process's umask, read without setting it where Linux says it (/proc/self/status, 4.7+):
    setting it to read it would change it for a moment under a thread the test left running."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _process_state() -> dict:
    """What one test may not leave changed for the tests after it in this process: each signal's
    handler, the environment, the working folder and the umask."""
    import signal

    mask = _umask()
    try:
        folder = os.getcwd()
    except OSError as failure:           # the folder was removed
        folder = f"(unreadable: {failure.strerror})"
    return {"signal handlers": {signal.Signals(number).name: signal.getsignal(number)
                                for number in sorted(signal.valid_signals()) if number in signal.Signals._value2member_map_},
            # PYTEST_CURRENT_TEST: pytest's own, the test's name and phase
            "environment": {name: value for name, value in os.environ.items() if name != "PYTEST_CURRENT_TEST"},
            "working folder": folder, "umask": oct(mask)}


def _put_back(before: dict) -> None:
    import signal

    for name, handler in before["signal handlers"].items():
        if handler is not None and signal.getsignal(getattr(signal, name)) != handler:
            signal.signal(getattr(signal, name), handler)
    for name in set(os.environ) - set(before["environment"]) - {"PYTEST_CURRENT_TEST"}:
        del os.environ[name]
    os.environ.update(before["environment"])
    os.umask(int(before["umask"], 8))
    if os.path.isdir(before["working folder"]):
        os.chdir(before["working folder"])


def _changes(before: dict, after: dict) -> list[str]:
    said = []
    for what in before:
        old, new = before[what], after[what]
        if isinstance(old, dict):
            said += [f"{what}: {key}: {old.get(key, '(unset)')!r} -> {new.get(key, '(unset)')!r}"
                     for key in sorted(set(old) | set(new)) if old.get(key, "(unset)") != new.get(key, "(unset)")]
        elif old != new:
            said.append(f"{what}: {old!r} -> {new!r}")
    return said


@pytest.fixture(autouse=True)
def _leaves_the_process_as_it_found_it(request):
    """Fail a test that leaves a signal handler, the environment, the working folder or the
    umask changed: every later test in the process (CI runs them all in one) would inherit it, and
    fail or pass by the order the tests ran in.  Changed in a test, they are put back by
    monkeypatch (setenv, chdir) or a try/finally of the test's own.  A GPU test's environment is
    not held: CUDA's libraries set their own variables when first used (torch's
    CUDA_MODULE_LOADING)."""
    before = _process_state()
    yield
    after = _process_state()
    if request.node.get_closest_marker("gpu"):
        after["environment"] = before["environment"]
    changes = _changes(before, after)
    if changes:
        _put_back(before)          # the next tests start as this one did
        pytest.fail("the test left the process changed for the tests after it:\n  " + "\n  ".join(changes)
                    + "\n(put it back: monkeypatch.setenv/chdir, or a try/finally)", pytrace=False)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"test data folder not found at {SHARED} (tests/data/shared is part of the repository)")
    return SHARED


@pytest.fixture(scope="session")
def runtime_build(tmp_path_factory) -> Path:
    """runtime_c's make folder for this run (its Makefile's B): `make -C runtime_c B=FOLDER
    TARGET`.  Not runtime_c/build, where two runs in one checkout raced (ar: unable to copy file
    'build/libbobcrt.a'; probe s36 parallelsuites finding 2)."""
    return tmp_path_factory.mktemp("runtime_c-build", numbered=False)


def make_runtime(folder: Path, *targets: str) -> subprocess.CompletedProcess:
    """`make -C runtime_c B=folder TARGETS` (runtime_build's folder)."""
    return subprocess.run(["make", "-C", str(REPO / "runtime_c"), f"B={folder}", *targets],
                          capture_output=True, text=True)


@pytest.fixture(scope="session")
def port():
    """A TCP port of this run's own for the hosts tests build (seed 003's pairs: tests/partitioned_regression,
    tests/gpu/test_partitioned_regression.py) (the port is built into both
    peers): chosen by the kernel and held for the whole run by a bound, non-listening socket with
    SO_REUSEADDR.  The hosts and the stand-in peers (peers.py, bobc's reference runner) set
    SO_REUSEADDR too, so they bind and listen beside it; another run's or program's bind(0), a
    plain bind of it, or an outgoing connection's local port never gets it meanwhile (Linux's
    bind conflict rules).  Two runs at once never meet; a fixed port made them fail each other."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


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
