"""The build step pyproject.toml cannot say: copy the plan language's standard library
(specs/) and the host runtime's C sources (runtime_c/) into the package as bobc/_share/,
so an installed bobc builds hosts without the repository (bobc/resources.py finds them).
Everything else about the package is in pyproject.toml."""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHARED = {
    "specs": shutil.ignore_patterns("__pycache__"),
    "runtime_c": shutil.ignore_patterns("build", "tests", "*.o", "*.a", "__pycache__"),
}


class BuildWithShare(build_py):
    def run(self):
        super().run()
        share = Path(self.build_lib) / "bobc" / "_share"
        for name, ignore in SHARED.items():
            shutil.copytree(ROOT / name, share / name, ignore=ignore, dirs_exist_ok=True)
        # the commit a host's --version names (bobc/host/version.py): a clean checkout's, else unknown
        import sys
        sys.path.insert(0, str(ROOT / "compiler"))
        from bobc.host.version import checkout_commit
        (Path(self.build_lib) / "bobc" / "_commit.txt").write_text(checkout_commit(ROOT) + "\n")


setup(cmdclass={"build_py": BuildWithShare})
