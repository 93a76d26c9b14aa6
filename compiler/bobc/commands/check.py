"""`bobc check PLAN`: parse, resolve and type check a plan and everything it
imports; when the plan defines the native host (--entry), also extract and
certify it (arena residents disjoint, every pointer inside a resident,
registers within budget, the schedule consistent); an --entry that is a native
artifact (Bytes) is evaluated and held to what `bobc build --entry` refuses,
nothing written (bobc.native.build.checked_artifact)."""
from __future__ import annotations

import json
import os
from pathlib import Path

from ..targets import target_named
from ._common import add_target, existing_file


def add_arguments(p):
    p.add_argument("plan", help="the plan module (.bob)")
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="extra module search folder (after the plan's own, before specs/)")
    p.add_argument("--entry", default=None,
                   help="the native host definition to certify when the plan has it (default: the plan "
                        "module's one definition of type (family NvidiaPlanHost)); a native artifact (Bytes) "
                        "is evaluated and held to what `bobc build --entry` refuses, nothing written")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    add_target(p)


def _warn_swallowed_code(module, warnings: list[str], said: list[str]):
    """Print (to stderr) a warning for each comment of the module (a path, or a module the
    program already parsed) that swallows code, and for each of its definitions that hides a
    built-in or a primitive, and add it to `warnings` with its file as stored (what a passed
    check keeps: bobc/recall.py) and to `said` as printed (its file as shown in this working
    folder: errors.shown_path)."""
    import sys

    from ..language.comments import swallowed_code_warnings
    from ..language.modules import parse_cached
    from ..language.resolve import built_in_shadow_warnings

    parsed = parse_cached(module) if isinstance(module, (str, os.PathLike)) else module
    for warning in [*swallowed_code_warnings(parsed), *built_in_shadow_warnings(parsed)]:
        warnings.append(warning.render(shown=False))
        said.append(warning.render())
        print(said[-1], file=sys.stderr)


def run(args):
    """Print what checking the plan finds: from a stored outcome when nothing it was made from
    changed (bobc/recall.py), else by doing the work (and storing the outcome when it passes)."""
    import sys

    from .. import recall

    from ..language.modules import refuse_broken_plan_link

    # with --json, any refusal from here on -- a missing plan, a folder, a FIFO included -- is
    # printed as a JSON object too (cli._json_refusal; README, "--json"), with these keys and the
    # warnings said so far
    args.json_refusal = {"plan": str(Path(args.plan)), "module": None, "target": args.target}
    args.json_warnings = []
    from .. import pipeline

    pipeline.refuse_blank_entry(args.entry, "certify")
    refuse_broken_plan_link(args.plan)
    path = existing_file(args.plan)
    target = target_named(args.target)
    recalled = recall.recall(path, target, args.include)
    outcome = recall.outcome(recalled, args.entry, target) if recalled is not None else None
    if outcome is not None and outcome.get("native"):
        outcome = None      # a native artifact's outcome is never stored (_check: its artifact is)
    if outcome is None:
        outcome = _check(path, target, args)
    else:
        from ..language.comments import shown_warning

        for warning in outcome["warnings"]:
            print(shown_warning(warning), file=sys.stderr)
    _print(outcome, args, target)
    return 0


_NO_HOST = "native host"        # the outcome's entry when the plan defines none (recall.py stores a str)


