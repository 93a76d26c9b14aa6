"""Read-back: values -> core terms, and core terms -> the language's text.

The type checker prints types the way a plan author writes them: a value is
read back into a term (functions applied to fresh variables, neutral
computations rebuilt) and the term is printed in s-expression syntax.
"""
from __future__ import annotations

from . import core as c
from .syntax import show_bytes
from .values import (
    BYTES_TYPE, NAT_TYPE, HVar, VBytes, VBytesType, VCon, VEqual, VFamily,
    VLam, VNat, VNatType, VNeutral, VPi, VPrimFn, VRefl, VType, force,
)


def fresh(level: int, name: str):
    """The variable bound at de Bruijn level `level`, as a value."""
    return VNeutral(HVar(level, name))


def instantiate(closure_term, env, argument):
    """A closure's body with its variable bound to `argument`."""
    return closure_term.body.ev((argument, env))


def quote(level: int, value) -> c.Term:
    """A term that evaluates back to `value` under `level` bound variables."""
    value = force(value)
    kind = type(value)
    if kind is VNat:
        return c.NatLit(None, value.value)
    if kind is VBytes:
        return c.BytesLit(None, value.value)
    if kind in (VType, VNatType, VBytesType):
        return c.Constant(None, value)
    if kind is VPi:
        term = value.term
        body = instantiate(term, value.env, fresh(level, term.name))
        return c.Pi(None, term.multiplicity, term.name, quote(level, value.domain),
                    quote(level + 1, body))
    if kind is VLam:
        term = value.term
        domain = term.domain.ev(value.env)
        body = instantiate(term, value.env, fresh(level, term.name))
        return c.Lam(None, term.multiplicity, term.name, quote(level, domain),
                     quote(level + 1, body))
    if kind is VPrimFn:
        head = c.Prim(None, value.primitive)
        if not value.args:
            return head
        return c.App(None, head, [quote(level, a) for a in value.args])
    if kind is VFamily:
        return c.FamilyT(None, value.declaration, [quote(level, p) for p in value.params])
    if kind is VCon:
        return c.Con(None, value.declaration, value.ctor, [quote(level, p) for p in value.params],
                     [quote(level, f) for f in value.fields])
    if kind is VEqual:
        return c.EqualT(None, quote(level, value.type), quote(level, value.left),
                        quote(level, value.right))
    if kind is VRefl:
        return c.ReflT(None, quote(level, value.type), quote(level, value.value))
    if kind is VNeutral:
        return _quote_neutral(level, value)
    raise TypeError(f"cannot read back {value!r}")


def _quote_neutral(level: int, value: VNeutral) -> c.Term:
    head = value.head
    if isinstance(head, HVar):
        term = c.Local(None, level - head.level - 1, head.name)
    else:
        term = c.App(None, c.Prim(None, head.primitive), [quote(level, a) for a in head.args])
    for frame in value.spine:
        tag = frame[0]
        if tag == "app":
            argument = quote(level, frame[1])
            if isinstance(term, c.App):
                term = c.App(None, term.function, [*term.arguments, argument])
            else:
                term = c.App(None, term, [argument])
        elif tag == "succ":
            term = c.Succ(None, term)
        elif tag == "elim":
            term = _quote_elim(level, frame[1], frame[2], term)
        elif tag == "natelim":
            nat, env = frame[1], frame[2]
            term = c.NatElim(None, quote(level, nat.motive.ev(env)), quote(level, nat.base.ev(env)),
                             quote(level, nat.step.ev(env)), term)
    return term


def _quote_elim(level, elim, env, scrutinee):
    branches = []
    for branch in elim.branches:
        local = env
        depth = level
        for name in branch.binders:
            local = (fresh(depth, name), local)
            depth += 1
        body = quote(depth, branch.body.ev(local))
        branches.append(c.ElimBranch(branch.ctor, branch.binders, body, None))
    return c.Elim(None, elim.declaration, quote(level, elim.motive.ev(env)), scrutinee, branches)


# ---- printing core terms ----------------------------------------------------

def _constant(value) -> str:
    if isinstance(value, VNat):
        return str(value.value)
    if isinstance(value, VBytes):
        return show_bytes(value.value)
    if isinstance(value, VType):
        return f"Type {value.level}"
    if value is NAT_TYPE:
        return "Nat"
    if value is BYTES_TYPE:
        return "Bytes"
    return repr(value)


def show_term(term: c.Term) -> str:
    """A core term in the language's syntax (one line)."""
    kind = type(term)
    if kind is c.Local:
        return term.name
    if kind is c.Global:
        return term.definition.name
    if kind is c.Prim:
        return term.primitive.name
    if kind is c.Constant:
        return _constant(term.value)
    if kind is c.Lam:
        return (f"(lambda {term.multiplicity} {term.name} : {show_term(term.domain)} . "
                f"{show_term(term.body)})")
    if kind is c.Pi:
        return (f"(pi {term.multiplicity} {term.name} : {show_term(term.domain)} . "
                f"{show_term(term.body)})")
    if kind is c.Let:
        annotation = f" : {show_term(term.type)}" if term.type is not None else ""
        return (f"(let {term.multiplicity} {term.name}{annotation} = {show_term(term.value)} in "
                f"{show_term(term.body)})")
    if kind is c.App:
        return "(" + " ".join(show_term(x) for x in [term.function, *term.arguments]) + ")"
    if isinstance(term, c.PrimCall):
        return "(" + " ".join([term.primitive.name, *map(show_term, term.arguments)]) + ")"
    if kind is c.FamilyT:
        return "(" + " ".join(["family", term.declaration.name,
                               *map(show_term, term.arguments)]) + ")"
    if kind in (c.Con, c.Record):
        return "(" + " ".join(["constructor", term.declaration.name, term.ctor.name,
                               *map(show_term, term.params), *map(show_term, term.fields)]) + ")"
    if kind is c.Elim:
        branches = ["(branch " + " ".join([b.ctor.name, *b.binders]) + f" . {show_term(b.body)})"
                    for b in term.branches]
        return "(" + " ".join(["eliminate", term.declaration.name, show_term(term.motive),
                               show_term(term.scrutinee), *branches]) + ")"
    if kind is c.NatElim:
        return (f"(nat-eliminate {show_term(term.motive)} {show_term(term.base)} "
                f"{show_term(term.step)} {show_term(term.target)})")
    if kind is c.Succ:
        return f"(succ {show_term(term.predecessor)})"
    if kind is c.EqualT:
        return f"(equal {show_term(term.type)} {show_term(term.left)} {show_term(term.right)})"
    if kind is c.ReflT:
        return f"(refl {show_term(term.type)} {show_term(term.value)})"
    if kind is c.Encode:
        return f"(compiler-native-encode {show_term(term.type)} {show_term(term.value)})"
    if kind is c.The:
        return f"(the {show_term(term.type)} {show_term(term.expression)})"
    return f"<{kind.__name__}>"


def show_value(value, level: int = 0) -> str:
    """A value (a type, usually) in the language's syntax."""
    return show_term(quote(level, value))
