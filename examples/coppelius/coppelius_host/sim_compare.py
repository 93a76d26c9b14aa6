"""Seed 004's built host run with the GPU simulated (our SASS kernels from the host's own
images: sim_device.py) and compared with the formula reference, coppelius_model.model.update,
on the same contexts, within docs/coppelius.md's tolerances -- what
tests/gpu/test_coppelius_host.py checks on the H200, without one.

    python -m coppelius_host.sim_compare HOST STREAM CHECKPOINT [--invocations N] [--poison HEX]
        [--seed S] [--out DIR]

HOST is a host built by coppelius_host.build (a short run: interval 4, 1 publication takes
about 2 minutes an invocation here; tests/gpu/build_coppelius_host.py writes one as
coppelius-host-short), STREAM a token stream (coppelius_model.stream), CHECKPOINT the fresh
checkpoint the reference starts from (coppelius_host.checkpoint fresh --seed S: S must be
the seed given here).  N invocations are chained, each from the last one's checkpoint.
--poison HEX fills every mapped buffer but the semaphore page with those bytes before the
host writes anything (what a GPU whose fresh pages are not zero gives a host that does not
clear them; the native host clears them: docs/native-host.md), so a dependence on memory
nobody wrote shows.  Prints, per publication, the host's losses beside the reference's and
the master weights' differences; exits 1 when a tolerance fails, 2 on a usage error (among them a
--config no host serves, or not HOST's own shape: both refused before anything is simulated).
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import checkpoint as C
from . import reference
from .sim_device import SimulatedDevice

EXAMPLE = Path(__file__).resolve().parents[1]
SEMAPHORE_BASE = 0x1020000000        # coppelius_model.layout.SEMAPHORE_BASE: the submissions' counter
RECORD = 32                          # the result: the forward's record, then one loss window per update


def window_bytes(config) -> int:
    return 16 + 4 * config.context


def losses_of(result: bytes, updates: int, config) -> np.ndarray:
    """Each update's mean loss: the first word of its loss window (after the forward's record)."""
    return np.array([np.frombuffer(result, "<f4", 1, RECORD + k * window_bytes(config))[0] for k in range(updates)])


@contextlib.contextmanager
def poisoned(pattern: bytes | None):
    """Every buffer the reference maps (but the semaphore page) starts as `pattern` repeated."""
    from bobc.reference import native_program

    if not pattern:
        yield
        return
    original = native_program.Mapping.__init__

    def init(self, host, extent, gpu):
        original(self, host, extent, gpu)
        if gpu != SEMAPHORE_BASE:
            self.memory[:] = (pattern * (extent // len(pattern) + 1))[:extent]

    native_program.Mapping.__init__ = init
    try:
        yield
    finally:
        native_program.Mapping.__init__ = original


@dataclass
class Compared:
    step: int
    reference_step: int
    updates: int
    skipped: int
    reference_skipped: int
    losses: np.ndarray
    reference_losses: np.ndarray
    difference: np.ndarray        # |P - P_ref| per weight
    moved: float                  # the sum of AdamW's step sizes so far
    predictions_finite: bool

    @property
    def relative(self) -> np.ndarray:
        return np.abs(self.losses - self.reference_losses) / np.abs(self.reference_losses)

    def failures(self, first: bool) -> list[str]:
        """docs/coppelius.md's tolerances as tests/gpu/test_coppelius_host.py applies them."""
        found = []
        if (self.step, self.updates, self.skipped) != (self.reference_step, self.reference_step,
                                                       self.reference_skipped):
            found.append(f"step {self.step}, updates {self.updates}, skipped {self.skipped}: the reference's "
                         f"{self.reference_step}, {self.reference_step}, {self.reference_skipped}")
        if not self.predictions_finite:
            found.append("a prediction is not finite")
        if np.quantile(self.difference, 0.995) > 1e-2 * self.moved:
            found.append(f"99.5% of |dP| {np.quantile(self.difference, 0.995):.3g} > {1e-2 * self.moved:.3g}")
        if self.difference.max() > 2 * self.moved:
            found.append(f"max |dP| {self.difference.max():.3g} > {2 * self.moved:.3g}")
        if (first and self.relative[0] > 1e-3) or not self.relative.max() <= 2e-2:
            found.append(f"losses' relative differences {self.relative}")
        return found

    def line(self) -> str:
        d = self.difference
        return (f"step {self.step} (reference {self.reference_step}), skipped {self.skipped} "
                f"(reference {self.reference_skipped}); |dP| median {np.median(d):.3g}, 99.5% "
                f"{np.quantile(d, 0.995):.3g} (bound {1e-2 * self.moved:.3g}), max {d.max():.3g} "
                f"(bound {2 * self.moved:.3g}); losses {self.losses} reference {self.reference_losses} "
                f"relative {self.relative}")


