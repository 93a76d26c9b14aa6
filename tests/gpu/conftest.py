"""Fixtures the GPU tests share."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "compiler"))


@pytest.fixture(scope="module")
def host(tmp_path_factory) -> Path:
    """Bob's sm_90 host: BOB_HOST when set (built where bobc is installed), else built here."""
    prebuilt = os.environ.get("BOB_HOST")
    if prebuilt:
        return Path(prebuilt).resolve()
    from bobc import pipeline
    from bobc.host import generate
    from bobc.targets import SM90

    built = pipeline.compile_plan(REPO / "examples/bob/Bob/Build/NativeHost.bob", SM90)
    output = tmp_path_factory.mktemp("host") / "bob-host"
    generate.build_host(built, SM90, output)
    return output


@pytest.fixture(scope="module")
def target():
    """The bobc target of this machine's GPU (CuPy's compute capability)."""
    cp = pytest.importorskip("cupy")
    from bobc.targets import TARGETS
    name = f"sm_{cp.cuda.Device().compute_capability}"
    if name not in TARGETS:
        pytest.skip(f"no bobc target for {name}")
    return TARGETS[name]
