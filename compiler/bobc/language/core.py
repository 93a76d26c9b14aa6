"""Core terms: the resolved syntax tree, and how each term evaluates.

Names are resolved before anything runs: a bound variable is a de Bruijn
index (Local), a top-level name points at its Definition (Global), families
and constructors point at their declarations.  Each term has

  ev(env)   -> its value in weak head normal form (strict position), and
  lazy(env) -> a value or a Thunk (argument, let, field: call by need).

Literals and variables never allocate a thunk.
"""
from __future__ import annotations

from ..errors import Span
from . import limits
from .limits import LimitExceeded
from .primitives import PRIMITIVES
from .values import (
    BYTES_TYPE, NAT_TYPE, EvalError, GlobalThunk, HPrim, Thunk, VBytes, VCon, VEqual,
    VFamily, VLam, VNat, VNeutral, VPi, VPrimFn, VRefl, VType, describe, force,
)


class Term:
    __slots__ = ("span",)

    def lazy(self, env):
        return Thunk(self, env)


# ---- declarations (shared by terms that refer to them) ----------------------

class Definition:
    """A top-level `def`: its type (or None), its body, and its shared value."""

    def __init__(self, module: str, name: str, span: Span, surface):
        self.module = module
        self.name = name
        self.key = f"{module}.{name}"
        self.span = span
        self.surface = surface
        self.type = None            # core Term once resolved (None: inferred)
        self.body = None
        self.thunk = GlobalThunk(None, self)

    def set_body(self, body):
        self.body = body
        self.thunk.term = body
        # the lambdas the body opens with take the definition's arguments: each knows it, so
        # a stuck application of the definition can be printed by its name (apply, quote.py)
        depth = 0
        while type(body) is Lam:
            body.defines = (self, depth)
            body = body.body
            depth += 1


class FieldDeclaration:
    __slots__ = ("multiplicity", "name", "type", "span")

    def __init__(self, multiplicity, name, type_, span):
        self.multiplicity = multiplicity
        self.name = name
        self.type = type_           # core Term in scope: params, earlier fields
        self.span = span


class ConstructorDeclaration:
    def __init__(self, family, name: str, index: int, span: Span):
        self.family = family
        self.name = name
        self.index = index
        self.span = span
        self.fields: list[FieldDeclaration] = []
        self.field_names: tuple = ()
        self.recursive: tuple = ()      # indices of fields typed by the family itself
        self.constant = None            # the shared value of a field-less, parameter-less constructor


class FamilyDeclaration:
    def __init__(self, module: str, name: str, span: Span, surface):
        self.module = module
        self.name = name
        self.key = f"{module}.{name}"
        self.span = span
        self.surface = surface
        self.parameters: list[FieldDeclaration] = []
        self.sort = None
        self.constructors: list[ConstructorDeclaration] = []
        self.by_name: dict[str, ConstructorDeclaration] = {}

    def __repr__(self):
        return f"<family {self.key}>"


# ---- terms -------------------------------------------------------------------

class Local(Term):
    __slots__ = ("index", "name")

    def __init__(self, span, index, name):
        self.span = span
        self.index = index
        self.name = name

    def lazy(self, env):
        index = self.index
        while index:
            env = env[1]
            index -= 1
        return env[0]

    def ev(self, env):
        index = self.index
        while index:
            env = env[1]
            index -= 1
        value = env[0]
        if isinstance(value, Thunk):
            forced = value.value        # a thunk forced before: its value, without a call to force
            return forced if forced is not None else force(value)
        return value


class Global(Term):
    __slots__ = ("definition",)

    def __init__(self, span, definition):
        self.span = span
        self.definition = definition

    def lazy(self, env):
        return self.definition.thunk

    def ev(self, env):
        thunk = self.definition.thunk
        value = thunk.value             # a definition evaluated before: its value, without a call to force
        return value if value is not None else force(thunk)


class Prim(Term):
    __slots__ = ("primitive", "value")

    def __init__(self, span, primitive):
        self.span = span
        self.primitive = primitive
        self.value = VPrimFn(primitive, ())

    def lazy(self, env):
        return self.value

    def ev(self, env):
        return self.value


