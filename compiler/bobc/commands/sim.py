"""`bobc sim`: a plan's invocation with its device images run by the functional simulator.

Builds the plan's images for --target (or takes a build's emitted images with
--images DIR: this plan's, for their manifest's target unless --target says another, which is
refused), then carries out the native host's schedule with the GPU's
part executed by bobc.sim: same arguments and files as the host and as
`bobc run --reference`, so the three can be compared file for file.  Any
hazard, out-of-bounds access, unmodeled method/instruction, deadlock or
step-limit stop ends the run with a message naming the launch, instruction,
address, the first faulting thread and the instruction's file:line:column (exit 7).
"""
from __future__ import annotations

from ..cli import _positive
from ..errors import UsageError, shown_plan_text
from ..resources import doc
from ..sim.limits import MAX_STEPS
from ..targets import TARGETS, target_named
from ._common import DEFAULT_TARGET, add_target, existing_folder, existing_plan
from .run import HOST_OPTIONS, HOST_PART_RULE, take_host_words


def add_arguments(p):
    p.add_argument("plan", help="the plan module (.bob)")
    p.add_argument("operation", nargs="?", metavar="{train,predict}",
                   help="the host's operation: it and the host's options are judged by the host's rules, as "
                        "`bobc run --reference` judges them.  " + HOST_PART_RULE.replace(" or native", "") +
                        " (`bobc sim PLAN train --help`: the host's usage; `bobc sim PLAN --version`: the host's "
                        "version text, as the host bobc build PLAN builds prints it)")
    for option, text in HOST_OPTIONS:
        p.add_argument(option, metavar=option.lstrip("-").replace("-", "_").upper(), help=text)
    p.add_argument("--images", metavar="DIR",
                   help="run these emitted images (bobc build PLAN --emit-images DIR: this plan's, for the "
                        "target their manifest names) instead of building them")
    p.add_argument("--no-hazard-check", action="store_true",
                   help="do not check control codes (stall counts and scoreboards) while executing")
    p.add_argument("--no-order-check", action="store_true",
                   help="do not refuse launches with no wait for idle between them that touch the same "
                        f"memory ({doc('simulator.md', in_help=True)}, \"Launch order\"): for images whose "
                        "launches overlap on purpose")
    p.add_argument("--max-steps", type=_positive, default=None, metavar="N",
                   help=f"stop a launch after it has issued N instructions (default {MAX_STEPS:,}; "
                        f"{doc('simulator.md', in_help=True)}, \"Step limit\"): for a kernel that really runs longer")
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="extra module search folder (after the plan's own, before specs/)")
    p.add_argument("--entry", default=None,
                   help="the definition describing the native host (default: the plan module's one "
                        "definition of type (family NvidiaPlanHost))")
    add_target(p, default=None, help=f"GPU architecture to build for (default {DEFAULT_TARGET}; with --images, "
                                     "the target their manifest names)")
    # the host's words are the host's parser's to judge, as `bobc run --reference` judges them (probe
    # s31 today finding 10): a shortened `--inp` is refused as an unknown option, an empty value as
    # one, with the host's words and exit code; sim's own options stand anywhere; from the operation
    # on, -h and --help are the host's, and after `--` every word is (HOST_PART_RULE, as `bobc run`'s)
    take_host_words(p, ("train", "predict"), host_help=True)


def load_images(folder):
    """The images of a `bobc build --emit-images` folder, each file read once and bounded
    (bobc.nvidia.decode.read_images: a FIFO, a device or a file past 1 GiB is refused by name,
    exit 2) and checked against its manifest."""
    from ..nvidia.decode import read_images

    return read_images(folder)


def images_target(images, folder, given: str | None):
    """The target to build the plan for: the images' own (their manifest's `target`) when
    --target is not given; a --target that is not theirs is refused by name (exit 2)."""
    theirs = images.manifest.get("target")
    if theirs not in TARGETS:
        raise UsageError(f"the images in {folder} are for {theirs!r}, a target bobc does not know",
                         hint=f"bobc builds for {', '.join(sorted(TARGETS))}: emit them again with "
                              "`bobc build PLAN --target T --emit-images DIR`")
    if given is not None and given != theirs:
        raise UsageError(f"the images in {folder} are for {theirs}, not --target {given}",
                         hint=f"leave --target out (the images say their target), or emit this plan's "
                              f"images for {given} (`bobc build PLAN --target {given} --emit-images DIR`)")
    return target_named(theirs)


