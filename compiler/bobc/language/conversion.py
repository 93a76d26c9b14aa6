"""Definitional equality: are two values the same, by evaluation and comparison?

Values are compared structurally after forcing; functions are compared by
applying both to a fresh variable (which also gives eta); neutral terms
compare head and spine; binders' multiplicities must agree.  The comparison
runs on an explicit work list, so two lists of a hundred thousand cells compare without
deep recursion.  Literals compare as Python ints/bytes: never unary.

Values share structure (a computation stuck on a variable, `(nat-add b b)`,
holds one `b` twice), and two sides computed apart are two such DAGs: a pair
of values already compared (by identity, at one depth) is not compared again
within one question, so the work is linear in the DAGs, not in the trees they
unfold to.  Each comparison counts as an evaluation step (docs/limits.md:
the step limit holds on every path), so no input makes conversion run on.
"""
from __future__ import annotations

from . import core
from .core import apply
from .quote import fresh, instantiate
from .values import (
    HVar, VBytes, VCon, VEqual, VFamily, VLam, VNat, VNeutral, VPi, VPrimFn, VRefl,
    VType, force,
)

_FUNCTIONS = (VLam, VPrimFn)
# pairs one question remembers as compared (a few hundred MB at most); past it, pairs are
# compared again (each still counts as a step)
_REMEMBERED_PAIRS = 1 << 19


def convertible(level: int, left, right) -> bool:
    """Whether `left` and `right` are definitionally equal under `level` binders."""
    work = [(level, left, right)]
    seen: dict = {}             # (id, id, depth) -> the pair, kept alive so ids stay unique
    fuel = core._fuel
    while work:
        depth, a, b = work.pop()
        a = force(a)
        b = force(b)
        if a is b:
            continue
        key = (id(a), id(b), depth)
        if key in seen:
            continue
        if len(seen) < _REMEMBERED_PAIRS:
            seen[key] = (a, b)
        fuel[0] -= 1
        if fuel[0] < 0:
            core._burn(0, None)
        ta, tb = type(a), type(b)
        if ta in _FUNCTIONS or tb in _FUNCTIONS:
            if ta is VLam and tb is VLam and a.term.multiplicity != b.term.multiplicity:
                return False
            if not (ta in _FUNCTIONS or ta is VNeutral) or not (tb in _FUNCTIONS or tb is VNeutral):
                return False
            variable = fresh(depth, "x")
            work.append((depth + 1, apply(a, variable), apply(b, variable)))
            continue
        if ta is not tb:
            return False
        if ta is VNat or ta is VBytes:
            if a.value != b.value:
                return False
        elif ta is VType:
            if a.level != b.level:
                return False
        elif ta is VPi:
            if a.term.multiplicity != b.term.multiplicity:
                return False
            variable = fresh(depth, a.term.name)
            work.append((depth, a.domain, b.domain))
            work.append((depth + 1, instantiate(a.term, a.env, variable),
                         instantiate(b.term, b.env, variable)))
        elif ta is VFamily:
            if a.declaration is not b.declaration or len(a.params) != len(b.params):
                return False
            work.extend((depth, x, y) for x, y in zip(a.params, b.params))
        elif ta is VCon:
            if a.ctor is not b.ctor:
                return False
            if len(a.params) == len(b.params):     # a record's may be left implicit
                work.extend((depth, x, y) for x, y in zip(a.params, b.params))
            work.extend((depth, x, y) for x, y in zip(a.fields, b.fields))
        elif ta is VEqual:
            work.extend([(depth, a.type, b.type), (depth, a.left, b.left),
                         (depth, a.right, b.right)])
        elif ta is VRefl:
            work.extend([(depth, a.type, b.type), (depth, a.value, b.value)])
        elif ta is VNeutral:
            if not _neutral_pairs(depth, a, b, work):
                return False
        # VNatType, VBytesType: singletons, equal when the types are
    return True


def _neutral_pairs(depth, a: VNeutral, b: VNeutral, work) -> bool:
    ha, hb = a.head, b.head
    if type(ha) is not type(hb):
        return False
    if type(ha) is HVar:
        if ha.level != hb.level:
            return False
    else:
        if ha.primitive is not hb.primitive:
            return False
        work.extend((depth, x, y) for x, y in zip(ha.args, hb.args))
    if len(a.spine) != len(b.spine):
        return False
    for fa, fb in zip(a.spine, b.spine):
        if fa[0] != fb[0]:
            return False
        tag = fa[0]
        if tag == "app":
            work.append((depth, fa[1], fb[1]))
        elif tag == "elim":
            ea, eb = fa[1], fb[1]
            if ea.declaration is not eb.declaration:
                return False
            work.append((depth, ea.motive.ev(fa[2]), eb.motive.ev(fb[2])))
            for branch in ea.branches:
                other = eb.by_ctor[branch.ctor.name]
                local_a, local_b, inner = fa[2], fb[2], depth
                for name in branch.binders:
                    variable = fresh(inner, name)
                    local_a, local_b, inner = (variable, local_a), (variable, local_b), inner + 1
                work.append((inner, branch.body.ev(local_a), other.body.ev(local_b)))
        elif tag == "natelim":
            na, nb = fa[1], fb[1]
            work.extend([(depth, na.motive.ev(fa[2]), nb.motive.ev(fb[2])),
                         (depth, na.base.ev(fa[2]), nb.base.ev(fb[2])),
                         (depth, na.step.ev(fa[2]), nb.step.ev(fb[2]))])
    return True

