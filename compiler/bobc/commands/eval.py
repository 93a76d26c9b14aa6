"""`bobc eval PLAN NAME`: type check one definition of a plan (its body against its type) and
every definition it reaches, then evaluate it and print its value; `--unchecked` evaluates
without the checks, to look at what an ill-typed definition computes.

Evaluation follows definitions by name, so checking NAME alone is not enough: with
`def bad : Nat = b"x"` and `def top : Nat = bad`, top's body checks (bad is taken at its
declared type) but its value is a byte string.  Only definitions that checked are evaluated."""
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

    from ..language.modules import refuse_broken_plan_link

    refuse_broken_plan_link(args.plan)
    refuse_module_folder(args.plan)
    existing_file(args.plan)
    target = TARGETS[args.target]
    program = load_program(args.plan, include=args.include, target=target,
                           intrinsics=backend_intrinsics())
    refuse_folder_name(program, args.name)
    if not args.unchecked:
        check_cycles(program, args.name)
    if args.type:
        print(show_value_type(program.type_of(args.name)))
        return 0
    if not args.unchecked:
        check_reachable(program, args.name)
    value = program.value(args.name)
    print(program.deep(format_value, value, args.hex, show_value_type))
    return 0


def refuse_module_folder(plan: str) -> None:
    """A PLAN that is a folder (of modules, say): a usage error saying so and naming the plan
    modules in it to pass instead (probe s32 leftovers finding 3)."""
    from pathlib import Path

    from ..errors import UsageError
    from ._common import path_kind

    if path_kind(plan) != "folder":
        return
    found = sorted(str(path) for path in Path(plan).rglob("*.bob"))[:3]
    from ..errors import printable

    raise UsageError(f"{printable(plan)} is a folder, not a plan module (.bob)",
                     hint="bobc eval PLAN NAME takes the plan module's file first, then the definition"
                          + (f": e.g. {' or '.join(found)}" if found else ""))


def refuse_folder_name(program, name: str) -> None:
    """NAME that is no definition of the plan but a folder of modules on the search path (`Std`,
    `Platform.Linux`: the plan's root, -I folders, specs/): said so, with the modules in it and a
    definition to name instead, rather than the generic "no definition" (probe s32 leftovers
    finding 3).  A definition of that name is evaluated as always."""
    from ..errors import BobcError
    from ..language.suggest import module_names

    try:
        program.definition(name)
        return
    except BobcError as error:
        refusal = error
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        _refuse_path_name(program, name)
        raise refusal
    folders = [folder.joinpath(*parts) for folder in program.search_path if folder.joinpath(*parts).is_dir()]
    modules = [m for m in module_names(program.search_path) if m.startswith(name + ".")]
    if not folders or not modules:
        # a name spelled like an identifier may still be a file or folder beside the plan
        # (`Model.bob`, `README.md`, `Build`): said so (probe s32 today3 finding 5)
        _refuse_path_name(program, name)
        raise refusal
    imported = [m for m in modules if m in program.scopes]
    example = ""
    for module in imported:
        definitions = list(program.scopes[module].definitions)
        if definitions:
            example = f"{module}.{definitions[0]}"
            break
    listed = ", ".join(modules[:4]) + (f" and {len(modules) - 4} more" if len(modules) > 4 else "")
    if example:
        hint = f"bobc eval evaluates a definition: name one as Module.Path.name, e.g. {example}"
    else:
        hint = (f"bobc eval evaluates a definition: name one of a module in it as Module.Path.name, "
                f"after `import {modules[0]}` (or another of them) in {program.plan_name}")
    raise type(refusal)(f"{name} is a folder of modules ({folders[0]}: {listed}), not a definition",
                        hint=hint)


def _refuse_path_name(program, name: str) -> None:
    """NAME that is a path to a folder or a file (`Native/`, `specs/Std`, `Plan.bob`) rather than a
    definition's name: said so, with a definition of the plan to name instead."""
    from ..errors import UsageError
    from ._common import path_kind

    kind = path_kind(name)
    if kind not in ("folder", "file"):
        return
    plain = list(program.scopes[program.plan_name].definitions)[:3] if program.plan_name in program.scopes else []
    example = f", e.g. {' or '.join(plain)}" if plain else ""
    raise UsageError(f"{name} is a {kind}, not a definition's name",
                     hint=f"bobc eval PLAN NAME takes the plan module's file first, then the name of a definition "
                          f"(plain, or Module.Path.name) of {program.plan_name} or its imports{example}")


def reachable_definitions(definition) -> list:
    """`definition` and every definition its type and body name, transitively, nearest first."""
    from ..language import core

    seen = {definition.key: definition}
    queue = [definition]
    while queue:
        current = queue.pop(0)
        for found in _globals_in((current.type, current.body), core):
            if found.key not in seen:
                seen[found.key] = found
                queue.append(found)
    return list(seen.values())


def _globals_in(root, core):
    """The definitions named by Global terms anywhere under `root` (terms, lists, branches)."""
    stack, visited = [root], set()
    while stack:
        item = stack.pop()
        if item is None or isinstance(item, (int, str, bytes, float, bool)) or id(item) in visited:
            continue
        visited.add(id(item))
        if isinstance(item, core.Global):
            yield item.definition
            continue
        if isinstance(item, core.Definition):
            continue  # reached through Global only
        if isinstance(item, (list, tuple)):
            stack.extend(item)
            continue
        if isinstance(item, dict):
            stack.extend(item.values())
            continue
        if isinstance(item, (core.Term, core.ElimBranch)):
            for cls in type(item).__mro__:
                for slot in getattr(cls, "__slots__", ()):
                    stack.append(getattr(item, slot, None))
            stack.extend(getattr(item, "__dict__", {}).values())


def check_cycles(program, name: str) -> None:
    """Refuse definitions and families that refer to each other in a cycle, among those `name`
    reaches (its type and body, transitively): what `bobc check` refuses of the whole plan,
    with the same message, before anything is checked or evaluated (a recursive definition
    would otherwise run into the stack limit, or print a value the checker refuses)."""
    from ..language.check import check_acyclic

    check_acyclic(program, [program.definition(name)])


def check_reachable(program, name: str) -> None:
    """Type check `name`, then each definition it reaches; refuse naming the first that fails."""
    from ..errors import BobcError

    definition = program.definition(name)
    try:
        program.check_definition(name)
    except BobcError as error:
        # a definition `name` uses is checked before the use (Checker.check_used): its refusal
        # is about that one
        used = getattr(error, "used_definition", None)
        if used is None or used is definition:
            raise
        raise depends_on(error, name, used.key) from None
    for other in reachable_definitions(definition)[1:]:
        try:
            program.check_definition(other.key)
        except BobcError as error:
            raise depends_on(error, name, other.key) from None


def depends_on(error, name: str, other: str):
    """`error` (a dependency's refusal, of any BobcError class) reworded to say that `name`
    depends on `other`: the same error, its own class and fields kept (a LimitExceeded's limit,
    a span, an exit code), only its message and a missing hint filled in."""
    error.message = (f"{name} cannot be evaluated: it depends on {other}, which does not type "
                     f"check: {error.message}")
    error.args = (error.message,)
    if not error.hint:
        error.hint = f"fix {other}, or pass --unchecked to evaluate anyway"
    return error
