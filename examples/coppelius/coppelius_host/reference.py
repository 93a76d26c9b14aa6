"""A built Coppelius host's own program run by bobc's reference interpreter
(compiler/bobc/reference/native_program.py) with the emulated GPU (device.py), and a
trace of what it did: every request read, write and publication (the host's file and
checkpoint steps, as the request session carries them out), every ring entry issued and
every launch.  The tests count the seed's numbers in this trace.

    run(host_path, ["train", "--input", S, "--checkpoint", C, "--checkpoint-out", O,
                    "--predictions", P, "--result", R]) -> Outcome
"""
from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass, field
from pathlib import Path

from .device import EmulatedDevice


@dataclass
class Trace:
    reads: list = field(default_factory=list)          # (file, offset, extent)
    writes: list = field(default_factory=list)         # (file, extent, offset or None)
    begins: int = 0
    publications: list = field(default_factory=list)   # (updates, the envelope published or staged)
    maps: int = 0                                      # buffers mapped (0: the device never touched)


@dataclass
class Outcome:
    status: int
    stderr: str
    trace: Trace
    device: EmulatedDevice


@contextlib.contextmanager
def traced(trace: Trace):
    """Record the request session's reads, writes and publications while running."""
    from bobc.reference import native_program, native_request

    session = native_request.RequestSession
    saved = {name: getattr(session, name) for name in ("read", "write", "checkpoint_begin", "checkpoint_publish")}
    saved_map = native_program.Machine._map

    def read(self, file, offset, extent):
        trace.reads.append((file, offset, extent))
        return saved["read"](self, file, offset, extent)

    def write(self, file, data, offset=None):
        trace.writes.append((file, len(data), offset))
        return saved["write"](self, file, data, offset)

    def checkpoint_begin(self):
        trace.begins += 1
        return saved["checkpoint_begin"](self)

    def checkpoint_publish(self, updates):
        result = saved["checkpoint_publish"](self, updates)
        published = self.staged_checkpoint if self.published == self.publications else None
        if published is None:
            from bobc.reference import envelope
            published = envelope.encode(self.request.contract, self.reached, bytes(self.out[native_request.FILE_CHECKPOINT_OUT]))
        trace.publications.append((updates, published))
        return result

    def map_buffer(self, at, c):
        trace.maps += 1
        return saved_map(self, at, c)

    session.read, session.write = read, write
    session.checkpoint_begin, session.checkpoint_publish = checkpoint_begin, checkpoint_publish
    native_program.Machine._map = map_buffer
    try:
        yield trace
    finally:
        for name, method in saved.items():
            setattr(session, name, method)
        native_program.Machine._map = saved_map


def run(host: Path, arguments: list[str], device: EmulatedDevice | None = None) -> Outcome:
    from bobc.native import artifact
    from bobc.reference.native_program import run_program

    data = Path(host).read_bytes()
    split = artifact.split(data, str(host))
    components = {kind: payload for kind, _, payload in split.components}
    device = device if device is not None else EmulatedDevice()
    stderr = io.BytesIO()
    trace = Trace()
    with traced(trace):
        status = run_program(split.program, list(arguments), name=Path(host).name, gpu=device,
                             stderr=stderr, stdout=io.BytesIO(), components=components)
    return Outcome(status, stderr.getvalue().decode("utf-8", "replace"), trace, device)
