"""The type checker: bidirectional, with conversion by evaluation.

`check(ctx, term, type)` pushes an expected type into a term (lambdas,
records, refl, let bodies); `infer(ctx, term)` reads a type off a term
(variables, applications, eliminators).  Types are values; two types agree
when `convertible` says so, which evaluates both (literals and primitives
compute on Python ints, never in unary).  Universes are cumulative only at
the top (a `Type 0` is accepted where a `Type 1` is expected).

A definition typed `(equal T a b)` and defined `(refl T a)` checks only if a
and b compute to the same value; when they do not, the error names the
definition and prints both computed values.

Multiplicities (0 / 1 / unrestricted) are compared on binders (a lambda
against its pi type, pi against pi); usage counting is not done.

Errors print types in the language's syntax, read back from values.
"""
from __future__ import annotations

from ..errors import BobcError
from ..resources import doc
from . import core as c
from .conversion import convertible
from .core import apply
from .limits import LimitExceeded
from .quote import (
    SHOWN_DIGITS, fresh, instantiate, quote, show_natural, show_value, shown_names, shown_term,
    shown_value,
)
from .values import (
    BYTES_TYPE, NAT_TYPE, HPrim, HVar, VBytes, VCon, VEqual, VFamily, VLam, VNat, VNeutral, VPi,
    VPrimFn, VType, force,
)


def _shown_name(name: str) -> str:
    from .suggest import shown_name

    return shown_name(name)


class TypeCheckError(BobcError):
    """A plan that is not well typed, or a proof that does not hold."""

    # set on the first ClaimDoesNotHold that check_program(past_failed_claims=True) raises: True
    # when every other definition type checks (the plan is well typed but for its failed
    # claims), False when a later one does not
    only_failed_claims = False


class ClaimDoesNotHold(TypeCheckError):
    """A proof by refl whose two sides are well typed but compute to different values: the plan's
    values contradict its claim (a plan's arena proof, `equal Nat hazard 0`: the certifier can
    say which residents overlap)."""


def show_value_type(value) -> str:
    """A value (usually a type) in the language's syntax (bobc eval prints types so): whole,
    up to PRINTED_TYPE_WIDTH characters; a definition applied and stuck on a variable by its
    name, `(T n)`, as written."""
    return show_value(value, by_name=True)


class Context:
    """The binders in scope: their names, types, and values (fresh variables or let values)."""

    __slots__ = ("env", "types", "names", "level")

    def __init__(self, env=None, types=(), names=(), level=0):
        self.env = env
        self.types = types
        self.names = names
        self.level = level

    def bind(self, name: str, type_value):
        """A context with a new variable; returns (context, the variable's value)."""
        variable = fresh(self.level, name)
        return Context((variable, self.env), self.types + (type_value,), self.names + (name,),
                       self.level + 1), variable

    def define(self, name: str, type_value, value):
        return Context((value, self.env), self.types + (type_value,), self.names + (name,),
                       self.level + 1)


EMPTY = Context()

# (pi k : Nat . (pi below : (motive k) . (motive (succ k)))), evaluated in (motive, None)
_STEP_TYPE = c.Pi(None, "unrestricted", "k", c.NatT(None),
                  c.Pi(None, "unrestricted", "below",
                       c.App(None, c.Local(None, 1, "motive"), [c.Local(None, 0, "k")]),
                       c.App(None, c.Local(None, 2, "motive"),
                             [c.Succ(None, c.Local(None, 1, "k"))])))


def _kind_type(kind: str):
    return NAT_TYPE if kind == "Nat" else BYTES_TYPE


