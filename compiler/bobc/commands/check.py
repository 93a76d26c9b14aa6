"""`bobc check PLAN`: parse, resolve and type check a plan and everything it
imports; when the plan defines the native host (--entry), also extract and
certify it (arena residents disjoint, every pointer inside a resident,
registers within budget, the schedule consistent)."""
from __future__ import annotations

import json
import os

from ..targets import target_named
from ._common import add_target, existing_file


def add_arguments(p):
    p.add_argument("plan", help="the plan module (.bob)")
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="extra module search folder (after the plan's own, before specs/)")
    p.add_argument("--entry", default=None,
                   help="the native host definition to certify when the plan has it (default: the plan "
                        "module's one definition of type (family NvidiaPlanHost))")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    add_target(p)


def _warn_swallowed_code(module):
    """Print (to stderr) a warning for each comment of the module (a path, or a module the
    program already parsed) that swallows code."""
    import sys

    from ..language.comments import swallowed_code_warnings
    from ..language.modules import parse_cached

    parsed = parse_cached(module) if isinstance(module, (str, os.PathLike)) else module
    for warning in swallowed_code_warnings(parsed):
        print(warning.render(), file=sys.stderr)


def run(args):
    from .. import pipeline

    path = existing_file(args.plan)
    target = target_named(args.target)
    _warn_swallowed_code(path)     # before loading: a swallowed module may not load
    program = pipeline.load(path, target, args.include)
    for name, module in program.modules.items():
        if name != program.plan_name:
            _warn_swallowed_code(module)
    entry = args.entry
    if entry is None:
        from ..plan.extract import host_entries
        hosts = host_entries(program)
        entry = pipeline.require_entry(program, None) if hosts else "native host"
    has_host = entry in program.scopes[program.plan_name].definitions
    plan = pipeline.check_and_certify(program, target, entry) if has_host else None
    if plan is None:
        program.check()
    definitions = sum(len(s.definitions) for s in program.scopes.values())
    families = sum(len(s.families) for s in program.scopes.values())
    if args.json:
        result = {"plan": program.plan_name, "well_typed": True, "modules": len(program.modules),
                  "families": families, "definitions": definitions, "target": target.name,
                  "entry": args.entry, "certified": plan is not None}
        if plan is not None:
            result.update(residents=len(plan.arena.globals), launches=len(plan.program.launches),
                          submissions=len(plan.program.submissions))
        print(json.dumps(result, indent=1, sort_keys=True))
        return 0
    print(f"{program.plan_name}: well typed ({len(program.modules)} modules, "
          f"{families} families, {definitions} definitions)")
    if plan is None:
        print(f"{program.plan_name}: no {entry} here, so nothing to certify "
              f"(check the module that defines the native host)")
        return 0
    program_plan = plan.program
    print(f"{entry}: certified for {target.name} ({len(plan.arena.globals)} residents, "
          f"{len(program_plan.launches)} launches, {len(program_plan.submissions)} submissions)")
    return 0