class Constant(Term):
    """A term whose value does not depend on the environment (literals, Nat, Bytes, Type n)."""

    __slots__ = ("value",)

    def __init__(self, span, value):
        self.span = span
        self.value = value

    def lazy(self, env):
        return self.value

    def ev(self, env):
        return self.value


def NatLit(span, value: int) -> Constant:
    return Constant(span, VNat(value))


def BytesLit(span, value: bytes) -> Constant:
    return Constant(span, VBytes(value, span))    # the value knows where it is written (origin)


def NatT(span) -> Constant:
    return Constant(span, NAT_TYPE)


def BytesT(span) -> Constant:
    return Constant(span, BYTES_TYPE)


def TypeU(span, level: int) -> Constant:
    return Constant(span, VType(level))


class Lam(Term):
    __slots__ = ("multiplicity", "name", "domain", "body", "defines", "reads_binder")

    def __init__(self, span, multiplicity, name, domain, body):
        self.span = span
        self.multiplicity = multiplicity
        self.name = name
        self.domain = domain
        self.body = body
        # (definition, k) when this is the (k+1)-th of the lambdas a definition's body opens
        # with (Definition.set_body); only for printing, never for what evaluates
        self.defines = None
        # whether the body names this lambda's variable (None: not yet asked); nat_eliminate
        # asks it of a step's inner lambda (binds_used)
        self.reads_binder = None

    def lazy(self, env):
        return VLam(self, env)

    def ev(self, env):
        return VLam(self, env)


class Pi(Term):
    __slots__ = ("multiplicity", "name", "domain", "body")

    def __init__(self, span, multiplicity, name, domain, body):
        self.span = span
        self.multiplicity = multiplicity
        self.name = name
        self.domain = domain
        self.body = body

    def ev(self, env):
        return VPi(self, env, self.domain.lazy(env))


class Let(Term):
    __slots__ = ("multiplicity", "name", "type", "value", "body")

    def __init__(self, span, multiplicity, name, type_, value, body):
        self.span = span
        self.multiplicity = multiplicity
        self.name = name
        self.type = type_
        self.value = value
        self.body = body

    def ev(self, env):
        return self.body.ev((self.value.lazy(env), env))


# Evaluation steps left, of the program evaluating now: each Program has its own budget
# (limits.EVALUATION_STEPS: new_fuel), which its evaluation puts here (use_fuel).
_fuel = [limits.EVALUATION_STEPS, limits.EVALUATION_STEPS]   # left, given


def reset_fuel(steps: int | None = None) -> None:
    """Give the budget evaluating now `steps` (limits.EVALUATION_STEPS when None) afresh."""
    given = limits.EVALUATION_STEPS if steps is None else steps
    _fuel[:] = [given, given]


def new_fuel() -> list:
    """A program's own budget of evaluation steps (limits.EVALUATION_STEPS), evaluating now."""
    fuel = [limits.EVALUATION_STEPS, limits.EVALUATION_STEPS]
    use_fuel(fuel)
    return fuel


def use_fuel(fuel: list) -> None:
    """Evaluation from now on draws on `fuel` (a program's: new_fuel), never on another program's
    budget (probe s35 inprocess finding 5: loading a program refilled every program's budget,
    and one's check drew on another's)."""
    global _fuel
    _fuel = fuel


def current_fuel() -> list:
    """The budget evaluating now (a program's: use_fuel)."""
    return _fuel


def stop_fuel(fuel: list) -> None:
    """Spend `fuel` whole: an evaluation drawing on it, on any thread, stops at its next step (a
    LimitExceeded) -- program.py stops its deep-evaluation thread so on a signal.  A step of that
    thread may write back the count it read before this, so the stopper repeats it until the
    thread has ended (children.wait_for_thread)."""
    fuel[0] = -(1 << 62)


def _burn(steps: int, span) -> None:
    _fuel[0] -= steps
    if _fuel[0] < 0:
        _fuel[0] = 0
        raise LimitExceeded("evaluation steps", _fuel[1], span,
                            hint="if the plan is meant to take that many, raise the limit with "
                                 "--max-evaluation-steps N (check, eval, build, run, sim)")


