"""Property tests of the language's front end, printer and evaluator (probe s40 roundtrip).

Each property has an oracle of its own, not the implementation's output: the grammar's forms
(printed text must read back as the same text / the same type), a Python evaluator written from
docs/language.md's table of primitives, Python's own bytes and lists.  Hypothesis runs
derandomized (a fixed sequence of examples, so CI is deterministic) with no example database
(nothing is written into the checkout), each property in a few seconds.

Finding 1 of the probe: a bound variable or a definition named like a form's head (`succ`,
`lambda`, `the`...) applied to an argument printed as `(succ 3)` -- the successor form, another
term -- or `(lambda 3)`, which does not parse; it is written, and now printed, `(app succ 3)`.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bobc.cli import main
from bobc.errors import BobcError
from bobc.language import load_program
from bobc.language import syntax as s
from bobc.language.check import show_value_type
from bobc.language.parse import parse_module
from bobc.language.printing import format_value
from bobc.targets import SM86

from .conftest import REPOSITORY

PROPERTY = settings(deadline=None, database=None, derandomize=True, max_examples=120,
                    suppress_health_check=list(HealthCheck))


class _Files:
    """Module files in one session folder, each a fresh module name (a Program parses each once)."""

    def __init__(self, folder):
        self.folder, self.count = folder, 0

    def program(self, body: str, stem: str = "P"):
        self.count += 1
        name = f"{stem}{self.count}"
        path = self.folder / f"{name}.bob"
        path.write_text(f"module {name}\n{body}", encoding="utf-8")
        return load_program(path, target=SM86)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return _Files(tmp_path_factory.mktemp("roundtrip"))


def test_hypothesis_stores_nothing_in_the_checkout():
    """What hypothesis stores goes to the run's folder (tests/conftest.py), not ./.hypothesis."""
    import os

    from hypothesis.configuration import storage_directory

    where = storage_directory("constants", intent_to_write=False).path.resolve()
    assert REPOSITORY.resolve() not in where.parents
    assert Path(os.environ["BOBC_TEST_RUN"]).resolve() in where.parents


# ---- finding 1: an application of a variable named like a form's head ------------------------

# the grammar's form heads (grammar.lark, rule `form`), read from the grammar itself
_GRAMMAR = (REPOSITORY / "compiler/bobc/language/grammar.lark").read_text(encoding="utf-8")
_FORM_RULE = _GRAMMAR[_GRAMMAR.index("?form:"):_GRAMMAR.index("record_field:")]
GRAMMAR_HEADS = set(re.findall(r'^\s*[?|]?\s*(?:form:)?\s*"([a-z-]+)"', _FORM_RULE, re.M))


def test_form_heads_are_the_grammars():
    assert GRAMMAR_HEADS and s.FORM_HEADS == GRAMMAR_HEADS


@pytest.mark.parametrize("head", sorted(GRAMMAR_HEADS - {"family", "constructor"}))
def test_an_applied_variable_named_like_a_form_prints_with_app(files, head):
    """`(app succ 3)`, succ a bound variable, printed as `(succ 3)`: the grammar reads that as
    the successor form (`(lambda 3)` does not parse at all)."""
    program = files.program(
        f"def T : Type 1 = (pi 0 {head} : (pi unrestricted a : Nat . Type 0) . "
        f"(pi unrestricted x : (app {head} 3) . Nat))\n")
    printed = program.deep(show_value_type, program.value("T"))
    assert f"(app {head} 3)" in printed
    again = files.program(
        f"def T : Type 1 = (pi 0 {head} : (pi unrestricted a : Nat . Type 0) . "
        f"(pi unrestricted x : (app {head} 3) . Nat))\ndef printed : Type 1 = {printed}\n"
        f"def same : (equal (Type 1) T printed) = (refl (Type 1) T)\n")
    again.check()


