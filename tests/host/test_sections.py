"""Images embedded as ELF sections survive the round trip and the host still runs."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from bobc.host import sections

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


@pytest.fixture
def tiny_host(tmp_path):
    source = tmp_path / "main.c"
    source.write_text('#include <stdio.h>\nint main(void) { puts("host ran"); return 0; }\n')
    executable = tmp_path / "host"
    subprocess.run(["gcc", "-O2", str(source), "-o", str(executable)], check=True)
    return executable


def test_embedded_sections_read_back_and_host_still_runs(tiny_host):
    images = {"program": bytes(range(256)) * 3, "manifest": b'{"target": "sm_90"}'}
    sections.embed(tiny_host, images)
    assert sections.read(tiny_host) == images
    # readelf is an independent reader of the section table
    listing = subprocess.run(["readelf", "-S", "-W", str(tiny_host)], capture_output=True, text=True).stdout
    assert ".bobc.program" in listing and ".bobc.manifest" in listing
    assert subprocess.run([str(tiny_host)], capture_output=True, text=True).stdout == "host ran\n"


def test_embedding_is_deterministic(tiny_host, tmp_path):
    copy = tmp_path / "copy"
    shutil.copy(tiny_host, copy)
    images = {"qmd": b"\x01" * 512}
    sections.embed(tiny_host, images)
    sections.embed(copy, images)
    assert tiny_host.read_bytes() == copy.read_bytes()


def test_inspect_lists_sections_and_target(tiny_host):
    """The sections are listed first; a host without its version section cannot check its images
    and refuses to run (exit 9), so inspect then says it is damaged (exit 1)."""
    sections.embed(tiny_host, {"push": b"\0" * 64, "manifest": b'{"target": "sm_86"}'})
    result = subprocess.run([sys.executable, "-m", "bobc", "inspect", str(tiny_host)],
                            capture_output=True, text=True)
    assert "sm_86" in result.stdout and ".bobc.push" in result.stdout and "64 bytes" in result.stdout
    assert result.returncode == 1 and "is damaged: it has no version section" in result.stderr, result.stderr  # a file refused: 1 for every subcommand but diff (probe s30 cli finding 7)


def test_inspect_refuses_a_foreign_executable(tiny_host):
    result = subprocess.run([sys.executable, "-m", "bobc", "inspect", str(tiny_host)],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "carries no bobc images" in result.stderr and "Traceback" not in result.stderr


def test_inspect_says_when_the_manifest_is_not_json(tiny_host):
    sections.embed(tiny_host, {"push": b"\0" * 64, "manifest": b"{not json"})
    listing = sections.describe(tiny_host)
    assert ".bobc.manifest is not JSON" in listing and ".bobc.push" in listing