def host_schema(host: Path) -> bytes:
    """The checkpoint schema identity HOST's program declares (its request's, which the host
    compares a checkpoint's with: bobc.native.request), read without running it."""
    from bobc.native import artifact
    from bobc.native.program import decode
    from bobc.native.request import parse_request

    split = artifact.split(Path(host).read_bytes(), str(host))
    for command in decode(split.program).commands:
        if command.name == "RequestOpen":
            return parse_request(command.data).contract.schema
    raise ValueError(f"{host} opens no request: give a host built by coppelius_host.build")


def config_mismatch(host: Path, config_name: str) -> str:
    """Why `--config CONFIG` is not HOST's shape ('' when it is): the shape rules first (the
    checkpoint and build tools' words), then HOST's schema identity against the one a host of
    CONFIG declares (the plan's coppeliusCheckpointContract for CONFIG)."""
    refused = C.config_refusal(config_name)
    if refused:
        return refused
    built, asked = host_schema(host), C.contract(config_name).schema
    if built == asked:
        return ""
    import re

    from coppelius_model.config import named

    # the plan's shape identity, coppelius-NAME-v1 (CoppeliusConfig.identity), inside the schema's
    found = re.search(rb"\|coppelius-([0-9a-z:]+)-v1\|", built)
    if found is not None:
        shape = found.group(1).decode()
        if named(shape).identity != named(config_name).identity:
            return (f"--config {config_name}: the host {host} is built for configuration {shape} (its checkpoint "
                    f"schema names coppelius-{shape}-v1), and {config_name} is the configuration asked for: pass "
                    f"--config {shape}, or a host built with coppelius_host.build --config {config_name}")
    return (f"--config {config_name}: the host {host} declares the checkpoint schema {built.decode(errors='replace')!r}, "
            f"and a host of configuration {config_name} (asked for) declares {asked.decode(errors='replace')!r}: "
            f"pass the --config the host was built with")


class ConfigRefused(ValueError):
    """--config names no shape a host serves, or not HOST's: a usage error (exit 2)."""

    exit_code = 2