class Checker:
    def __init__(self, program):
        self.program = program
        self.definition_types: dict = {}
        self.in_progress: set = set()
        self.checked_bodies: set = set()
        self.checked_families: set = set()
        self.failed_claims: set = set()  # well typed, but their claim does not hold (check_used)
        self.families_in_progress: set = set()
        self.primitive_types: dict = {}
        self.current = None            # the definition or family being checked
        self.active = False            # inside Program._checking
        self.inferences = 0            # definitions whose body was checked or inferred (tests count them)

    def begin(self):
        """Start a question afresh (Program._checking): what a RecursionError or a refusal cut
        short is forgotten; what completed (types, bodies and families that check) is kept."""
        self.in_progress.clear()
        self.families_in_progress.clear()
        self.current = None
        self.active = True

    # ---- errors -------------------------------------------------------------
    def error(self, term, message: str, hint: str | None = None):
        span = getattr(term, "span", None)
        if span is None and self.current is not None:
            span = self.current.span
        # the definition's name cut as every name a message shows (suggest.shown_name): a type
        # error in a definition of a 100,000-character name is a few lines (probe s43 fuzz F1)
        where = f"in {_shown_name(self.current.name)}: " if self.current is not None else ""
        return TypeCheckError(where + message, span, hint=hint)

    @staticmethod
    def show(ctx: Context, value, by_name: bool = True) -> str:
        return shown_value(value, ctx.level, shown_names(ctx.names), by_name)

    def mismatch(self, ctx, term, expected, found, what: str = "this expression"):
        return self.error(term, f"type mismatch: {what} should have type\n"
                                f"    {self.show(ctx, expected)}\n  but has type\n"
                                f"    {self.show(ctx, found)}",
                          hint=self._too_few_hint(ctx, term, expected, found)
                          or self._universe_hint(term, expected, found))

    def _universe_hint(self, term, expected, found) -> str | None:
        """A type in a universe above the one expected (`def T : Type 0 = Type 0`): the rule,
        and the level to write (probe s46 plantexts2)."""
        found, expected = force(found), force(expected)
        if type(found) is not VType or type(expected) is not VType or found.level <= expected.level:
            return None
        current = self.current
        body = current is not None and getattr(current, "body", None) is term
        declare = (f"declare it `def {_shown_name(current.name)} : Type {found.level} = ...`" if body
                   else f"what holds it needs Type {found.level}")
        return (f"Type n : Type n+1, and a pi that takes a Type n is in Type n+1: this is in "
                f"Type {found.level}, so {declare}")

    def _too_few_hint(self, ctx, term, expected, found) -> str | None:
        """A function where a value of a type that is not a function's belongs: given too few
        arguments (`(f 1)` of a two-argument f, or `f` alone), it waits for the next one."""
        found, expected = force(found), force(expected)
        if type(found) is not VPi or type(expected) is VPi:
            return None
        function = term.function if type(term) is c.App else term
        given = len(term.arguments) if type(term) is c.App else 0
        waiting = f"{found.term.name} : {self.show(ctx, found.domain)}"
        return (f"{shown_term(function)} is given {given} argument{'' if given == 1 else 's'} and "
                f"still waits for the next one ({waiting}): too few arguments; give it the rest")

    # ---- helpers ------------------------------------------------------------
    @staticmethod
    def evaluate(ctx: Context, term):
        return term.ev(ctx.env)

    def check_type(self, ctx: Context, term) -> int:
        """`term` is a type; its universe level."""
        found = force(self.infer(ctx, term))
        if type(found) is not VType:
            raise self.error(term, f"expected a type, but this has type {self.show(ctx, found)}",
                             hint="types are Nat, Bytes, Type n, (family F ...), (pi ...), "
                                  "(equal ...)")
        return found.level

    def subsumes(self, ctx, found, expected) -> bool:
        found, expected = force(found), force(expected)
        if type(found) is VType and type(expected) is VType:
            return found.level <= expected.level
        return convertible(ctx.level, found, expected)

    def primitive_type(self, primitive):
        cached = self.primitive_types.get(primitive.name)
        if cached is None:
            from .parse import parse_module
            from .resolve import ModuleScope, Resolver
            module = parse_module(f"module Primitive\ndef t = {primitive.type}\n",
                                  f"<type of {primitive.name}>")
            term = Resolver(ModuleScope(module), self.program).term(module.declarations[0].body, [])
            cached = self.primitive_types[primitive.name] = term.ev(None)
        return cached

    def definition_type(self, definition):
        found = self.definition_types.get(definition)
        if found is not None:
            return found
        if definition.type is not None:
            saved, self.current = self.current, definition
            try:
                self.check_type(EMPTY, definition.type)
            finally:
                self.current = saved
            found = self.definition_types[definition] = definition.type.ev(None)
            return found
        if definition in self.in_progress:
            raise TypeCheckError(
                f"cannot infer the type of {definition.name}: it depends on itself",
                definition.span, hint=f"give it a type: def {definition.name} : T = ...")
        self.check_definition(definition)
        return self.definition_types[definition]

    # ---- declarations -------------------------------------------------------
    def check_family(self, family):
        if family in self.checked_families or family in self.families_in_progress:
            return
        self.families_in_progress.add(family)     # a recursive field refers back to it
        saved, self.current = self.current, family
        try:
            ctx = EMPTY
            for parameter in family.parameters:
                self.check_type(ctx, parameter.type)
                ctx, _ = ctx.bind(parameter.name, self.evaluate(ctx, parameter.type))
            self.check_type(ctx, family.sort)
            sort = force(self.evaluate(ctx, family.sort))
            if type(sort) is not VType:
                raise self.error(family.sort, f"a family's type must be a universe (Type n), "
                                              f"not {self.show(ctx, sort)}")
            for ctor in family.constructors:
                inner = ctx
                for field in ctor.fields:
                    level = self.check_type(inner, field.type)
                    if level > sort.level:
                        raise self.error(field, f"field {field.name} of {ctor.name} has a type in "
                                                f"Type {show_natural(level)}, too large for a "
                                                f"family in Type {show_natural(sort.level)}",
                                         hint=f"declare the family in Type {show_natural(level)}")
                    inner, _ = inner.bind(field.name, self.evaluate(inner, field.type))
            self.checked_families.add(family)    # kept only once it checked
        finally:
            self.families_in_progress.discard(family)
            self.current = saved

    def check_definition(self, definition):
        if definition in self.checked_bodies:
            return
        saved, self.current = self.current, definition
        self.in_progress.add(definition)
        self.inferences += 1
        try:
            if definition.type is not None:
                expected = self.definition_type(definition)
                self.check(EMPTY, definition.body, expected)
            else:
                self.definition_types[definition] = self.infer(EMPTY, definition.body)
            self.checked_bodies.add(definition)
        finally:
            self.in_progress.discard(definition)
            self.current = saved

    def check_used(self, definition):
        """Check the body of a definition another term uses, before that use: a type that names
        it evaluates its body (`def x : T = 3` forces T), and an unchecked body evaluated by the
        checker failed as an evaluator's error ("nat-add expects Nat arguments") or made a number
        a type, the refusal blaming the definition that used it (probe s43 langsound finding 1).
        One being checked (a use inside its own body: a cycle, refused by check_acyclic) is taken
        at its declared type; a claim that does not hold is well typed, so its use goes on (the
        claim is refused at its own turn).  A refusal records the definition it is about
        (`used_definition`, the innermost), so `bobc eval` says the one it asked about depends
        on it."""
        for used in self._unchecked_below(definition):
            try:
                self.check_definition(used)
            except ClaimDoesNotHold:
                self.failed_claims.add(used)
            except BobcError as error:
                if getattr(error, "used_definition", None) is None:
                    error.used_definition = used
                if isinstance(error, LimitExceeded) and not error.definitions:
                    error.note(used)
                raise

    def _unchecked_below(self, definition) -> list:
        """`definition` and the unchecked definitions its type and body reach, each after those
        it uses: checked in this order, none of them recurses into another's check (a chain of
        20,000 definitions written last-used-first is checked without a deep stack)."""
        def waiting(d):
            return not (d in self.checked_bodies or d in self.in_progress
                        or d in self.failed_claims)

        order, seen = [], {definition}
        if not waiting(definition):
            return order
        stack = [(definition, iter(_references_of_definition(definition)))]
        while stack:
            current, following = stack[-1]
            step = next(following, None)
            if step is None:
                stack.pop()
                order.append(current)
            elif step not in seen and waiting(step):
                seen.add(step)
                stack.append((step, iter(_references_of_definition(step))))
        return order

    # ---- checking -----------------------------------------------------------
    def check(self, ctx: Context, term, expected):
        kind = type(term)
        if kind is c.Lam:
            target = force(expected)
            if type(target) is not VPi:
                raise self.error(term, f"a function is not a value of type "
                                       f"{self.show(ctx, target)}")
            self.check_type(ctx, term.domain)
            domain = self.evaluate(ctx, term.domain)
            if term.multiplicity != target.term.multiplicity:
                raise self.error(term, f"this lambda binds {term.name} as {term.multiplicity}, "
                                       f"but its type binds it as {target.term.multiplicity}")
            if not convertible(ctx.level, domain, target.domain):
                raise self.error(term.domain, f"the lambda's argument {term.name} has type\n"
                                              f"    {self.show(ctx, domain)}\n  but the expected "
                                              f"function type takes\n"
                                              f"    {self.show(ctx, target.domain)}")
            inner, variable = ctx.bind(term.name, domain)
            self.check(inner, term.body, instantiate(target.term, target.env, variable))
            return
        if kind is c.Let:
            inner = self.let_context(ctx, term)
            self.check(inner, term.body, expected)
            return
        if kind is c.Record:
            target = force(expected)
            if type(target) is VFamily and target.declaration is term.declaration:
                self.check_constructor_fields(ctx, term, term.ctor, target.params, term.fields)
                return
            family = term.declaration
            if family.parameters:
                # its type cannot be inferred (the parameters), but it is a (family F ...) whatever
                # they are: not a value of the type expected (probe s43 langsound finding 3)
                self.check_family(family)
                raise self.error(term, f"a record of {family.name} is not a value of type "
                                       f"{self.show(ctx, target)}",
                                 hint=f"a record of {family.name} has type (family "
                                      f"{' '.join([family.name, *(p.name for p in family.parameters)])})")
        if kind is c.ReflT:
            target = force(expected)
            if type(target) is VEqual:
                self.check_refl(ctx, term, target)
                return
        found = self.infer(ctx, term)
        if not self.subsumes(ctx, found, expected):
            raise self.mismatch(ctx, term, expected, found)

    def check_refl(self, ctx, term, target: VEqual, what: str | None = None):
        """`what`: where the proof stands when it is not a definition's whole body (a constructor's
        field, an argument), named in the refusal beside the definition."""
        self.check_type(ctx, term.type)
        type_value = self.evaluate(ctx, term.type)
        if not convertible(ctx.level, type_value, target.type):
            raise self.error(term.type, f"refl is about {self.show(ctx, type_value)}, but the "
                                        f"equality is about {self.show(ctx, target.type)}")
        self.check(ctx, term.value, type_value)
        value = term.value.lazy(ctx.env)
        sides_agree = convertible(ctx.level, target.left, target.right)
        if sides_agree and convertible(ctx.level, value, target.left):
            return
        name = self.current.name if self.current is not None else "this proof"
        claim = f"the equality {name} claims{f' in {what}' if what else ''}"
        span = self.current.span if self.current is not None else term.span
        if sides_agree:
            raise TypeCheckError(
                f"{claim} holds, but refl's value is not its sides' value\n"
                f"    refl:  {self.show_computed(ctx, value)}\n"
                f"    sides: {self.show_computed(ctx, target.left)}",
                span, hint=f"write (refl {shown_term(term.type)} X) with X one side of the claim")
        sides = (f"\n    left:  {self.show_computed(ctx, target.left)}\n"
                 f"    right: {self.show_computed(ctx, target.right)}")
        left, right = _disagreement(ctx.level, target.left, target.right)
        if type(left) is VNeutral or type(right) is VNeutral:
            variable = _stuck_variable(left if type(left) is VNeutral else right)
            on = f" on the variable {variable}" if variable else ""
            raise TypeCheckError(
                f"{claim} cannot be decided by computation: its sides do not reduce to values "
                f"(they are stuck{on}), and they are not the same expression" + sides, span,
                hint=f"the language proves equalities by computation only ({doc('language.md')}): "
                     "state the claim about values the sides compute from (literals, "
                     "constructors), not about a variable")
        raise ClaimDoesNotHold(
            f"{claim} does not hold: its two sides compute to different values" + sides, span,
            hint="fix the definitions the two sides are computed from, or the claim")

    def show_computed(self, ctx, value) -> str:
        value = force(value)
        if type(value) is VNat:
            if value.value.bit_length() > SHOWN_DIGITS * 3:
                return show_natural(value.value)
            return f"{value.value} (0x{value.value:x})"
        return self.show(ctx, value, by_name=False)     # what the side computed, unfolded

    def let_context(self, ctx, term):
        if term.type is not None:
            self.check_type(ctx, term.type)
            type_value = self.evaluate(ctx, term.type)
            self.check(ctx, term.value, type_value)
        else:
            type_value = self.infer(ctx, term.value)
        return ctx.define(term.name, type_value, term.value.lazy(ctx.env))

    def check_parameters(self, ctx, family, arguments, term):
        """Check a family's parameter arguments; their values."""
        env = None
        values = []
        for parameter, argument in zip(family.parameters, arguments):
            self.check_labelled(ctx, argument, parameter.type.ev(env),
                                f"parameter {parameter.name} of {family.name}")
            value = argument.lazy(ctx.env)
            values.append(value)
            env = (value, env)
        return tuple(values)

    def check_constructor_fields(self, ctx, term, ctor, params, fields):
        env = None
        for value in params:
            env = (value, env)
        for field, argument in zip(ctor.fields, fields):
            self.check_labelled(ctx, argument, field.type.ev(env),
                                f"field {field.name} of {ctor.name}")
            env = (argument.lazy(ctx.env), env)

    def check_labelled(self, ctx, term, expected, what: str):
        """check(), with a mismatch (or a proof that does not hold) worded as `what` (an argument, a field)."""
        if type(term) is c.ReflT and type(force(expected)) is VEqual:
            self.check_refl(ctx, term, force(expected), what)
            return
        if type(term) in (c.Lam, c.Let, c.Record, c.ReflT):
            self.check(ctx, term, expected)
            return
        found = self.infer(ctx, term)
        if not self.subsumes(ctx, found, expected):
            raise self.mismatch(ctx, term, expected, found, what=what)

    # ---- inference ----------------------------------------------------------
    def infer(self, ctx: Context, term):
        kind = type(term)
        if kind is c.Local:
            return ctx.types[ctx.level - 1 - term.index]
        if kind is c.Global:
            definition = term.definition
            if definition not in self.checked_bodies:
                self.check_used(definition)
            return self.definition_type(definition)
        if kind is c.Constant:
            value = term.value
            if type(value) is VNat:
                return NAT_TYPE
            if type(value) is VBytes:
                return BYTES_TYPE
            if value is NAT_TYPE or value is BYTES_TYPE:
                return VType(0)
            if type(value) is VType:
                return VType(value.level + 1)
        if kind is c.Prim:
            return self.primitive_type(term.primitive)
        if isinstance(term, c.PrimCall):
            primitive = term.primitive
            for argument, argument_kind in zip(term.arguments, primitive.argument_kinds):
                expected = _kind_type(argument_kind)
                found = self.infer(ctx, argument)
                if not convertible(ctx.level, found, expected):
                    raise self.mismatch(ctx, argument, expected, found,
                                        what=f"this argument of {primitive.name}")
            return _kind_type(primitive.result_kind)
        if kind is c.Lam:
            self.check_type(ctx, term.domain)
            domain = self.evaluate(ctx, term.domain)
            inner, _ = ctx.bind(term.name, domain)
            body_type = self.infer(inner, term.body)
            pi = c.Pi(term.span, term.multiplicity, term.name, term.domain,
                      quote(inner.level, body_type))
            return pi.ev(ctx.env)
        if kind is c.Pi:
            domain_level = self.check_type(ctx, term.domain)
            inner, _ = ctx.bind(term.name, self.evaluate(ctx, term.domain))
            return VType(max(domain_level, self.check_type(inner, term.body)))
        if kind is c.Let:
            return self.infer(self.let_context(ctx, term), term.body)
        if kind is c.App:
            return self.infer_application(ctx, term)
        if kind is c.FamilyT:
            family = term.declaration
            self.check_family(family)
            params = self.check_parameters(ctx, family, term.arguments, term)
            env = None
            for value in params:
                env = (value, env)
            return family.sort.ev(env)
        if kind is c.Con:
            family = term.declaration
            self.check_family(family)
            params = self.check_parameters(ctx, family, term.params, term)
            self.check_constructor_fields(ctx, term, term.ctor, params, term.fields)
            return VFamily(family, params)
        if kind is c.Record:
            family = term.declaration
            self.check_family(family)
            if family.parameters:
                raise self.error(term, f"cannot tell the parameters of {family.name} from this "
                                       f"record alone",
                                 hint=f"give it a type: (the (family {family.name} ...) "
                                      f"(record ...))")
            self.check_constructor_fields(ctx, term, term.ctor, (), term.fields)
            return VFamily(family, ())
        if kind is c.Elim:
            return self.infer_eliminate(ctx, term)
        if kind is c.NatElim:
            return self.infer_nat_eliminate(ctx, term)
        if kind is c.Succ:
            self.check(ctx, term.predecessor, NAT_TYPE)
            return NAT_TYPE
        if kind is c.EqualT:
            level = self.check_type(ctx, term.type)
            type_value = self.evaluate(ctx, term.type)
            self.check(ctx, term.left, type_value)
            self.check(ctx, term.right, type_value)
            return VType(level)
        if kind is c.ReflT:
            self.check_type(ctx, term.type)
            type_value = self.evaluate(ctx, term.type)
            self.check(ctx, term.value, type_value)
            value = term.value.lazy(ctx.env)
            return VEqual(type_value, value, value)
        if kind is c.Encode:
            self.check_type(ctx, term.type)
            type_value = force(self.evaluate(ctx, term.type))
            if type(type_value) is not VFamily:
                raise self.error(term.type, f"compiler-native-encode needs a family type, not "
                                            f"{self.show(ctx, type_value)}")
            self.check(ctx, term.value, type_value)
            return BYTES_TYPE
        if kind is c.The:
            self.check_type(ctx, term.type)
            type_value = self.evaluate(ctx, term.type)
            self.check(ctx, term.expression, type_value)
            return type_value
        raise self.error(term, f"cannot infer a type for {shown_term(term)}")

    def infer_application(self, ctx, term):
        function_type = force(self.infer(ctx, term.function))
        for count, argument in enumerate(term.arguments):
            if type(function_type) is not VPi:
                if count == 0:
                    message = (f"{shown_term(term.function)} is not a function: its type is "
                               f"{self.show(ctx, function_type)}")
                else:
                    message = (f"too many arguments: after {count}, the result has type "
                               f"{self.show(ctx, function_type)}, not a function type")
                    extra = len(term.arguments) - count
                    hint = (f"{shown_term(term.function)} takes {count} argument{'' if count == 1 else 's'} "
                            f"and is given {len(term.arguments)}: remove {'this one' if extra == 1 else f'the {extra} from this one on'}")
                    raise self.error(argument, message, hint=hint)     # at the first argument too many
                raise self.error(term, message)
            self.check_labelled(ctx, argument, function_type.domain,
                                f"argument {count + 1} of {shown_term(term.function)}")
            function_type = force(instantiate(function_type.term, function_type.env,
                                              argument.lazy(ctx.env)))
        return function_type

    def motive(self, ctx, term, domain, what: str):
        """Check an eliminator's motive: a function from `domain` to a type; its value."""
        motive_type = force(self.infer(ctx, term))
        if type(motive_type) is not VPi:
            raise self.error(term, f"the motive of {what} must be a function to a type, but it "
                                   f"has type {self.show(ctx, motive_type)}")
        if not convertible(ctx.level, motive_type.domain, domain):
            raise self.error(term, f"the motive of {what} takes\n    "
                                   f"{self.show(ctx, motive_type.domain)}\n  but the value "
                                   f"eliminated has type\n    {self.show(ctx, domain)}")
        inner, variable = ctx.bind(motive_type.term.name, motive_type.domain)
        result = force(instantiate(motive_type.term, motive_type.env, variable))
        if type(result) is not VType:
            returned = ("a function (of type " if type(result) is VPi else "a value of type ")
            raise self.error(term, f"the motive of {what} must return a type (a value of type "
                                   f"Type n), but it returns {returned}{self.show(inner, result)}"
                                   f"{')' if type(result) is VPi else ''}",
                             hint="a motive takes the value eliminated and returns the type of the result: "
                                  "(lambda unrestricted v : T . ResultType)")
        return self.evaluate(ctx, term)

    def infer_eliminate(self, ctx, term):
        family = term.declaration
        self.check_family(family)
        scrutinee_type = force(self.infer(ctx, term.scrutinee))
        if type(scrutinee_type) is not VFamily or scrutinee_type.declaration is not family:
            raise self.error(term.scrutinee, f"eliminate {family.name} needs a value of family "
                                             f"{family.name}, but this has type "
                                             f"{self.show(ctx, scrutinee_type)}")
        params = scrutinee_type.params
        motive = self.motive(ctx, term.motive, scrutinee_type, f"eliminate {family.name}")
        for branch in term.branches:
            ctor = branch.ctor
            env = None
            for value in params:
                env = (value, env)
            inner = ctx
            variables = []
            for field, name in zip(ctor.fields, branch.binders):
                field_type = field.type.ev(env)
                inner, variable = inner.bind(name, field_type)
                variables.append(variable)
                env = (variable, env)
            for position, index in enumerate(ctor.recursive):
                name = branch.binders[len(ctor.fields) + position]
                inner, _ = inner.bind(name, apply(motive, variables[index]))
            expected = apply(motive, VCon(family, ctor, params, tuple(variables)))
            self.check(inner, branch.body, expected)
        return apply(motive, term.scrutinee.lazy(ctx.env))

    def infer_nat_eliminate(self, ctx, term):
        motive = self.motive(ctx, term.motive, NAT_TYPE, "nat-eliminate")
        self.check(ctx, term.base, apply(motive, VNat(0)))
        self.check(ctx, term.step, _STEP_TYPE.ev((motive, None)))
        self.check(ctx, term.target, NAT_TYPE)
        return apply(motive, term.target.lazy(ctx.env))


