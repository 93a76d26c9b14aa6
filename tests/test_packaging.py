"""An installed bobc builds hosts without the repository: the wheel carries the standard
library (specs/), the runtime's C sources (runtime_c/), the encoding tables and the documents
its messages cite (docs/), and a host built from it is byte-identical to one built from the
checkout.

Both ways a release is made are built here, offline, with this environment's own setuptools
and pypa `build` (the test extra; `--no-isolation`, so no package index is needed): `pip wheel`
of a checkout, and `python -m build` (an sdist, then the wheel built from the sdist alone),
which must give the same package.  The checkout is a git copy of this one holding what a
working folder collects (untracked files in specs/ and runtime_c/, a stale file from an
earlier build in build/lib): no package may carry them (probe s30 packaging findings 1, 4)."""
from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUILD_TOOLS = "python -m pip install -e '.[test]' (the test extra: build, setuptools>=70.1)"


def _build_tools() -> None:
    pytest.importorskip("build", reason=f"pypa build is not installed: {BUILD_TOOLS}")
    version = tuple(int(part) for part in re.findall(r"\d+", importlib.metadata.version("setuptools"))[:2])
    if version < (70, 1):
        pytest.skip(f"setuptools {importlib.metadata.version('setuptools')} is too old to build offline: {BUILD_TOOLS}")


def _run(*command, cwd=None, env=None):
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)
    assert done.returncode == 0, f"{' '.join(map(str, command))}: {done.stdout}{done.stderr}"
    return done


def _files(archive: zipfile.ZipFile) -> dict[str, bytes]:
    """The package's files in a wheel (its dist-info, which names the build, left out)."""
    return {name: archive.read(name) for name in archive.namelist() if not name.startswith("bobc-")}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """A git checkout copied from this one, with untracked and stale files about, and what
    `pip wheel` and `python -m build` make of it."""
    _build_tools()
    out = tmp_path_factory.mktemp("packaging")
    source = out / "source"
    patterns = shutil.ignore_patterns(".git", ".venv", ".device", "build", "out", "tests", "bench", "*.egg-info",
                                      "__pycache__", "bob-host")
    inside = out.resolve()

    def ignored(folder, names):
        # a TMPDIR inside the checkout holds this very copy: never copy the folder that holds it (a copy
        # into itself grew until the disk was full)
        return set(patterns(folder, names)) | {name for name in names
                                               if inside.is_relative_to((Path(folder) / name).resolve())}

    shutil.copytree(REPO, source, ignore=ignored)
    git = ["git", "-C", source, "-c", "user.name=bobc tests", "-c", "user.email=tests@bobc.invalid",
           "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"]
    env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    _run(*git, "init", "-q", env=env)
    _run(*git, "add", "-A", env=env)
    _run(*git, "commit", "-q", "-m", "copy", env=env)
    commit = _run(*git, "rev-parse", "HEAD", env=env).stdout.strip()
    # what a working folder collects: untracked files (git status stays clean: the commit is
    # still named) and a file an earlier build left in setuptools' build/ folder
    (source / "specs" / "Zzz").mkdir()
    (source / "specs" / "Zzz" / "Stale.bob").write_text("module Zzz.Stale\n")
    (source / "runtime_c" / "notes.txt").write_text("scratch\n")
    gone = source / "build" / "lib" / "bobc" / "_share" / "specs" / "Gone" / "Removed.bob"
    gone.parent.mkdir(parents=True)
    gone.write_text("module Gone.Removed\n")
    wheels, dist = out / "pip-wheel", out / "dist"
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", source, "-w", wheels)
    _run(sys.executable, "-m", "build", "--no-isolation", "-o", dist, source)     # sdist, then wheel from it
    wheel = next(wheels.glob("bobc-*.whl"))
    site = out / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return {"commit": commit, "source": source, "wheel": wheel, "site": site,
            "sdist": next(dist.glob("bobc-*.tar.gz")), "sdist_wheel": next(dist.glob("bobc-*.whl")), "out": out}


