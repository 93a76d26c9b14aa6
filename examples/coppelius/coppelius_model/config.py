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
            # a shape of the served family (heads of 64): the plan's shape rules say why no host serves
            # it, every broken rule (the width's among them, as coppeliusShapeRefusal says it)
            said = shape_refusal(self.layers, self.width, self.context, self.chunk_bytes) \
                if self.head_dimension == HEAD_DIMENSION else ""
            if said:
                raise ShapeRefused(self.name, said)
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
SHAPE_NAME = re.compile(r"(\d+)x(\d+)x(\d+)(?::(\d+))?")


class ShapeRefused(ValueError):
    """A shape no host serves, refused by the shape rules (shape_refusal: the plan's
    coppeliusShapeRefusal): `refusal` is every broken rule with its field, value and owner."""

    def __init__(self, name: str, refusal: str):
        super().__init__(f"no host serves configuration {name}: {refusal} (docs/coppelius.md, \"Shapes\")")
        self.name, self.refusal = name, refusal


def canonical_name(layers: int, width: int, context: int, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> str:
    """A shape's one name: LAYERSxWIDTHxCONTEXT in decimal without leading zeros, then :CHUNK_BYTES
    unless it is the default chunk (what its identity, coppelius-NAME-v1, is made of)."""
    name = f"{layers}x{width}x{context}"
    return name if chunk_bytes == DEFAULT_CHUNK_BYTES else f"{name}:{chunk_bytes}"


def named(name: str) -> CoppeliusConfig:
    """small, large, tiny, or another shape as LAYERSxWIDTHxCONTEXT[:CHUNK_BYTES] (the chunk 8 MiB
    unless given), e.g. 1x256x128 (docs/coppelius.md, "Shapes").  A shape has one identity however
    it is spelt: 01x256x128 and 1x256x128:8388608 are 1x256x128, and small's or large's own
    numbers are small or large."""
    if name in CONFIGS:
        return CONFIGS[name]
    match = SHAPE_NAME.fullmatch(name)
    if match is None:
        # the names a host serves (served_names): tiny is named() for the gradient check, but every
        # tool refuses it (its width and context are below the kernels' rules), so it is not offered
        raise ValueError(f"no Coppelius configuration {name!r}: name one of {', '.join(served_names())} or a "
                         f"shape LAYERSxWIDTHxCONTEXT[:CHUNK_BYTES], e.g. 1x256x128")
    shape = shape_numbers(name)
    for known in (SMALL, LARGE):
        if shape == (known.layers, known.width, known.context, known.chunk_bytes):
            return known
    return CoppeliusConfig(canonical_name(*shape), *shape)


# ---- the shape rules: Coppelius.Model's coppeliusShapeRefusal, word for word ----
# (tests/coppelius/test_shapes.py compares the two over a grid of shapes; the plan's rule is the
# one a build obeys, this one lets a tool refuse a shape before it loads the plan or allocates)
ROW_CHUNK_COLUMNS = 128
WIDTH_LEAST, WIDTH_MOST = 256, 768
CONTEXT_LEAST, CONTEXT_MOST = 128, 256
CHUNK_ALIGNMENT = 16
COUNTERS_BYTES = 16
STAGING_WINDOW_BYTES = 20480
CHECKPOINT_FILE_MOST_BYTES = 1 << 30          # docs/limits.md: the largest checkpoint file a host reads
ENVELOPE_ROOM_BYTES = 4096                    # the envelope's header, CRC and trailer, at most
GPFIFO_RING_BYTES = 8192                      # Platform.Linux.Nvidia.PlanHost.nvidiaPlanHostUVMGPFIFOBytes
GPFIFO_ENTRY_BYTES = 8
PROGRAM_RESIDENCE_BYTES = 1 << 21             # Coppelius.Model.coppeliusShapeResidenceBytes
WIDEST_BANK_ZERO_BYTES = 1024                 # sm_90's parameter block
RESIDENCE_CODE_ALLOWANCE = 393216             # the kernels' code (and tensor maps) in the residence
CHUNKS_MOST = (GPFIFO_RING_BYTES // GPFIFO_ENTRY_BYTES - 5) // 3
LAUNCHES_MOST = (PROGRAM_RESIDENCE_BYTES - RESIDENCE_CODE_ALLOWANCE) // WIDEST_BANK_ZERO_BYTES
# what a refused width or context may be instead (coppeliusWidthChoice, coppeliusContextChoice)
WIDTH_CHOICE = f": choose a multiple of {ROW_CHUNK_COLUMNS} from {WIDTH_LEAST} to {WIDTH_MOST}"
CONTEXT_CHOICE = f": choose {CONTEXT_LEAST} or {CONTEXT_MOST}"


def parameter_count_for(layers: int, width: int, context: int) -> int:
    """N = (2 x 256 + T + 2) d + L (12 d^2 + 13 d): coppeliusParameterCountFor."""
    return (2 * VOCABULARY + context + 2) * width + layers * (12 * width * width + 13 * width)


def payload_bytes_for(layers: int, width: int, context: int) -> int:
    """P, M, V and the counters: 12 N + 16 bytes (coppeliusPayloadBytesFor)."""
    return 12 * parameter_count_for(layers, width, context) + COUNTERS_BYTES


def _modulo(a: int, b: int) -> int:
    return a % b if b else a           # the plan language's nat-modulo (and nat-divide by 0 is 0)


def chunks_for(payload: int, chunk: int) -> int:
    """The chunks the payload is moved in (coppeliusChunksFor)."""
    return (payload // chunk if chunk else 0) + (1 if _modulo(payload, chunk) else 0)


def launches_for(layers: int, chunks: int) -> int:
    """33 L + 3 chunks + 34: the plan's launches (Coppelius.Build.Graph proves its count is this)."""
    return 33 * layers + 3 * chunks + 34


def shape_refusal(layers: int, width: int, context: int, chunk: int) -> str:
    """Why no host serves the shape ('' when one does): every broken rule's field, value, rule and
    whose it is, as coppeliusShapeRefusal says it."""
    payload = payload_bytes_for(layers, width, context)
    chunks = chunks_for(payload, chunk)
    launches = launches_for(layers, chunks)
    payload_most = CHECKPOINT_FILE_MOST_BYTES - ENVELOPE_ROOM_BYTES
    rules = [
        (layers == 0, "layers (coppeliusShapeLayers)", layers,
         "is not at least 1 (the backward's batched layer-norm gain and bias gradients launch one batch a layer, and "
         "a grid of no batches is no launch)"),
        (width % ROW_CHUNK_COLUMNS != 0, "width (coppeliusShapeWidth)", width,
         f"is not a multiple of {ROW_CHUNK_COLUMNS} (coppelius-layernorm-forward, -backward and "
         "coppelius-embedding-forward hold a row as chunks of that many columns, and heads of 64 and the products' "
         f"tiles of 64 then divide it{WIDTH_CHOICE})"),
        (not WIDTH_LEAST <= width <= WIDTH_MOST, "width (coppeliusShapeWidth)", width,
         f"is not between {WIDTH_LEAST} and {WIDTH_MOST} (coppelius-layernorm-forward and -backward hold a row in "
         f"registers as 2 to 6 chunks of 128 columns{WIDTH_CHOICE})"),
        (context not in (CONTEXT_LEAST, CONTEXT_MOST), "context (coppeliusShapeContext)", context,
         f"is not {CONTEXT_LEAST} or {CONTEXT_MOST} (coppelius-attention-forward, like the softmax it absorbed, masks "
         "by a query's position in a power-of-two T and holds 128 to 512 keys, and coppelius-embedding-backward "
         f"reads at most 256 positions{CONTEXT_CHOICE})"),
        (chunk % CHUNK_ALIGNMENT != 0, "chunk (coppeliusShapeChunkBytes)", chunk,
         f"is not a multiple of {CHUNK_ALIGNMENT} (coppelius-copy moves the checkpoint 16 bytes a thread, from "
         "16-byte aligned offsets)"),
        (chunk < STAGING_WINDOW_BYTES, "chunk (coppeliusShapeChunkBytes)", chunk,
         f"is less than {STAGING_WINDOW_BYTES} (the staging buffer is one chunk, and it holds the host's window: "
         "tokens, targets, records, the report)"),
        (payload <= chunk, "chunk (coppeliusShapeChunkBytes)", chunk,
         f"is not less than this shape's checkpoint payload, 12 N + 16 = {payload} bytes (the host's load stages at "
         "least one full chunk, then the tail)"),
        (chunk < payload and _modulo(payload, chunk) == 0, "chunk (coppeliusShapeChunkBytes)", chunk,
         f"divides this shape's checkpoint payload, 12 N + 16 = {payload} bytes (the host's schedule moves the full "
         "chunks, then a tail that is not empty)"),
        (chunk != 0 and chunks > CHUNKS_MOST, "chunk (coppeliusShapeChunkBytes)", chunk,
         f"cuts this shape's checkpoint payload into {chunks} chunks, more than {CHUNKS_MOST} (a chunk is 3 "
         "submissions and the run 5 more, each an 8-byte entry of the GPFIFO ring, which holds "
         f"{GPFIFO_RING_BYTES} bytes: choose a larger chunk)"),
        (payload > payload_most, "layers (coppeliusShapeLayers)", layers,
         f"give a checkpoint payload of 12 N + 16 = {payload} bytes, more than {payload_most} (a host reads a "
         f"checkpoint file of at most {CHECKPOINT_FILE_MOST_BYTES} bytes, docs/limits.md, and the envelope takes up "
         f"to {ENVELOPE_ROOM_BYTES} of them: choose fewer layers or a smaller width or context)"),
        (launches > LAUNCHES_MOST, "layers (coppeliusShapeLayers)", layers,
         f"give {launches} launches (33 L + 3 chunks + 34), more than {LAUNCHES_MOST} (the program residence, "
         f"Coppelius.ArenaPlan's coppeliusProgramResidenceBytes = {PROGRAM_RESIDENCE_BYTES} bytes, holds the program table: a "
         f"{WIDEST_BANK_ZERO_BYTES}-byte bank 0 a launch and {RESIDENCE_CODE_ALLOWANCE} bytes of kernel code: "
         "choose fewer layers or a larger chunk)"),
    ]
    return "; ".join(f"{field} {value} {rule}" for broken, field, value, rule in rules if broken)


def shape_numbers(name: str) -> tuple[int, int, int, int]:
    """(layers, width, context, chunk bytes) of a configuration's name (small, large, tiny or
    LAYERSxWIDTHxCONTEXT[:CHUNK_BYTES]) without making the configuration, so that the shape rules
    can judge a shape whose width the model cannot even be laid out with; ValueError for a name
    that is no shape (named's words)."""
    if name in CONFIGS:
        c = CONFIGS[name]
        return c.layers, c.width, c.context, c.chunk_bytes
    match = SHAPE_NAME.fullmatch(name)
    if match is None:
        return named(name).layers, 0, 0, 0        # raises named's refusal of the name
    layers, width, context, chunk = match.groups()
    return int(layers), int(width), int(context), int(chunk) if chunk else DEFAULT_CHUNK_BYTES


def name_refusal(name: str) -> str:
    """Why no host serves configuration `name` ('' when one may): the shape rules (shape_refusal),
    or that the name is no shape, in the words every tool prints after `--config`."""
    try:
        shape = shape_numbers(name)
    except ValueError as error:
        return str(error)
    said = shape_refusal(*shape)
    return f"no host serves configuration {name}: {said} (docs/coppelius.md, \"Shapes\")" if said else ""


def config_refusal(config: CoppeliusConfig) -> str:
    """shape_refusal of a configuration's shape."""
    return shape_refusal(config.layers, config.width, config.context, config.chunk_bytes)


def served_names() -> list[str]:
    """The named configurations a host serves (small, large): those the shape rules admit; tiny,
    the gradient check's, is refused by every tool (docs/coppelius.md, "Shapes")."""
    return [name for name, c in CONFIGS.items() if not config_refusal(c)]
