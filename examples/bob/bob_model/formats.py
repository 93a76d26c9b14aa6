"""Bob's file formats on the Python side (docs/formats.md is the authority).

The native host (runtime_c/) implements the same layouts in C; the two are
held together by tests against the same bytes, so everything here is exact:
fixed offsets, little-endian integers, binary32 planes, zlib's CRC-32, and a
fresh-initialization generator that is bit-identical to the C one.

Decoders take the bytes and the file's name, and refuse with the error class
(and exit code) the native host uses, naming the first part that differs.
"""
from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass

import numpy as np

from bobc.plan.model import CheckpointContract
from bobc.reference.errors import BadCheckpoint, BadInputRecord, ForeignCheckpoint

VOCABULARY = 256
PROMPTS = 3
PLANES = 3                       # P, M, V
PARAMETERS = VOCABULARY * VOCABULARY

# ---------------------------------------------------------------- input record
RECORD_MAGIC = b"BOBINPUT"
RECORD_VERSION = 1
RECORD_PAIRS_OFFSET = 16
RECORD_TARGETS_OFFSET = RECORD_PAIRS_OFFSET + 2 * VOCABULARY          # 528
RECORD_PROMPTS_OFFSET = RECORD_TARGETS_OFFSET + 4 * VOCABULARY        # 1552
RECORD_BYTES = RECORD_PROMPTS_OFFSET + 4 * PROMPTS                    # 1564


@dataclass(frozen=True)
class InputRecord:
    """What one invocation reads: each byte's target and each prompt's last byte."""

    targets: np.ndarray          # uint32[256], each < 256
    prompts: np.ndarray          # uint32[3], each < 256

    def __post_init__(self):
        targets = np.asarray(self.targets, dtype=np.int64).reshape(-1)
        prompts = np.asarray(self.prompts, dtype=np.int64).reshape(-1)
        if targets.shape != (VOCABULARY,) or prompts.shape != (PROMPTS,):
            raise ValueError(f"need {VOCABULARY} targets and {PROMPTS} prompts")
        if targets.min() < 0 or targets.max() >= VOCABULARY or prompts.min() < 0 \
                or prompts.max() >= VOCABULARY:
            raise ValueError("targets and prompts must be bytes (0..255)")
        object.__setattr__(self, "targets", targets.astype(np.uint32))
        object.__setattr__(self, "prompts", prompts.astype(np.uint32))


def encode_input_record(record: InputRecord) -> bytes:
    pairs = np.empty((VOCABULARY, 2), dtype=np.uint8)
    pairs[:, 0] = np.arange(VOCABULARY)
    pairs[:, 1] = record.targets
    out = (RECORD_MAGIC + struct.pack("<Q", RECORD_VERSION) + pairs.tobytes()
           + record.targets.astype("<u4").tobytes() + record.prompts.astype("<u4").tobytes())
    assert len(out) == RECORD_BYTES
    return out


def decode_input_record(data: bytes, path="input record") -> InputRecord:
    """Refuse (BadInputRecord, exit 3) anything but a consistent 1564-byte record."""
    if len(data) != RECORD_BYTES:
        raise BadInputRecord(path, "size", f"{len(data)} bytes, an input record has {RECORD_BYTES}")
    if data[:8] != RECORD_MAGIC:
        raise BadInputRecord(path, "magic", f"starts with {data[:8]!r}, not {RECORD_MAGIC!r}")
    (version,) = struct.unpack_from("<Q", data, 8)
    if version != RECORD_VERSION:
        raise BadInputRecord(path, "version", f"version {version}, this reader knows {RECORD_VERSION}")
    pairs = np.frombuffer(data, dtype=np.uint8, count=2 * VOCABULARY,
                          offset=RECORD_PAIRS_OFFSET).reshape(VOCABULARY, 2)
    targets = np.frombuffer(data, dtype="<u4", count=VOCABULARY, offset=RECORD_TARGETS_OFFSET)
    prompts = np.frombuffer(data, dtype="<u4", count=PROMPTS, offset=RECORD_PROMPTS_OFFSET)
    wrong = np.nonzero(pairs[:, 0] != np.arange(VOCABULARY))[0]
    if wrong.size:
        b = int(wrong[0])
        raise BadInputRecord(path, "pairs", f"pair {b} names byte {pairs[b, 0]}, not {b}")
    wrong = np.nonzero(targets >= VOCABULARY)[0]
    if wrong.size:
        b = int(wrong[0])
        raise BadInputRecord(path, "targets", f"target word of byte {b} is {targets[b]}, not a byte")
    wrong = np.nonzero(pairs[:, 1] != targets)[0]
    if wrong.size:
        b = int(wrong[0])
        raise BadInputRecord(path, "pairs", f"byte {b}: pair says target {pairs[b, 1]}, "
                             f"target word says {targets[b]}")
    wrong = np.nonzero(prompts >= VOCABULARY)[0]
    if wrong.size:
        i = int(wrong[0])
        raise BadInputRecord(path, "prompts", f"prompt {i} word is {prompts[i]}, not a byte")
    return InputRecord(targets.copy(), prompts.copy())