def test_a_definition_named_like_a_form_prints_with_app_in_a_message(tmp_path, capsys):
    """A definition applied and stuck on a variable prints by its name in a message
    (docs/language.md): `the` applied to n is `(app the n)`, never `(the n)` (a `the` form missing
    its expression)."""
    path = tmp_path / "Named.bob"
    path.write_text("module Named\n"
                    "def the : (pi unrestricted n : Nat . Type 0) = (lambda unrestricted n : Nat . (nat-eliminate "
                    "(lambda unrestricted q : Nat . Type 0) Nat (lambda unrestricted k : Nat . "
                    "(lambda unrestricted b : Type 0 . Bytes)) n))\n"
                    "def wrong : (pi unrestricted n : Nat . (app the n)) = (lambda unrestricted n : Nat . 5)\n",
                    encoding="utf-8")
    assert main(["check", str(path)]) == 1
    error = capsys.readouterr().err
    assert "(app the n)" in error and "(the n)" not in error


# ---- property 1: surface text -> parse -> print is a fixed point ----------------------------

_NAMES = st.sampled_from(["x", "y", "f", "a'", "nat-x", "_q", "lambda", "succ", "the", "app", "branch"])
_MULTIPLICITIES = st.sampled_from(s.MULTIPLICITIES)


def _surface():
    leaf = st.one_of(_NAMES.map(lambda n: ("v", n)), st.integers(0, 2 ** 80).map(lambda n: ("n", n)),
                     st.binary(max_size=6).map(lambda b: ("b", b)), st.integers(0, 3).map(lambda n: ("T", n)))

    def extend(inner):
        return st.one_of(
            st.tuples(st.just("lambda"), _MULTIPLICITIES, _NAMES, inner, inner),
            st.tuples(st.just("pi"), _MULTIPLICITIES, _NAMES, inner, inner),
            st.tuples(st.just("let"), _MULTIPLICITIES, _NAMES, st.none() | inner, inner, inner),
            st.tuples(st.just("apply"), st.booleans(), inner, st.lists(inner, min_size=1, max_size=3)),
            st.tuples(st.just("constructor"), _NAMES, _NAMES, st.lists(inner, max_size=2)),
            st.tuples(st.just("record"), _NAMES, st.lists(st.tuples(_NAMES, inner), max_size=2)),
            st.tuples(st.just("eliminate"), _NAMES, inner, inner,
                      st.lists(st.tuples(_NAMES, st.lists(_NAMES, max_size=2), inner), max_size=2)),
            st.tuples(st.just("nat-eliminate"), inner, inner, inner, inner),
            st.tuples(st.just("succ"), inner), st.tuples(st.just("equal"), inner, inner, inner),
            st.tuples(st.just("refl"), inner, inner), st.tuples(st.just("the"), inner, inner))
    return st.recursive(leaf, extend, max_leaves=10)


def _text(e) -> str:
    """The term as a plan author writes it (docs/language.md's table of forms)."""
    kind, rest = e[0], e[1:]
    if kind == "v":
        return rest[0]
    if kind == "n":
        return str(rest[0])
    if kind == "b":
        return s.show_bytes(rest[0])
    if kind == "T":
        return f"Type {rest[0]}"
    if kind in ("lambda", "pi"):
        return f"({kind} {rest[0]} {rest[1]} : {_text(rest[2])} . {_text(rest[3])})"
    if kind == "let":
        annotation = f" : {_text(rest[2])}" if rest[2] is not None else ""
        return f"(let {rest[0]} {rest[1]}{annotation} = {_text(rest[3])} in {_text(rest[4])})"
    if kind == "apply":
        explicit = rest[0] or (rest[1][0] == "v" and rest[1][1] in s.FORM_HEADS)
        return "(" + ("app " if explicit else "") + " ".join(map(_text, [rest[1], *rest[2]])) + ")"
    if kind == "constructor":
        return "(" + " ".join(["constructor", rest[0], rest[1], *map(_text, rest[2])]) + ")"
    if kind == "record":
        return "(" + " ".join(["record", rest[0], *(f"({n} = {_text(v)})" for n, v in rest[1])]) + ")"
    if kind == "eliminate":
        branches = [f"(branch {' '.join([c, *bound])} . {_text(body)})" for c, bound, body in rest[3]]
        return "(" + " ".join(["eliminate", rest[0], _text(rest[1]), _text(rest[2]), *branches]) + ")"
    return "(" + " ".join([kind, *map(_text, rest)]) + ")"


def _parsed(text: str):
    return parse_module(f"module M\ndef d = {text}\n", "M.bob").declarations[0].body