_FUNCTION_VALUES = (VLam, VPrimFn)


def _disagreement(level, left, right):
    """The first pair of values where two non-convertible values differ: through fields of one
    constructor, and into two functions' bodies applied to a fresh variable as conversion
    compares them (a bounded number of levels: `(lambda y . (nat-add y 0))` against `(lambda z .
    z)` differ at `(nat-add y 0)` against `y`, stuck, not two values: probe s46 plantexts2), else
    the pair itself, forced."""
    left, right = force(left), force(right)
    for _ in range(64):
        kinds = (type(left), type(right))
        if all(k in _FUNCTION_VALUES or k is VNeutral for k in kinds) and \
                any(k in _FUNCTION_VALUES for k in kinds):
            if VLam in kinds and kinds[0] is kinds[1] and \
                    left.term.multiplicity != right.term.multiplicity:
                break
            binder = left if kinds[0] is VLam else right if kinds[1] is VLam else None
            variable = fresh(level, binder.term.name if binder is not None else "x")
            left, right = force(apply(left, variable)), force(apply(right, variable))
            level += 1
            continue
        if not (type(left) is VCon and type(right) is VCon and left.ctor is right.ctor):
            break
        for x, y in zip(left.fields, right.fields):
            if not convertible(level, x, y):
                left, right = force(x), force(y)
                break
        else:
            break
    return left, right


