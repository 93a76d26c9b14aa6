"""Seed 004's built host, run by bobc's reference interpreter (issue 17).

The host is built by `bobc build` from Coppelius.Build.DirectArtifact with a short run
(coppeliusRunCheckpointInterval 1, coppeliusRunPublications 2: the plan copied and those
two definitions rewritten, coppelius_host.build), and the program inside the built file is
run by compiler/bobc/reference/native_program.py with the emulated GPU
(coppelius_host.device: the images the host loads, decoded as the GPU reads them, and the
model's NumPy kernels).  A trace of the request's reads, writes and publications and of the
ring entries issued (coppelius_host.reference) holds the seed's own numbers, evaluated from
the same modules: submissions = coppeliusRunSubmissionCount, checkpoint bytes written =
publications x payload, contexts consumed = publications x interval, every chunk read once
and in order.  The weights equal the formula reference (coppelius_model.model.update) on
the same contexts; a run resumed from the first publication reaches the second one bit
for bit; predict changes nothing; and each refusal happens before the device is touched,
naming the part, with nothing written."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from coppelius_host import build, checkpoint, reference
from coppelius_model import model, stream
from coppelius_model.config import SMALL

from .conftest import TEXT

INTERVAL, PUBLICATIONS = 1, 2
STEPS = INTERVAL * PUBLICATIONS
FILE_INPUT, FILE_CHECKPOINT_IN, FILE_CHECKPOINT_OUT = 1, 2, 3


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("coppelius-host")
    root = build.plan_copy(folder / "plan", INTERVAL, PUBLICATIONS)
    host = build.build_from(root, "sm_90", folder / "coppelius-host")
    numbers = build.seed_numbers(root)
    assert (numbers["coppeliusRunCheckpointInterval"], numbers["coppeliusRunPublications"]) == (INTERVAL, PUBLICATIONS)
    text = folder / "text.stream"
    text.write_bytes(stream.from_bytes(TEXT.read_bytes()).encode())
    fresh = folder / "fresh.ckpt"
    fresh.write_bytes(checkpoint.encode(checkpoint.fresh("small", seed=3), "small", STEPS))
    return {"folder": folder, "host": host, "numbers": numbers, "stream": text, "fresh": fresh}


def request(built, name, operation="train", checkpoint_in=None, stream_path=None):
    out = built["folder"] / name
    out.mkdir(exist_ok=True)
    arguments = [operation, "--input", str(stream_path or built["stream"])]
    if checkpoint_in is not None:
        arguments += ["--checkpoint", str(checkpoint_in)]
    arguments += ["--checkpoint-out", str(out / "out.ckpt"), "--predictions", str(out / "predictions"),
                  "--result", str(out / "result")]
    return out, reference.run(built["host"], arguments)


@pytest.fixture(scope="module")
def fresh_run(built):
    out, outcome = request(built, "fresh", checkpoint_in=built["fresh"])
    assert outcome.status == 0, outcome.stderr
    return out, outcome


def test_the_trace_holds_the_seeds_counts(built, fresh_run):
    numbers = built["numbers"]
    _, outcome = fresh_run
    trace = outcome.trace
    # submissions: every ring entry the host issued reached the device
    assert len(outcome.device.entries) == numbers["coppeliusRunSubmissionCount"]
    # checkpoint bytes written = publications x payload, in `publications` publications
    payload = numbers["coppeliusCheckpointPayloadBytesNatural"]
    assert sum(n for file, n, _ in trace.writes if file == FILE_CHECKPOINT_OUT) == PUBLICATIONS * payload
    assert [updates for updates, _ in trace.publications] == [INTERVAL * (k + 1) for k in range(PUBLICATIONS)]
    # every chunk of the input checkpoint read once, in order, tiling the payload
    chunks = [(offset, extent) for file, offset, extent in trace.reads if file == FILE_CHECKPOINT_IN]
    assert len(chunks) == numbers["cgChunks"]
    assert chunks[0][0] == 0 and all(a + n == b for (a, n), (b, _) in zip(chunks, chunks[1:]))
    assert chunks[-1][0] + chunks[-1][1] == payload
    # contexts consumed = publications x interval: the inputs (delta 0) of consecutive contexts, the
    # forward's first (read again by the first step) and one more per step, targets 4 bytes on
    context, header = numbers["coppeliusContextStreamBytes"], numbers["coppeliusTokenStreamHeaderBytes"]
    inputs = [offset for file, offset, extent in trace.reads if file == FILE_INPUT and (offset - header) % context == 0]
    targets = [offset for file, offset, extent in trace.reads if file == FILE_INPUT and (offset - header) % context == 4]
    assert all(extent == context for file, _, extent in trace.reads if file == FILE_INPUT)
    assert inputs == [header] + [header + context * k for k in range(STEPS)]
    assert targets == [offset + 4 for offset in inputs]
    assert len(set(inputs)) == PUBLICATIONS * INTERVAL


def test_the_publications_are_the_formula_references_weights(built, fresh_run):
    """model.update on the same contexts (the NumPy kernels are model.update bit for bit,
    tests/coppelius/test_graph_executes.py; the host computes AdamW's scalars itself)."""
    _, outcome = fresh_run
    state = model.fresh_state(SMALL, seed=3)
    data = TEXT.read_bytes()
    for k, (updates, envelope) in enumerate(outcome.trace.publications):
        while state.step < updates:
            inputs, targets = model.context_at(data, state.step * SMALL.context, SMALL.context)
            model.update(SMALL, state, inputs, targets)
        published = checkpoint.decode(envelope, "small", f"publication {k}", STEPS)
        assert published.step == updates == published.updates
        assert published.skipped == state.skipped == 0
        np.testing.assert_array_equal(published.P, state.P)
        np.testing.assert_array_equal(published.M, state.M)
        np.testing.assert_array_equal(published.V, state.V)


def test_the_outputs_are_the_last_publication_and_the_records(built, fresh_run):
    out, outcome = fresh_run
    assert (out / "out.ckpt").read_bytes() == outcome.trace.publications[-1][1]
    assert (out / "predictions").stat().st_size == 1024
    logits = np.frombuffer((out / "predictions").read_bytes(), "<f4")
    assert np.isfinite(logits).all() and logits.std() > 0


def test_a_run_resumed_from_the_first_publication_reaches_the_second_bit_for_bit(built, fresh_run):
    _, first = fresh_run
    resumed_from = built["folder"] / "publication-1.ckpt"
    resumed_from.write_bytes(first.trace.publications[0][1])
    _, outcome = request(built, "resumed", checkpoint_in=resumed_from)
    assert outcome.status == 0, outcome.stderr
    numbers = built["numbers"]
    context, header = numbers["coppeliusContextStreamBytes"], numbers["coppeliusTokenStreamHeaderBytes"]
    inputs = [offset for file, offset, _ in outcome.trace.reads if file == FILE_INPUT and (offset - header) % context == 0]
    assert inputs[0] == header + context * INTERVAL            # the cursor continues where it stopped
    assert outcome.trace.publications[0][1] == first.trace.publications[1][1]
    assert checkpoint.decode(outcome.trace.publications[-1][1], "small", "resumed", STEPS).step == INTERVAL + STEPS


def test_predict_changes_nothing_in_the_checkpoint(built, fresh_run):
    fresh_out, _ = fresh_run
    trained = fresh_out / "out.ckpt"
    out, outcome = request(built, "predict", operation="predict", checkpoint_in=trained)
    assert outcome.status == 0, outcome.stderr
    assert (out / "out.ckpt").read_bytes() == trained.read_bytes()
    assert outcome.trace.publications == []
    assert sum(n for file, n, _ in outcome.trace.writes if file == FILE_CHECKPOINT_OUT) == 0


def _other_configurations_checkpoint(path):
    from bobc.reference import envelope
    large = dataclasses.replace(checkpoint.contract("large"), payload_bytes=16, chunk_bytes=16)
    path.write_bytes(envelope.encode(large, 0, bytes(16)))


def _past_the_stream(path):
    # the cursor 64 + 512 x 600 lies past the 65,536-token stream
    fresh = checkpoint.fresh("small", seed=3)
    path.write_bytes(checkpoint.encode(dataclasses.replace(fresh, step=600), "small", STEPS))


REFUSALS = {
    # name: (how the inputs differ, exit status, the part the message names)
    "short stream": ("stream", 3, "shorter than a train request needs"),
    "foreign format": ("format", 3, "magic"),
    "other configuration": ("config", 5, "schema identity differs"),
    "cursor past the stream": ("cursor", 3, "cursor"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_each_refusal_is_before_the_device_names_the_part_and_writes_nothing(built, case):
    kind, status, part = REFUSALS[case]
    folder = built["folder"] / f"inputs-{kind}"
    folder.mkdir(exist_ok=True)
    stream_path, checkpoint_in = built["stream"], built["fresh"]
    if kind == "stream":
        stream_path = folder / "short.stream"
        stream_path.write_bytes(stream.from_bytes(TEXT.read_bytes()[:STEPS * SMALL.context]).encode())
    elif kind == "format":
        stream_path = folder / "foreign.stream"
        stream_path.write_bytes(b"NOTSTRM1" + built["stream"].read_bytes()[8:])
    elif kind == "config":
        checkpoint_in = folder / "large.ckpt"
        _other_configurations_checkpoint(checkpoint_in)
    else:
        checkpoint_in = folder / "far.ckpt"
        _past_the_stream(checkpoint_in)
    out, outcome = request(built, f"refused-{kind}", checkpoint_in=checkpoint_in, stream_path=stream_path)
    assert outcome.status == status, outcome.stderr
    assert part in outcome.stderr, outcome.stderr
    assert "nothing was published" in outcome.stderr
    assert outcome.trace.maps == 0 and outcome.device.entries == []          # the device never touched
    assert sorted(p.name for p in out.iterdir()) == []                        # no output written


def test_the_documented_command_runs_the_host_without_a_gpu(tmp_path):
    """`bobc run ... native predict --reference --kernels coppelius_host/reference_submit.py`
    (docs/coppelius-host.md): from the all-zero fresh state every logit is 0, so the predictions
    are 256 binary32 zeros and the forward's mean loss is ln 256 in binary32 -- an answer known
    without the model."""
    import math
    import struct
    import subprocess
    import sys

    from .conftest import EXAMPLE, REPOSITORY

    (tmp_path / "s.stream").write_bytes(stream.from_bytes(TEXT.read_bytes()).encode())
    done = subprocess.run(
        [sys.executable, "-m", "bobc", "run", str(EXAMPLE / "Coppelius/Build/DirectArtifact.bob"), "native", "predict",
         "--entry", "coppeliusHost", "--target", "sm_90", "--reference",
         "--kernels", str(EXAMPLE / "coppelius_host/reference_submit.py"), "--input", "s.stream",
         "--checkpoint-out", "o.ckpt", "--predictions", "p.bin", "--result", "r.bin"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, env={**__import__("os").environ,
                                                                         "PYTHONPATH": str(REPOSITORY / "compiler")})
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "p.bin").read_bytes() == bytes(1024)
    result = (tmp_path / "r.bin").read_bytes()
    assert result[:16] == b"COPPELIUS-RESULT"
    assert struct.unpack_from("<f", result, 16)[0] == struct.unpack("<f", struct.pack("<f", math.log(256)))[0]
