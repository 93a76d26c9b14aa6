"""Values of the evaluator (normalization by evaluation), and forcing.

Evaluation is call by need: an argument, a let-bound value or a constructor
field is a Thunk (a term and its environment) until something inspects it;
forcing evaluates it once and keeps the result.  A value in weak head normal
form is one of the V* classes below; a VNeutral is a computation stuck on a
variable (only the type checker makes those), kept so it can be read back.

Environments are linked pairs `(value, rest)`; de Bruijn index 0 is the
innermost binder.
"""
from __future__ import annotations

from ..errors import BobcError


class EvalError(BobcError):
    """Evaluation went wrong in a way a plan author can fix (or an unchecked plan)."""


class Thunk:
    """A delayed computation: `term` in `env`, evaluated at most once."""

    __slots__ = ("value", "term", "env")

    def __init__(self, term, env):
        self.value = None
        self.term = term
        self.env = env


class GlobalThunk(Thunk):
    """A top-level definition's value, shared by every use of its name."""

    __slots__ = ("definition",)

    def __init__(self, term, definition):
        super().__init__(term, None)
        self.definition = definition


def force(value):
    """The value in weak head normal form (evaluating a thunk once)."""
    if isinstance(value, Thunk):
        result = value.value
        if result is not None:
            return result
        term = value.term
        if term is None:
            if isinstance(value, GlobalThunk):
                d = value.definition
                raise EvalError(f"definition {d.name} depends on its own value", d.span,
                                hint="definitions may not refer to themselves, directly or "
                                     "through others; use nat-eliminate or eliminate to recurse")
            raise EvalError("a value depends on itself")
        value.term = None           # black hole while it is being computed
        try:
            result = term.ev(value.env)
        except BaseException as error:
            value.term = term        # leave it retryable (e.g. after RecursionError)
            if isinstance(value, GlobalThunk):
                if hasattr(error, "note"):
                    error.note(value.definition)     # a LimitExceeded names the definitions
                elif isinstance(error, RecursionError) and not hasattr(error, "definition"):
                    error.definition = value.definition  # the innermost, for program._run_deep
            raise
        value.value = result
        value.term = term           # kept (shared with the program): where the value came from (origin)
        value.env = None
        return result
    return value


def origin(value):
    """Where a value, as a constructor field, an argument or a definition holds it (unforced),
    was written: a top-level definition's name (its shared value), or the expression a delayed
    value was computed from (forced or not); None for a value with no delay around it (a literal,
    a strict result) -- but a byte-string literal, which keeps the place it is written at, so a
    refusal of a plan's text (a launch identity that is not ASCII) points at the literal, not at
    the definition that uses it.  One type test: cheap enough for extraction to ask of every item."""
    kind = type(value)
    if kind is VBytes:
        return value.span
    if kind is GlobalThunk:
        return value.definition.span
    if kind is Thunk:
        term = value.term
        return term.span if term is not None else None
    return None


class Value:
    __slots__ = ()


class VNat(Value):
    __slots__ = ("value",)

    def __init__(self, value: int):
        self.value = value

    def __repr__(self):
        return f"VNat({self.value})"


class VBytes(Value):
    __slots__ = ("value", "span")

    def __init__(self, value: bytes, span=None):
        self.value = value
        self.span = span        # a literal's place (core.BytesLit); None for a computed string

    def __repr__(self):
        return f"VBytes({self.value!r})"


class VType(Value):
    """The universe `Type level`."""

    __slots__ = ("level",)

    def __init__(self, level: int):
        self.level = level

    def __repr__(self):
        return f"VType({self.level})"


class VNatType(Value):
    __slots__ = ()

    def __repr__(self):
        return "Nat"


class VBytesType(Value):
    __slots__ = ()

    def __repr__(self):
        return "Bytes"


NAT_TYPE = VNatType()
BYTES_TYPE = VBytesType()


class VLam(Value):
    """A closure: the Lam term (binder name, multiplicity, domain, body) and its environment."""

    __slots__ = ("term", "env")

    def __init__(self, term, env):
        self.term = term
        self.env = env

    @property
    def name(self):
        return self.term.name


class VPrimFn(Value):
    """A primitive applied to fewer arguments than it takes."""

    __slots__ = ("primitive", "args")

    def __init__(self, primitive, args):
        self.primitive = primitive
        self.args = args


class VPi(Value):
    """A dependent function type: domain value, codomain closure (Pi term + env)."""

    __slots__ = ("term", "env", "domain")

    def __init__(self, term, env, domain):
        self.term = term
        self.env = env
        self.domain = domain

    @property
    def name(self):
        return self.term.name

    @property
    def multiplicity(self):
        return self.term.multiplicity


class VFamily(Value):
    """The type `(family F params...)`."""

    __slots__ = ("declaration", "params")

    def __init__(self, declaration, params):
        self.declaration = declaration
        self.params = params

    @property
    def family(self) -> str:
        return self.declaration.name


class VCon(Value):
    """A constructor applied to its family's parameters and its fields."""

    __slots__ = ("declaration", "ctor", "params", "fields")

    def __init__(self, declaration, ctor, params, fields):
        self.declaration = declaration      # the FamilyDeclaration (core)
        self.ctor = ctor                    # the ConstructorDeclaration (core)
        self.params = params
        self.fields = fields

    @property
    def family(self) -> str:
        return self.declaration.name

    @property
    def constructor(self) -> str:
        return self.ctor.name

    @property
    def field_names(self) -> tuple:
        return self.ctor.field_names

    def __repr__(self):
        return f"VCon({self.declaration.name}.{self.ctor.name})"


class VEqual(Value):
    __slots__ = ("type", "left", "right")

    def __init__(self, type_, left, right):
        self.type = type_
        self.left = left
        self.right = right


class VRefl(Value):
    __slots__ = ("type", "value")

    def __init__(self, type_, value):
        self.type = type_
        self.value = value


class HVar:
    """A neutral head: the bound variable at de Bruijn level `level`."""

    __slots__ = ("level", "name")

    def __init__(self, level: int, name: str):
        self.level = level
        self.name = name


class HPrim:
    """A neutral head: a primitive whose arguments are not all literals."""

    __slots__ = ("primitive", "args")

    def __init__(self, primitive, args):
        self.primitive = primitive
        self.args = args


class VNeutral(Value):
    """A stuck computation: a head and the eliminations applied to it.

    Spine frames: ('app', arg), ('elim', Elim term, env), ('natelim', NatElim
    term, env), ('succ',).
    """

    __slots__ = ("head", "spine", "named")

    def __init__(self, head, spine=(), named=None):
        self.head = head
        self.spine = spine
        # (definition, arguments) when this is a definition applied to its arguments, stuck:
        # what messages print (`(T n)`); conversion and evaluation never read it
        self.named = named


def describe(value) -> str:
    """A short phrase for a value's kind, for error messages."""
    value = force(value)
    if isinstance(value, VNat):
        return f"the natural {value.value}"
    if isinstance(value, VBytes):
        return f"a byte string of length {len(value.value)}"
    if isinstance(value, VCon):
        return f"constructor {value.constructor} of {value.family}"
    if isinstance(value, (VLam, VPrimFn)):
        return "a function"
    if isinstance(value, (VType, VNatType, VBytesType, VPi, VFamily, VEqual)):
        return "a type"
    if isinstance(value, VRefl):
        return "a proof (refl)"
    if isinstance(value, VNeutral):
        return "an unknown value"
    return type(value).__name__
