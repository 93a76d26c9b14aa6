"""A Coppelius host run without --checkpoint starts from the platform's all-zero state (seed 004's
request names no initializer), and from it the model never learns: docs/coppelius-host.md, "Inputs".

Probe s45 coppuser: a 1x256x128 host's `train` without --checkpoint ran its updates at loss 5.545177
and published |P|max 0, exit 0 -- silently; the docs said only that the zero state is "rarely what a
predict wants".  The independent reason: the layer norm of a zero row is 0 (x - mean = 0), the gains
are offsets from 1 and the biases 0, so every activation after a norm, every logit and so every
gradient is exactly 0, and AdamW moves nothing (m = 0); each row's loss is then ln 256, whose binary32
is 5.5451774 (by hand: log(256) = 5.545177444479562)."""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from coppelius_model import model
from coppelius_model.config import named

DOC = Path(__file__).resolve().parents[2] / "docs" / "coppelius-host.md"


def test_from_all_zeros_every_gradient_is_zero_and_nothing_moves():
    config = named("1x256x128")
    n = config.parameter_count
    state = model.State(np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32),
                        np.zeros(n, np.float16))
    tokens = np.arange(config.context + 1, dtype=np.uint32) * 7 % 256
    for _ in range(2):
        result = model.update(config, state, tokens[:-1], tokens[1:])
        assert not result.grad.any()
        assert np.float32(result.loss) == np.float32(math.log(256))
    assert not state.P.any() and not state.M.any() and not state.V.any()


def test_the_doc_says_so():
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    assert "Coppelius never learns from that state" in text
    assert re.search(r"loss at ln 256 = 5\.5452", text)
    assert "rarely what a `predict` wants" not in text
