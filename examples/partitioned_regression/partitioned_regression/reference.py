"""The exact arithmetic of "f32-products-f64-accumulation-v1", in NumPy, and the data.

Each product rounds its two binary64 operands to binary32 (round to nearest even, subnormals
kept), multiplies them in binary32 (one rounding) and widens the result exactly: what the
coordinate-linear-step kernel computes.  Sums and the persistent update are binary64, each
operation rounded once, never fused: what the host's Float commands and the coordinate-update
kernel compute.  docs/partitioned-regression.md gives the model; this module is its oracle.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

ROWS = 4096                  # PartitionedRegression.Coordinates.coordinateRows
NUMERICS = b"f32-products-f64-accumulation-v1"


def product(a: float, b: float) -> float:
    """binary32(a) x binary32(b), rounded to binary32, widened to binary64.  An operand or a
    product beyond binary32's range is an infinity, as the kernel's conversion and multiply give
    it: IEEE arithmetic, not a fault, so NumPy is not asked to warn of it (a warning on stderr
    where the C host says nothing)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.float64(np.float32(a) * np.float32(b)))


def linear_step(w: float, x: float, t: float) -> tuple[float, float, float]:
    """The linear-step kernel's three results: w x, w x - t, (w x - t) x."""
    p = product(w, x)
    with np.errstate(over="ignore", invalid="ignore"):      # IEEE results, as product's: no warning
        r = float(np.float64(p) - np.float64(t))
    return p, r, product(r, x)


def update(w: float, a: float, g: float, decay: float, rate: float) -> tuple[float, float]:
    """The update kernel: a := decay a + g, then w := w - rate a (binary64, unfused).  An
    overflow or a NaN is IEEE arithmetic, as the kernel's DMUL and DADD give it, not a fault:
    NumPy is not asked to warn of it (product's reason)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _update(w, a, g, decay, rate)


def _update(w: float, a: float, g: float, decay: float, rate: float) -> tuple[float, float]:
    a = float(np.float64(np.float64(decay) * np.float64(a)) + np.float64(g))
    w = float(np.float64(w) - np.float64(np.float64(rate) * np.float64(a)))
    return w, a


@dataclass
class Coordinate:
    """One worker's coordinate: its persistent state and its hyperparameters."""
    weight: float
    accumulator: float
    decay: float
    rate: float


@dataclass
class Data:
    features: np.ndarray     # (rows, 2) binary64: column k is worker k's
    targets: np.ndarray      # (rows,) binary64


def generate(rows: int = ROWS, seed: int = 3, truth=(1.5, -0.75), noise: float = 0.0) -> Data:
    """Rows of two standard normal features and y = truth . x (+ noise), binary64."""
    rng = np.random.default_rng(seed)
    features = rng.standard_normal((rows, 2))
    targets = features @ np.asarray(truth, dtype=np.float64) + noise * rng.standard_normal(rows)
    return Data(features, targets)


def least_squares(data: Data) -> np.ndarray:
    solution, *_ = np.linalg.lstsq(data.features, data.targets, rcond=None)
    return solution


def train(data: Data, coordinates: list[Coordinate], steps: int, first_row: int = 0) -> list[Coordinate]:
    """`steps` steps of the pair from `coordinates`: step i uses row (first_row + i) mod rows.
    Returns the coordinates after them (new objects)."""
    state = [Coordinate(c.weight, c.accumulator, c.decay, c.rate) for c in coordinates]
    rows = len(data.targets)
    for i in range(steps):
        row = (first_row + i) % rows
        x = data.features[row]
        partials = [linear_step(c.weight, x[k], 0.0)[0] for k, c in enumerate(state)]
        with np.errstate(over="ignore", invalid="ignore"):       # the host's Float commands: IEEE, no warning
            combined = float(np.float64(partials[0]) + np.float64(partials[1]))       # worker 0's on the left
            error = float(np.float64(combined) - np.float64(data.targets[row]))
        for k, c in enumerate(state):
            gradient = linear_step(error, x[k], 0.0)[0]
            c.weight, c.accumulator = update(c.weight, c.accumulator, gradient, c.decay, c.rate)
    return state


def predict(weights: tuple[float, float], inputs=(1.0, 2.0)) -> float:
    """The seed's prediction: both products on the device, added on the host in binary64."""
    left = linear_step(weights[0], inputs[0], 0.0)[0]
    right = linear_step(weights[1], inputs[1], 0.0)[0]
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.float64(left) + np.float64(right))


def bits(value: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", value))[0]