def apply(function, argument, span=None):
    """Apply a function value to one argument (a value or a thunk); strict result."""
    kind = type(function)
    if kind is VLam:
        _fuel[0] -= 1
        if _fuel[0] < 0:
            _burn(0, span)
        result = function.term.body.ev((argument, function.env))
        if type(result) is not VNeutral:
            return result
        return _named(result, function, argument)
    if kind is VPrimFn:
        args = function.args + (argument,)
        primitive = function.primitive
        if len(args) < len(primitive.argument_kinds):
            return VPrimFn(primitive, args)
        return call_primitive(primitive, args, span)
    if kind is VNeutral:
        return VNeutral(function.head, function.spine + (("app", argument),))
    raise EvalError(f"cannot apply {describe(function)} to an argument: it is not a function",
                    span, hint="check the number of arguments this call passes")


def _named(result, function, argument):
    """A definition applied to all its arguments, stuck on a variable (only the type checker
    has variables: `(T n)`, T's body a nat-eliminate over n): the same stuck computation, which
    also knows it is `(T n)`, so a message prints that rather than T's body (glued evaluation,
    for printing only: conversion and evaluation read the head and spine alone)."""
    defines = function.term.defines
    if defines is None:
        return result
    definition, depth = defines
    env = function.env
    arguments = [argument]
    for _ in range(depth):          # the earlier arguments, innermost first in the environment
        arguments.append(env[0])
        env = env[1]
    return VNeutral(result.head, result.spine, (definition, tuple(reversed(arguments))))


_KIND_CLASS = {"Nat": VNat, "Bytes": VBytes}


def call_primitive(primitive, args, span=None):
    forced = [force(a) for a in args]
    plain = []
    stuck = False
    for value, kind in zip(forced, primitive.argument_kinds):
        if type(value) is _KIND_CLASS[kind]:
            plain.append(value.value)
        elif type(value) is VNeutral:
            stuck = True
        else:
            raise EvalError(f"{primitive.name} expects {kind} arguments, got {describe(value)}",
                            span)
    if stuck:
        return VNeutral(HPrim(primitive, tuple(forced)))
    try:
        result = _GUARDED.get(primitive.name, primitive.implementation)(*plain)
    except LimitExceeded as error:
        _place(error, span)
        raise
    return _KIND_CLASS[primitive.result_kind](result)


# ---- size limits (docs/limits.md) ----------------------------------------------
#
# Only these primitives (and succ) make a natural with more bits, or a byte string
# longer, than their arguments; every other one is bounded by its arguments, so a
# plan's values stay within limits.NATURAL_BITS / BYTES_LENGTH when these are
# guarded (and the literals are, parse.py).  Each guarded implementation refuses
# before it computes what would take time or memory (nat-power, nat-shift-left,
# bytes-append, bytes-from-nat-le), and checks what it computed otherwise (a
# comparison against 2^NATURAL_BITS: one int compare on the hot path).  Both
# call_primitive and the PrimCall fast paths call them.

_NAT_CEILING = 1 << limits.NATURAL_BITS       # the first natural past the limit
_FROM_NAT_LE = PRIMITIVES["bytes-from-nat-le"].implementation


def _place(error, span) -> None:
    """A refusal raised by a guarded implementation gets the call's place."""
    if error.span is None and span is not None:
        error.span = span


def _amount(n: int) -> str:
    """A count for a message: exact while it reads as one, else its power of two."""
    return f"{n:,}" if n.bit_length() <= 64 else f"more than 2^{n.bit_length() - 1}"


def _too_large(name: str, bits: int) -> LimitExceeded:
    return LimitExceeded(f"{name} computes a natural of {bits:,} bits", limits.NATURAL_BITS)


# ---- work charged to the step budget (docs/limits.md's evaluation-steps row) ------
#
# A step is ~3-10 us of evaluation; a primitive on a large value does far more work than
# that in one call (a 256 MiB bytes-from-nat-le, a product of two 131,071-bit naturals),
# so a loop of them within every size limit ran for hours on a few million steps (probe s46
# plantexts2 finding 1).  Each such call charges the work it is about to do, before doing
# it: one step per WORK_BYTES bytes built or read, and for the super-linear arithmetic the
# product of its operands' bits shifted down to about one step per 10 us (measured on the
# development machine).  Word-sized work charges 0.
WORK_BYTES_SHIFT = 12            # one step per 4,096 bytes
PRODUCT_SHIFT = 24               # nat-multiply, nat-power: bits x bits / 2^24
DIVISION_SHIFT = 21              # nat-divide, nat-modulo: (quotient bits x divisor bits) / 2^21
ROOT_SHIFT = 22                  # nat-square-root: bits x bits / 2^22