@PROPERTY
@given(_surface())
def test_printed_surface_text_reads_back_as_itself(term):
    written = _text(term)
    shown = s.show(_parsed(written))
    assert shown == written                 # the canonical text, as written
    assert s.show(_parsed(shown)) == shown


# ---- property 2: closed naturals against a Python evaluator of docs/language.md's rules ------

# docs/language.md "Primitives": subtraction truncates, x/0 = 0, x mod 0 = x
_BINARY = {
    "nat-add": lambda a, b: a + b, "nat-subtract": lambda a, b: a - b if a > b else 0,
    "nat-multiply": lambda a, b: a * b, "nat-divide": lambda a, b: a // b if b else 0,
    "nat-modulo": lambda a, b: a % b if b else a, "nat-equal": lambda a, b: int(a == b),
    "nat-less": lambda a, b: int(a < b), "nat-bit-and": lambda a, b: a & b,
    "nat-bit-or": lambda a, b: a | b, "nat-bit-xor": lambda a, b: a ^ b,
    "nat-shift-right": lambda a, b: a >> b,
}
_UNARY = {"nat-square-root": math.isqrt, "nat-bit-length": lambda a: a.bit_length(),
          "succ": lambda a: a + 1}
_VARIABLES = ["x", "y", "nat-add", "Nat"]


def _naturals(depth: int, scope: tuple):
    """(text, value given an environment) of a closed Nat expression over `scope`."""
    literals = st.one_of(st.integers(0, 20), st.integers(0, 2 ** 130), st.sampled_from([2 ** 64 - 1, 2 ** 64]))
    options = [literals.map(lambda n: (str(n), lambda env, n=n: n)),
               literals.map(lambda n: (hex(n), lambda env, n=n: n))]
    if scope:
        options.append(st.sampled_from(sorted(set(scope))).map(lambda v: (v, lambda env, v=v: env[v])))
    if depth > 0:
        inner = _naturals(depth - 1, scope)

        def binary(t):
            name, (a, fa), (b, fb) = t
            return f"({name} {a} {b})", lambda env: _BINARY[name](fa(env), fb(env))

        def unary(t):
            name, (a, fa) = t
            return f"({name} {a})", lambda env: _UNARY[name](fa(env))

        def binding(t):
            form, name, (a, fa) = t
            return _naturals(depth - 1, scope + (name,)).map(lambda body: (
                f"(let unrestricted {name} : Nat = {a} in {body[0]})" if form == "let" else
                f"((lambda unrestricted {name} : Nat . {body[0]}) {a})",
                lambda env: body[1]({**env, name: fa(env)})))

        def loop(t):
            (base, fb), k, below, count = t
            # step k below = below + k (or below + below where the names coincide: the inner binds)
            return (f"(nat-eliminate (lambda unrestricted q : Nat . Nat) {base} (lambda unrestricted {k} : Nat . "
                    f"(lambda unrestricted {below} : Nat . (nat-add {below} {k}))) {count})",
                    lambda env: _loop(fb(env), count, k == below))

        if "nat-add" not in scope:          # a variable nat-add would stand for the primitive
            options.append(st.tuples(st.sampled_from(sorted(_BINARY)), inner, inner).map(binary))
            options.append(st.tuples(inner, st.sampled_from(["k", "x"]), st.sampled_from(["b", "x"]),
                                     st.integers(0, 25)).map(loop))
        options.append(st.tuples(st.sampled_from(sorted(_UNARY)), inner).map(unary))
        if "Nat" not in scope:
            options.append(st.tuples(st.sampled_from(["let", "beta"]), st.sampled_from(_VARIABLES),
                                     inner).flatmap(binding))
    return st.one_of(options)


def _loop(base: int, count: int, doubling: bool) -> int:
    value = base
    for k in range(count):
        value = value + value if doubling else value + k
    return value


@PROPERTY
@given(_naturals(3, ()))
def test_closed_naturals_evaluate_as_the_documented_rules_say(files, expression):
    text, value = expression
    program = files.program(f"def d : Nat = {text}\n", "N")
    program.check()
    assert program.value("d").value == value({}), text


# ---- property 3: a type printed by `bobc eval` reads back as the same type ------------------