def _stuck_variable(value, budget: int = 1000) -> str:
    """The name of a variable a stuck value is stuck on ('' when none is found in `budget`
    values): the head of the neutral, or of a primitive's argument it waits on."""
    stack = [value]
    while stack and budget > 0:
        budget -= 1
        value = force(stack.pop())
        if type(value) is not VNeutral:
            continue
        head = value.head
        if type(head) is HVar:
            return head.name
        if type(head) is HPrim:
            stack.extend(reversed(list(head.args)))
    return ""


def _referenced(term):
    """The top-level definitions and families a term mentions (walking every sub-term)."""
    found = []
    stack = [term]
    while stack:
        item = stack.pop()
        if isinstance(item, c.Global):
            found.append(item.definition)
            continue
        if isinstance(item, c.ElimBranch):
            stack.append(item.body)
            continue
        declaration = getattr(item, "declaration", None)    # FamilyT, Con, Record, Elim
        if isinstance(declaration, c.FamilyDeclaration):
            found.append(declaration)
        stack.extend(_sub_terms(item, ("induction", "declaration", "ctor")))    # not back-pointers, declarations
    return found


def _sub_terms(item, skipped: tuple[str, ...]):
    """The terms and branches directly under `item` (its slots but `skipped`)."""
    for klass in type(item).__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name in skipped:
                continue
            child = getattr(item, name, None)
            if isinstance(child, (c.Term, c.ElimBranch)):
                yield child
            elif isinstance(child, list):
                yield from (x for x in child if isinstance(x, (c.Term, c.ElimBranch)))