# ------------------------------------------------------------------ checkpoint
CHECKPOINT_MAGIC = b"BOBCENV1"
CHECKPOINT_END = b"BOBCEND1"
CHECKPOINT_FIXED_HEADER = 64
_HEADER = struct.Struct("<8sIIQQQQ4I")          # up to offset 64
assert _HEADER.size == CHECKPOINT_FIXED_HEADER


@dataclass(frozen=True)
class Checkpoint:
    """The learner's state: the three planes (flat, row-major) and the global step."""

    P: np.ndarray
    M: np.ndarray
    V: np.ndarray
    step: int

    def __post_init__(self):
        for name in ("P", "M", "V"):
            plane = np.ascontiguousarray(getattr(self, name), dtype=np.float32).reshape(-1)
            object.__setattr__(self, name, plane)
        if not (self.P.shape == self.M.shape == self.V.shape):
            raise ValueError("P, M and V must have the same size")
        if not 0 <= int(self.step) < 2 ** 64:
            raise ValueError("step must fit in 64 bits")
        object.__setattr__(self, "step", int(self.step))


def checkpoint_header_bytes(contract: CheckpointContract) -> int:
    identities = len(contract.schema) + len(contract.learner) + len(contract.data) + len(contract.seed)
    return -(-(CHECKPOINT_FIXED_HEADER + identities) // 16) * 16


def checkpoint_bytes(contract: CheckpointContract) -> int:
    return checkpoint_header_bytes(contract) + contract.payload_bytes + 12


def encode_checkpoint(contract: CheckpointContract, state: Checkpoint) -> bytes:
    payload = state.P.astype("<f4").tobytes() + state.M.astype("<f4").tobytes() \
        + state.V.astype("<f4").tobytes()
    if len(payload) != contract.payload_bytes or 3 * contract.chunk_bytes != contract.payload_bytes:
        raise ValueError(f"state has {len(payload)} payload bytes, the contract "
                         f"{contract.payload_bytes} in chunks of {contract.chunk_bytes}")
    h = checkpoint_header_bytes(contract)
    identities = contract.schema + contract.learner + contract.data + contract.seed
    header = _HEADER.pack(CHECKPOINT_MAGIC, h, PLANES, state.step, contract.payload_bytes,
                          contract.chunk_bytes, contract.updates_per_invocation,
                          len(contract.schema), len(contract.learner), len(contract.data),
                          len(contract.seed))
    body = header + identities + bytes(h - CHECKPOINT_FIXED_HEADER - len(identities)) + payload
    return body + struct.pack("<I", zlib.crc32(body)) + CHECKPOINT_END


def _shown(value: bytes, limit: int = 72) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def decode_checkpoint(data: bytes, contract: CheckpointContract, path="checkpoint") -> Checkpoint:
    """Check in the documented order; refuse naming the first part that differs.

    size and magic (BadCheckpoint: truncated / not a checkpoint), CRC
    (BadCheckpoint: corrupted), then against the plan's contract
    (ForeignCheckpoint): schema, learner, data, seed, payload bytes, chunk
    bytes, chunk count, updates per invocation.
    """
    n = len(data)
    if data[:8] != CHECKPOINT_MAGIC[: min(n, 8)]:
        raise BadCheckpoint(path, "magic", f"starts with {_shown(data[:8])}, not a checkpoint "
                            f"(magic {CHECKPOINT_MAGIC!r})")
    if n < CHECKPOINT_FIXED_HEADER:
        raise BadCheckpoint(path, "size", f"truncated: {n} bytes, shorter than the "
                            f"{CHECKPOINT_FIXED_HEADER}-byte header")
    (_, h, chunks, step, payload, chunk, updates, *lengths) = _HEADER.unpack_from(data)
    if h % 16 or h < CHECKPOINT_FIXED_HEADER + sum(lengths):
        raise BadCheckpoint(path, "header", f"header bytes {h} cannot hold the identities "
                            f"({sum(lengths)} bytes) or is not a multiple of 16; not a checkpoint")
    expected = h + payload + 12
    if n != expected:
        state = "truncated" if n < expected else "trailing bytes"
        raise BadCheckpoint(path, "size", f"{state}: {n} bytes, its header declares {expected}")
    if data[-8:] != CHECKPOINT_END:
        raise BadCheckpoint(path, "trailer", f"ends with {_shown(data[-8:])}, not "
                            f"{CHECKPOINT_END!r}; truncated or not a checkpoint")
    (stored,) = struct.unpack_from("<I", data, h + payload)
    actual = zlib.crc32(memoryview(data)[: h + payload])
    if stored != actual:
        raise BadCheckpoint(path, "crc", f"corrupted: CRC-32 {actual:08x} of its contents, "
                            f"{stored:08x} stored")
    padding = bytes(data[CHECKPOINT_FIXED_HEADER + sum(lengths): h])
    if padding.strip(b"\0"):
        raise BadCheckpoint(path, "padding", "the header's padding after the identities is "
                            "not zero; not a checkpoint this format writes")
    at = CHECKPOINT_FIXED_HEADER
    found = {}
    for name, length in zip(("schema", "learner", "data", "seed"), lengths):
        found[name] = bytes(data[at: at + length])
        at += length
    for name in ("schema", "learner", "data", "seed"):
        if found[name] != getattr(contract, name):
            raise ForeignCheckpoint(path, name, f"its {name} identity is {_shown(found[name])}, "
                                    f"the plan's is {_shown(getattr(contract, name))}")
    for part, have, want in (("payload bytes", payload, contract.payload_bytes),
                             ("chunk bytes", chunk, contract.chunk_bytes),
                             ("chunk count", chunks, PLANES),
                             ("updates per invocation", updates, contract.updates_per_invocation)):
        if have != want:
            raise ForeignCheckpoint(path, part, f"it declares {have}, the plan {want}")
    if chunks * chunk != payload:
        raise ForeignCheckpoint(path, "chunk bytes", f"{chunks} chunks of {chunk} bytes "
                                f"do not make its {payload}-byte payload")
    planes = np.frombuffer(data, dtype="<f4", count=payload // 4, offset=h).astype(np.float32)
    count = chunk // 4
    return Checkpoint(planes[:count], planes[count: 2 * count], planes[2 * count:], step)


# ----------------------------------------------------- predictions and result
PREDICTION_BYTES = 8 * PROMPTS                                        # 24
RESULT_BYTES = 4 * (VOCABULARY + VOCABULARY + PROMPTS * VOCABULARY)   # 5120


def encode_predictions(tokens, valid) -> bytes:
    words = np.empty((PROMPTS, 2), dtype="<u4")
    words[:, 0] = np.asarray(tokens, dtype=np.int64)
    words[:, 1] = np.asarray(valid, dtype=np.int64)
    return words.tobytes()


def decode_predictions(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    if len(data) != PREDICTION_BYTES:
        raise ValueError(f"predictions are {PREDICTION_BYTES} bytes, not {len(data)}")
    words = np.frombuffer(data, dtype="<u4").reshape(PROMPTS, 2)
    return words[:, 0].astype(np.uint32), words[:, 1].astype(np.uint32)


def encode_result(initial_loss, training_loss, logit_rows) -> bytes:
    parts = [np.asarray(initial_loss, dtype="<f4").reshape(VOCABULARY),
             np.asarray(training_loss, dtype="<f4").reshape(VOCABULARY),
             np.asarray(logit_rows, dtype="<f4").reshape(PROMPTS * VOCABULARY)]
    return b"".join(p.tobytes() for p in parts)


def decode_result(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(initial loss block, training loss block, logit rows 3 x 256)."""
    if len(data) != RESULT_BYTES:
        raise ValueError(f"a result record is {RESULT_BYTES} bytes, not {len(data)}")
    values = np.frombuffer(data, dtype="<f4").astype(np.float32)
    return (values[:VOCABULARY], values[VOCABULARY: 2 * VOCABULARY],
            values[2 * VOCABULARY:].reshape(PROMPTS, VOCABULARY))


# ------------------------------------------------------- fresh initialization
FNV_OFFSET_BASIS = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
SPLITMIX_GAMMA = 0x9E3779B97F4A7C15
_MASK64 = (1 << 64) - 1


def fnv1a64(data: bytes) -> int:
    h = FNV_OFFSET_BASIS
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & _MASK64
    return h


def splitmix64(seed: int, count: int) -> np.ndarray:
    """The first `count` SplitMix64 outputs from `seed`, as uint64.

    Vectorised: the i-th state (1-based) is seed + i * gamma mod 2^64, so all
    states come at once; numpy's uint64 arithmetic wraps exactly like C's.
    """
    u64 = np.uint64
    with np.errstate(over="ignore"):
        state = u64(seed) + np.arange(1, count + 1, dtype=u64) * u64(SPLITMIX_GAMMA)
        z = (state ^ (state >> u64(30))) * u64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> u64(27))) * u64(0x94D049BB133111EB)
    return z ^ (z >> u64(31))


def fresh_parameters(seed_identity: bytes, count: int = PARAMETERS) -> np.ndarray:
    """P for a fresh run: SplitMix64 from FNV-1a-64(seed identity), in [-0.01, 0.01)."""
    u = (splitmix64(fnv1a64(seed_identity), count) >> np.uint64(40)).astype(np.int64)
    # int64 -> binary64 is exact (24-bit values); one correctly rounded binary64
    # division, then one round-to-nearest-even conversion to binary32.
    return ((u - 8388608).astype(np.float64) / 838860800.0).astype(np.float32)


# ------------------------------------------------------------- AdamW scalars
@dataclass(frozen=True)
class Hyperparameters:
    """The learner's binary32 hyperparameters (stored as the binary32 values)."""

    lr: float = float(np.float32(0.1))
    beta1: float = float(np.float32(0.9))
    beta2: float = float(np.float32(0.999))
    eps: float = float(np.float32(1e-8))
    weight_decay: float = float(np.float32(0.01))

    def __post_init__(self):
        for name in ("lr", "beta1", "beta2", "eps", "weight_decay"):
            object.__setattr__(self, name, float(np.float32(getattr(self, name))))

    def encode(self) -> bytes:
        """The 20 bytes the learner identity ends with: lr, beta1, beta2, eps, wd."""
        return struct.pack("<5f", self.lr, self.beta1, self.beta2, self.eps, self.weight_decay)

    @classmethod
    def decode(cls, data: bytes) -> "Hyperparameters":
        return cls(*struct.unpack("<5f", data))


@dataclass(frozen=True)
class AdamWScalars:
    """The nine 32-bit scalars of one update's bob-adamw parameter block."""

    alpha: np.float32
    epsilon: np.float32
    decay: np.float32
    beta1: np.float32
    one_minus_beta1: np.float32
    beta2: np.float32
    one_minus_beta2: np.float32
    count: int
    step: int

    def pack(self) -> bytes:
        """Bytes at parameter base + 32 (argument word 4 on)."""
        return struct.pack("<7f2I", self.alpha, self.epsilon, self.decay, self.beta1,
                           self.one_minus_beta1, self.beta2, self.one_minus_beta2,
                           self.count, self.step)


def adamw_scalars(hyper: Hyperparameters, step: int, count: int = PARAMETERS) -> AdamWScalars:
    """Update `step` (global, from 1): binary64 arithmetic on the widened binary32
    hyperparameters, each result rounded once to binary32."""
    if not 1 <= step < 2 ** 32:
        raise ValueError(f"global step {step} does not fit the block's u32 (1 .. 2^32-1)")
    f32 = np.float32
    lr, b1, b2, eps, wd = hyper.lr, hyper.beta1, hyper.beta2, hyper.eps, hyper.weight_decay
    root = math.sqrt(1.0 - b2 ** step)
    return AdamWScalars(alpha=f32(lr * root / (1.0 - b1 ** step)), epsilon=f32(eps * root),
                        decay=f32(1.0 - lr * wd), beta1=f32(b1), one_minus_beta1=f32(1.0 - b1),
                        beta2=f32(b2), one_minus_beta2=f32(1.0 - b2), count=count, step=step)
