"""`python -m coppelius_host.reference HOST ARGUMENTS...`: a host coppelius_host.build wrote for a
shape of one's own (its plan copy removed after the build) run without a GPU.

Probe s45 coppuser: docs/coppelius.md's "A shape of your own" builds HOST with
`coppelius_host.build --config LxDxT`, and docs/coppelius-host.md's only GPU-less command,
`bobc run PLAN native ... --reference`, needs the plan on disk; `bobc run HOST native ...` is
refused ("native needs --entry DEF") and the HOST itself exits 6 without a GPU.  So a user of
the documented route had no way to run their host without a GPU.

The expected values are the formula reference's (coppelius_model.model.update run directly on
the stream's contexts from the same fresh checkpoint: an independent implementation of the model),
and the host's own refusals (the built C host says the same words: exit 8 naming "this host's
own file" for an output over HOST)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from coppelius_host import build, checkpoint
from coppelius_model import model, stream
from coppelius_model.config import named

from .conftest import EXAMPLE, REPOSITORY, TEXT

SHAPE = "1x256x128"          # not the plan's own shape: no plan of it is left on disk after the build
UPDATES = 2                  # --interval 2 --publications 1


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("coppelius-reference-cli")
    assert build.build("sm_90", folder / "host", interval=UPDATES, publications=1, config=SHAPE).is_file()
    (folder / "text.stream").write_bytes(stream.from_bytes(TEXT.read_bytes()[:2000]).encode())
    (folder / "fresh.ckpt").write_bytes(checkpoint.encode(checkpoint.fresh(SHAPE, seed=5), SHAPE, UPDATES))
    return folder


def cli(folder, *arguments):
    return subprocess.run([sys.executable, "-m", "coppelius_host.reference", *map(str, arguments)], cwd=EXAMPLE,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler")})


def outputs(folder, name):
    return ["--checkpoint-out", folder / f"{name}.ckpt", "--predictions", folder / f"{name}.pred",
            "--result", folder / f"{name}.res"]


def test_a_built_host_of_another_shape_trains_as_the_formula_reference(built):
    done = cli(built, built / "host", "train", "--input", built / "text.stream", "--checkpoint", built / "fresh.ckpt",
               *outputs(built, "out"))
    assert done.returncode == 0, done.stderr
    config = named(SHAPE)
    T = config.context
    fresh = checkpoint.fresh(SHAPE, seed=5)
    state = model.State(fresh.P.copy(), fresh.M.copy(), fresh.V.copy(), fresh.P.astype(np.float16))
    tokens = stream.read(built / "text.stream").tokens
    result = (built / "out.res").read_bytes()
    for k in range(UPDATES):
        expected = model.update(config, state, tokens[k * T:(k + 1) * T], tokens[k * T + 1:(k + 1) * T + 1])
        at = 32 + k * (16 + 4 * T)           # the forward record, then one loss record an update
        assert np.frombuffer(result, "<f4", 1, at)[0] == np.float32(expected.loss)
        assert np.array_equal(np.frombuffer(result, "<f4", T, at + 16), expected.losses)
    out = checkpoint.decode((built / "out.ckpt").read_bytes(), SHAPE, "out.ckpt", UPDATES)
    assert out.step == UPDATES and out.updates == UPDATES
    assert np.array_equal(out.P, state.P) and np.array_equal(out.M, state.M) and np.array_equal(out.V, state.V)


def test_an_output_over_the_host_is_refused_as_the_host_refuses_it(built):
    before = (built / "host").read_bytes()
    done = cli(built, built / "host", "predict", "--input", built / "text.stream", "--checkpoint", built / "fresh.ckpt",
               "--checkpoint-out", built / "host", "--predictions", built / "p", "--result", built / "r")
    assert done.returncode == 8, done.stderr
    assert "(this host's own file); an output never replaces an input; nothing was written" in done.stderr
    assert (built / "host").read_bytes() == before
    assert not (built / "p").exists() and not (built / "r").exists()


def test_what_is_not_a_host_is_refused_by_name(built):
    missing = cli(built, built / "no-such-host", "predict")
    assert missing.returncode == 2 and "cannot read host" in missing.stderr and "no-such-host" in missing.stderr
    text = cli(built, built / "text.stream", "predict")
    assert text.returncode == 9 and "damaged host file" in text.stderr and "text.stream" in text.stderr
    bare = cli(built)
    assert bare.returncode == 2 and bare.stderr.startswith("usage: python -m coppelius_host.reference HOST")