def native_encodings(definitions) -> set[str]:
    """The families whose `(compiler-native-encode (family F ...) v)` the definitions' values
    reach: in their bodies or in those of the definitions they mention, however deep.  What
    evaluating them may ask the backend to encode (`bobc check` names as native artifacts only
    the Bytes definitions that reach an encoder of executables)."""
    found: set[str] = set()
    seen: set = set()
    stack = list(definitions)
    while stack:
        definition = stack.pop()
        if definition in seen:
            continue
        seen.add(definition)
        terms = [definition.body]
        while terms:
            item = terms.pop()
            if isinstance(item, c.Global):
                if isinstance(item.definition, c.Definition):
                    stack.append(item.definition)
                continue
            if isinstance(item, c.Encode) and isinstance(item.type, c.FamilyT):
                found.add(item.type.declaration.name)
            if isinstance(item, c.ElimBranch):
                terms.append(item.body)
                continue
            terms.extend(_sub_terms(item, ("induction", "declaration", "ctor", "program")))
    return found


def _references_of_definition(definition):
    """The definitions a definition's type and body name."""
    terms = [definition.body] + ([definition.type] if definition.type is not None else [])
    return [d for term in terms for d in _referenced_definitions(term)]


def _referenced_definitions(term):
    """The top-level definitions a term mentions."""
    return [d for d in _referenced(term) if isinstance(d, c.Definition)]


