"""The native host from a compiled plan: C data generated with jinja2, built
with gcc against runtime_c/, images embedded as ELF sections.

The generated C is data only (buffers, semaphores, parameter blocks, the
contract, the schedule's steps); runtime_c/plan_host.c carries it out.  Every
fact the host needs is taken from the plan or the encoder's manifest and
cross-checked here, so a host that builds is one whose data agrees.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jinja2

from .. import __version__
from ..errors import BobcError, shown_plan_text, temporary_folder, write_temporary
from ..resources import shared_folder
from ..targets import Target
from ..nvidia.encode import plan_parameter_base
from ..plan.host import FILE_CODES, SCALAR_OP_CODES
from ..plan.schedule import LoweredStep, ScheduleError, lower
from . import gcc, sections, steps_c, version

def runtime_library(runtime: Path) -> list[Path]:
    """The runtime's library sources in the order they are linked, as runtime_c/Makefile lists
    them (LIB_SRC; read by the one reader of its lists, native.interpreter.sources): what every
    plan host links with its generated C (gcc.build's `library`), and what `bobc build` compiles
    while it evaluates the plan (gcc.compiled_early)."""
    from ..native.interpreter import sources

    return sources(runtime, "LIB_SRC")


PAGE = 4096
WAIT_TIMEOUT_MS = 10_000

# the plan's memory kinds -> runtime_c/nv_shim.h enum rt_mem_location (the host plan's declared layout)
LOCATIONS = {name: constant for constant, _, name in sections.PLAN_ENUMS["rt_mem_location"]}
# which embedded image fills which plan buffer
BUFFER_SECTIONS = {"program": "program", "qmd": "qmd", "pushbuffer": "push", "gpfifo": "gpfifo"}


class HostGenerationError(BobcError):
    pass


@dataclass(frozen=True)
class HostStep(LoweredStep):
    """One step of the C host's list: a lowered step whose values are the C fields' values."""

    def c(self, symbol=None) -> str:
        return steps_c.c_initializer(self.kind, self.values, symbol)


def _page(n: int) -> int:
    return -(-n // PAGE) * PAGE


def c_string(data: bytes | str) -> str:
    """A C string literal for `data` (octal escapes: never run into a following digit)."""
    raw = data.encode() if isinstance(data, str) else data
    if b"\0" in raw:
        raise HostGenerationError(f"the string {shown_plan_text(raw)} holds a zero byte, which the host's C strings cannot carry")
    return '"' + _c_string_body(raw) + '"'


def _c_string_body(raw: bytes) -> str:
    """The inside of a C string literal holding `raw`: printable ASCII as itself but `"`, `\\`
    and `?` (a trigraph's start), every other byte a 3-digit octal escape."""
    return "".join(map(_C_STRING_BYTES.__getitem__, raw))


_C_STRING_BYTES = tuple(chr(byte) if 0x20 <= byte < 0x7F and chr(byte) not in '"\\?' else f"\\{byte:03o}"
                        for byte in range(256))


BYTES_LINE = 64


def c_bytes(data: bytes) -> str:
    """`data` as the initializer of a `uint8_t name[]`: string literals of BYTES_LINE bytes, one a
    line, which C joins into one (a zero byte is an escape like any other; the array gets the
    literal's closing zero as one byte more, past the count the step gives).  A list of decimal
    ints cost gcc 24 times the time and 9 times the memory: a 4 MiB Fill payload took 9.0 s and
    683 MB, its literal 0.37 s and 76 MB (probe s39 genc finding 5).  A literal past 4,095 bytes
    is past C11's minimum translation limit (5.2.4.1; gcc -Wpedantic says so, -Woverlength-strings),
    which gcc and clang do not hold to."""
    lines = [_c_string_body(data[at:at + BYTES_LINE]) for at in range(0, len(data), BYTES_LINE)]
    return "\n    ".join(f'"{line}"' for line in lines) or '""'


def c_chars(data: bytes) -> str:
    """`data` as the initializers of a `char` array: one octal character constant a byte
    (`'\\310'`), which is that byte whatever char's signedness; a decimal 200 into a signed char
    was an int out of its range (gcc -Wpedantic / -Wconversion: "changes value from '200' to '-56'",
    an implementation-defined conversion: probe s39 genc finding 3)."""
    return ", ".join(f"'\\{byte:03o}'" for byte in data)


def c_comment(text: bytes | str) -> str:
    """Text a plan wrote (an identity, a step's or fill's note) as the inside of a C block comment:
    printable ASCII kept, any other byte written as \\xNN, and a `/` after a `*` or a `*` after a
    `/` written as \\x2f / \\x2a, so no name a plan chooses can end the comment (or open one) and
    put C of its own into the host (probe s33 canalyze: an identity holding `*/` and a constructor
    ran before main)."""
    raw = text.encode() if isinstance(text, str) else text
    out, previous = [], 0
    for byte in raw:
        delimiter = (previous, byte) in ((0x2A, 0x2F), (0x2F, 0x2A))
        out.append(chr(byte) if 0x20 <= byte < 0x7F and byte != 0x5C and not delimiter else f"\\x{byte:02x}")
        previous = byte if not delimiter else 0
    return "".join(out)


def _buffers(plan, images) -> list[dict]:
    """The buffers the host maps, each sized for this target's images.  A buffer whose name ends
    in "-alias" maps bytes of the one buffer it lies inside (bobc.certify.buffers): it is not
    mapped again (the host finds an address in the buffer holding it), and only the others must
    be disjoint, as the certifier holds them."""
    sizes = {"program": len(images.program), "qmd": len(images.qmd), "pushbuffer": len(images.push),
             "gpfifo": len(images.gpfifo), "semaphores": images.manifest["sizes"]["semaphore"]}
    out, aliases = [], []
    for b in plan.host.buffers:
        if b.memory not in LOCATIONS:
            raise HostGenerationError(f"buffer {shown_plan_text(b.name)} asks for {b.memory} memory; this host maps "
                                      f"{' or '.join(LOCATIONS)} memory")
        if b.host != b.gpu:
            raise HostGenerationError(f"buffer {shown_plan_text(b.name)}: host address 0x{b.host:x} differs from its GPU "
                                      f"address 0x{b.gpu:x}; this host maps each buffer at its GPU address")
        # A target's images may outgrow the extent the (sm_86) plan computed: sm_90's
        # parameter blocks and QMD slots are larger.  The buffer takes the larger.
        size = _page(max(b.extent, sizes.get(b.name, 0)))
        if b.name.endswith("-alias"):
            aliases.append((b.name, b.gpu, b.gpu + b.extent))      # its own bytes, never grown
            continue
        out.append({"name": b.name, "gpu": b.gpu, "size": size, "location": LOCATIONS[b.memory],
                    "section": sections.PREFIX + BUFFER_SECTIONS[b.name] if b.name in BUFFER_SECTIONS else None})
    ordered = sorted(out, key=lambda b: b["gpu"])
    for low, high in zip(ordered, ordered[1:]):
        if low["gpu"] + low["size"] > high["gpu"]:
            raise HostGenerationError(
                f"host buffers {shown_plan_text(low['name'])} [0x{low['gpu']:x}, 0x{low['gpu'] + low['size']:x}) and "
                f"{shown_plan_text(high['name'])} [0x{high['gpu']:x}, ...) overlap once sized for this target's images")
    for name, low, high in aliases:       # the certifier refuses these first; a backstop for uncertified plans
        homes = [b["name"] for b in out if b["gpu"] <= low and high <= b["gpu"] + b["size"]]
        if len(homes) != 1:
            raise HostGenerationError(f"alias {shown_plan_text(name)} [0x{low:x}, 0x{high:x}) lies inside "
                                      f"{len(homes)} of the buffers the host maps; an alias maps bytes of "
                                      f"exactly one")
    return out


def _steps(plan, manifest=None) -> list[HostStep]:
    """The host's step list (bobc.plan.schedule.lower), files as their C codes."""
    out = []
    try:
        lowered = lower(plan)
    except ScheduleError as error:
        raise HostGenerationError(error.message) from None
    for step in lowered:
        values = dict(step.values)
        if "file" in values:
            values["file"] = FILE_CODES[values["file"]]
        out.append(HostStep(step.kind, values, step.note))
    return out


def _fills(plan, manifest, target: Target) -> list[dict]:
    """Each plan fill with the GPU VA it is written at: its launch's parameter block as
    this target places it, the target's parameter base, the fill's offset."""
    base = plan_parameter_base(plan.program)
    out = []
    for index, fill in enumerate(plan.host.fills):
        launch = plan.program.launches[fill.launch]
        overrun = fill.overrun(launch, base)
        if overrun:                       # the certifier refuses it first; a backstop for uncertified plans
            raise HostGenerationError(f"fill {index} {overrun}")
        terms = [(SCALAR_OP_CODES[op], value) for op, value in fill.value.postfix()]
        out.append({"va": manifest["launches"][fill.launch]["parameter_address"] + target.parameter_base
                    + fill.offset, "step": fill.step,
                    "encoding": _constant("bobc_encoding", fill.encoding, f"fill {index}'s encoding"),
                    "terms": terms, "note": f"launch {fill.launch} ({launch.identity}) + {fill.offset}"})
    return out


def module_place(at, search_path) -> str | None:
    """Where the plan wrote something, as the host's messages name it: `A/B/C.bob:line:column`, the
    module's path relative to the search folder it was found in (the plan's root, a -I folder,
    specs/) -- never where the plan lies on this machine, so that a host built from a copy of the
    plan elsewhere is the same bytes; None where the plan does not say or the file lies in none."""
    import os

    if at is None:
        return None
    # as written first, then with symlinks resolved on both sides: the module may have been read
    # through a symlinked folder that the search path names resolved (or the other way round)
    for spelled in (os.path.abspath, os.path.realpath):
        path = spelled(at.path)
        for folder in search_path:
            folder = spelled(folder)
            if path.startswith(folder + os.sep):
                return f"{Path(os.path.relpath(path, folder)).as_posix()}:{at.line}:{at.column}"
    return None


def _launch_table(built) -> tuple[list[dict], list[list[int]]]:
    """The plan's launches as the host names them when their submission faults (runtime_c/plan_host.h
    bobc_launch: `bobc dump`'s launch[L].kernel and .grid, and where the plan wrote the launch), and
    each submission's launch indices (submission[K].launches), from the encoder's manifest, each
    launch cross-checked against the plan's."""
    manifest, launches = built.images.manifest, built.plan.program.launches
    search_path = getattr(built.program, "search_path", ())
    rows = sorted(manifest["launches"], key=lambda row: row["index"])
    if [row["index"] for row in rows] != list(range(len(launches))):
        raise HostGenerationError(f"the images' manifest lists launches {[row['index'] for row in rows]}, the plan "
                                  f"has {len(launches)}")
    out = []
    for row, launch in zip(rows, launches):
        if row["identity"] != launch.identity or list(row["grid"]) != list(launch.grid):
            raise HostGenerationError(f"the images' launch {row['index']} runs {row['identity']} on grid {row['grid']}, "
                                      f"the plan's {launch.identity} on {list(launch.grid)}")
        out.append({"kernel": launch.identity, "grid": launch.grid, "place": module_place(launch.at, search_path)})
    return out, [list(s["launches"]) for s in manifest["submissions"]]


def _constant(enum: str, name: str, what: str) -> str:
    """The C constant of `name` in the host plan's declared enum (bobc.host.sections.PLAN_ENUMS), which
    `bobc dump` decodes by; a name it does not declare is refused."""
    constant = sections.enum_constant(enum, name)
    if constant is None:
        raise HostGenerationError(f"{what}: {name!r} is no {enum} this host declares "
                                  f"({', '.join(shown for _, _, shown in sections.PLAN_ENUMS[enum])})")
    return constant


def _input_checks(plan) -> list[dict]:
    out = []
    for check in plan.host.request.input_checks:
        out.append({"kind": _constant("rt_check", check.kind, f"record check {shown_plan_text(check.what)}"), "what": check.what, "offset": check.offset,
                    "width": check.width, "stride": check.stride, "count": check.count, "value": check.value,
                    "data": list(check.data), "other": check.other, "other_width": check.other_width,
                    "other_stride": check.other_stride,
                    "format": _constant("rt_word_format", check.format,
                                        f"record check {shown_plan_text(check.what)}'s format")})
    return out


def _initializers(plan) -> list[dict]:
    return [{"kind": _constant("rt_init", i.kind, "an initializer"), "seed": i.seed, "shift": i.shift, "center": i.center,
             "denominator": i.denominator} for i in plan.host.initializers]


def double_literal(value: float) -> str:
    """A C double literal that is exactly `value` (hex float)."""
    return value.hex()


def render(built, target: Target) -> str:
    plan, images = built.plan, built.images
    manifest = images.manifest
    prologue = manifest["prologue"]["gpfifo_entry"]
    environment = jinja2.Environment(loader=jinja2.PackageLoader("bobc.host", "templates"),
                                     undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                                     bytecode_cache=gcc.template_cache())
    environment.globals.update(hex=hex, c_string=c_string, c_bytes=c_bytes, c_chars=c_chars, c_comment=c_comment,
                               double_literal=double_literal)
    steps = _steps(plan, manifest)
    blobs: dict[bytes, str] = {}

    def symbol(data: bytes) -> str:
        return blobs.setdefault(bytes(data), f"step_bytes_{len(blobs)}")

    step_lines = [(step.c(symbol), step.note) for step in steps]
    contract = plan.checkpoint
    launches, submission_launches = _launch_table(built)
    return environment.get_template("host_plan.c.j2").render(
        launches=launches, submission_launches=submission_launches,
        version=__version__, identity=plan.host.identity, target=target.name,
        buffers=_buffers(plan, images),
        semaphores=[s["semaphore_address"] for s in manifest["submissions"]],
        steps=step_lines, blobs=[(name, data) for data, name in blobs.items()],
        prologue_entry=prologue[0] | (prologue[1] << 32),
        semaphore_payload=manifest["semaphore"]["payload"],
        fills=_fills(plan, manifest, target),
        input_checks=_input_checks(plan), record_bytes=plan.host.request.input_record_bytes,
        initializers=_initializers(plan),
        contract=contract,
        wait_timeout_ms=WAIT_TIMEOUT_MS)


def build_host(built, target: Target, output: Path) -> bytes:
    """Write the host executable `output` for `target` from a compiled plan; the generated C's
    bytes, those gcc compiled (`bobc build --emit-c`)."""
    source = render(built, target).encode("utf-8")
    with temporary_folder(prefix="bobc-host-") as folder:
        plan_c = Path(folder) / "host_plan.c"
        write_temporary(plan_c, source)     # a full disk: one message, exit 8
        linked = Path(folder) / "host"
        runtime = shared_folder("runtime_c")
        gcc.build([plan_c], [runtime], linked, library=runtime_library(runtime))
        images = built.images
        sections.embed(linked, {"program": images.program, "qmd": images.qmd, "push": images.push,
                                "gpfifo": images.gpfifo,
                                "manifest": version.manifest_section(images.manifest),
                                version.SECTION: version.text(built, target, built.program.plan_name)})
        try:
            data = linked.read_bytes()
        except OSError as error:
            raise HostGenerationError(f"cannot read {linked}: {error.strerror}") from None
        write_temporary(output, data)       # `bobc build`'s scratch copy, published from there
        try:
            output.chmod(0o755)
        except OSError as error:
            raise HostGenerationError(f"cannot write {output}: {error.strerror}") from None
    return source