def _listed(names: list[str], most: int = 8) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "") if names else "none"


def _first_difference(theirs, ours, where: str = "") -> tuple[str, object, object] | None:
    """(JSON path, their value, our value) of the first place two manifests differ, or None."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        for key in sorted(set(theirs) | set(ours)):
            if key not in theirs or key not in ours:
                return f"{where}{'.' if where else ''}{key}", theirs.get(key, "absent"), ours.get(key, "absent")
            found = _first_difference(theirs[key], ours[key], f"{where}{'.' if where else ''}{key}")
            if found:
                return found
        return None
    if isinstance(theirs, list) and isinstance(ours, list) and \
            any(isinstance(item, (dict, list)) for item in (*theirs, *ours)):
        for index, (a, b) in enumerate(zip(theirs, ours)):
            found = _first_difference(a, b, f"{where}[{index}]")
            if found:
                return found
        if len(theirs) != len(ours):
            return f"{where} (entries)", len(theirs), len(ours)
        return None
    return None if theirs == ours else (where, theirs, ours)


def check_plans_images(images, built, folder, plan_path, target) -> None:
    """Refuse (exit 2) images that are not this plan's: their manifest (kernels, launches, their
    places and grids, submissions, the prologue) must be the one this plan's build for their
    target has, since the host's schedule, buffers and fills come from the plan and address what
    the manifest lays out.  Images whose bytes differ under this plan's manifest (edited by hand,
    a fault planted in a test) are run: finding what such images do is what --images is for."""
    import json

    from ..host.version import plan_identity
    from ..nvidia.encode import manifest_text

    ours = json.loads(manifest_text(built.images.manifest))
    theirs = images.manifest
    if theirs == ours:
        return
    theirs_id, ours_id = plan_identity(images), plan_identity(built.images)
    identities = f"their plan identity is {theirs_id}, {plan_path}'s for {target.name} is {ours_id}" \
        if theirs_id != ours_id else f"the same plan identity, {ours_id}: their manifest.json alone differs"
    hint = (f"run the plan they were built from, or emit this plan's (`bobc build {plan_path} --target "
            f"{target.name} --emit-images DIR`)")
    kernels = [r.get("identity") for r in theirs.get("regions", [])]
    own = [r["identity"] for r in ours["regions"]]
    if kernels != own:
        raise UsageError(f"the images in {folder} are not this plan's: their kernels are {_listed(kernels)}, "
                         f"{plan_path}'s are {_listed(own)} ({identities})", hint=hint)
    place, their_value, our_value = _first_difference(theirs, ours)
    shown = [json.dumps(v, sort_keys=True) for v in (their_value, our_value)]
    shown = [text if len(text) <= 80 else text[:77] + "..." for text in shown]
    raise UsageError(f"the images in {folder} are not this plan's build: their manifest has {place} "
                     f"{shown[0]}, {plan_path}'s {shown[1]} ({identities})", hint=hint)


def run(args):
    from .run import native_entry_hinted

    # an --entry that is a native host's Bytes or program, found anywhere: pointed to `bobc run PLAN native`
    with native_entry_hinted(args):
        return _simulate(args)


def _simulate(args):
    """Files in and out by the native host's rules (reference/safe_io.py, as `bobc run
    --reference`): inputs read once and bounded, output paths checked before any work,
    interval checkpoints published as their intervals end, the last outputs together."""
    from .. import pipeline
    from ..reference import safe_io
    from ..reference.runner import OutputPaths
    from ..sim.host_adapter import host_plan
    from ..sim.invocation import simulate

    # before the host's words and the plan are judged, as build, check and run do (probe s32 today3
    # finding 7: sim said "missing --input RECORD" first)
    pipeline.refuse_blank_entry(args.entry, "simulate")
    plan_path = existing_plan(args.plan, "sim", ("train", "predict"))
    from .run import host_arguments
    if host_arguments(args)[:1] == ["native"]:
        # a native host (two peers over TCP, a request host) is no plan host: its program runs on the
        # reference interpreter, never on the simulator (probe s41 peerfaults finding 3: sim said
        # "unknown operation 'native' (expected train or predict)" and nothing more)
        raise UsageError("bobc sim runs a plan host (train, predict), not a native host's program; run that on "
                         f"bobc's reference interpreter: `bobc run {args.plan} native ARGUMENTS... --reference "
                         f"--entry ENTRY` ({doc('native-host.md')}, \"The reference interpreter\")")
    # the host's parser: the same refusals as the host's and `bobc run --reference`'s; its --help
    # (after the operation: HOST_PART_RULE) is the host's usage, as `bobc run` prints it
    from .run import host_version_asked, judge_plan_host_words
    host_help = not host_version_asked(args) and judge_plan_host_words(
        args, plan_path, lambda: target_named(args.target or DEFAULT_TARGET), "sim")
    given = None
    if args.images:
        existing_folder(args.images, "--images",
                        hint="name a folder written by `bobc build PLAN --emit-images DIR`")
        given = load_images(args.images)
        target = images_target(given, args.images, args.target)
    else:
        target = target_named(args.target or DEFAULT_TARGET)
    from .run import host_version_asked, print_host_version
    if host_version_asked(args):
        # the version text of the host `bobc build PLAN --target T` builds (T: the images' own)
        return print_host_version(plan_path, target, args, "sim")
    if host_help:
        from .run import load_plan, plan_host_usage, print_host_help

        plan = load_plan(plan_path, args.include, args.entry, target, command="sim")
        from ..plan.schedule import checkpoint_needed, lower
        return print_host_help(plan_host_usage(f"bobc sim {args.plan}", plan.host.identity,
                                               plan.host.request.input_record_bytes, checkpoint_needed(lower(plan))))
    # then the environment's settings, as the host and `bobc run --reference` judge them (host_settings.h:
    # a value outside a setting's set is a usage error on any machine; probe s36 simwords finding 5)
    import os

    from ..reference import settings
    refused = settings.refusal(os.environ, settings.PLAN_HOST)
    if refused:
        raise UsageError(refused)
    outputs = OutputPaths(args.checkpoint_out, args.predictions, args.result)
    built = pipeline.compile_plan(plan_path, target, args.include, args.entry, command="sim")
    from .run import refuse_fresh_request
    refuse_fresh_request(built.plan, args)
    images = built.images
    if given is not None:
        check_plans_images(given, built, args.images, plan_path, target)
        images = given
    host = host_plan(built.plan, images, target, getattr(built.program, "search_path", ()))
    # a journal a kill left in the outputs' folders is completed before any input is read (as the
    # host and `bobc run --reference` do, docs/runtime.md): resumed in place, the checkpoint read
    # is the one the interrupted run published, not the one before it
    from .run import host_words
    with host_words():
        safe_io.recover([outputs.predictions, outputs.result, outputs.checkpoint])
    files = safe_io.OutputSet()
    # with the host's limits, as `bobc run --reference` reads them (an oversized file refused unread),
    # and judged as the host judges them before any output: the record checked, the checkpoint
    # decoded (probe s36 simwords finding 2: a damaged checkpoint beside a bad output was exit 8)
    from .run import read_plan_host_inputs
    record_file, checkpoint_file, _ = read_plan_host_inputs(built.plan, args.input, args.checkpoint or None,
                                                            args.operation)
    files.inputs.append(record_file)
    if checkpoint_file is not None:
        files.inputs.append(checkpoint_file)
    # the plan's modules and kernel sources, and the images run, are this run's inputs too: no
    # output replaces one (as `bobc run --reference`'s)
    files.inputs.extend(plan_inputs(built, target, args.images if given is not None else None))
    # an output's refusal, and a publication's, in the host's line (as `bobc run --reference`
    # words them: docs/simulator.md gives sim the same one-line refusals and exit codes)
    from .run import claim_host_outputs
    publish_checkpoint = claim_host_outputs(files, outputs, checkpoint_file, args, built.plan)
    from ..sim.faults import SimulationFault
    try:
        try:
            result = simulate(host, images, args.operation, record_file.data,
                              checkpoint_file.data if checkpoint_file else None,
                              check_hazards=not args.no_hazard_check,
                              publish_checkpoint=publish_checkpoint,
                              record_path=args.input, checkpoint_path=args.checkpoint or "checkpoint",
                              check_order=not args.no_order_check, max_steps=args.max_steps)
        except SimulationFault as fault:
            _place_in_source(fault, built, target)
            _name_shared_memory(fault, built.plan)
            raise
        files.stage("--predictions", result.predictions)
        files.stage("--result", result.result)
        files.stage("--checkpoint-out", result.checkpoint)
        with host_words():
            files.publish()
    except Exception as error:      # an interval's checkpoint this run published stays: said (as run's)
        publish_checkpoint.said(error)
        raise
    log = result.channel.log
    checked = ("no control-code hazard, " if not args.no_hazard_check else "") + \
        ("no unordered launches, " if not args.no_order_check else "")
    from ..cli import say

    # the outputs are published: a stdout that cannot take this line is said on stderr, exit 0 (cli.say)
    say(f"sim {target.name}: {args.operation}: {len(log.launches)} launches, {len(log.releases)} semaphore "
        f"releases; {checked}no out-of-bounds access, no race between a launch's blocks; {len(result.publications)} checkpoint publication(s); "
        f"predictions {len(result.predictions)} bytes", "sim")
    return 0