def _family_parts(family):
    """A family's parameter, sort and field types: (term, what it is, its span)."""
    parts = [(p.type, f"parameter {p.name}", p.span) for p in family.parameters]
    if family.sort is not None:
        parts.append((family.sort, "type", family.span))
    for ctor in family.constructors:
        parts += [(f.type, f"field {f.name} of {ctor.name}", f.span) for f in ctor.fields]
    return parts


def check_acyclic(program, roots=None):
    """Refuse definitions and families that refer to each other in a cycle (the language is
    total): every one of the program's, or (`roots`) those the given definitions reach, as
    `bobc eval` asks, with the same message.

    A definition may not need its own value.  A family may refer to itself only in its own
    fields, where the strict positivity check sees every use (resolve.py); a cycle through a
    definition (a field typed `D`, where D mentions the family) would hide a use from that
    check (`def D = (pi f : (family Bad) . Nat)`: a non-terminating plan passed as well
    typed), and a cycle through another family is mutual recursion, which the check does not
    cover either.  Both are refused here, before anything is evaluated.
    """
    state: dict = {}                    # definition or family -> "active" | "done"
    every = [d for name in program.module_order
             for scope in (program.scopes[name],)
             for d in [*scope.definitions.values(), *scope.families.values()]]
    if roots is not None:           # those reached, in the order `bobc check` walks them
        reached, stack = set(roots), list(roots)
        while stack:
            for following in _references(stack.pop()):
                if following not in reached:
                    reached.add(following)
                    stack.append(following)
        every = [d for d in every if d in reached]
    for root in every:
        if root in state:
            continue
        path = [root]
        state[root] = "active"
        iterators = [iter(_references(root))]
        while iterators:
            following = next(iterators[-1], None)
            if following is None:
                iterators.pop()
                state[path.pop()] = "done"
                continue
            mark = state.get(following)
            if mark == "active":
                raise _cycle_error(path[path.index(following):] + [following])
            if mark is None:
                state[following] = "active"
                path.append(following)
                iterators.append(iter(_references(following)))