@pytest.fixture(scope="module")
def unpacked_wheel(built) -> Path:
    return built["site"]


def test_the_wheel_carries_what_a_build_needs(unpacked_wheel):
    package = unpacked_wheel / "bobc"
    for needed in ("_share/runtime_c/plan_host.c", "_share/runtime_c/Makefile",
                   "_share/specs/Platform/Linux/Nvidia/PlanHost.bob",
                   "_share/specs/Realization/Nvidia/SM86/bob-loss-gradient.sass",
                   "sass/tables/sm_86.json", "sass/tables/sm_90.json", "host/templates/host_plan.c.j2"):
        assert (package / needed).is_file(), needed
    assert not (package / "_share/runtime_c/build").exists()
    assert not (package / "_share/runtime_c/tests").exists()


def test_the_wheel_holds_the_commits_files_and_names_the_commit(built):
    """Probe s30 packaging finding 4: untracked files and a stale build/ copy went into the wheel,
    which still named the clean commit."""
    shared = {path.relative_to(built["source"]).as_posix()
              for folder in ("specs", "runtime_c") for path in (built["source"] / folder).rglob("*") if path.is_file()}
    tracked = set(subprocess.run(["git", "-C", built["source"], "ls-files", "specs", "runtime_c", "docs"],
                                 capture_output=True, text=True, check=True).stdout.split())
    wanted = {f"bobc/_share/{name}" for name in tracked if not name.startswith("runtime_c/tests/")}
    with zipfile.ZipFile(built["wheel"]) as archive:
        files = _files(archive)
    assert {name for name in files if name.startswith("bobc/_share/")} == wanted
    assert "specs/Zzz/Stale.bob" in shared and "runtime_c/notes.txt" in shared     # there, but not tracked
    assert files["bobc/_commit.txt"].decode().strip() == built["commit"]


def test_the_sdist_carries_the_standard_library_and_runtime(built):
    """Probe s30 packaging finding 1: the sdist had no specs/ or runtime_c/, so neither `pip install`
    of it nor `python -m build` (wheel from sdist) worked."""
    with tarfile.open(built["sdist"]) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
        top = archive.getnames()[0].split("/")[0]
        recorded = archive.extractfile(f"{top}/compiler/bobc/_commit.txt").read().decode().strip()
    for needed in ("specs/Platform/Linux/Nvidia/PlanHost.bob", "runtime_c/plan_host.c", "runtime_c/Makefile",
                   "setup.py", "MANIFEST.in", "compiler/bobc/sass/tables/sm_90.json", "docs/limits.md"):
        assert needed in names, needed
    assert not [name for name in names if name.startswith(("runtime_c/tests/", "runtime_c/build/", "tests/"))]
    assert "specs/Zzz/Stale.bob" not in names and "runtime_c/notes.txt" not in names      # untracked
    assert recorded == built["commit"]


# a document cited by name in bobc's code: through resources.doc, or written out (not ../shared/docs/)
CITED = re.compile(r"""\bdoc\(['"]([a-z0-9_-]+\.md)['"]|(?<![\w./])docs/([a-z0-9_-]+\.md)""")


def test_the_wheel_carries_every_document_bobcs_messages_cite(built):
    """Probe s30 packaging finding 5: messages and --help cited docs/*.md, which no package
    carried.  Read from the wheel's own code: every document it names is in its _share/docs,
    as the checkout has it."""
    with zipfile.ZipFile(built["wheel"]) as archive:
        files = _files(archive)
    cited = {a or b for name, data in files.items() if name.startswith("bobc/") and name.endswith(".py")
             for a, b in CITED.findall(data.decode("utf-8"))}
    assert {"limits.md", "native-host.md", "simulator.md", "host-steps.md"} <= cited
    for name in sorted(cited):
        assert files.get(f"bobc/_share/docs/{name}") == (built["source"] / "docs" / name).read_bytes(), name