def _charge(steps: int) -> None:
    if steps:
        _burn(steps, None)


def _add(a, b, _ceiling=_NAT_CEILING):
    result = a + b
    if result >= _ceiling:
        raise _too_large("nat-add", result.bit_length())
    return result


def _multiply(a, b, _ceiling=_NAT_CEILING):
    _charge((a.bit_length() * b.bit_length()) >> PRODUCT_SHIFT)
    result = a * b
    if result >= _ceiling:
        raise _too_large("nat-multiply", result.bit_length())
    return result


def _division_work(a, b) -> int:
    bits = b.bit_length()
    return (max(a.bit_length() - bits + 1, 0) * bits) >> DIVISION_SHIFT


def _divide(a, b, _divide=PRIMITIVES["nat-divide"].implementation):
    _charge(_division_work(a, b))
    return _divide(a, b)


def _modulo(a, b, _modulo=PRIMITIVES["nat-modulo"].implementation):
    _charge(_division_work(a, b))
    return _modulo(a, b)


def _square_root(a, _root=PRIMITIVES["nat-square-root"].implementation):
    _charge((a.bit_length() * a.bit_length()) >> ROOT_SHIFT)
    return _root(a)


def _power(base, exponent):
    # base >= 2^(L-1) has L bits, so base^exponent has at least (L-1) * exponent + 1 bits:
    # refused before computing; a power past that bound is computed (at most 2x the
    # limit's bits, since L <= 2 (L-1)) and checked
    if base > 1 and max(base.bit_length() - 1, 1) * exponent >= limits.NATURAL_BITS:
        shown = f"{base:,}" if base.bit_length() <= 64 else f"a {base.bit_length():,}-bit natural"
        bits = max(base.bit_length() - 1, 1) * exponent + 1
        # `_amount` of a count past 64 bits is already a bound ("more than 2^k")
        least = "at least " if bits.bit_length() <= 64 else ""
        raise LimitExceeded(f"nat-power {shown} ^ {_amount(exponent)} computes a natural of "
                            f"{least}{_amount(bits)} bits", limits.NATURAL_BITS)
    if base > 1:
        # at most 2 L exponent bits (the bound above): charged as one product of that size
        bits = base.bit_length() * exponent
        _charge((bits * bits) >> PRODUCT_SHIFT)
    result = base ** exponent
    if result >= _NAT_CEILING:
        raise _too_large("nat-power", result.bit_length())
    return result


def _shift_left(value, shift):
    if value and value.bit_length() + shift > limits.NATURAL_BITS:
        raise LimitExceeded(f"nat-shift-left of a {value.bit_length():,}-bit natural by "
                            f"{_amount(shift)} computes a natural of "
                            f"{_amount(value.bit_length() + shift)} bits",
                            limits.NATURAL_BITS)
    return value << shift


def _to_nat_le(data, _ceiling=_NAT_CEILING):
    _charge(len(data) >> WORK_BYTES_SHIFT)
    result = int.from_bytes(data, "little")
    if result >= _ceiling:
        raise _too_large("bytes-to-nat-le", result.bit_length())
    return result


def _append(x, y):
    if len(x) + len(y) > limits.BYTES_LENGTH:
        raise LimitExceeded(f"bytes-append computes {len(x) + len(y):,} bytes",
                            limits.BYTES_LENGTH)
    _charge((len(x) + len(y)) >> WORK_BYTES_SHIFT)
    return x + y


def _from_nat_le(value, width):
    if width > limits.BYTES_LENGTH:
        raise LimitExceeded(f"bytes-from-nat-le asks for {_amount(width)} bytes",
                            limits.BYTES_LENGTH)
    _charge(width >> WORK_BYTES_SHIFT)
    if value.bit_length() <= 8 * width:     # no reduction: skip a modulus of 8 x width bits
        return value.to_bytes(width, "little")
    return _FROM_NAT_LE(value, width)


def _slice(data, start, count, _slice=PRIMITIVES["bytes-slice"].implementation):
    _charge(min(count, max(len(data) - start, 0)) >> WORK_BYTES_SHIFT)
    return _slice(data, start, count)


