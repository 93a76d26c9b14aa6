"""The native host from a compiled plan: C data generated with jinja2, built
with gcc against runtime_c/, images embedded as ELF sections.

The generated C is data only (buffers, semaphores, parameter blocks, the
contract, the schedule's steps); runtime_c/plan_host.c carries it out.  Every
fact the host needs is taken from the plan or the encoder's manifest and
cross-checked here, so a host that builds is one whose data agrees.
"""
from __future__ import annotations

import json
import re
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

import jinja2

from .. import __version__
from ..errors import BobcError
from ..resources import shared_folder
from ..targets import Target
from . import gcc, sections

def _runtime_sources(runtime: Path) -> tuple[str, ...]:
    """The runtime's library sources, as runtime_c/Makefile lists them (LIB_SRC): one list."""
    makefile = (runtime / "Makefile").read_text(encoding="utf-8")
    found = re.search(r"^LIB_SRC\s*:=\s*(.+)$", makefile, re.MULTILINE)
    if not found:
        raise HostGenerationError(f"{runtime / 'Makefile'} has no LIB_SRC line")
    return tuple(found.group(1).split())


PAGE = 4096
WAIT_TIMEOUT_MS = 10_000

# runtime_c/plan_host.h: enum bobc_file and enum bobc_step_op
FILES = {"input": 1, "checkpoint-in": 2, "checkpoint-out": 3, "predictions": 4, "result": 5}
OPS = {"submit": 1, "read": 2, "write": 3, "write_at": 4, "operation": 5, "checkpoint_begin": 6,
       "checkpoint_publish": 7, "adamw": 8}
# the plan's memory kinds -> runtime_c/nv_shim.h enum bob_mem_location
LOCATIONS = {"system": "BOB_MEM_SYSTEM", "video": "BOB_MEM_VIDEO"}
# which embedded image fills which plan buffer
BUFFER_SECTIONS = {"program": "program", "qmd": "qmd", "pushbuffer": "push", "gpfifo": "gpfifo"}
ADAMW_RESIDENTS = {"parameters": "parameters", "gradients": "gradients",
                   "first_moments": "first-moments", "second_moments": "second-moments"}


class HostGenerationError(BobcError):
    pass


@dataclass(frozen=True)
class Step:
    op: int
    file: int = 0
    a: int = 0
    b: int = 0
    c: int = 0
    d: int = 0
    note: str = ""