def _check(path, target, args) -> dict:
    """Load, type check and (when the plan has its native host) certify; the outcome, stored."""
    from .. import pipeline, recall

    said: list[str] = getattr(args, "json_warnings", None)
    said = [] if said is None else said      # a refusal's JSON lists those said before it
    warnings: list[str] = []                 # the same, their files as stored: what the outcome keeps
    _warn_swallowed_code(path, warnings, said)     # before loading: a swallowed module may not load
    from ..language.modules import parse_cached

    getattr(args, "json_refusal", {})["module"] = parse_cached(path).name      # parsed: a refusal names it
    program = pipeline.load(path, target, args.include)
    getattr(args, "json_refusal", {})["module"] = program.plan_name
    for name, module in program.modules.items():
        if name != program.plan_name:
            _warn_swallowed_code(module, warnings, said)
    from ..native.build import entry_kind
    entry = args.entry
    artifacts: list = []
    if entry is not None:
        pipeline.require_entry(program, entry, "check")      # a mistyped --entry is an error, not "nothing to certify"
        if entry_kind(program, entry, "check") == "native":
            artifacts = [entry]                     # a native artifact: its checks are its own proofs
    else:
        from ..plan.extract import host_entries
        hosts = host_entries(program)
        entry = pipeline.require_entry(program, None, "check") if hosts else _NO_HOST
        if not hosts:
            artifacts = _native_artifacts(program, pipeline.bytes_definitions(program))
    has_host = entry in program.scopes[program.plan_name].definitions and not artifacts
    contracts: list = []
    plan = pipeline.check_and_certify(program, target, entry, contracts) if has_host else None
    native = None
    if plan is None and artifacts and args.entry is not None:
        # --entry of a native artifact: evaluated and held to what `bobc build --entry` refuses
        # (a request program's schedule, its staged restore, the program's checks), nothing written
        from ..native.build import checked_artifact
        native = checked_artifact(program, entry, target)
    elif plan is None:
        pipeline.check(program)
    outcome = {"warnings": warnings, "plan": program.plan_name, "modules": len(program.modules),
               "artifacts": artifacts,
               "families": sum(len(s.families) for s in program.scopes.values()),
               "definitions": sum(len(s.definitions) for s in program.scopes.values()),
               "entry": entry, "certified": plan is not None or native is not None}
    if plan is not None:
        outcome.update(residents=len(plan.arena.globals), launches=len(plan.program.launches),
                       submissions=len(plan.program.submissions))
    if native is not None:
        # not stored as an outcome: what makes it pass (the kernel sources evaluation read, the
        # interpreter) is the kept artifact's to vouch for (stored.artifact), which a check reads first
        outcome.update(native=True)
        return outcome
    recall.keep_outcome(program, args.entry, outcome, contracts[0] if contracts else None)
    return outcome


# the encoders whose bytes are a host executable (plan/intrinsics.py, default_intrinsics):
# a Bytes definition whose value reaches neither is plain data, not an artifact to build
EXECUTABLE_ENCODINGS = frozenset({"NativePhysicalProgram", "NvidiaResourceHost"})


def _native_artifacts(program, names: list[str]) -> list[str]:
    """Of the plan module's Bytes definitions `names`, those that may hold a host executable:
    their values reach compiler-native-encode of a program (a library module's byte strings
    do not, and get no `bobc build --entry` advice)."""
    from ..language.check import native_encodings

    definitions = program.scopes[program.plan_name].definitions
    return [name for name in names if native_encodings([definitions[name]]) & EXECUTABLE_ENCODINGS]


def _print(outcome: dict, args, target) -> None:
    from ..language.comments import shown_warning

    name, entry = outcome["plan"], outcome["entry"]
    if args.json:
        # "plan" is the plan file as given, as in a refusal's JSON; "entry" the definition checked
        # (null when the plan has no native host: "native host" is only the text's wording)
        result = {"plan": str(Path(args.plan)), "module": name, "ok": True, "well_typed": True,
                  "modules": outcome["modules"], "families": outcome["families"],
                  "definitions": outcome["definitions"], "target": target.name,
                  "entry": None if entry == _NO_HOST else entry, "certified": outcome["certified"],
                  "artifacts": list(outcome.get("artifacts") or []),
                  "warnings": [shown_warning(w) for w in outcome.get("warnings") or []]}
        if outcome.get("native"):
            result.update(native_artifact=True)
        elif outcome["certified"]:
            result.update(residents=outcome["residents"], launches=outcome["launches"],
                          submissions=outcome["submissions"])
        print(json.dumps(result, indent=1, sort_keys=True))
        return
    from ..native.words import count

    print(f"{name}: well typed ({count(outcome['modules'], 'module')}, "
          f"{outcome['families']} famil{'y' if outcome['families'] == 1 else 'ies'}, "
          f"{count(outcome['definitions'], 'definition')})")
    if not outcome["certified"]:
        artifacts = outcome.get("artifacts") or []
        if artifacts:
            shown = ", ".join(artifacts[:6]) + (f" and {len(artifacts) - 6} more" if len(artifacts) > 6 else "")
            one = 'it' if len(artifacts) == 1 else 'one'
            print(f"{name}: no plan host (NvidiaPlanHost) to certify; {shown}: Bytes, type checked, not "
                  f"evaluated; `bobc check --entry NAME` evaluates {one} and holds it to what `bobc build "
                  f"--entry NAME` refuses (nothing written); `bobc build --entry NAME` builds {one} as a native "
                  f"artifact when it holds a host executable")
        else:
            print(f"{name}: no {entry} here, so nothing to certify "
                  f"(check the module that defines the native host)")
        return
    if outcome.get("native"):
        print(f"{entry}: certified for {target.name} (a native artifact: evaluated and held to what "
              f"`bobc build --entry {entry}` refuses; nothing written)")
        return
    print(f"{entry}: certified for {target.name} ({count(outcome['residents'], 'resident')}, "
          f"{outcome['launches']} launch{'' if outcome['launches'] == 1 else 'es'}, "
          f"{count(outcome['submissions'], 'submission')})")
