"""Coppelius checkpoints as seed 004's host reads and publishes them: docs/formats.md's
checkpoint envelope around the payload P, M, V (binary32, the flat parameter order) and
the 16-byte counters (+0 non-finite flag, +8 updates issued, +12 updates skipped).

    python -m coppelius_host.checkpoint fresh -o CKPT [--config C] [--seed N]
    python -m coppelius_host.checkpoint show CKPT [--config C]

C: small (the default), large, or a shape LAYERSxWIDTHxCONTEXT[:CHUNK_BYTES] (coppelius_model.config.named).

`fresh` writes step 0 with every parameter uniform in [-0.01, 0.01] (NumPy's generator
from the seed, coppelius_model.model.fresh_state) and zero moments: what `coppelius-host
train --checkpoint CKPT` starts a fresh run from (without --checkpoint the host starts
from a zero payload, which the platform gives any plan that names no initializer).
The envelope's identities are the plan's own (Coppelius.TrainingRun.
coppeliusCheckpointContract, evaluated from the modules), so another configuration's
checkpoint is refused by the host naming the part that differs.
"""
from __future__ import annotations

import argparse
import functools
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).resolve().parents[1]
COUNTERS_BYTES = 16


def config_named(name: str):
    if str(EXAMPLE) not in sys.path:
        sys.path.insert(0, str(EXAMPLE))
    from coppelius_model.config import named
    return named(name)


def config_choices() -> str:
    """The names --config takes, for --help: the named configurations a host serves (small, large;
    not tiny, the gradient check's, whose every use the tools refuse: probe s32 stream finding 8),
    by the Python twin of the plan's shape rules, or a shape."""
    if str(EXAMPLE) not in sys.path:
        sys.path.insert(0, str(EXAMPLE))
    from coppelius_model.config import CONFIGS, shape_refusal
    served = [name for name, c in CONFIGS.items() if not shape_refusal(c.layers, c.width, c.context, c.chunk_bytes)]
    return f"{', '.join(served)} or a shape LAYERSxWIDTHxCONTEXT[:CHUNK_BYTES]"


@functools.lru_cache(maxsize=None)
def host_refusal(name: str) -> str:
    """Why no host can be built for configuration `name` ('' when one can): the plan's own rules,
    Coppelius.Model's coppeliusShapeRefusal, evaluated by bobc on the shape (a checkpoint of a
    shape no host serves is of no use)."""
    import tempfile

    from bobc.language import load_program
    from bobc.targets import SM86

    config_named("small")                    # coppelius_model on the path
    from coppelius_model.config import shape_numbers

    # the numbers, not the configuration: a width the model cannot be laid out with (not a multiple of
    # the head dimension) is still judged by the rules, every broken one named
    layers, width, context, chunk = shape_numbers(name)
    with tempfile.TemporaryDirectory(prefix="coppelius-shape-") as folder:
        probe = Path(folder) / "ShapeProbe.bob"
        probe.write_text("module ShapeProbe\n\nimport Coppelius.Model\n\ndef refusal : Bytes = (coppeliusShapeRefusal "
                         f"{layers} {width} {context} {chunk})\n", encoding="utf-8")
        program = load_program(probe, include=[EXAMPLE], target=SM86)
        return bytes(program.value("refusal").value).decode("utf-8", "replace")


def config_refusal(name: str) -> str:
    """Why `--config NAME` is refused ('' when a host serves it), as every tool says it (checkpoint,
    build, sim_compare; a usage error, exit 2): a name that is no shape, or the shape rules
    (host_refusal: the plan's own), every broken rule's field, value and owner."""
    config_named("small")                    # coppelius_model on the path
    from coppelius_model.config import shape_numbers
    try:
        shape_numbers(name)
    except ValueError as error:
        return f"--config: {error}"
    said = host_refusal(name)
    return f"--config: no host serves configuration {name}: {said} (docs/coppelius.md, \"Shapes\")" if said else ""


