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
    # about 4.3 GB at the H200's 4.8 TB/s: 0.899 ms since session 45's norms read the split partials (0.903 before)
    assert 0.85e-3 < r["seconds"] < 1.1e-3
    # AdamW alone moves 30 bytes a parameter
    assert r["bytes"] > 30 * LARGE.parameter_count


def test_the_doc_quotes_the_scripts_output():
    out = subprocess.run([sys.executable, "-m", "coppelius_model.limits"], cwd=EXAMPLE, capture_output=True,
                         text=True, check=True).stdout
    doc = (REPOSITORY / "docs" / "coppelius.md").read_text(encoding="utf-8")
    quoted = "\n".join("    " + line for line in out.strip().splitlines())
    assert quoted in doc   # as an indented block


def test_the_limit_on_another_gpu_is_its_bandwidths():
    """--gpu h100: the same flops and bytes at the H100's 3.35 TB/s (the device tool lends H100s
    too); the bench picks the GPU it ran on by name, and one it has no rates for is refused."""
    h200, h100 = limits.limit(LARGE), limits.limit(LARGE, limits.GPUS["h100"])
    assert h100["bytes"] == h200["bytes"] and h100["flops"] == h200["flops"]
    assert h100["byte_seconds"] == pytest.approx(h200["bytes"] / 3.35e12)
    assert limits.gpu_of("NVIDIA H100 80GB HBM3").name == "H100"
    assert limits.gpu_of("NVIDIA H200").name == "H200"
    with pytest.raises(KeyError):
        limits.gpu_of("NVIDIA GeForce RTX 3090")
    out = subprocess.run([sys.executable, "-m", "coppelius_model.limits", "--gpu", "H100", "large"], cwd=EXAMPLE,
                         capture_output=True, text=True, check=True).stdout
    assert out.startswith("H100: 989.5 TFLOP/s (binary16 tensor cores, dense), 3.35 TB/s\n")
    assert out.splitlines()[-1].split()[-1] == f"{h100['seconds'] * 1e3:.3f}"


def test_help_and_a_wrong_config_are_said_not_a_traceback():
    done = subprocess.run([sys.executable, "-m", "coppelius_model.limits", "--help"], cwd=EXAMPLE,
                          capture_output=True, text=True)
    assert done.returncode == 0 and "--gpu" in done.stdout
    done = subprocess.run([sys.executable, "-m", "coppelius_model.limits", "bogus"], cwd=EXAMPLE,
                          capture_output=True, text=True)
    assert done.returncode == 2 and "no Coppelius configuration 'bogus'" in done.stderr
    assert "Traceback" not in done.stderr