def plan_inputs(built, target, images_folder=None) -> list:
    """_common.read_files of what the run read besides its --input and --checkpoint: the plan's
    modules and kernel sources, and the --images folder's files."""
    from pathlib import Path

    from ..nvidia.encode import IMAGE_FILES
    from ._common import kernel_files, module_files, read_files

    read = [*read_files(module_files(built.program), "a module of the plan"),
            *read_files(kernel_files(built.program, built.plan, target), "a kernel source of the plan")]
    if images_folder is not None:
        folder = Path(images_folder)
        read += read_files([folder / name for name in ("manifest.json", *IMAGE_FILES.values())],
                           "one of the --images files")
    return read


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
    spans = {i.address: i.span for i in assembled.instructions if i.span is not None}
    if pc in spans:
        fault.span = spans[pc]
    others = [f"{place:#06x} is {spans[place]}" for place in getattr(fault, "places", ()) if place in spans]
    if others:
        fault.extend(f" ({'; '.join(others)})")


def _name_shared_memory(fault, plan) -> None:
    """An access past the block's shared memory names where the plan gives that memory: the
    launch's region's shared bytes (its QMD's SHARED_MEMORY_SIZE, rounded up by the encoder to the
    target's granule), written at the region's file:line:column (probe s44 newuser9: the message
    said "the block's 1024 bytes" and nothing of the region's 128)."""
    import re

    found = re.match(r"launch \d+ \((.+)\)$", getattr(fault, "launch", None) or "")
    if getattr(fault, "memory", None) != "shared" or not found:
        return
    # the launch's region by its identity (the images may order launches otherwise than the plan)
    region = next((r for r in plan.program.regions if shown_plan_text(r.identity) == found.group(1)), None)
    if region is None:
        return
    at = (region.at or {}).get("shared_bytes") or (region.at or {}).get("")
    given = re.search(r"the block's (\d+) bytes of shared memory", fault.message)
    rounded = (f"; the launch's QMD rounds them up to {given.group(1)}"
               if given and int(given.group(1)) != region.shared_bytes else "")
    fault.extend(f"; the block's shared memory is region {shown_plan_text(region.identity)}'s shared bytes "
                 f"({region.shared_bytes:,}{f', given at {at}' if at is not None else ''}{rounded})")
    fault.hint = ("give the region the shared bytes its kernel's code reaches (declare them on the kernel's "
                  "`.shared` line: the region's `sm86ProgramSharedBytes` gives what the source declares), or "
                  "correct the access's address")

