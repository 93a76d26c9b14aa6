"""`bobc sim` reads its record and checkpoint with the host's limits, as `bobc run --reference` does
(probe s36 resume finding 3).

docs/limits.md: a host reads the input record's size and no more (a bigger file refused unread,
"N bytes, expected exactly SIZE": s39 newuser3) and a checkpoint's envelope and 1 MiB, and a bigger checkpoint whose header names another
plan's identities (a larger model's) is foreign, exit 5; docs/simulator.md: sim has the host's
files and refusals.  Before, sim read either file whole up to 1 GiB and judged it after: an
oversized record was "expected exactly N bytes", and a larger plan's checkpoint was refused
without saying it is larger than this host's.
"""
from __future__ import annotations

import dataclasses

import pytest

from bobc.cli import main
from bobc.reference import envelope

from .conftest import PLAN


def _said(capsys, command, arguments) -> tuple[int, str]:
    status = main([command, str(PLAN), "train", *(["--reference"] if command == "run" else []), *arguments])
    err = capsys.readouterr().err
    prefix = f"bobc {command}: error: "
    assert err.startswith(prefix), err
    return status, err[len(prefix):]


def _oversized_record(folder, case):
    (folder / "record.bin").write_bytes(case[0] + bytes(1 << 20))
    return folder / "record.bin", None


def _oversized_checkpoint(folder, case):
    (folder / "record.bin").write_bytes(case[0])
    (folder / "big.ckpt").write_bytes(bytes(2 << 20))
    return folder / "record.bin", folder / "big.ckpt"


def _larger_plans_checkpoint(folder, case):
    (folder / "record.bin").write_bytes(case[0])
    contract = case[3].contract
    larger = dataclasses.replace(contract, schema=b"a-larger-model-v1", payload_bytes=2 << 20, chunk_bytes=2 << 20)
    (folder / "larger.ckpt").write_bytes(envelope.encode(larger, 0, bytes(2 << 20)))
    return folder / "record.bin", folder / "larger.ckpt"


CASES = {
    # name: (the inputs, exit status, words of the host's refusal)
    "oversized record": (_oversized_record, 3, "expected exactly"),
    "oversized checkpoint": (_oversized_checkpoint, 4, "more than a checkpoint can be"),
    "a larger plan's checkpoint": (_larger_plans_checkpoint, 5, "more than this host's checkpoint"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_sim_refuses_an_oversized_input_as_bobc_run_reference_does(tmp_path, case, capsys, name):
    make, status, words = CASES[name]
    record, checkpoint = make(tmp_path, case)
    arguments = ["--input", str(record), *(["--checkpoint", str(checkpoint)] if checkpoint else []),
                 "--checkpoint-out", str(tmp_path / "c.bin"), "--predictions", str(tmp_path / "p.bin"),
                 "--result", str(tmp_path / "r.bin")]
    ran = _said(capsys, "run", arguments)
    simulated = _said(capsys, "sim", arguments)
    assert ran[0] == status and words in ran[1], ran
    assert simulated == ran
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (record, checkpoint) if p)
