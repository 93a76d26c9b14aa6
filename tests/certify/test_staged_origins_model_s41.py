"""bobc.certify.host_steps._Origins -- the map of where each byte of the host's and device's memory
came from, which _staged_homes follows a staged checkpoint through -- against a byte-by-byte model
(probe s41 mutants6: mutants of its get / put / taint cut arithmetic passed the plan-level tests in
test_staged_checkpoint_homes_s41.py).

The model is its docstrings' rule, a dict of byte -> (tag, the byte it came from, via): put(low, high,
pieces) makes each byte of [low, high) a piece covers come from that piece's base + its offset in
the piece, and each byte no piece covers its own again; get(low, high, tag) says, per byte, what it
came from, a byte with no origin `tag` at its own address; taint(low, high) makes every byte of
[low, high) with an origin other than unknown an unknown one (base 0), a byte with none stays its own.
"""
from __future__ import annotations

import random

from bobc.certify.host_steps import _Origins


def _bytes_of(pieces):
    out = {}
    for low, high, tag, base, via in pieces:
        assert low < high
        for x in range(low, high):
            assert x not in out
            out[x] = (tag, base + (x - low), via)
    return out


def _expected(model, low, high, tag):
    return {x: model.get(x, (tag, x, "")) for x in range(low, high)}


def test_origins_agree_with_a_byte_model():
    rng = random.Random(41)
    for trial in range(300):
        origins, model = _Origins(), {}
        for _ in range(rng.randrange(1, 12)):
            low = rng.randrange(0, 60)
            high = low + rng.randrange(0, 20)
            op = rng.random()
            if op < 0.6:
                pieces, at = [], low
                while at < high:
                    stop = min(high, at + rng.randrange(1, 8))
                    if rng.random() < 0.7:      # else a gap: its own again
                        pieces.append((at, stop, rng.choice(["payload", "address", "unknown"]),
                                       rng.randrange(0, 1000), rng.choice(["", "via k"])))
                    at = stop
                origins.put(low, high, pieces)
                covered = _bytes_of(pieces)
                for x in range(low, high):
                    model.pop(x, None)
                    if x in covered:
                        model[x] = covered[x]
            elif op < 0.8:
                origins.taint(low, high)
                for x in range(low, high):
                    if x in model and model[x][0] != "unknown":
                        model[x] = ("unknown", 0, "")
            qlow = rng.randrange(0, 70)
            qhigh = qlow + rng.randrange(1, 25)
            tag = rng.choice(["address", "payload"])
            got = origins.get(qlow, qhigh, tag)
            assert [p[0] for p in got] == sorted(p[0] for p in got) and (not got or (got[0][0], got[-1][1]) == (qlow, qhigh))
            unknown_bases = {x: v for x, v in _bytes_of(got).items()}
            expected = _expected(model, qlow, qhigh, tag)
            # an unknown byte's base is 0 plus its offset in its piece: compare its tag only
            assert {x: (v if v[0] != "unknown" else ("unknown",)) for x, v in unknown_bases.items()} == \
                   {x: (v if v[0] != "unknown" else ("unknown",)) for x, v in expected.items()}, (trial, qlow, qhigh)