_PRELUDE = """family Box (unrestricted A : Type 1) : Type 1
constructor BoxMake
field unrestricted item : A
end-family
def D : Type 0 = Nat
def F : (pi unrestricted n : Nat . Type 0) = (lambda unrestricted n : Nat . (equal Nat n n))
def x : Nat = 3
def A : Type 0 = Bytes
def N0 : Type 0 = Nat
def inc : (pi unrestricted n : N0 . N0) = (lambda unrestricted n : N0 . (nat-add n 1))
"""
# binder names: the prelude's definitions, built-ins, a primitive and form heads, so that
# printing must rename (s39's capture) and write `(app succ n)` (finding 1)
_BINDERS = ["x", "A", "D", "F", "Nat", "Bytes", "nat-add", "succ", "lambda", "the", "y", "x'"]
_GLOBAL_KINDS = {"x": "nat", "F": "family", "D": "type", "A": "type", "Nat": "type", "Bytes": "type"}


def _types(depth: int, scope: tuple):
    kinds = dict(_GLOBAL_KINDS)
    kinds.update(scope)

    def named(kind):
        return sorted(n for n, k in kinds.items() if k == kind)

    naturals = named("nat") + ["5"]
    options = [st.sampled_from(named("type")), st.just("(family Box N0)"),
               st.tuples(st.sampled_from(naturals), st.sampled_from(naturals)).map(
                   lambda t: f"(equal N0 (inc {t[0]}) {t[1]})")]
    if named("family"):
        options.append(st.tuples(st.sampled_from(named("family")), st.sampled_from(naturals)).map(
            lambda t: f"({'app ' if t[0] in s.FORM_HEADS else ''}{t[0]} {t[1]})"))
    if depth > 0:
        def pi(t):
            name, kind, multiplicity = t
            domain = {"type": "Type 0", "nat": "N0", "family": "(pi unrestricted n : N0 . Type 0)"}[kind]
            return _types(depth - 1, (*scope, (name, kind))).map(
                lambda body: f"(pi {multiplicity} {name} : {domain} . {body})")
        options.append(st.tuples(st.sampled_from(_BINDERS), st.sampled_from(["type", "nat", "family"]),
                                 _MULTIPLICITIES).flatmap(pi))
        options.append(_types(depth - 1, scope).map(lambda t: f"(family Box {t})"))
    return st.one_of(options)


@PROPERTY
@given(_types(4, ()))
def test_a_printed_type_reads_back_as_the_same_type(files, written):
    program = files.program(f"{_PRELUDE}def T : Type 1 = {written}\n", "T")
    program.check()
    printed = program.deep(show_value_type, program.value("T"))
    again = files.program(f"{_PRELUDE}def T : Type 1 = {written}\ndef printed : Type 1 = {printed}\n"
                          f"def same : (equal (Type 1) T printed) = (refl (Type 1) T)\n", "T")
    again.check()                           # the printed text is the value's type, not another
    assert again.deep(show_value_type, again.value("printed")) == printed


# ---- property 4: families, records and eliminate against Python lists -----------------------

_FAMILIES = ["""family List : Type 0
constructor ListEmpty
constructor ListCons
field unrestricted head : Nat
field unrestricted tail : (family List)
end-family
""", """family Pair (unrestricted A : Type 0) : Type 0
constructor PairMake
field unrestricted first : A
field unrestricted second : Nat
end-family
"""]
# branch binders: also a family's, a field's and a primitive's name (separate namespaces)
_POOL = ["h", "t", "ih", "x", "List", "first", "nat-add"]
_TO_NAT = "(lambda unrestricted l : (family List) . Nat)"
_TO_LIST = "(lambda unrestricted l : (family List) . (family List))"


def _fold(items, base, step):
    """eliminate over a list: ListCons h t -> step(h, t, the result for t)."""
    result = base
    for index in range(len(items) - 1, -1, -1):
        result = step(items[index], items[index + 1:], result)
    return result


def _in_scope(scope, kind):
    seen = dict(scope)
    return sorted(n for n, k in seen.items() if k == kind)


def _three():
    return st.lists(st.sampled_from(_POOL), min_size=3, max_size=3, unique=True)