def test_an_installed_bobc_cites_the_documents_it_carries(unpacked_wheel, tmp_path):
    """Run from the unpacked wheel, a message and a --help name the installed copy (an absolute
    path that is there), never the checkout's docs/NAME.md."""
    shared_docs = unpacked_wheel / "bobc" / "_share" / "docs"
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "Big.bob").write_text("module Big\n\ndef big : Nat = " + "9" * 200_000 + "\n")
    env = {**os.environ, "PYTHONPATH": str(unpacked_wheel), "BOBC_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("BOBC_SPECS", None)
    refused = subprocess.run([sys.executable, "-m", "bobc", "check", "mine/Big.bob"], capture_output=True, text=True,
                             cwd=tmp_path, env=env)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert f"more than the limit of 78,000 ({shared_docs / 'limits.md'})" in refused.stderr, refused.stderr
    for command in ("check", "sim", "run"):
        # (wide, so argparse does not wrap a path where it has a hyphen: site-packages)
        shown = _run(sys.executable, "-m", "bobc", command, "--help", cwd=tmp_path, env={**env, "COLUMNS": "1000"}).stdout
        cited = re.findall(r"[^\s(]*docs/[a-z0-9_-]+\.md", shown)
        assert cited, shown
        for path in cited:
            assert path.startswith(str(shared_docs)) and Path(path).is_file(), (command, path)
    checkout = subprocess.run([sys.executable, "-m", "bobc", "check", "mine/Big.bob"], capture_output=True, text=True,
                              cwd=tmp_path, env={**env, "PYTHONPATH": str(REPO / "compiler")})
    assert "more than the limit of 78,000 (docs/limits.md)" in checkout.stderr, checkout.stderr


def test_the_wheel_built_from_the_sdist_is_the_wheel_of_the_checkout(built):
    with zipfile.ZipFile(built["sdist_wheel"]) as a, zipfile.ZipFile(built["wheel"]) as b:
        from_sdist, from_checkout = _files(a), _files(b)
    assert sorted(from_sdist) == sorted(from_checkout)
    assert [name for name in from_sdist if from_sdist[name] != from_checkout[name]] == []


def test_an_sdist_installed_beside_a_users_specs_folder_uses_its_own(built, tmp_path):
    """`pip install --target vendor bobc-*.tar.gz` in a project that has folders of its own named
    specs/ and runtime_c/ (probe s30 packaging findings 1 and 2: the sdist did not install, and an
    installed bobc took any specs/ two levels above its package for its standard library)."""
    _run(sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", tmp_path / "vendor", built["sdist"])
    for name in ("specs", "runtime_c"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "README.txt").write_text("the user's own notes\n")
    shutil.copytree(REPO / "examples" / "bob" / "Bob", tmp_path / "Bob")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "vendor"), "BOBC_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("BOBC_SPECS", None)
    probe = _run(sys.executable, "-c", "import bobc.resources as r; print(r.shared_folder('specs')); "
                 "print(r.shared_folder('runtime_c'))", cwd=tmp_path, env=env)
    assert probe.stdout.split() == [str(tmp_path / "vendor/bobc/_share/specs"),
                                    str(tmp_path / "vendor/bobc/_share/runtime_c")]
    _run(sys.executable, "-m", "bobc", "check", "Bob/Build/NativeHost.bob", cwd=tmp_path, env=env)
    assert (tmp_path / "vendor/bobc/_commit.txt").read_text().strip() == built["commit"]


def test_a_package_missing_its_share_says_how_to_reinstall(built, tmp_path):
    """Probe s30 packaging finding 6: the hint said `pip install bobc`, a name bobc does not have on
    PyPI; the message named a folder two levels above the package."""
    site = tmp_path / "a" / "site"
    shutil.copytree(built["site"] / "bobc", site / "bobc")
    shutil.rmtree(site / "bobc" / "_share" / "specs")
    (tmp_path / "a" / "specs").mkdir()      # not bobc's: never looked in
    shutil.copytree(REPO / "examples" / "bob" / "Bob", tmp_path / "Bob")
    env = {**os.environ, "PYTHONPATH": str(site), "BOBC_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("BOBC_SPECS", None)
    done = subprocess.run([sys.executable, "-m", "bobc", "check", "Bob/Build/NativeHost.bob"],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"bobc's specs/ folder is missing: looked in {site / 'bobc/_share/specs'}\n" in done.stderr
    assert "`pip install .` in a bobc checkout" in done.stderr and "bobc is not on PyPI" in done.stderr
    assert "pip install bobc" not in done.stderr


def test_bobc_runs_from_its_checkout_and_only_there():
    from bobc import resources

    assert resources.is_checkout() and resources.shared_folder("specs") == REPO / "specs"


@pytest.mark.parametrize("project, where, expected", [
    ('[project]\nname = "bobc"\n[tool.setuptools.packages.find]\nwhere = ["compiler"]\n', "compiler/bobc", True),
    ('[project]\nname = "myproject"\n[tool.setuptools.packages.find]\nwhere = ["compiler"]\n', "compiler/bobc", False),
    ('[project]\nname = "bobc"\n[tool.setuptools.packages.find]\nwhere = ["compiler"]\n', "vendor/bobc", False),
    (None, "compiler/bobc", False),
])
def test_a_checkout_is_bobcs_own(tmp_path, project, where, expected):
    from bobc.resources import is_checkout

    if project is not None:
        (tmp_path / "pyproject.toml").write_text(project)
    (tmp_path / where).mkdir(parents=True)
    assert is_checkout(tmp_path, tmp_path / where) is expected


def test_the_version_is_written_once(built):
    """Probe s30 packaging finding 8: pyproject.toml, bobc/__init__.py and the assembler's cubin note
    each wrote 0.1.0."""
    import bobc
    from bobc.sass.cubin import TOOLKIT_STRINGS

    project = (REPO / "pyproject.toml").read_text()
    assert not re.search(r"(?m)^version\s*=", project.split("[tool.setuptools.dynamic]")[0])
    assert 'dynamic = ["version"]' in project and 'version = {attr = "bobc.__version__"}' in project
    with zipfile.ZipFile(built["wheel"]) as archive:
        metadata = archive.read(f"bobc-{bobc.__version__}.dist-info/METADATA").decode()
    assert f"\nVersion: {bobc.__version__}\n" in metadata
    assert f"bobc SASS assembler {bobc.__version__}" in TOOLKIT_STRINGS
    from bobc.host.version import source_commit

    shown = _run(sys.executable, "-m", "bobc", "--version",
                 env={**os.environ, "PYTHONPATH": str(REPO / "compiler")}).stdout
    assert shown == f"bobc {bobc.__version__}\ncommit {source_commit()}\n"


def test_an_installed_bobc_says_the_commit_its_wheel_recorded(unpacked_wheel):
    """`bobc --version` names the commit of its sources as the hosts it builds record it: an
    installed bobc the one setup.py wrote into it (_commit.txt), not a guess from the folders
    around it."""
    import bobc

    recorded = (unpacked_wheel / "bobc" / "_commit.txt").read_text().strip()
    assert recorded
    shown = _run(sys.executable, "-m", "bobc", "--version", cwd=unpacked_wheel.parent,
                 env={**os.environ, "PYTHONPATH": str(unpacked_wheel)}).stdout
    assert shown == f"bobc {bobc.__version__}\ncommit {recorded}\n"


def test_an_installed_bobc_builds_the_same_host_as_the_checkout(unpacked_wheel, tmp_path):
    work = tmp_path / "user"
    shutil.copytree(REPO / "examples" / "bob" / "Bob", work / "Bob")
    env = {**os.environ, "PYTHONPATH": str(unpacked_wheel)}
    env.pop("BOBC_SPECS", None)
    installed = subprocess.run([sys.executable, "-m", "bobc", "build", "Bob/Build/NativeHost.bob", "--target", "sm_90",
                                "-o", "installed-host"], capture_output=True, text=True, cwd=work, env=env)
    assert installed.returncode == 0, installed.stderr
    probe = subprocess.run([sys.executable, "-c", "import bobc, bobc.resources as r; "
                            "print(bobc.__file__); print(r.shared_folder('runtime_c'))"],
                           capture_output=True, text=True, cwd=work, env=env)
    assert str(unpacked_wheel) in probe.stdout and "_share" in probe.stdout, probe.stdout
    checkout = subprocess.run([sys.executable, "-m", "bobc", "build", str(REPO / "examples/bob/Bob/Build/NativeHost.bob"),
                               "--target", "sm_90", "-o", "checkout-host"], capture_output=True, text=True, cwd=work)
    assert checkout.returncode == 0, checkout.stderr
    installed_host, checkout_host = (work / "installed-host").read_bytes(), (work / "checkout-host").read_bytes()
    if installed_host != checkout_host:
        # the one allowed difference: the wheel was built from a copy of the checkout committed
        # anew, so its hosts' --version names that commit where the checkout's names its own
        from bobc.host import sections

        a, b = sections.read(work / "installed-host"), sections.read(work / "checkout-host")
        assert a.keys() == b.keys() and all(a[k] == b[k] for k in a if k != "version")
        lines_a, lines_b = a["version"].decode().splitlines(), b["version"].decode().splitlines()
        assert [x for x in lines_a if not x.startswith("bobc commit: ")] == \
            [x for x in lines_b if not x.startswith("bobc commit: ")]


def test_nvdisasm_is_the_tools_extra(built):
    """Probe s30 packaging finding 7: sim and disasm need nvdisasm at run time, which a plain
    install lacked without saying how to get it; `pip install 'bobc[tools]'` brings it where
    NVIDIA ships it (Linux x86_64 and aarch64), and nothing requires it otherwise."""
    from email.parser import Parser

    from packaging.requirements import Requirement

    with zipfile.ZipFile(built["wheel"]) as archive:
        metadata = next(archive.read(n) for n in archive.namelist() if n.endswith(".dist-info/METADATA")).decode()
    # read as the core metadata spec has it (an email header block; each Requires-Dist a PEP 508
    # requirement, its marker evaluated): how a backend spells a marker differs (setuptools 70.1,
    # the floor the test extra admits, writes extra == 'tools', later ones extra == "tools";
    # probe s37 floor finding 3)
    headers = Parser().parsestr(metadata)
    assert "tools" in headers.get_all("Provides-Extra")
    requires = [r for r in map(Requirement, headers.get_all("Requires-Dist")) if r.name == "nvidia-cuda-nvdisasm"]

    def required(extra, system, machine):
        return any(r.marker is None or r.marker.evaluate({"extra": extra, "sys_platform": system,
                                                          "platform_machine": machine}) for r in requires)
    assert required("tools", "linux", "x86_64") and required("tools", "linux", "aarch64")
    assert not required("tools", "linux", "ppc64le") and not required("tools", "darwin", "arm64")
    assert not any(required("", system, machine)              # never a plain dependency
                   for system, machine in [("linux", "x86_64"), ("linux", "aarch64"), ("darwin", "arm64")])


def test_a_copy_of_the_package_inside_another_repository_names_no_commit(tmp_path):
    """Only bobc's own checkout gives its commit: a copy of compiler/bobc in another git
    repository (no _commit.txt, whose pyproject.toml is not bobc's) said that repository's HEAD."""
    other = tmp_path / "other"
    shutil.copytree(REPO / "compiler" / "bobc", other / "compiler" / "bobc",
                    ignore=shutil.ignore_patterns("__pycache__", "_commit.txt", "_share"))
    (other / "pyproject.toml").write_text('[project]\nname = "something-else"\n')
    git = ["git", "-C", str(other), "-c", "user.name=t", "-c", "user.email=t@t"]
    _run(*git, "init", "-q")
    _run(*git, "add", "-A")
    _run(*git, "commit", "-q", "-m", "x")
    shown = _run(sys.executable, "-c", "from bobc.host.version import source_commit; print(source_commit())",
                 env={**os.environ, "PYTHONPATH": str(other / "compiler")}, cwd=tmp_path).stdout
    assert shown == "unknown (bobc was not run from a git checkout)\n"
