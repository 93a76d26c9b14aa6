"""An installed bobc builds hosts without the repository: the wheel carries the standard
library (specs/), the runtime's C sources (runtime_c/) and the encoding tables, and a
host built from it is byte-identical to one built from the checkout."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def unpacked_wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # built from a copy, so setuptools' build/ folder lands there and not in the checkout
    source = out / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".device", "build", "out", "tests", "bench", "*.egg-info", "__pycache__", "bob-host"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(source), "-w", str(out)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next(out.glob("bobc-*.whl"))
    site = out / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return site


def test_the_wheel_carries_what_a_build_needs(unpacked_wheel):
    package = unpacked_wheel / "bobc"
    for needed in ("_share/runtime_c/plan_host.c", "_share/runtime_c/Makefile",
                   "_share/specs/Platform/Linux/Nvidia/PlanHost.bob",
                   "_share/specs/Realization/Nvidia/SM86/bob-loss-gradient.sass",
                   "sass/tables/sm_86.json", "sass/tables/sm_90.json", "host/templates/host_plan.c.j2"):
        assert (package / needed).is_file(), needed
    assert not (package / "_share/runtime_c/build").exists()


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
        # the one allowed difference: the wheel was built from a copy without .git, so its hosts'
        # --version says "commit unknown" where a clean checkout's names the commit
        from bobc.host import sections

        a, b = sections.read(work / "installed-host"), sections.read(work / "checkout-host")
        assert a.keys() == b.keys() and all(a[k] == b[k] for k in a if k != "version")
        lines_a, lines_b = a["version"].decode().splitlines(), b["version"].decode().splitlines()
        assert [x for x in lines_a if not x.startswith("bobc commit: ")] == \
            [x for x in lines_b if not x.startswith("bobc commit: ")]