@functools.lru_cache(maxsize=None)
def contract(config_name: str = "small"):
    """The plan's CheckpointContract for a configuration (another than small from a copy of the
    plan with its Coppelius.Configuration: coppelius_host.build.plan_copy)."""
    import tempfile

    from bobc.language import Intrinsics, load_program
    from bobc.targets import SM86
    from bobc.plan.model import CheckpointContract

    from .build import plan_copy

    with tempfile.TemporaryDirectory(prefix="coppelius-contract-") as scratch:
        root = plan_copy(Path(scratch), config=config_name) if config_name != "small" else EXAMPLE
        program = load_program(root / "Coppelius" / "TrainingRun.bob", include=[str(EXAMPLE)], intrinsics=Intrinsics(), target=SM86)
        value = program.value("coppeliusCheckpointContract")
        fields = [program.force(f).value for f in value.fields]
    return CheckpointContract(*(bytes(f) if isinstance(f, (bytes, bytearray)) else f for f in fields))


@dataclass
class Checkpoint:
    step: int
    P: np.ndarray
    M: np.ndarray
    V: np.ndarray
    flag: int
    updates: int
    skipped: int

    def payload(self) -> bytes:
        counters = np.array([self.flag, 0, self.updates, self.skipped], dtype="<u4").tobytes()
        return (self.P.astype("<f4").tobytes() + self.M.astype("<f4").tobytes() + self.V.astype("<f4").tobytes()
                + counters)


def from_payload(payload: bytes, step: int, parameters: int) -> Checkpoint:
    plane = 4 * parameters
    if len(payload) != 3 * plane + COUNTERS_BYTES:
        raise ValueError(f"a {len(payload)}-byte payload is not P, M, V of {parameters} parameters and the counters")
    planes = [np.frombuffer(payload[k * plane:(k + 1) * plane], "<f4") for k in range(3)]
    flag, _zero, updates, skipped = np.frombuffer(payload[3 * plane:], "<u4")
    return Checkpoint(step, *planes, int(flag), int(updates), int(skipped))


def contract_for(config_name: str = "small", updates_per_invocation: int | None = None):
    """The plan's contract; a host built with another run length (coppelius_host.build
    --interval/--publications) declares its own updates per invocation."""
    import dataclasses
    found = contract(config_name)
    if updates_per_invocation is None:
        return found
    return dataclasses.replace(found, updates_per_invocation=updates_per_invocation)


def encode(checkpoint: Checkpoint, config_name: str = "small", updates_per_invocation: int | None = None) -> bytes:
    from bobc.reference import envelope
    return envelope.encode(contract_for(config_name, updates_per_invocation), checkpoint.step, checkpoint.payload())


def decode(data: bytes, config_name: str = "small", path="checkpoint",
           updates_per_invocation: int | None = None) -> Checkpoint:
    from bobc.reference import envelope
    payload, step = envelope.decode(data, contract_for(config_name, updates_per_invocation), path)
    return from_payload(payload, step, config_named(config_name).parameter_count)


def fresh(config_name: str = "small", seed: int = 0) -> Checkpoint:
    from coppelius_model import model
    config = config_named(config_name)
    state = model.fresh_state(config, seed)
    return Checkpoint(0, state.P, state.M, state.V, 0, 0, 0)


