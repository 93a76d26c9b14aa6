"""Coppelius's tools and docs say what the code does (probe s28 texts, findings 5 and 6): the
envelope's chunk count as docs/formats.md describes it, the docs' citation of formats.md's
token stream heading, `checkpoint show` pointing at --updates-per-invocation, --config's help
naming every configuration the code takes, and the model's kernels quiet about NaN and Inf
(no NumPy RuntimeWarning on the reference runner's stderr)."""
from __future__ import annotations

import re
import struct
import subprocess
import sys
import warnings

import numpy as np
import pytest

from .conftest import EXAMPLE, REPOSITORY

DOCS = REPOSITORY / "docs"


def headings(doc) -> list[str]:
    return [re.sub(r"^#+\s*", "", line).strip() for line in doc.read_text().splitlines() if line.startswith("#")]


def test_the_docs_cite_the_token_streams_heading_as_formats_md_writes_it():
    found = headings(DOCS / "formats.md")
    for doc in ("coppelius.md", "coppelius-host.md"):
        for cited in re.findall(r'docs/formats\.md, "([^"]+)"', (DOCS / doc).read_text()):
            assert any(h == cited or h.startswith(cited) for h in found), (doc, cited, found)


def test_formats_md_says_what_the_chunk_count_holds():
    from coppelius_host.checkpoint import contract

    from bobc.reference import envelope

    c = contract("small")
    count, tail = divmod(c.payload_bytes, c.chunk_bytes)
    text = " ".join((DOCS / "formats.md").read_text().split())
    assert "chunk count: whole chunks, payload bytes / chunk bytes rounded down" in text
    assert (f"small configuration's {c.payload_bytes:,}-byte payload in {c.chunk_bytes >> 20} MiB chunks has chunk "
            f"count {count}") in text
    assert f"{count} chunks of {c.chunk_bytes:,} bytes and a {tail:,}-byte tail" in text
    written = envelope.encode(c, 0, bytes(c.payload_bytes))
    assert struct.unpack_from("<I", written, 12)[0] == count and 0 < tail < c.chunk_bytes


def checkpoint_tool(*arguments, cwd):
    return subprocess.run([sys.executable, "-m", "coppelius_host.checkpoint", *map(str, arguments)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_show_of_another_run_lengths_checkpoint_names_the_option(tmp_path):
    written = checkpoint_tool("fresh", "-o", tmp_path / "a.ckpt", "--updates-per-invocation", 4, cwd=EXAMPLE)
    assert written.returncode == 0, written.stderr
    shown = checkpoint_tool("show", tmp_path / "a.ckpt", cwd=EXAMPLE)
    assert shown.returncode == 5, shown.stderr
    assert shown.stderr.strip().endswith("updates per invocation differ: configuration small's 200, the checkpoint's 4 (a "
                                         "checkpoint of a host built with another run length: show it with "
                                         "--updates-per-invocation 4)"), shown.stderr
    again = checkpoint_tool("show", tmp_path / "a.ckpt", "--updates-per-invocation", 4, cwd=EXAMPLE)
    assert again.returncode == 0 and "step 0" in again.stdout, again.stderr
    (tmp_path / "m.ckpt").write_bytes(b"X" + (tmp_path / "a.ckpt").read_bytes()[1:])
    bad = checkpoint_tool("show", tmp_path / "m.ckpt", cwd=EXAMPLE)
    assert bad.returncode == 4 and "(magic is not BOBCENV1)" in bad.stderr and "b'" not in bad.stderr, bad.stderr


@pytest.mark.parametrize("tool", [("coppelius_host.checkpoint", "fresh"), ("coppelius_host.checkpoint", "show"),
                                  ("coppelius_host.build",)])
def test_config_help_names_every_configuration_the_code_takes(tool):
    """Every named configuration a host serves; not tiny, the gradient check's, which every tool
    refuses ("no host serves configuration tiny": probe s32 stream finding 8)."""
    from coppelius_model.config import CONFIGS, shape_refusal

    done = subprocess.run([sys.executable, "-m", *tool, "--help"], cwd=EXAMPLE, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    help_text = text[text.index("--config CONFIG"):]
    for name, c in CONFIGS.items():
        served = not shape_refusal(c.layers, c.width, c.context, c.chunk_bytes)
        assert bool(re.search(rf"\b{name}\b", help_text)) == served, (name, help_text)
    assert "small" in help_text and "large" in help_text and "tiny" not in help_text
    assert "LAYERSxWIDTHxCONTEXT[:CHUNK_BYTES]" in help_text


def test_the_kernels_compute_through_inf_without_a_warning():
    from coppelius_model import graph, kernels, layout
    from coppelius_model.config import TINY

    memory = kernels.FlatMemory([(layout.ARENA_BASE, layout.arena_bytes(TINY)),
                                 (layout.STAGING_BASE, layout.staging_bytes(TINY))])
    residents = layout.arena(TINY)
    # what a checkpoint full of Inf trains through (every update skipped): the master weights
    # and their half copies, which the forward reads
    for name, dtype in (("parameters", "<f4"), ("half-parameters", "<f2")):
        memory.array(residents[name].address, dtype, TINY.parameter_count)[...] = np.inf
    pieces = {p.name: p for p in graph.pieces(TINY)}
    with np.errstate(divide="warn", over="warn", invalid="warn", under="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")        # (NumPy's defaults) a RuntimeWarning would be raised here
        kernels.run(memory, pieces["forward"].launches)
        kernels.run(memory, pieces["update"].launches)