def _family_naturals(depth, scope):
    options = [st.integers(0, 2 ** 70).map(lambda n: (str(n), lambda env, n=n: n))]
    if _in_scope(scope, "nat"):
        options.append(st.sampled_from(_in_scope(scope, "nat")).map(lambda v: (v, lambda env, v=v: env[v])))
    if depth > 0:
        def add(t):
            (a, fa), (b, fb) = t
            return f"(nat-add {a} {b})", lambda env: fa(env) + fb(env)

        def total(t):
            (items, fi), (h, tail, below) = t
            inner = (*scope, (h, "nat"), (tail, "list"), (below, "nat"))
            return _family_naturals(depth - 1, inner).map(lambda body: (
                f"(eliminate List {_TO_NAT} {items} (branch ListEmpty . 0) "
                f"(branch ListCons {h} {tail} {below} . {body[0]}))",
                lambda env: _fold(fi(env), 0, lambda hv, tv, bv: body[1]({**env, h: hv, tail: tv, below: bv}))))

        def pair(t):
            (a, fa), (b, fb), (n1, n2), as_record = t
            value = (f"(record Pair (second = {b}) (first = {a}))" if as_record
                     else f"(constructor Pair PairMake Nat {a} {b})")
            return _family_naturals(depth - 1, (*scope, (n1, "nat"), (n2, "nat"))).map(lambda body: (
                f"(eliminate Pair (lambda unrestricted p : (family Pair Nat) . Nat) "
                f"(the (family Pair Nat) {value}) (branch PairMake {n1} {n2} . {body[0]}))",
                lambda env: body[1]({**env, n1: fa(env), n2: fb(env)})))

        inner = _family_naturals(depth - 1, scope)
        if "nat-add" not in dict(scope):
            options.append(st.tuples(inner, inner).map(add))
        options.append(st.tuples(_lists(depth - 1, scope), _three()).flatmap(total))
        options.append(st.tuples(inner, inner, st.lists(st.sampled_from(_POOL), min_size=2, max_size=2,
                                                        unique=True), st.booleans()).flatmap(pair))
    return st.one_of(options)


def _literal_list(items):
    text = "(constructor List ListEmpty)"
    for item in reversed(items):
        text = f"(constructor List ListCons {item} {text})"
    return text


def _lists(depth, scope):
    options = [st.lists(st.integers(0, 9), max_size=4).map(
        lambda items: (_literal_list(items), lambda env, items=items: list(items)))]
    if _in_scope(scope, "list"):
        options.append(st.sampled_from(_in_scope(scope, "list")).map(lambda v: (v, lambda env, v=v: env[v])))
    if depth > 0:
        def mapped(t):
            (items, fi), (h, tail, below) = t
            inner = (*scope, (h, "nat"), (tail, "list"), (below, "list"))
            return _family_naturals(depth - 1, inner).map(lambda body: (
                f"(eliminate List {_TO_LIST} {items} (branch ListEmpty . (constructor List ListEmpty)) "
                f"(branch ListCons {h} {tail} {below} . (constructor List ListCons {body[0]} {below})))",
                lambda env: _fold(fi(env), [], lambda hv, tv, bv: [body[1]({**env, h: hv, tail: tv, below: bv})] + bv)))

        def appended(t):
            (a, fa), (b, fb), (h, tail, below) = t
            return (f"(eliminate List {_TO_LIST} {a} (branch ListEmpty . {b}) "
                    f"(branch ListCons {h} {tail} {below} . (constructor List ListCons {h} {below})))",
                    lambda env: fa(env) + fb(env))

        options.append(st.tuples(_lists(depth - 1, scope), _three()).flatmap(mapped))
        options.append(st.tuples(_lists(depth - 1, scope), _lists(depth - 1, scope), _three()).map(appended))
    return st.one_of(options)


@PROPERTY
@given(_family_naturals(3, ()), st.permutations([0, 1, 2]))
def test_eliminate_over_families_computes_as_python_lists_do(files, expression, order):
    """Also in any order of the declarations: a definition may use a family declared after it."""
    text, value = expression
    declarations = [*_FAMILIES, f"def d : Nat = {text}\n"]
    program = files.program("".join(declarations[i] for i in order), "L")
    program.check()
    assert program.value("d").value == value({}), text


# ---- property 5: byte strings against Python bytes; printed, they read back -----------------

