"""`bobc sim`: a plan's invocation with its device images run by the functional simulator.

Builds the plan's images for --target (or takes a build's emitted images with
--images DIR), then carries out the native host's schedule with the GPU's
part executed by bobc.sim: same arguments and files as the host and as
`bobc run --reference`, so the three can be compared file for file.  Any
hazard, out-of-bounds access or unmodeled method/instruction stops the run
with a message naming the launch, instruction and address (exit 7).
"""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import UsageError
from ..targets import target_named
from ._common import add_target, existing_file


def add_arguments(p):
    p.add_argument("plan", help="the plan module (.bob)")
    p.add_argument("operation", choices=["train", "predict"])
    p.add_argument("--input", required=True, help="input record")
    p.add_argument("--checkpoint", help="checkpoint to resume from (fresh run when absent)")
    p.add_argument("--checkpoint-out", required=True, help="checkpoint to publish")
    p.add_argument("--predictions", required=True, help="predictions file to write")
    p.add_argument("--result", required=True, help="result record to write")
    p.add_argument("--images", metavar="DIR",
                   help="run these emitted images (bobc build --emit-images DIR) instead of building them")
    p.add_argument("--no-hazard-check", action="store_true",
                   help="do not check control codes (stall counts and scoreboards) while executing")
    p.add_argument("--no-order-check", action="store_true",
                   help="do not refuse launches with no wait for idle between them that touch the same "
                        "memory (docs/simulator.md, \"Launch order\"): for images whose launches overlap on "
                        "purpose")
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="extra module search folder (after the plan's own, before specs/)")
    p.add_argument("--entry", default=None,
                   help="the definition describing the native host (default: the plan module's one "
                        "definition of type (family NvidiaPlanHost))")
    add_target(p)


def load_images(folder: Path):
    from ..nvidia.encode import IMAGE_FILES, Images

    folder = Path(folder)
    try:
        parts = {attribute: (folder / name).read_bytes() for attribute, name in IMAGE_FILES.items()}
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(f"cannot read the images in {folder}: {error.strerror} ({error.filename})") from None
    except ValueError as error:
        raise UsageError(f"{folder / 'manifest.json'} is not JSON: {error}") from None
    return Images(manifest=manifest, **parts)


def run(args):
    """Files in and out by the native host's rules (reference/safe_io.py, as `bobc run
    --reference`): inputs read once and bounded, output paths checked before any work,
    interval checkpoints published as their intervals end, the last outputs together."""
    from .. import pipeline
    from ..reference import safe_io
    from ..reference.errors import BadCheckpoint, BadInputRecord
    from ..reference.runner import OutputPaths
    from ..sim.host_adapter import host_plan
    from ..sim.invocation import simulate

    plan_path = existing_file(args.plan)
    outputs = OutputPaths(args.checkpoint_out, args.predictions, args.result)
    target = target_named(args.target)
    built = pipeline.compile_plan(plan_path, target, args.include, args.entry)
    images = built.images
    if args.images:
        images = load_images(args.images)
        if images.manifest.get("target") != target.name:
            raise UsageError(f"the images in {args.images} are for {images.manifest.get('target')}, "
                             f"not --target {target.name}")
    host = host_plan(built.plan, images, target, getattr(built.program, "search_path", ()))
    files = safe_io.OutputSet()
    record_file = safe_io.read_input(args.input, BadInputRecord)
    files.inputs.append(record_file)
    checkpoint_file = None
    if args.checkpoint:
        checkpoint_file = safe_io.read_input(args.checkpoint, BadCheckpoint)
        files.inputs.append(checkpoint_file)
    for option, name in OutputPaths.ORDER:
        files.add(getattr(outputs, name), option,
                  replaces=checkpoint_file if option == "--checkpoint-out" else None)
    from ..sim.faults import SimulationFault
    try:
        result = simulate(host, images, args.operation, record_file.data,
                          checkpoint_file.data if checkpoint_file else None,
                          check_hazards=not args.no_hazard_check,
                          publish_checkpoint=lambda data: safe_io.publish_file(outputs.checkpoint, data,
                                                                               "--checkpoint-out"),
                          record_path=args.input, checkpoint_path=args.checkpoint or "checkpoint",
                          check_order=not args.no_order_check)
    except SimulationFault as fault:
        _place_in_source(fault, built, target)
        raise
    files.stage("--predictions", result.predictions)
    files.stage("--result", result.result)
    files.stage("--checkpoint-out", result.checkpoint)
    files.publish()
    log = result.channel.log
    checked = ("no control-code hazard, " if not args.no_hazard_check else "") + \
        ("no unordered launches, " if not args.no_order_check else "")
    print(f"sim {target.name}: {args.operation}: {len(log.launches)} launches, {len(log.releases)} semaphore "
          f"releases; {checked}no out-of-bounds access; {len(result.publications)} checkpoint publication(s); "
          f"predictions {len(result.predictions)} bytes")
    return 0


def _place_in_source(fault, built, target) -> None:
    """A fault at an instruction of a launch's kernel gets that instruction's file:line:column
    (the source the build assembled for the launch's region), where the kernel can be found."""
    import re

    from ..errors import BobcError
    from ..kernel_cache import assemble_kernel
    from ..kernel_search import find_source
    from ..language.modules import specs_folder

    pc, launch = getattr(fault, "pc", None), getattr(fault, "launch", "")
    found = re.match(r"launch \d+ \(([^)]+)\)", launch or "")
    if fault.span is not None or pc is None or not found:
        return
    folders = [*getattr(built.program, "search_path", ()), specs_folder()]
    try:
        source = find_source(found.group(1), folders, target)
        if source is None:
            return
        assembled = assemble_kernel(source, target)
    except (BobcError, OSError):        # a place for the message is a courtesy, never a second fault
        return
    at = next((i for i in assembled.instructions if i.address == pc), None)
    if at is not None and at.span is not None:
        fault.span = at.span
