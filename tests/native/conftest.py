"""Fixtures of the native physical program tests (helpers: native_helpers.py)."""
from __future__ import annotations

import itertools
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from native_helpers import PLANS, load_module, run_c, run_reference, write_host  # noqa: E402


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
        host = write_host(host_folder, name, code)
        run_number = next(counter)
        outcomes = []
        for side in ("c", "reference"):
            folder = tmp_path / f"{side}{run_number}"
            folder.mkdir()
            for file_name, data in inputs.items():
                (folder / file_name).write_bytes(data)
            if side == "c":
                local = folder / "host"
                shutil.copy(host, local)
                outcome = run_c(local, folder, arguments, env)
                outcome.files.pop("host", None)
            else:
                outcome = run_reference(code, folder, arguments, env)
            outcomes.append(outcome)
        return tuple(outcomes)
    return run
