"""`bobc eval PLAN NAME`: type check one definition of a plan (its body against its type),
then evaluate it and print its value; `--unchecked` evaluates without the check, to look at
what an ill-typed definition computes."""
from __future__ import annotations

from ..targets import TARGETS
from ._common import add_target, existing_file


def add_arguments(p):
    p.add_argument("plan", help="the plan module (.bob)")
    p.add_argument("name", help="the definition to evaluate (plain, or Module.Path.name)")
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="extra module search folder (after the plan's own, before specs/)")
    p.add_argument("--hex", action="store_true", help="print byte strings as hex")
    p.add_argument("--type", action="store_true",
                   help="print the definition's type (type checking what it needs) instead")
    p.add_argument("--unchecked", action="store_true",
                   help="evaluate without type checking the definition first")
    add_target(p)


def backend_intrinsics():
    """The backend's compiler-native-encode handlers (bobc.plan.intrinsics)."""
    from ..plan.intrinsics import default_intrinsics

    return default_intrinsics()


def run(args):
    from ..language import load_program
    from ..language.check import show_value_type
    from ..language.printing import format_value

    existing_file(args.plan)
    target = TARGETS[args.target]
    program = load_program(args.plan, include=args.include, target=target,
                           intrinsics=backend_intrinsics())
    if args.type:
        print(show_value_type(program.type_of(args.name)))
        return 0
    if not args.unchecked:
        program.check_definition(args.name)
    value = program.value(args.name)
    print(program.deep(format_value, value, args.hex, show_value_type))
    return 0