def _bytes_equal(x, y, _equal=PRIMITIVES["bytes-equal"].implementation):
    if len(x) == len(y):
        _charge(len(x) >> WORK_BYTES_SHIFT)
    return _equal(x, y)


# name -> the implementation with the size limits; the others are used as they are
_GUARDED = {
    "nat-add": _add,
    "nat-multiply": _multiply,
    "nat-power": _power,
    "nat-shift-left": _shift_left,
    "bytes-to-nat-le": _to_nat_le,
    "bytes-append": _append,
    "bytes-from-nat-le": _from_nat_le,
    # these only charge their work to the step budget
    "nat-divide": _divide,
    "nat-modulo": _modulo,
    "nat-square-root": _square_root,
    "bytes-slice": _slice,
    "bytes-equal": _bytes_equal,
}


class App(Term):
    __slots__ = ("function", "arguments")

    def __init__(self, span, function, arguments):
        self.span = span
        self.function = function
        self.arguments = arguments

    def ev(self, env):
        try:
            value = self.function.ev(env)
            span = self.span
            for argument in self.arguments:
                argument = argument.lazy(env)
                if type(value) is VLam and type(value.term.body) is Lam:
                    # apply's own work, inline: a step, then the body -- a lambda, so its closure
                    # (the function's next argument) -- without two calls for each argument but the last
                    _fuel[0] -= 1
                    if _fuel[0] < 0:
                        _burn(0, span)
                    value = VLam(value.term.body, (argument, value.env))
                else:
                    value = apply(value, argument, span)
            return value
        except LimitExceeded as error:
            if error.library_span is None and error.span is not None and \
                    _in_library(error.span) and not _in_library(self.span):
                function = self.function
                error.met_in_library(self.span, function.definition.name
                                     if type(function) is Global else None)
            raise


_LIBRARY = []       # the library folder's path as spans write it, and its prefix (_in_library)


def _in_library(span) -> bool:
    """Whether `span` is in a module of the library (specs/ or $BOBC_SPECS), not the plan's."""
    if span is None:
        return False
    import os

    from .modules import specs_folder

    folder = str(specs_folder())
    if not _LIBRARY or _LIBRARY[0] != folder:
        _LIBRARY[:] = [folder, os.path.realpath(folder)]
    path = span.path
    return any(path == f or path.startswith(f.rstrip(os.sep) + os.sep) for f in _LIBRARY)


class PrimCall(Term):
    """A primitive applied to exactly its arguments: evaluated strictly, no thunks.

    Primitives inspect every argument, so evaluating them first computes
    nothing a lazy call would not; it saves a thunk and a partial
    application per argument on the hot path of every plan.  `make_prim_call`
    picks a class specialised to the arity.
    """

    __slots__ = ("primitive", "arguments", "classes", "function", "wrap")

    def __init__(self, span, primitive, arguments):
        self.span = span
        self.primitive = primitive
        self.arguments = arguments
        self.classes = tuple(_KIND_CLASS[k] for k in primitive.argument_kinds)
        # the size limits are kept by the guarded implementations (_GUARDED), here as in
        # call_primitive; a refusal they raise gets this call's place
        self.function = _GUARDED.get(primitive.name, primitive.implementation)
        self.wrap = _KIND_CLASS[primitive.result_kind]

    def ev(self, env):
        values = [a.ev(env) for a in self.arguments]
        plain = []
        for value, wanted in zip(values, self.classes):
            if type(value) is not wanted:
                return call_primitive(self.primitive, values, self.span)
            plain.append(value.value)
        try:
            return self.wrap(self.function(*plain))
        except LimitExceeded as error:
            _place(error, self.span)
            raise


class PrimCall1(PrimCall):
    __slots__ = ()

    def ev(self, env):
        x = self.arguments[0].ev(env)
        if type(x) is self.classes[0]:
            try:
                return self.wrap(self.function(x.value))
            except LimitExceeded as error:
                _place(error, self.span)
                raise
        return call_primitive(self.primitive, (x,), self.span)


class PrimCall2(PrimCall):
    __slots__ = ()

    def ev(self, env):
        arguments = self.arguments
        x = arguments[0].ev(env)
        y = arguments[1].ev(env)
        classes = self.classes
        if type(x) is classes[0] and type(y) is classes[1]:
            try:
                return self.wrap(self.function(x.value, y.value))
            except LimitExceeded as error:
                _place(error, self.span)
                raise
        return call_primitive(self.primitive, (x, y), self.span)


