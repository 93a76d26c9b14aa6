"""A built Coppelius host's own program run by bobc's reference interpreter
(compiler/bobc/reference/native_program.py) with the emulated GPU (device.py), and a
trace of what it did: every request read, write and publication (the host's file and
checkpoint steps, as the request session carries them out), every ring entry issued and
every launch.  The tests count the seed's numbers in this trace.

    run(host_path, ["train", "--input", S, "--checkpoint", C, "--checkpoint-out", O,
                    "--predictions", P, "--result", R]) -> Outcome

From the command line (examples/coppelius), any built host -- a shape or run length of
coppelius_host.build's as well as the plan's own -- run without a GPU, its arguments, files,
messages and exit codes the host's (docs/coppelius-host.md, "Running it"):

    python -m coppelius_host.reference HOST train --input STREAM [--checkpoint IN] \
        --checkpoint-out OUT --predictions FILE --result FILE
"""
from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass, field
from pathlib import Path

import sys

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


USAGE = ("usage: python -m coppelius_host.reference HOST ARGUMENTS...\n"
         "  runs the built Coppelius host HOST (coppelius_host.build, bobc build) without a GPU: its own program by\n"
         "  bobc's reference interpreter, the launches computed by the model's NumPy kernels (coppelius_host.device);\n"
         "  ARGUMENTS are the host's (train|predict --input STREAM [--checkpoint IN] --checkpoint-out OUT\n"
         "  --predictions FILE --result FILE), and so are its messages and exit codes (docs/coppelius-host.md)\n")


def main(argv=None) -> int:
    """Run HOST's own program with the emulated GPU, as `bobc run PLAN native ... --reference --kernels
    coppelius_host/reference_submit.py` runs a plan's: for a host whose plan is not on disk (coppelius_host.build
    writes its shape and run length into a copy it removes).  Exit codes: the host's; 2 for a usage error
    here (no HOST, or one that cannot be read), 9 for a file that is not a built host (the host's own code
    for a damaged host file)."""
    from bobc.native import artifact
    from bobc.reference import safe_io
    from bobc.reference.errors import FileRefused
    from bobc.reference.native_program import run_program

    arguments = list(sys.argv[1:] if argv is None else argv)
    prog = "python -m coppelius_host.reference"
    if not arguments or arguments[0] in ("-h", "--help"):
        (sys.stdout if arguments else sys.stderr).write(USAGE)
        return 0 if arguments else 2
    host, arguments = arguments[0], arguments[1:]
    try:
        source = safe_io.read_input(host, lambda path, part, detail: FileRefused(path, part, detail))
    except FileRefused as error:
        print(f"{prog}: error: cannot read host {error.path}: {error.detail}", file=sys.stderr)
        return 2
    try:
        split = artifact.split(source.data, safe_io.shown(host))
    except artifact.DamagedHost as error:
        print(f"{prog}: error: {error} (HOST is the executable coppelius_host.build or bobc build wrote)",
              file=sys.stderr)
        return artifact.DAMAGED_EXIT
    from bobc.commands.run import _version_section

    components = {kind: payload for kind, _, payload in split.components}
    # no output may be HOST, in the built host's own words (its outputs' alias check)
    own = safe_io.InputFile(f"{source.real} (this host's own file)", b"", source.real, source.device, source.inode)
    sys.stdout.flush()
    return run_program(split.program, arguments, name=safe_io.shown(host), gpu=EmulatedDevice(),
                       components=components, version=_version_section(source.data, host), inputs=[own])


if __name__ == "__main__":
    raise SystemExit(main())