def _natural(low: int, high: int):
    """An argparse type: a whole number in [low, high] (a usage error otherwise, never a traceback)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is outside {low}..{high}")
        return value
    return parse


def _shape_hint(data: bytes, config_name: str, updates_per_invocation: int | None) -> str:
    """For `show` of a checkpoint whose schema identity names another shape (coppelius-NAME-v1):
    the options that show it, ('' when the identity names none a host serves)."""
    import re

    schema = data[64:64 + int.from_bytes(data[48:52], "little")]
    found = re.search(rb"\|coppelius-([0-9a-z:]+)-v1\|", schema)
    if found is None:
        return ""
    name = found.group(1).decode()
    try:
        if config_named(name).identity == config_named(config_name).identity or host_refusal(name):
            return ""
    except ValueError:
        return ""
    options = f"--config {name}"
    declared = int.from_bytes(data[40:48], "little")     # the run length is the shape's too
    # what `show --config NAME` alone compares with: NAME's plan's run length, not the one asked for
    # here (probe s45 coppuser: a 2-update checkpoint shown with --updates-per-invocation 2 under
    # another shape was told `--config small`, which then refused it for its run length)
    if declared != contract_for(name).updates_per_invocation and 1 <= declared <= UPDATES_LIMIT:
        options += f" --updates-per-invocation {declared}"
    return f" (a checkpoint of the shape {name}: show it with {options})"


SEED_LIMIT = 2 ** 32 - 1              # numpy's seeds
UPDATES_LIMIT = 2 ** 32 - 1           # the envelope's u32; 0 updates per invocation is no run


def for_the_show_tool(message: str, config_name: str) -> str:
    """A host's refusal of a checkpoint (bobc.reference.envelope's words) as `show` says it: the
    values it compares with are configuration CONFIG's, not a host's, and what a host's refusal
    says to pass to the host is left off (a damaged file's "copy it again" stays)."""
    from bobc.reference import envelope

    for hint in (envelope.HINT_FOREIGN, envelope.HINT_OURS):
        if message.endswith(f"; {hint}"):
            message = message[:-len(hint) - 2]
    return message.replace("this host's", f"configuration {config_name}'s")


def main(argv=None) -> int:
    prog = "python -m coppelius_host.checkpoint"
    parser = argparse.ArgumentParser(prog=prog, description="Write a fresh Coppelius checkpoint, or show one.")
    sub = parser.add_subparsers(dest="command", required=True)
    made = sub.add_parser("fresh", help="write a fresh checkpoint (step 0)")
    made.add_argument("-o", "--output", required=True)
    made.add_argument("--config", default="small", help=config_choices())
    made.add_argument("--seed", type=_natural(0, SEED_LIMIT), default=0, help=f"0 to {SEED_LIMIT} (default 0)")
    made.add_argument("--updates-per-invocation", type=_natural(1, UPDATES_LIMIT),
                      help="for a host built with another run length (coppelius_host.build --interval/--publications)")
    shown = sub.add_parser("show", help="print a checkpoint's step and counters")
    shown.add_argument("checkpoint")
    shown.add_argument("--config", default="small", help=config_choices())
    shown.add_argument("--updates-per-invocation", type=_natural(1, UPDATES_LIMIT),
                       help="for a checkpoint of a host built with another run length")
    args = parser.parse_args(argv)
    from bobc.reference import safe_io
    from bobc.reference.errors import FileRefused, ForeignCheckpoint

    refusal = config_refusal(args.config)
    if refusal:                              # a usage error, as build's and sim_compare's
        print(f"{prog}: error: {refusal}", file=sys.stderr)
        return 2
    if args.command == "fresh":
        try:
            data = encode(fresh(args.config, args.seed), args.config, args.updates_per_invocation)
        except (ValueError, OverflowError) as error:
            print(f"{prog}: error: config {args.config} cannot be written as a checkpoint: {error}", file=sys.stderr)
            return 2
        try:
            safe_io.publish_file(Path(args.output), data, "-o")
        except FileRefused as error:         # exit 8: the file there is unchanged
            print(f"{prog}: {error.render()}", file=sys.stderr)
            return error.exit_code
        print(f"wrote {args.output}: fresh {args.config} checkpoint, seed {args.seed}, {len(data)} bytes")
        return 0
    try:
        source = safe_io.read_input(args.checkpoint, lambda path, part, detail: FileRefused(path, part, detail))
        checkpoint = decode(source.data, args.config, args.checkpoint, args.updates_per_invocation)
    except FileRefused as error:
        if type(error) is FileRefused:       # could not be read
            print(f"{prog}: error: cannot read {error.path}: {error.detail}", file=sys.stderr)
            return 2
        said = f"error: {for_the_show_tool(error.message, args.config)}"
        if isinstance(error, ForeignCheckpoint) and error.part == "updates per invocation":
            # a host built with another run length (coppelius_host.build --interval/--publications)
            declared = int.from_bytes(source.data[40:48], "little")
            if 1 <= declared <= UPDATES_LIMIT:
                said += (f" (a checkpoint of a host built with another run length: show it with "
                         f"--updates-per-invocation {declared})")
            else:                            # 0 updates per invocation is no run: no host of ours writes it
                said += (f" (no host coppelius_host.build makes runs {declared} updates an invocation: "
                         f"--interval and --publications are at least 1)")
        elif isinstance(error, ForeignCheckpoint) and error.part == "schema":
            said += _shape_hint(source.data, args.config, args.updates_per_invocation)
        print(f"{prog}: {said}", file=sys.stderr)
        return error.exit_code               # the host's codes: 4 bad, 5 foreign
    except Exception as error:              # noqa: BLE001 -- the envelope's other refusals name the part
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 4
    print(f"{args.checkpoint}: step {checkpoint.step}, updates {checkpoint.updates}, skipped {checkpoint.skipped}, "
          f"flag {checkpoint.flag}, |P|max {float(np.abs(checkpoint.P).max()):.6g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