def make_prim_call(span, primitive, arguments) -> PrimCall:
    kind = {1: PrimCall1, 2: PrimCall2}.get(len(arguments), PrimCall)
    return kind(span, primitive, arguments)


class FamilyT(Term):
    __slots__ = ("declaration", "arguments")

    def __init__(self, span, declaration, arguments):
        self.span = span
        self.declaration = declaration
        self.arguments = arguments

    def ev(self, env):
        return VFamily(self.declaration, tuple([a.lazy(env) for a in self.arguments]))


class Con(Term):
    """`(constructor F C params... fields...)` (and records, fields in declared order)."""

    __slots__ = ("declaration", "ctor", "params", "fields")

    def __init__(self, span, declaration, ctor, params, fields):
        self.span = span
        self.declaration = declaration
        self.ctor = ctor
        self.params = params
        self.fields = fields

    def ev(self, env):
        if not self.params and not self.fields:
            constant = self.ctor.constant
            if constant is None:
                constant = self.ctor.constant = VCon(self.declaration, self.ctor, (), ())
            return constant
        return VCon(self.declaration, self.ctor,
                    tuple([p.lazy(env) for p in self.params]),
                    tuple([f.lazy(env) for f in self.fields]))


class Record(Con):
    """`(record F (field = value) ...)`: a Con whose fields were given by name."""

    __slots__ = ("written",)    # the fields in the order written: [(name, span)]


class ElimBranch:
    __slots__ = ("ctor", "binders", "body", "span")

    def __init__(self, ctor, binders, body, span):
        self.ctor = ctor
        self.binders = binders      # names: fields, then induction hypotheses
        self.body = body
        self.span = span


class Elim(Term):
    """`(eliminate F motive scrutinee (branch C fields... inductions... . body) ...)`."""

    __slots__ = ("declaration", "motive", "scrutinee", "branches", "by_ctor", "induction")

    def __init__(self, span, declaration, motive, scrutinee, branches):
        self.span = span
        self.declaration = declaration
        self.motive = motive
        self.scrutinee = scrutinee
        self.branches = branches
        self.by_ctor = {b.ctor.name: b for b in branches}
        self.induction = _Induction(self)

    def ev(self, env):
        return eliminate(self, env, self.scrutinee.ev(env))


class _Induction(Term):
    """The induction hypothesis for one recursive field: env = (field, elim env)."""

    __slots__ = ("elim",)

    def __init__(self, elim):
        self.span = elim.span
        self.elim = elim

    def ev(self, env):
        return eliminate(self.elim, env[1], force(env[0]))


def eliminate(elim, env, scrutinee):
    _fuel[0] -= 1
    if _fuel[0] < 0:
        _burn(0, elim.span)
    if type(scrutinee) is VCon:
        branch = elim.by_ctor.get(scrutinee.ctor.name)
        if branch is None or scrutinee.declaration is not elim.declaration:
            raise EvalError(f"eliminate {elim.declaration.name} met {describe(scrutinee)}",
                            elim.span)
        fields = scrutinee.fields
        local = env
        for field in fields:
            local = (field, local)
        induction = elim.induction
        for index in scrutinee.ctor.recursive:
            local = (Thunk(induction, (fields[index], env)), local)
        return branch.body.ev(local)
    if type(scrutinee) is VNeutral:
        return VNeutral(scrutinee.head, scrutinee.spine + (("elim", elim, env),))
    raise EvalError(f"eliminate {elim.declaration.name} expects a value of that family, "
                    f"got {describe(scrutinee)}", elim.span)


class NatElim(Term):
    """`(nat-eliminate motive base step n)`: on a literal, a loop from 0 upward."""

    __slots__ = ("motive", "base", "step", "target", "induction")

    def __init__(self, span, motive, base, step, target):
        self.span = span
        self.motive = motive
        self.base = base
        self.step = step
        self.target = target
        self.induction = _NatInduction(self)    # the value below a step: one term, made once (as Elim's)

    def ev(self, env):
        return nat_eliminate(self, env, self.target.ev(env))


