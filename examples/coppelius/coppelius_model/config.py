"""Coppelius's two configurations and its flat parameter order (docs/coppelius.md).

A byte-level decoder-only transformer: token and position embeddings, L pre-norm
blocks (layer norm, causal multi-head attention, residual; layer norm, GELU MLP of
width 4d, residual), a final layer norm and an untied output head without bias.
Every parameter lives in one flat binary32 vector; the master weights, both AdamW
moments, the gradients and the binary16 half copies all use its order, so AdamW is
one elementwise pass per weight-decay group ("piece").
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

VOCABULARY = 256            # bytes
HEAD_DIMENSION = 64
ELEMENT_ALIGNMENT = 64      # every tensor starts at a multiple of 64 elements (256 B in binary32)


@dataclass(frozen=True)
class Hyperparameters:
    """AdamW's hyperparameters as exact ratios (the seed's coppelius*Numerator/Denominator),
    and the static loss scale."""

    learning_rate: Fraction = Fraction(1, 1000)
    beta1: Fraction = Fraction(9, 10)
    beta2: Fraction = Fraction(95, 100)
    epsilon: Fraction = Fraction(1, 100000000)
    weight_decay: Fraction = Fraction(1, 10)
    loss_scale: int = 1024
    layer_norm_epsilon: float = 1e-5


@dataclass(frozen=True)
class Tensor:
    """One parameter tensor: its name, shape, place in the flat vector and decay group."""

    name: str
    shape: tuple[int, ...]
    offset: int
    decay: bool

    @property
    def size(self) -> int:
        size = 1
        for n in self.shape:
            size *= n
        return size

    @property
    def end(self) -> int:
        return self.offset + self.size


# a shape's checkpoint chunk unless it names one (the small configuration's)
DEFAULT_CHUNK_BYTES = 8 << 20


@dataclass(frozen=True)
class CoppeliusConfig:
    """One configuration: layers, width, heads, context (the bytes one update trains on), and the
    checkpoint chunk the host moves through its staging buffer (the plan's CoppeliusShape; which
    shapes the kernels serve is the plan's rule, Coppelius.Model.coppeliusShapeRefusal: the NumPy
    model here also runs TINY, which they do not)."""

    name: str
    layers: int
    width: int
    context: int
    chunk_bytes: int = DEFAULT_CHUNK_BYTES
    head_dimension: int = HEAD_DIMENSION
    vocabulary: int = VOCABULARY
    hyper: Hyperparameters = Hyperparameters()

    @property
    def heads(self) -> int:
        return self.width // self.head_dimension

    @property
    def hidden(self) -> int:
        return 4 * self.width

    def __post_init__(self):
        if self.width <= 0 or self.width % self.head_dimension:
            raise ValueError(f"width {self.width} is not a positive multiple of the head dimension {self.head_dimension}")

    def tensors(self) -> list[Tensor]:
        """Every parameter tensor in flat order: the decay group (matrices: embeddings, the four
        projections of each layer, the head), then the no-decay group (gains and biases)."""
        d, f, v, t = self.width, self.hidden, self.vocabulary, self.context
        shapes: list[tuple[str, tuple[int, ...], bool]] = [("wte", (v, d), True), ("wpe", (t, d), True)]
        for layer in range(self.layers):
            shapes += [(f"h{layer}.wqkv", (d, 3 * d), True), (f"h{layer}.wproj", (d, d), True),
                       (f"h{layer}.wfc", (d, f), True), (f"h{layer}.wfcproj", (f, d), True)]
        shapes.append(("head", (d, v), True))
        for layer in range(self.layers):
            shapes += [(f"h{layer}.ln1.g", (d,), False), (f"h{layer}.ln1.b", (d,), False),
                       (f"h{layer}.bqkv", (3 * d,), False), (f"h{layer}.bproj", (d,), False),
                       (f"h{layer}.ln2.g", (d,), False), (f"h{layer}.ln2.b", (d,), False),
                       (f"h{layer}.bfc", (f,), False), (f"h{layer}.bfcproj", (d,), False)]
        shapes += [("lnf.g", (d,), False), ("lnf.b", (d,), False)]
        tensors, offset = [], 0
        for name, shape, decay in shapes:
            tensors.append(Tensor(name, shape, offset, decay))
            size = tensors[-1].size
            offset += -(-size // ELEMENT_ALIGNMENT) * ELEMENT_ALIGNMENT
        return tensors

    def tensor(self, name: str) -> Tensor:
        for tensor in self.tensors():
            if tensor.name == name:
                return tensor
        raise KeyError(f"Coppelius has no parameter tensor {name!r}")

    @property
    def parameter_count(self) -> int:
        return self.tensors()[-1].end

    def pieces(self) -> list[tuple[int, int, bool]]:
        """AdamW's pieces: (first element, element count, decayed) -- the decay group, then the rest."""
        tensors = self.tensors()
        split = next(t.offset for t in tensors if not t.decay)
        return [(0, split, True), (split, self.parameter_count - split, False)]


    @property
    def identity(self) -> bytes:
        """The plan's shape identity (coppeliusShapeIdentity): the checkpoint envelope names it."""
        return f"coppelius-{self.name}-v1".encode()


SMALL = CoppeliusConfig("small", layers=4, width=256, context=128)
LARGE = CoppeliusConfig("large", layers=12, width=768, context=256, chunk_bytes=64 << 20)
# the gradient check's: small enough for finite differences in binary64
TINY = CoppeliusConfig("tiny", layers=2, width=32, context=8, head_dimension=16, chunk_bytes=1 << 20)
CONFIGS = {c.name: c for c in (SMALL, LARGE, TINY)}
# what a --config takes, as the tools' --help says it (no host serves tiny: its width and context
# are below the kernels' rules, docs/coppelius.md "Shapes"; the tools refuse it naming them)
CONFIG_CHOICES = f"{', '.join(CONFIGS)} or a shape LAYERSxWIDTHxCONTEXT[:CHUNK_BYTES] (no host serves tiny)"
SHAPE_NAME = re.compile(r"(\d+)x(\d+)x(\d+)(?::(\d+))?")


def named(name: str) -> CoppeliusConfig:
    """small, large, tiny, or another shape as LAYERSxWIDTHxCONTEXT[:CHUNK_BYTES] (the chunk 8 MiB
    unless given), e.g. 1x256x128 (docs/coppelius.md, "Shapes")."""
    if name in CONFIGS:
        return CONFIGS[name]
    match = SHAPE_NAME.fullmatch(name)
    if match is None:
        raise ValueError(f"no Coppelius configuration {name!r}: name one of {', '.join(CONFIGS)} or a shape "
                         f"LAYERSxWIDTHxCONTEXT[:CHUNK_BYTES], e.g. 1x256x128")
    layers, width, context, chunk = match.groups()
    return CoppeliusConfig(name, int(layers), int(width), int(context), int(chunk) if chunk else DEFAULT_CHUNK_BYTES)