def _page(n: int) -> int:
    return -(-n // PAGE) * PAGE


def c_string(data: bytes | str) -> str:
    """A C string literal for `data` (octal escapes: never run into a following digit)."""
    raw = data.encode() if isinstance(data, str) else data
    if b"\0" in raw:
        raise HostGenerationError(f"identity {raw!r} holds a zero byte, which the host's C strings cannot carry")
    out = []
    for byte in raw:
        ch = chr(byte)
        out.append(ch if 0x20 <= byte < 0x7f and ch not in '"\\?' else f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def float_literal(bits: int) -> str:
    """A C float literal that is exactly the binary32 `bits` (hex float, no rounding)."""
    value = struct.unpack("<f", struct.pack("<I", bits))[0]
    return f"{value.hex()}f"


def _buffers(plan, images) -> list[dict]:
    sizes = {"program": len(images.program), "qmd": len(images.qmd), "pushbuffer": len(images.push),
             "gpfifo": len(images.gpfifo), "semaphores": images.manifest["sizes"]["semaphore"]}
    out = []
    for b in plan.extras["buffers"]:
        if b["memory"] not in LOCATIONS:
            raise HostGenerationError(f"buffer {b['name']} asks for {b['memory']} memory; this host maps "
                                      f"{' or '.join(LOCATIONS)} memory")
        if b["host"] != b["gpu"]:
            raise HostGenerationError(f"buffer {b['name']}: host address 0x{b['host']:x} differs from its GPU "
                                      f"address 0x{b['gpu']:x}; this host maps each buffer at its GPU address")
        # A target's images may outgrow the extent the (sm_86) plan computed: sm_90's
        # parameter blocks and QMD slots are larger.  The buffer takes the larger.
        size = _page(max(b["extent"], sizes.get(b["name"], 0)))
        out.append({"name": b["name"], "gpu": b["gpu"], "size": size, "location": LOCATIONS[b["memory"]],
                    "section": sections.PREFIX + BUFFER_SECTIONS[b["name"]] if b["name"] in BUFFER_SECTIONS else None})
    ordered = sorted(out, key=lambda b: b["gpu"])
    for low, high in zip(ordered, ordered[1:]):
        if low["gpu"] + low["size"] > high["gpu"]:
            raise HostGenerationError(
                f"host buffers {low['name']} [0x{low['gpu']:x}, 0x{low['gpu'] + low['size']:x}) and "
                f"{high['name']} [0x{high['gpu']:x}, ...) overlap once sized for this target's images")
    return out


def _steps(plan, manifest) -> list[Step]:
    """The plan's schedule, repeats unrolled, with each update's AdamW scalars
    written just before the submissions that launch it."""
    submissions = manifest["submissions"]
    adamw = {launch: k for k, launch in enumerate(plan.extras["adamw_launches"])}
    out: list[Step] = []
    state = {"gp_put": 0}

    def emit(items, iteration=0):
        for s in items:
            op = s["op"]
            if op == "repeat":
                for i in range(s["count"]):
                    emit(s["body"], i)
            elif op == "submit":
                end = s["gp_put"] + iteration * s["stride"]
                first = state["gp_put"]
                for index in range(first, end):
                    for launch in submissions[index]["launches"]:
                        if launch in adamw:
                            out.append(Step(OPS["adamw"], 0, launch, adamw[launch],
                                            note=f"update {adamw[launch]}'s AdamW scalars into launch {launch}"))
                out.append(Step(OPS["submit"], 0, first, end, note=f"submissions {first}..{end - 1}"))
                state["gp_put"] = end
            elif op == "read":
                out.append(Step(OPS["read"], FILES[s["file"]], s["host"], s["extent"],
                                s["offset"] + iteration * s["stride"], s["tolerate_empty"], note=f"read {s['file']}"))
            elif op == "write":
                out.append(Step(OPS["write"], FILES[s["file"]], s["host"], s["extent"], note=f"write {s['file']}"))
            elif op == "write_at":
                out.append(Step(OPS["write_at"], FILES[s["file"]], s["host"], s["extent"], s["offset"],
                                note=f"write {s['file']} at {s['offset']}"))
            elif op == "operation":
                out.append(Step(OPS["operation"], note="predict ends here"))
            elif op == "checkpoint_begin":
                out.append(Step(OPS["checkpoint_begin"], note="checkpoint begins"))
            elif op == "checkpoint_publish":
                out.append(Step(OPS["checkpoint_publish"], 0, s["updates"], note="checkpoint published"))
            else:
                raise HostGenerationError(f"the schedule has a step '{op}' this host cannot carry out")

    emit(plan.extras["steps"])
    return out


def _hyperparameters(plan) -> dict:
    adamw = plan.extras["adamw"]
    bits = {}
    for key in ("learning_rate", "beta1", "beta2", "epsilon"):
        if "float32_bits" not in adamw[key]:
            raise HostGenerationError(f"AdamW's {key} is not a binary32 constant; this host needs binary32")
        bits[key] = adamw[key]["float32_bits"]
    # Bob.TrainingRun's learner identity ends with the five binary32
    # hyperparameters (lr, beta1, beta2, eps, weight decay), little-endian:
    # weight decay is read there, the four others are checked against it.
    tail = plan.checkpoint.learner[-20:]
    declared = struct.unpack("<5I", tail)
    expected = (bits["learning_rate"], bits["beta1"], bits["beta2"], bits["epsilon"])
    if declared[:4] != expected:
        raise HostGenerationError("the learner identity's hyperparameters differ from the AdamW description's")
    return {"lr": bits["learning_rate"], "beta1": bits["beta1"], "beta2": bits["beta2"],
            "eps": bits["epsilon"], "weight_decay": declared[4]}


def _adamw_pointers(plan) -> dict:
    residents = {r.name: r.address for r in plan.arena.globals}
    missing = [name for name in ADAMW_RESIDENTS.values() if name not in residents]
    if missing:
        raise HostGenerationError(f"the device arena has no resident named {', '.join(missing)}")
    pointers = {key: residents[name] for key, name in ADAMW_RESIDENTS.items()}
    # the plan's own AdamW blocks must point where the host will
    for launch in plan.extras["adamw_launches"]:
        words = {p.word: p.value for p in plan.program.launches[launch].patches}
        base = 0x160 // 8
        baked = [words.get(base + i) for i in range(4)]
        if baked != [pointers["parameters"], pointers["gradients"], pointers["first_moments"],
                     pointers["second_moments"]]:
            raise HostGenerationError(f"launch {launch}'s AdamW block does not pass P, G, M, V in order")
    return pointers


def render(built, target: Target) -> str:
    plan, images = built.plan, built.images
    manifest = images.manifest
    prologue = manifest["prologue"]["gpfifo_entry"]
    environment = jinja2.Environment(loader=jinja2.PackageLoader("bobc.host", "templates"),
                                     undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                                     bytecode_cache=gcc.template_cache())
    environment.globals.update(hex=hex, c_string=c_string, float_literal=float_literal)
    contract = plan.checkpoint
    return environment.get_template("host_plan.c.j2").render(
        version=__version__, identity=plan.extras["identity"], target=target.name,
        buffers=_buffers(plan, images),
        semaphores=[s["semaphore_address"] for s in manifest["submissions"]],
        parameter_blocks=[launch["parameter_address"] for launch in manifest["launches"]],
        steps=_steps(plan, manifest),
        prologue_entry=prologue[0] | (prologue[1] << 32),
        semaphore_payload=manifest["semaphore"]["payload"],
        parameter_base=target.parameter_base,
        adamw=_adamw_pointers(plan),
        contract=contract, hyper=_hyperparameters(plan),
        parameter_count=contract.chunk_bytes // 4,
        wait_timeout_ms=WAIT_TIMEOUT_MS)


def build_host(built, target: Target, output: Path) -> None:
    """Write the host executable `output` for `target` from a compiled plan."""
    source = render(built, target)
    with tempfile.TemporaryDirectory(prefix="bobc-host-") as folder:
        plan_c = Path(folder) / "host_plan.c"
        plan_c.write_text(source, encoding="utf-8")
        linked = Path(folder) / "host"
        runtime = shared_folder("runtime_c")
        gcc.build([plan_c], [runtime], linked, library=[runtime / name for name in _runtime_sources(runtime)])
        images = built.images
        sections.embed(linked, {"program": images.program, "qmd": images.qmd, "push": images.push,
                                "gpfifo": images.gpfifo,
                                "manifest": json.dumps(images.manifest, sort_keys=True).encode()})
        try:
            output.write_bytes(linked.read_bytes())
            output.chmod(0o755)
        except OSError as error:
            raise HostGenerationError(f"cannot write {output}: {error.strerror}") from None