def nat_eliminate(term, env, target):
    if type(target) is VNat:
        count = target.value
        if count == 0:
            return term.base.ev(env)
        step = term.step.ev(env)
        if type(step) is VLam and type(step.term.body) is Lam and not binds_used(step.term.body):
            # the step never reads the value below it (naturalSelect, stdListAt: `(lambda k .
            # (lambda ignored . body))`): only the last iteration's value is the result, and the
            # ones before it are never needed (evaluation is lazy), so only it runs: one
            # iteration whatever the count, none of the loop limits below (docs/limits.md)
            _fuel[0] -= 1
            if _fuel[0] < 0:
                _burn(0, term.span)
            predecessor = VNat(count - 1)
            below = Thunk(term.induction, (predecessor, env))     # never read
            return step.term.body.body.ev((below, (predecessor, step.env)))
        if count > limits.ELIMINATION_COUNT:
            raise LimitExceeded(f"nat-eliminate runs {count:,} iterations",
                                limits.ELIMINATION_COUNT, term.span)
        if count > limits.STRUCTURE_LOOP_COUNT:
            _refuse_structure_loop(term, env, count)
        _burn(count, term.span)
        accumulated = term.base.lazy(env)
        span = term.span
        if type(step) is VLam and type(step.term.body) is Lam:
            # the usual (lambda k . (lambda below . body)): bind both directly
            body = step.term.body.body
            outer = step.env
            for index in range(count):
                accumulated = body.ev((accumulated, (VNat(index), outer)))
        else:
            for index in range(count):
                accumulated = apply(apply(step, VNat(index), span), accumulated, span)
        if limits.STRUCTURE_BOUNDS:
            _refuse_structure_past_bound(term, accumulated, count)
        return accumulated
    if type(target) is VNeutral:
        spine = target.spine
        if spine and spine[-1][0] == "succ":
            predecessor = VNeutral(target.head, spine[:-1])
            step = term.step.ev(env)
            below = Thunk(term.induction, (predecessor, env))
            return apply(apply(step, predecessor, term.span), below, term.span)
        return VNeutral(target.head, spine + (("natelim", term, env),))
    raise EvalError(f"nat-eliminate expects a natural number, got {describe(target)}", term.span)


def binds_used(lam) -> bool:
    """Whether `lam`'s body names its variable (cached on the Lam: terms never change)."""
    used = lam.reads_binder
    if used is None:
        used = lam.reads_binder = _reads(lam.body, 0)
    return used


def _reads(term, index) -> bool:
    """Whether `term` names the variable `index` binders out (de Bruijn); True for a term this
    does not know (so a step is only ever taken for one that ignores its value when it does)."""
    if term is None:
        return False
    kind = type(term)
    if kind is Local:
        return term.index == index
    if kind in (Global, Prim, Constant):
        return False
    if kind is Lam or kind is Pi:
        return _reads(term.domain, index) or _reads(term.body, index + 1)
    if kind is Let:
        return ((term.type is not None and _reads(term.type, index))
                or _reads(term.value, index) or _reads(term.body, index + 1))
    if kind is App:
        return _reads(term.function, index) or any(_reads(a, index) for a in term.arguments)
    if isinstance(term, PrimCall) or kind is FamilyT:
        return any(_reads(a, index) for a in term.arguments)
    if kind is Con or kind is Record:
        return any(_reads(a, index) for a in (*term.params, *term.fields))
    if kind is Elim:
        return (_reads(term.motive, index) or _reads(term.scrutinee, index)
                or any(_reads(b.body, index + len(b.binders)) for b in term.branches))
    if kind is NatElim:
        return any(_reads(t, index) for t in (term.motive, term.base, term.step, term.target))
    if kind is Succ:
        return _reads(term.predecessor, index)
    if kind is EqualT:
        return any(_reads(t, index) for t in (term.type, term.left, term.right))
    if kind is ReflT:
        return _reads(term.type, index) or _reads(term.value, index)
    if kind is Encode:
        return _reads(term.type, index) or _reads(term.value, index)
    if kind is The:
        return _reads(term.type, index) or _reads(term.expression, index)
    return True


