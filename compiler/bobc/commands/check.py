"""`bobc check PLAN`: parse, resolve and type check a plan and everything it imports.

Certification (arena and pointer checks over the extracted plan) follows the
type check through `certify_hook`, which the certifier replaces; until then
it does nothing and `bobc check` reports the type check alone.
"""
from __future__ import annotations

from ..targets import TARGETS
from ._common import add_target, existing_file


def add_arguments(p):
    p.add_argument("plan", help="the plan module (.bob)")
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="extra module search folder (after the plan's own, before specs/)")
    add_target(p)


def certify_hook(program, target) -> str | None:
    """Certify a type-checked program; a one-line summary, or None when not wired.

    The coordinator wires this to bobc.certify; it must raise a BobcError when
    the plan is refused.
    """
    return None


def run(args):
    from ..language import load_program
    from .eval import backend_intrinsics

    existing_file(args.plan)
    target = TARGETS[args.target]
    program = load_program(args.plan, include=args.include, target=target,
                           intrinsics=backend_intrinsics())
    program.check()
    definitions = sum(len(s.definitions) for s in program.scopes.values())
    families = sum(len(s.families) for s in program.scopes.values())
    print(f"{program.plan_name}: well typed ({len(program.modules)} modules, "
          f"{families} families, {definitions} definitions)")
    summary = certify_hook(program, target)
    if summary:
        print(summary)
    return 0
