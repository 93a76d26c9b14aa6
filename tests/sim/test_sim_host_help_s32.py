"""`bobc sim` splits its command line as `bobc run` does (docs/runtime.md, docs/simulator.md):
from the operation on, -h and --help are the host's, and after `--` every word is -- the host's
usage is printed, as `bobc run PLAN train --help --reference` prints it (the program named
`bobc sim PLAN`), nothing is run or written, exit 0.  sim kept --help its own everywhere (probe s32
paths finding 3).  Before the operation --help is still sim's own."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.cli import main

REPO = Path(__file__).resolve().parents[2]
PLAN = str(REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob")


def said(capsys, argv) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("words", [
    ["train", "--help"],
    ["predict", "-h", "--input", "x"],
    ["train", "--input", "record.bin", "--", "--help"],
    ["--target", "sm_86", "train", "--checkpoint-out", "c.bin", "--help", "--max-steps", "10"],
])
def test_help_after_the_operation_is_the_hosts_usage_as_bobc_run_prints_it(tmp_path, monkeypatch, capsys, words):
    monkeypatch.chdir(tmp_path)
    run = said(capsys, ["run", PLAN, "--reference", *[w for w in words if w not in ("--max-steps", "10")]])
    assert run[0] == 0 and run[2] == "", run
    sim = said(capsys, ["sim", PLAN, *words])
    assert sim[0] == 0 and sim[2] == "", sim
    assert sim[1].startswith(f"usage: bobc sim {PLAN} train|predict --input RECORD")
    # the host's usage, word for word, but for the program's name (and the indent under it)
    assert sim[1].replace(f"bobc sim {PLAN}", "PROGRAM").replace(" " * len(f"bobc sim {PLAN}"), "INDENT") == \
        run[1].replace(f"bobc run {PLAN} --reference", "PROGRAM").replace(
            " " * len(f"bobc run {PLAN} --reference"), "INDENT")
    assert "The native host of linreg" in sim[1] and "exit codes:" in sim[1]
    assert list(tmp_path.iterdir()) == []


def test_help_before_the_operation_is_sims_own(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as ended:
        main(["sim", PLAN, "--help", "train"])
    assert ended.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: bobc sim [-h]") and "--no-hazard-check" in out