def compare(host: Path, stream_path: Path, fresh: Path, out: Path, invocations: int = 1, seed: int = 0,
            poison: bytes | None = None, config_name: str = "small", say=print) -> list[Compared]:
    """Run `invocations` chained invocations of the simulated host and compare each publication
    with model.update from the fresh state of `seed`."""
    if str(EXAMPLE) not in sys.path:
        sys.path.insert(0, str(EXAMPLE))
    from coppelius_model import model

    mismatch = config_mismatch(host, config_name)      # before anything is simulated
    if mismatch:
        raise ConfigRefused(mismatch)
    config = C.config_named(config_name)
    text = _stream_bytes(stream_path)
    state = model.fresh_state(config, seed)
    envelope = fresh.read_bytes()
    updates_per_invocation = None
    compared, moved = [], 0.0
    out.mkdir(parents=True, exist_ok=True)
    for k in range(invocations):
        start = out / f"start-{k}.ckpt"
        start.write_bytes(envelope)
        folder = out / f"invocation-{k}"
        folder.mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        with poisoned(poison):
            outcome = reference.run(host, ["train", "--input", str(stream_path), "--checkpoint", str(start),
                                           "--checkpoint-out", str(folder / "out.ckpt"), "--predictions",
                                           str(folder / "predictions"), "--result", str(folder / "result")],
                                    device=SimulatedDevice())
        say(f"invocation {k}: exit {outcome.status} in {time.monotonic() - began:.0f} s, "
            f"{len(outcome.device.entries)} submissions, {len(outcome.device.launches)} launches")
        if outcome.status != 0:
            raise RuntimeError(f"invocation {k}: exit {outcome.status}: {outcome.stderr}")
        envelope = (folder / "out.ckpt").read_bytes()
        step = int.from_bytes(envelope[16:24], "little")
        if updates_per_invocation is None:
            updates_per_invocation = step - state.step
        published = C.decode(envelope, config_name, f"invocation {k}", updates_per_invocation)
        reference_losses = []
        while state.step < step:
            inputs, targets = model.context_at(text, state.step * config.context, config.context)
            reference_losses.append(model.update(config, state, inputs, targets).loss)
            moved += float(model.adamw_scalars(config, state.step).step_size)
        predictions = np.frombuffer((folder / "predictions").read_bytes(), "<f4")
        result = Compared(step, state.step, published.updates, published.skipped, state.skipped,
                          losses_of((folder / "result").read_bytes(), len(reference_losses), config),
                          np.array(reference_losses), np.abs(published.P.astype(np.float64) - state.P), moved,
                          bool(np.isfinite(predictions).all()))
        say(f"publication {k}: {result.line()}")
        compared.append(result)
    return compared


def _stream_bytes(stream_path: Path) -> bytes:
    """The text a COPSTRM1 stream holds (docs/formats.md: 4-byte little-endian tokens after a
    64-byte header), as the bytes model.context_at reads."""
    raw = stream_path.read_bytes()
    return np.frombuffer(raw[64:], "<u4").astype(np.uint8).tobytes()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coppelius_host.sim_compare", description=(__doc__ or "\n").splitlines()[0])
    parser.add_argument("host", type=Path)
    parser.add_argument("stream", type=Path)
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("--invocations", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0, help="the fresh checkpoint's seed (the reference starts there)")
    parser.add_argument("--poison", help="hex bytes every mapped buffer but the semaphore page starts as")
    parser.add_argument("--config", default="small",
                        help="the host's configuration, as coppelius_host.build --config names it (small, large, "
                             "LxDxT): the reference model it is compared with")
    parser.add_argument("--out", type=Path, required=True, help="a folder for the simulated run's files")
    args = parser.parse_args(argv)
    if not args.host.is_file():
        parser.error(f"{args.host} is not a file: give a host built by coppelius_host.build")
    try:
        poison = bytes.fromhex(args.poison) if args.poison else None
    except ValueError:
        parser.error(f"--poison {args.poison!r} is not hex bytes (e.g. a5 or deadbeef)")
    from bobc.errors import BobcError
    from bobc.native.artifact import DamagedHost
    from bobc.native.program import ProgramError
    try:
        mismatch = config_mismatch(args.host, args.config)
    except (DamagedHost, ProgramError, BobcError, ValueError) as error:
        parser.error(f"{args.host}: {getattr(error, 'message', error)}: give a host built by coppelius_host.build")
    if mismatch:
        parser.error(mismatch)
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        compared = compare(args.host, args.stream, args.checkpoint, args.out, args.invocations, args.seed,
                           poison, args.config)
    except (RuntimeError, BobcError, ValueError) as error:
        print(f"error: {getattr(error, 'message', error)}", file=sys.stderr)
        return 1
    failed = False
    for k, result in enumerate(compared):
        for failure in result.failures(first=k == 0):
            print(f"publication {k}: {failure}", file=sys.stderr)
            failed = True
    print("agrees within docs/coppelius.md's tolerances" if not failed else "DISAGREES (above)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