def _cycle_error(cycle) -> TypeCheckError:
    families = [x for x in cycle[:-1] if isinstance(x, c.FamilyDeclaration)]
    if not families:
        following = cycle[-1]
        return TypeCheckError(
            "definitions refer to each other in a cycle: " + " -> ".join(d.name for d in cycle),
            following.span,
            hint="a definition may not need its own value; recurse with eliminate or "
                 "nat-eliminate")
    # start the cycle at a family, and point at the part of it that leads on
    start = cycle.index(families[0])
    cycle = cycle[start:-1] + cycle[:start] + [families[0]]
    family, following = cycle[0], cycle[1]
    what, span = next(((what, span) for term, what, span in _family_parts(family)
                       if following in _referenced(term)), ("type", family.span))
    shown = " -> ".join(f"family {x.name}" if isinstance(x, c.FamilyDeclaration) else x.name
                        for x in cycle)
    if all(isinstance(x, c.FamilyDeclaration) for x in cycle):
        return TypeCheckError(
            f"families refer to each other in a cycle: {shown} (through {what})", span,
            hint="mutual recursion between families is not supported (its strict positivity "
                 "is not checked); merge them into one family, or make one not refer to the "
                 "other")
    return TypeCheckError(
        f"family {family.name} reaches itself through a definition: {shown} (through "
        f"{what})", span,
        hint=f"a family may use itself only in its own fields, where its strict positivity is "
             f"checked; write the type out in {family.name}'s declaration instead of naming a "
             f"definition that refers to {family.name}")


