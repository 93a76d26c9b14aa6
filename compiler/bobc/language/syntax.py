"""The surface syntax tree: what a module says, before names are resolved.

Every node carries the Span it came from, so that every later error (an
unknown name, a type mismatch, a failed proof) points at the source.  The
tree is plain data; `show` prints an expression back in the language's own
syntax (used by the parser tests and by error messages).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import Span

MULTIPLICITIES = ("0", "1", "unrestricted")

# the words that, right after '(', begin a form rather than name a function (grammar.lark's
# `form` rule): an application of a variable or definition named so is written `(app name
# argument ...)`, and printed so, or the text would read back as the form (`(succ 3)`) or not
# parse at all (`(lambda 3)`)
FORM_HEADS = frozenset({"lambda", "pi", "let", "app", "family", "constructor", "record",
                        "eliminate", "nat-eliminate", "succ", "equal", "refl",
                        "compiler-native-encode", "the"})


@dataclass(eq=False)
class Node:
    span: Span


# ---- expressions -----------------------------------------------------------

@dataclass(eq=False)
class Variable(Node):
    name: str


@dataclass(eq=False)
class Natural(Node):
    value: int


@dataclass(eq=False)
class ByteString(Node):
    value: bytes


@dataclass(eq=False)
class Universe(Node):
    level: int


@dataclass(eq=False)
class Binder(Node):
    """`multiplicity name : type` (lambda, pi, family parameters, fields)."""

    multiplicity: str
    name: str
    type: Node


@dataclass(eq=False)
class Lambda(Node):
    binder: Binder
    body: Node


@dataclass(eq=False)
class Pi(Node):
    binder: Binder
    body: Node


@dataclass(eq=False)
class Let(Node):
    multiplicity: str
    name: str
    type: Node | None
    value: Node
    body: Node


@dataclass(eq=False)
class Application(Node):
    function: Node
    arguments: list
    explicit: bool = False      # written `(app f a)`


@dataclass(eq=False)
class FamilyType(Node):
    family: str
    arguments: list


@dataclass(eq=False)
class Constructor(Node):
    """`(constructor F C args...)`; its span is the whole form's, `family_span` F's and
    `name_span` C's (for errors about the names themselves)."""

    family: str
    constructor: str
    arguments: list
    family_span: Span | None = None
    name_span: Span | None = None


@dataclass(eq=False)
class RecordField(Node):
    name: str
    value: Node


@dataclass(eq=False)
class Record(Node):
    """`(record F (field = value) ...)`; its span is the whole form's, `name_span` F's."""

    family: str
    fields: list
    name_span: Span | None = None


@dataclass(eq=False)
class BranchBinder(Node):
    name: str


@dataclass(eq=False)
class Branch(Node):
    constructor: str
    binders: list
    body: Node


@dataclass(eq=False)
class Eliminate(Node):
    """`(eliminate F motive value branch ...)`; its span is the whole form's, `name_span` F's."""

    family: str
    motive: Node
    scrutinee: Node
    branches: list
    name_span: Span | None = None


@dataclass(eq=False)
class NatEliminate(Node):
    motive: Node
    base: Node
    step: Node
    target: Node


@dataclass(eq=False)
class Successor(Node):
    predecessor: Node


@dataclass(eq=False)
class Equal(Node):
    type: Node
    left: Node
    right: Node


@dataclass(eq=False)
class Refl(Node):
    type: Node
    value: Node


@dataclass(eq=False)
class NativeEncode(Node):
    type: Node
    value: Node


@dataclass(eq=False)
class Annotation(Node):
    type: Node
    expression: Node


# ---- declarations ----------------------------------------------------------

@dataclass(eq=False)
class Definition(Node):
    name: str
    type: Node | None
    body: Node


@dataclass(eq=False)
class ConstructorDeclaration(Node):
    name: str
    fields: list            # of Binder


@dataclass(eq=False)
class FamilyDeclaration(Node):
    name: str
    parameters: list        # of Binder
    sort: Node
    constructors: list      # of ConstructorDeclaration


@dataclass(eq=False)
class Import(Node):
    module: str