def _refuse_structure_loop(term, env, count) -> None:
    """A loop building a data family (its motive's value) is refused past STRUCTURE_LOOP_COUNT."""
    motive = apply(term.motive.ev(env), VNat(0), term.span)
    if type(motive) is VFamily:
        raise LimitExceeded(f"nat-eliminate builds a {motive.family} over {count:,} iterations",
                            limits.STRUCTURE_LOOP_COUNT, term.span,
                            hint=f"a loop whose motive is a family is held to the certifier's "
                            f"bound on launches and submissions, as such a loop usually builds a "
                            f"node or more per iteration (a schedule: ask the plan for fewer, e.g. "
                            f"updates per invocation); one that only carries a record of a fixed "
                            f"size (a {motive.family} of counters) may run as nested loops of at "
                            f"most {limits.STRUCTURE_LOOP_COUNT:,} iterations each, or over Nat")


def _refuse_structure_past_bound(term, built, count: int) -> None:
    """A loop whose result is a value of a family with a bound (limits.STRUCTURE_BOUNDS: a launch
    schedule) is refused when that value holds more of the counted constructor than the bound:
    counted through the family's own fields, each shared node once (a schedule appended to itself
    counts twice, in steps linear in its distinct nodes), before anything else walks it."""
    root = force(built)
    if type(root) is not VCon or root.declaration.name not in limits.STRUCTURE_BOUNDS:
        return
    family = root.declaration.name
    constructor, limit, counted = limits.STRUCTURE_BOUNDS[family]
    totals: dict[int, int] = {}
    pending = [(root, None)]
    while pending:
        node, children = pending.pop()
        if children is None:
            if id(node) in totals:
                continue
            children = [child for child in (force(node.fields[i]) for i in node.ctor.recursive)
                        if type(child) is VCon]
            pending.append((node, children))
            pending.extend((child, None) for child in children if id(child) not in totals)
            continue
        totals[id(node)] = (node.ctor.name == constructor) + sum(totals[id(child)] for child in children)
    found = totals[id(root)]
    if found > limit:
        raise LimitExceeded(f"nat-eliminate builds a {family} of {found:,} {counted} "
                            f"({count:,} iterations)", limit, term.span,
                            hint=f"the certifier refuses a plan of more {counted} than that, and no "
                                 f"option raises this limit: ask the plan for fewer (e.g. fewer "
                                 f"updates per invocation)")


class _NatInduction(Term):
    __slots__ = ("term",)

    def __init__(self, term):
        self.span = term.span
        self.term = term

    def ev(self, env):
        return nat_eliminate(self.term, env[1], force(env[0]))


class Succ(Term):
    __slots__ = ("predecessor",)

    def __init__(self, span, predecessor):
        self.span = span
        self.predecessor = predecessor

    def ev(self, env):
        value = self.predecessor.ev(env)
        if type(value) is VNat:
            result = value.value + 1
            if result >= _NAT_CEILING:
                raise LimitExceeded(f"succ computes a natural of {result.bit_length():,} bits",
                                    limits.NATURAL_BITS, self.span)
            return VNat(result)
        if type(value) is VNeutral:
            return VNeutral(value.head, value.spine + (("succ",),))
        raise EvalError(f"succ expects a natural number, got {describe(value)}", self.span)


class EqualT(Term):
    __slots__ = ("type", "left", "right")

    def __init__(self, span, type_, left, right):
        self.span = span
        self.type = type_
        self.left = left
        self.right = right

    def ev(self, env):
        return VEqual(self.type.lazy(env), self.left.lazy(env), self.right.lazy(env))


class ReflT(Term):
    __slots__ = ("type", "value")

    def __init__(self, span, type_, value):
        self.span = span
        self.type = type_
        self.value = value

    def ev(self, env):
        return VRefl(self.type.lazy(env), self.value.lazy(env))


class Encode(Term):
    """`(compiler-native-encode T v)`: the backend's handler for T's family."""

    __slots__ = ("type", "value", "program")

    def __init__(self, span, type_, value, program):
        self.span = span
        self.type = type_
        self.value = value
        self.program = program

    def ev(self, env):
        return self.program.native_encode(self, self.type.ev(env), self.value.lazy(env))


class The(Term):
    __slots__ = ("type", "expression")

    def __init__(self, span, type_, expression):
        self.span = span
        self.type = type_
        self.expression = expression

    def lazy(self, env):
        return self.expression.lazy(env)

    def ev(self, env):
        return self.expression.ev(env)
