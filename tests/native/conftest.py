"""Fixtures of the native physical program tests (helpers: native_helpers.py)."""
from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from native_helpers import PLANS, load_module, run_sides, write_host  # noqa: E402


@pytest.fixture(scope="session")
def commands():
    return load_module(PLANS / "Native" / "Commands.bob")


@pytest.fixture(scope="session")
def host_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("native-hosts")


@pytest.fixture
def both(tmp_path, host_folder):
    """both(code, inputs, arguments, env, name) -> (C outcome, reference outcome), each run in a
    fresh folder holding `inputs` (name -> bytes) and nothing else but the host."""
    counter = itertools.count()

    def run(code: bytes, inputs: dict, arguments, env=None, name="program"):
        return run_sides(tmp_path, code, write_host(host_folder, name, code), inputs, arguments, env,
                         name=f"run{next(counter)}", local_host=True, reference_name="host")
    return run
