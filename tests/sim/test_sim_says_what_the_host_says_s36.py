"""`bobc sim` refuses a bad file as the built host and `bobc run --reference` refuse it: the same
line and the same exit code, for the same inputs (probe s36 simwords findings 1-5).

docs/simulator.md: sim has "the same arguments and files as the native host and `bobc run
--reference` ... with the same one-line refusals and exit codes"; docs/runtime.md: an output's
refusal is the host's line (`output PATH (OPTION): DETAIL; nothing was written`), and the host
reads and checks its inputs (the record, then the checkpoint) before it judges an output
(runtime_c/plan_host.c).  Before, sim said an output's refusal in bobc's own form (`PATH: cannot
write output (OPTION): DETAIL` and a hint), judged the outputs before the checkpoint (a damaged
checkpoint beside a bad output path was exit 8, not 4), ignored BOBC_HOST_TIMING naming an input
and the host's settings; sim and the reference checked the record after the outputs (a bad record
beside a bad output path was exit 8, the host's 3).

Each case runs sim and the reference on the same files in two fresh folders; the lines the
reference prints are the host's (tests/host compare those with the built host), and the ones
asserted literally here are docs/runtime.md's forms.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bobc.cli import main

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
OUTPUTS = ["--checkpoint-out", "c.bin", "--predictions", "p.bin", "--result", "r.bin"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A good record and a good checkpoint of LinReg (the reference's own run)."""
    folder = tmp_path_factory.mktemp("linreg-files")
    made = subprocess.run([sys.executable, str(REPO / "examples/linear_regression/make_record.py"), "-o",
                           str(folder / "record.bin")], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    assert main(["run", str(LINREG), "train", "--reference", "--input", str(folder / "record.bin"),
                 "--checkpoint-out", str(folder / "good.bin"), "--predictions", str(folder / "p"),
                 "--result", str(folder / "r")]) == 0
    return folder


def _damaged(data: bytes) -> bytes:
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 1
    return bytes(flipped)


def _bad_magic(data: bytes) -> bytes:
    return bytes([data[0] ^ 0xff]) + data[1:]


# name: (files to put in the folder: name -> (source, change)), folders to make, the words, env
CASES = {
    "output folder missing": ({"rec.bin": ("record.bin", None)}, [],
                              ["--input", "rec.bin", "--checkpoint-out", "no/c.bin", "--predictions", "p.bin",
                               "--result", "r.bin"], {}),
    "output is a folder": ({"rec.bin": ("record.bin", None)}, ["p.bin"], ["--input", "rec.bin", *OUTPUTS], {}),
    "output is the input": ({"rec.bin": ("record.bin", None)}, [],
                            ["--input", "rec.bin", "--checkpoint-out", "c.bin", "--predictions", "p.bin",
                             "--result", "rec.bin"], {}),
    "damaged checkpoint and a bad output": (
        {"rec.bin": ("record.bin", None), "in.bin": ("good.bin", _damaged)}, [],
        ["--input", "rec.bin", "--checkpoint", "in.bin", "--checkpoint-out", "no/c.bin", "--predictions",
         "p.bin", "--result", "r.bin"], {}),
    "bad record and a bad output": (
        {"rec.bin": ("record.bin", _bad_magic)}, [],
        ["--input", "rec.bin", "--checkpoint-out", "no/c.bin", "--predictions", "p.bin", "--result", "r.bin"], {}),
    "bad record and a damaged checkpoint": (
        {"rec.bin": ("record.bin", _bad_magic), "in.bin": ("good.bin", _damaged)}, [],
        ["--input", "rec.bin", "--checkpoint", "in.bin", *OUTPUTS], {}),
    "BOBC_HOST_TIMING names the input": ({"rec.bin": ("record.bin", None)}, [], ["--input", "rec.bin", *OUTPUTS],
                                         {"BOBC_HOST_TIMING": "rec.bin"}),
    "a setting outside its set": ({"rec.bin": ("record.bin", None)}, [], ["--input", "rec.bin", *OUTPUTS],
                                  {"BOBC_GPU_MAPPING": "bogus"}),
}

# what the host says (docs/runtime.md's forms; the exit codes of README's table)
EXPECTED = {
    "output folder missing": (8, "output no/c.bin (--checkpoint-out): its folder no does not exist; create it "
                                 "first; nothing was written"),
    "output is a folder": (8, "output p.bin (--predictions): is a folder; only a regular file (or nothing) is "
                              "replaced; nothing was written"),
    "output is the input": (8, "output rec.bin (--result): is the input rec.bin; an output never replaces an "
                               "input; nothing was written"),
    "damaged checkpoint and a bad output": (4, "checkpoint in.bin: corrupted: "),
    "bad record and a bad output": (3, "input record rec.bin: magic at byte 0 is not "),
    "bad record and a damaged checkpoint": (3, "input record rec.bin: magic at byte 0 is not "),
    "BOBC_HOST_TIMING names the input": (8, "BOBC_HOST_TIMING rec.bin: is the input rec.bin; a diagnostic file "
                                            "never replaces an input; nothing was written"),
    "a setting outside its set": (2, "BOBC_GPU_MAPPING=bogus: expected rm or uvm"),
}


def _run(command, folder, files, case, monkeypatch, capsys):
    made, folders, words, env = CASES[case]
    folder.mkdir()
    for name, (source, change) in made.items():
        data = (files / source).read_bytes()
        (folder / name).write_bytes(change(data) if change else data)
    for name in folders:
        (folder / name).mkdir()
    with monkeypatch.context() as patch:
        patch.chdir(folder)
        for variable, value in env.items():
            patch.setenv(variable, value)
        capsys.readouterr()
        code = main(command(words))
    said = capsys.readouterr().err
    return code, said, sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("case", sorted(CASES))
def test_sim_refuses_as_the_reference_and_the_host_do(tmp_path, files, case, monkeypatch, capsys):
    sim = _run(lambda words: ["sim", str(LINREG), "train", *words], tmp_path / "sim", files, case, monkeypatch,
               capsys)
    reference = _run(lambda words: ["run", str(LINREG), "train", "--reference", *words], tmp_path / "ref", files,
                     case, monkeypatch, capsys)
    code, line = EXPECTED[case]
    for (got, said, _), who in ((sim, "bobc sim"), (reference, "bobc run")):
        assert got == code, (who, got, said)
        assert said.startswith(f"{who}: error: {line}"), (who, said)
        assert said.count("\n") == 1 and "cannot write output" not in said, (who, said)     # one line, no hint
    assert sim[1].replace("bobc sim:", "bobc run:") == reference[1]
    assert sim[2] == reference[2]               # nothing written by either


def test_sim_refuses_an_interval_checkpoint_it_cannot_publish_in_the_hosts_words(tmp_path, monkeypatch, capsys):
    """Synthetic/AllSteps.bob publishes twice: the first is an interval's (as
    tests/platform/test_interval_publication_words_s36.py has it for the reference)."""
    import numpy as np
    from bob_model.formats import InputRecord, encode_input_record

    from bobc.reference import safe_io

    (tmp_path / "record.bin").write_bytes(
        encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256, [97, 98, 99])))
    checkpoint = tmp_path / "ck.bin"
    publish_file = safe_io.publish_file

    def a_folder_appears(path, data, option="output", mode=None):     # put there during the run
        checkpoint.mkdir()
        return publish_file(path, data, option, mode)

    monkeypatch.setattr(safe_io, "publish_file", a_folder_appears)
    code = main(["sim", str(REPO / "tests/platform/Synthetic/AllSteps.bob"), "train", "-I", str(REPO / "examples/bob"),
                 "--entry", "synAllStepsHost", "--target", "sm_86", "--input", str(tmp_path / "record.bin"),
                 "--checkpoint-out", str(checkpoint), "--predictions", str(tmp_path / "p.bin"),
                 "--result", str(tmp_path / "r.bin")])
    said = capsys.readouterr().err
    assert code == 8, said
    assert said == (f"bobc sim: error: output {safe_io.shown(str(checkpoint))} (--checkpoint-out): is a folder; only "
                    "a regular file (or nothing) is replaced; nothing was written\n"), said
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck.bin", "record.bin"]
