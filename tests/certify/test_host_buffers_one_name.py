"""Two host buffers with one name (probe s33 soundness finding 6): the certifier refuses them by
that name with both places, at `bobc check` as at `bobc build` (the build never reaches the
generator's "overlap once sized for this target's images", untrue for them), and the second
buffer is still tested against the others (it was hidden by the first's name)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bobc.cli import main

REPO = Path(__file__).resolve().parents[2]
END = '''            (lrBuffer b"arena" lrVideo lrArenaBase lrArenaBytes
              (constructor NvidiaPlanHostBuffers NvidiaPlanHostBuffersEnd)))))))'''


def _plan(tmp_path: Path, base: str) -> Path:
    """LinReg whose host maps a second buffer named arena at `base`, 0x10000 bytes, before its arena."""
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    plan = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    text = plan.read_text()
    assert text.count(END) == 1
    plan.write_text(text.replace(END, f'            (lrBuffer b"arena" lrVideo {base} 0x10000\n'
                                      + END.replace(")))))))", "))))))))")))
    return plan


def _line_of(plan: Path, text: str) -> int:
    (line,) = [i for i, row in enumerate(plan.read_text().splitlines(), 1) if text in row]
    return line


@pytest.mark.parametrize("verb", ["check", "build"])
def test_two_buffers_named_alike_are_refused_by_name_with_both_places(tmp_path, capsys, monkeypatch, verb):
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    plan = _plan(tmp_path, "lrProgramBase")
    first = _line_of(plan, '(lrBuffer b"arena" lrVideo lrProgramBase 0x10000')
    second = _line_of(plan, '(lrBuffer b"arena" lrVideo lrArenaBase lrArenaBytes')
    argv = [verb, str(plan)] + (["-o", str(tmp_path / "host")] if verb == "build" else [])
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "the host maps two buffers named arena" in err, err
    assert f"{plan}:{first}:" in err and f"{plan}:{second}:" in err
    # the first arena lies over the program buffer: said as such, not hidden by the second's name
    assert "and arena [0x1000000000, 0x1000010000) overlap in the GPU address space" in err
    assert "once sized for this target's images" not in err
    assert not (tmp_path / "host").exists()


def test_two_buffers_named_alike_apart_from_the_rest_are_refused_too(tmp_path, capsys, monkeypatch):
    """Nothing overlaps: the one name alone is the fault."""
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    plan = _plan(tmp_path, "0x1200000000")
    assert main(["check", str(plan)]) == 1
    err = capsys.readouterr().err
    assert "the plan is not certified (1 fault)" in err and "the host maps two buffers named arena" in err, err
