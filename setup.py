"""The build step pyproject.toml cannot say: copy the plan language's standard library
(specs/), the host runtime's C sources (runtime_c/) and the documents bobc's messages and
--help cite (docs/) into the package as bobc/_share/, so an installed bobc builds hosts
without the repository and its user can open what a message cites (bobc/resources.py finds
them: shared_folder, doc).  Everything else about the package is in pyproject.toml.

What is copied: from a git checkout, the files git tracks there (as they are on disk), so
a wheel holds the checkout's specs/, runtime_c/ and docs/ and nothing a build, an experiment or an
earlier `git pull` left beside them; without git (an sdist, whose MANIFEST.in carries the
folders) every file there.  bobc/_share is emptied first: setuptools reuses build/, and
a file removed from the sources must leave the next wheel too.  bobc/_commit.txt records the
commit a host's --version names (bobc/host/version.py): a clean checkout's, the one the sdist
recorded when it was made from a checkout, else `unknown`."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist
from setuptools.errors import SetupError

ROOT = Path(__file__).resolve().parent
SHARED = ("specs", "runtime_c", "docs")
# never part of a package, tracked or not: the runtime's own tests and build outputs
LEFT_OUT = {"specs": shutil.ignore_patterns("__pycache__", "*.pyc"),
            "runtime_c": shutil.ignore_patterns("build", "tests", "*.o", "*.a", "__pycache__", "*.pyc"),
            "docs": shutil.ignore_patterns("__pycache__", "*.pyc")}
RECORDED_COMMIT = Path("compiler") / "bobc" / "_commit.txt"    # in an sdist made from a checkout


def tracked_files(root: Path) -> set[str] | None:
    """The paths (relative to `root`, '/'-separated) git tracks in the checkout `root`, or None
    when `root` is no git checkout or git cannot be run (then every file counts)."""
    if not (root / ".git").exists():
        return None
    environment = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    try:
        listed = subprocess.run(["git", "-C", str(root), "--git-dir", str(root / ".git"), "--work-tree", str(root),
                                 "-c", f"safe.directory={root}", "ls-files", "-z", "--", *SHARED],
                                capture_output=True, env=environment, stdin=subprocess.DEVNULL)
    except OSError:
        return None
    if listed.returncode != 0:
        return None
    return {name for name in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if name}


def commit_of_sources() -> str:
    sys.path.insert(0, str(ROOT / "compiler"))
    from bobc.host.version import checkout_commit

    if not (ROOT / ".git").exists() and (ROOT / RECORDED_COMMIT).is_file():
        return (ROOT / RECORDED_COMMIT).read_text(encoding="utf-8").strip()
    return checkout_commit(ROOT)


def copy_shared(destination: Path) -> None:
    """ROOT's specs/, runtime_c/ and docs/ into `destination` (emptied first): git's files, else all."""
    missing = [name for name in SHARED if not (ROOT / name).is_dir()]
    if missing:
        raise SetupError(f"bobc's {' and '.join(name + '/' for name in missing)} {'is' if len(missing) == 1 else 'are'} "
                         f"missing from {ROOT}: "
                         "build bobc from its git checkout or from an sdist made by `python -m build --sdist` "
                         "there (its MANIFEST.in carries specs/, runtime_c/ and docs/)")
    if destination.exists():
        shutil.rmtree(destination)
    tracked = tracked_files(ROOT)
    for name in SHARED:
        left_out = LEFT_OUT[name]

        def ignore(folder, names, name=name, left_out=left_out):
            skipped = set(left_out(folder, names))
            if tracked is not None:
                relative = Path(folder).relative_to(ROOT).as_posix()
                skipped |= {n for n in names if not (Path(folder) / n).is_dir()
                            and f"{relative}/{n}" not in tracked}
            return skipped

        shutil.copytree(ROOT / name, destination / name, ignore=ignore)
    # a folder holding no tracked file (all of it untracked) is no part of the package
    for folder in sorted((p for p in destination.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        if not any(folder.iterdir()):
            folder.rmdir()


class BuildWithShare(build_py):
    def run(self):
        super().run()
        package = Path(self.build_lib) / "bobc"
        copy_shared(package / "_share")
        (package / "_commit.txt").write_text(commit_of_sources() + "\n")


class SdistWithCommit(sdist):
    """An sdist whose specs/, runtime_c/ and docs/ are the checkout's tracked files (MANIFEST.in's
    graft would take any file there), and which records the commit it was made from, so the
    wheel built from it names the same commit as one built from the checkout."""

    def make_release_tree(self, base_dir, files):
        tracked = tracked_files(ROOT)
        if tracked is not None:
            files = [f for f in files if Path(f).parts[0] not in SHARED or Path(f).as_posix() in tracked]
        super().make_release_tree(base_dir, files)
        recorded = Path(base_dir) / RECORDED_COMMIT
        if recorded.exists():
            recorded.unlink()       # a hard link to the source tree's (make_release_tree links)
        recorded.write_text(commit_of_sources() + "\n")


setup(cmdclass={"build_py": BuildWithShare, "sdist": SdistWithCommit})