def _byte_strings(depth):
    leaf = st.binary(max_size=8).map(lambda b: (s.show_bytes(b), b))
    if depth == 0:
        return leaf
    inner, count = _byte_strings(depth - 1), st.integers(0, 12) | st.just(2 ** 70)
    # docs/language.md: slices clamp to the string, bytes-from-nat-le is n mod 256^width
    return st.one_of(
        leaf,
        st.tuples(inner, inner).map(lambda t: (f"(bytes-append {t[0][0]} {t[1][0]})", t[0][1] + t[1][1])),
        st.tuples(inner, count, count).map(
            lambda t: (f"(bytes-slice {t[0][0]} {t[1]} {t[2]})", t[0][1][t[1]:t[1] + t[2]])),
        st.tuples(st.integers(0, 2 ** 80), st.integers(0, 12)).map(
            lambda t: (f"(bytes-from-nat-le {t[0]} {t[1]})", (t[0] % 256 ** t[1]).to_bytes(t[1], "little"))))


@PROPERTY
@given(_byte_strings(3), st.integers(0, 12) | st.just(2 ** 70))
def test_byte_strings_compute_and_print_as_python_bytes(files, expression, index):
    text, value = expression
    program = files.program(f"def b : Bytes = {text}\ndef n : Nat = (bytes-at {text} {index})\n"
                            f"def m : Nat = (bytes-to-nat-le {text})\n", "B")
    program.check()
    assert program.value("b").value == value
    assert program.value("n").value == (value[index] if index < len(value) else 0)
    assert program.value("m").value == int.from_bytes(value, "little")
    shown = format_value(program.value("b"))
    if shown.startswith('b"'):
        assert files.program(f"def b : Bytes = {shown}\n", "B").value("b").value == value
    else:
        assert shown == f'x"{value.hex()}" ({len(value)} byte{"" if len(value) == 1 else "s"})'


# ---- property 6: no input ends in a traceback; every refusal has its place -------------------

_TOKENS = ["(", ")", "(", ")", ".", ":", "=", "lambda", "pi", "let", "in", "app", "family", "constructor",
           "record", "eliminate", "branch", "nat-eliminate", "succ", "equal", "refl", "the", "Type", "0",
           "1", "unrestricted", "Nat", "Bytes", "zero", "\ndef", "end-family", "\nconstructor", "\nfield",
           "import", "nat-add", "x", "y", "F", "C", "0xff", "99999999999999999999999", 'b"a"', "--", "\n",
           "compiler-native-encode", "bytes-slice", "\nfamily", "A.B"]
_STARTS = ["module M\ndef ", "module M\nfamily ", "module M\n", "module M\ndef x : Nat = ",
           "module M\nfamily F : Type 0\nconstructor C\nfield unrestricted x : "]


@settings(PROPERTY, max_examples=400)
@given(st.sampled_from(_STARTS), st.lists(st.sampled_from(_TOKENS), max_size=40))
def test_random_tokens_are_refused_at_a_place(tmp_path_factory, start, tokens):
    path = tmp_path_factory.mktemp("tokens") / "M.bob"
    path.write_text(start + " ".join(tokens) + "\n", encoding="utf-8")
    try:
        program = load_program(path, target=SM86)
        program.check()
    except BobcError as error:              # a parse, scope or type error: at its place
        assert error.span is not None, str(error)
        return
    if "\ndef x " in f"\n{start}{' '.join(tokens)}":
        program.value("x")                  # well typed: evaluates (docs/language.md, totality)


# ---- finding 3: a power past the size limit by a huge exponent -----------------------------

def test_a_huge_power_says_its_bound_once(files):
    """3 ^ 10^30 has at least 10^30 + 1 bits, a count past 64 bits, which the message writes as
    the bound "more than 2^99" (10^30 + 1 < 2^100): the message said "at least more than 2^99"."""
    from bobc.language.limits import LimitExceeded

    program = files.program("def n : Nat = (nat-power 3 (nat-power 10 30))\n", "Power")
    with pytest.raises(LimitExceeded) as caught:
        program.value("n")
    assert "computes a natural of more than 2^99 bits" in str(caught.value)
    assert "at least more than" not in str(caught.value)