@dataclass(eq=False)
class Module(Node):
    name: str
    path: Path
    imports: list           # of Import
    declarations: list      # Definition | FamilyDeclaration
    source: str = field(default="", repr=False)


# ---- printing --------------------------------------------------------------

def show_bytes(value: bytes) -> str:
    """A byte string as a literal the parser reads back to the same bytes."""
    out = []
    for byte in value:
        char = chr(byte)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif 0x20 <= byte < 0x7F:
            out.append(char)
        else:
            out.append(f"\\x{byte:02x}")
    return 'b"' + "".join(out) + '"'


def _binder(b: Binder) -> str:
    return f"{b.multiplicity} {b.name} : {show(b.type)}"


def show(node: Node) -> str:
    """One-line canonical text of an expression, in the language's syntax."""
    if isinstance(node, Variable):
        return node.name
    if isinstance(node, Natural):
        return str(node.value)
    if isinstance(node, ByteString):
        return show_bytes(node.value)
    if isinstance(node, Universe):
        return f"Type {node.level}"
    if isinstance(node, Lambda):
        return f"(lambda {_binder(node.binder)} . {show(node.body)})"
    if isinstance(node, Pi):
        return f"(pi {_binder(node.binder)} . {show(node.body)})"
    if isinstance(node, Let):
        annotation = f" : {show(node.type)}" if node.type is not None else ""
        return (f"(let {node.multiplicity} {node.name}{annotation} = {show(node.value)} "
                f"in {show(node.body)})")
    if isinstance(node, Application):
        head = "app " if node.explicit or (isinstance(node.function, Variable)
                                            and node.function.name in FORM_HEADS) else ""
        return "(" + head + " ".join(show(x) for x in [node.function, *node.arguments]) + ")"
    if isinstance(node, FamilyType):
        return "(" + " ".join(["family", node.family, *map(show, node.arguments)]) + ")"
    if isinstance(node, Constructor):
        return "(" + " ".join(["constructor", node.family, node.constructor,
                               *map(show, node.arguments)]) + ")"
    if isinstance(node, Record):
        parts = [f"({f.name} = {show(f.value)})" for f in node.fields]
        return "(" + " ".join(["record", node.family, *parts]) + ")"
    if isinstance(node, Eliminate):
        branches = [
            "(branch " + " ".join([b.constructor, *(x.name for x in b.binders)]) + f" . {show(b.body)})"
            for b in node.branches
        ]
        return "(" + " ".join(["eliminate", node.family, show(node.motive), show(node.scrutinee),
                               *branches]) + ")"
    if isinstance(node, NatEliminate):
        return (f"(nat-eliminate {show(node.motive)} {show(node.base)} {show(node.step)} "
                f"{show(node.target)})")
    if isinstance(node, Successor):
        return f"(succ {show(node.predecessor)})"
    if isinstance(node, Equal):
        return f"(equal {show(node.type)} {show(node.left)} {show(node.right)})"
    if isinstance(node, Refl):
        return f"(refl {show(node.type)} {show(node.value)})"
    if isinstance(node, NativeEncode):
        return f"(compiler-native-encode {show(node.type)} {show(node.value)})"
    if isinstance(node, Annotation):
        return f"(the {show(node.type)} {show(node.expression)})"
    raise TypeError(f"not an expression: {node!r}")


def show_declaration(node: Node) -> str:
    """A declaration in canonical multi-line text (parser success tests)."""
    if isinstance(node, Definition):
        annotation = f" : {show(node.type)}" if node.type is not None else ""
        return f"def {node.name}{annotation} = {show(node.body)}"
    if isinstance(node, FamilyDeclaration):
        params = "".join(f" ({_binder(p)})" for p in node.parameters)
        lines = [f"family {node.name}{params} : {show(node.sort)}"]
        for c in node.constructors:
            lines.append(f"constructor {c.name}")
            lines.extend(f"field {_binder(f)}" for f in c.fields)
        lines.append("end-family")
        return "\n".join(lines)
    raise TypeError(f"not a declaration: {node!r}")


def show_module(module: Module) -> str:
    lines = [f"module {module.name}"]
    lines.extend(f"import {i.module}" for i in module.imports)
    lines.extend(show_declaration(d) for d in module.declarations)
    return "\n".join(lines) + "\n"
