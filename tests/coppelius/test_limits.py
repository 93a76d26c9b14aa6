"""The performance limit docs/coppelius.md quotes: the matrix-product flops the launch
graph charges equal the textbook count (forward 2 T (12 L d^2 + d V) + 4 L T^2 d,
backward twice that), and the large configuration's limit is about 1 ms."""
from __future__ import annotations

import subprocess
import sys

import pytest

from coppelius_model import limits
from coppelius_model.config import LARGE, SMALL

from .conftest import EXAMPLE, REPOSITORY


@pytest.mark.parametrize("config", [SMALL, LARGE], ids=lambda c: c.name)
def test_flops_are_three_forward_passes(config):
    T, L, d, V = config.context, config.layers, config.width, config.vocabulary
    forward = 2 * T * (12 * L * d * d + d * V) + 4 * L * T * T * d
    assert limits.limit(config)["flops"] == 3 * forward


def test_large_update_limit_is_about_a_millisecond():
    r = limits.limit(LARGE)
    assert 0.9e-3 < r["seconds"] < 1.1e-3
    # AdamW alone moves 30 bytes a parameter
    assert r["bytes"] > 30 * LARGE.parameter_count


def test_the_doc_quotes_the_scripts_output():
    out = subprocess.run([sys.executable, "-m", "coppelius_model.limits"], cwd=EXAMPLE, capture_output=True,
                         text=True, check=True).stdout
    doc = (REPOSITORY / "docs" / "coppelius.md").read_text(encoding="utf-8")
    quoted = "\n".join("    " + line for line in out.strip().splitlines())
    assert quoted in doc   # as an indented block