def _references(node):
    if isinstance(node, c.FamilyDeclaration):
        return [x for term, _, _ in _family_parts(node) for x in _referenced(term)
                if x is not node]
    terms = [node.body] + ([node.type] if node.type is not None else [])
    return [x for term in terms for x in _referenced(term)]


def check_program(program, checker=None, past_failed_claims: bool = False):
    """Type check every family and definition of every module the plan reaches (with
    `checker`, the program's own, reusing what it found before).  The first error is raised.
    `past_failed_claims`: a claim that does not hold (ClaimDoesNotHold) does not stop the check;
    the first one is raised at the end, its only_failed_claims saying whether everything else
    type checks (a later error of another kind raises that first claim at once, marked False:
    the error reported is still the first in source order)."""
    check_acyclic(program)
    checker = checker if checker is not None else Checker(program)
    claims = []
    try:
        _check_declarations(program, checker, claims if past_failed_claims else None)
    except BobcError:
        if claims:
            claims[0].only_failed_claims = False
            raise claims[0] from None
        raise
    if claims:
        claims[0].only_failed_claims = True
        raise claims[0]
    return checker


def _check_declarations(program, checker, claims: list | None) -> None:
    for name in program.module_order:
        scope = program.scopes[name]
        # a module's families and definitions in source order, so the error reported is its
        # first (a family or definition a definition uses is checked on that use, before it)
        for declaration in sorted([*scope.families.values(), *scope.definitions.values()],
                                  key=_source_position):
            if isinstance(declaration, c.FamilyDeclaration):
                checker.check_family(declaration)
                continue
            definition = declaration
            try:
                checker.check_definition(definition)
            except ClaimDoesNotHold as error:
                if claims is None:
                    raise
                claims.append(error)
            except LimitExceeded as error:
                if not error.definitions:        # evaluated by the checker itself, not through a definition's value
                    error.note(definition)
                if c._in_library(definition.span):  # the library's own check: no plan definition led there
                    error.met_checking_library(definition)
                raise
            except RecursionError as error:      # program._run_deep names the definition
                if not hasattr(error, "definition"):
                    error.definition = definition
                raise


def _source_position(declaration) -> tuple[int, int]:
    span = declaration.span
    return (span.line, span.column) if span is not None else (0, 0)
