"""Read-back: values -> core terms, and core terms -> the language's text.

The type checker prints types the way a plan author writes them: a value is
read back into a term (functions applied to fresh variables, neutral
computations rebuilt) and the term is printed in s-expression syntax.
"""
from __future__ import annotations

from . import core as c
from .syntax import FORM_HEADS, show_bytes
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


class Elided(c.Term):
    """What a bounded read-back left out (printed `...`): only error messages make these."""

    __slots__ = ()

    def __init__(self):
        self.span = None


ELIDED = Elided()


class _Quoter:
    """One read-back.  Values share structure (`(nat-add b b)` holds one `b` twice; a chain of
    n such is a DAG of n nodes and a tree of 2^n), so a value already read back at one level
    gives the same term again (the term is a DAG too).  A full read-back (`nodes` None) counts
    each node it builds as an evaluation step, so it is bounded by the step limit; a read-back
    for a message stops after `nodes` nodes (and below `depth` nested forms, binder bodies not
    counted) and puts ELIDED in place of the rest, so printing a value never needs the whole
    of it."""

    __slots__ = ("memo", "nodes", "depth", "by_name")

    def __init__(self, nodes=None, depth=None, by_name=False):
        self.memo: dict = {}        # (id(value), level) -> (term, value): the value kept alive
        self.nodes = nodes
        self.depth = depth
        self.by_name = by_name      # a definition applied and stuck reads back as `(T n)`

    def out(self, depth: int) -> bool:
        """Whether a read-back for a message leaves out what is at `depth` (nothing is forced
        or evaluated for what it leaves out)."""
        return self.nodes is not None and (self.nodes <= 0 or
                                           (self.depth is not None and depth > self.depth))

    def quote(self, level: int, value, depth: int = 0) -> c.Term:
        if self.nodes is None:
            value = force(value)
            key = (id(value), level)
            found = self.memo.get(key)
            if found is not None:
                return found[0]
            fuel = c._fuel
            fuel[0] -= 1
            if fuel[0] < 0:
                c._burn(0, None)
            term = self._quote(level, value, depth)
            self.memo[key] = (term, value)
            return term
        if self.out(depth):
            return ELIDED
        self.nodes -= 1
        return self._quote(level, force(value), depth)

    def _quote(self, level: int, value, depth: int) -> c.Term:
        quote = self.quote
        inner = depth + 1
        kind = type(value)
        if kind is VNat:
            return c.NatLit(None, value.value)
        if kind is VBytes:
            return c.BytesLit(None, value.value)
        if kind in (VType, VNatType, VBytesType):
            return c.Constant(None, value)
        if kind is VPi:
            term = value.term
            if self.out(depth + 1):         # the rest of the budget is spent: no body evaluated
                return c.Pi(None, term.multiplicity, term.name, ELIDED, ELIDED)
            body = instantiate(term, value.env, fresh(level, term.name))
            return c.Pi(None, term.multiplicity, term.name, quote(level, value.domain, inner),
                        quote(level + 1, body, depth))
        if kind is VLam:
            term = value.term
            if self.out(depth + 1):
                return c.Lam(None, term.multiplicity, term.name, ELIDED, ELIDED)
            domain = term.domain.ev(value.env)
            body = instantiate(term, value.env, fresh(level, term.name))
            return c.Lam(None, term.multiplicity, term.name, quote(level, domain, inner),
                         quote(level + 1, body, depth))
        if kind is VPrimFn:
            head = c.Prim(None, value.primitive)
            if not value.args:
                return head
            return c.App(None, head, [quote(level, a, inner) for a in value.args])
        if kind is VFamily:
            return c.FamilyT(None, value.declaration,
                             [quote(level, p, inner) for p in value.params])
        if kind is VCon:
            return c.Con(None, value.declaration, value.ctor,
                         [quote(level, p, inner) for p in value.params],
                         [quote(level, f, inner) for f in value.fields])
        if kind is VEqual:
            return c.EqualT(None, quote(level, value.type, inner), quote(level, value.left, inner),
                            quote(level, value.right, inner))
        if kind is VRefl:
            return c.ReflT(None, quote(level, value.type, inner), quote(level, value.value, inner))
        if kind is VNeutral:
            return self._neutral(level, value, depth)
        raise TypeError(f"cannot read back {value!r}")

    def _neutral(self, level: int, value: VNeutral, depth: int) -> c.Term:
        quote = self.quote
        if self.by_name and value.named is not None:
            definition, arguments = value.named
            return c.App(None, c.Global(None, definition),
                         [quote(level, a, depth + 1) for a in arguments])
        head = value.head
        spine = value.spine
        # the spine's frames wrap the head: the head is nested once per frame but an argument
        inner = depth + 1 + sum(1 for frame in spine if frame[0] != "app")
        if isinstance(head, HVar):
            term = c.Local(None, level - head.level - 1, head.name)
        else:
            term = c.App(None, c.Prim(None, head.primitive),
                         [quote(level, a, inner) for a in head.args])
        arguments = []            # an application's arguments, gathered into one App
        for frame in spine:
            tag = frame[0]
            if tag == "app":
                arguments.append(quote(level, frame[1], inner))
                continue
            if arguments:
                term = _applied(term, arguments)
                arguments = []
            inner -= 1
            if tag == "succ":
                term = c.Succ(None, term)
            elif self.out(inner + 1):
                term = c.NatElim(None, ELIDED, ELIDED, ELIDED, term) if tag == "natelim" else \
                    c.Elim(None, frame[1].declaration, ELIDED, term, [])
            elif tag == "elim":
                term = self._elim(level, frame[1], frame[2], term, inner)
            elif tag == "natelim":
                nat, env = frame[1], frame[2]
                term = c.NatElim(None, quote(level, nat.motive.ev(env), inner),
                                 quote(level, nat.base.ev(env), inner),
                                 quote(level, nat.step.ev(env), inner), term)
        if arguments:
            term = _applied(term, arguments)
        return term

    def _elim(self, level, elim, env, scrutinee, depth):
        branches = []
        for branch in elim.branches:
            if self.out(depth + 1):
                branches.append(c.ElimBranch(branch.ctor, (), ELIDED, None))
                continue
            local = env
            inner = level
            for name in branch.binders:
                local = (fresh(inner, name), local)
                inner += 1
            body = self.quote(inner, branch.body.ev(local), depth + 1)
            branches.append(c.ElimBranch(branch.ctor, branch.binders, body, None))
        return c.Elim(None, elim.declaration, self.quote(level, elim.motive.ev(env), depth),
                      scrutinee, branches)


def _applied(term, arguments):
    if isinstance(term, c.App):
        return c.App(None, term.function, [*term.arguments, *arguments])
    return c.App(None, term, arguments)


def quote(level: int, value) -> c.Term:
    """A term that evaluates back to `value` under `level` bound variables (a DAG where the
    value shares structure; each node counts as an evaluation step)."""
    return _Quoter().quote(level, value)


def quote_shown(level: int, value, nodes: int, depth: int | None = None,
                by_name: bool = False) -> c.Term:
    """`value` read back for a message: at most `nodes` nodes and `depth` nested forms (binder
    bodies not counted), ELIDED for the rest; nothing past them is read back.  `by_name`: a
    definition applied to its arguments and stuck on a variable reads back as that application
    (`(T n)`), not as T's body unfolded."""
    return _Quoter(nodes, depth, by_name).quote(level, value)


# ---- printing core terms ----------------------------------------------------
#
# A term in a message is cut to a readable size (docs/limits.md): forms nested deeper than
# SHOWN_DEPTH (binder bodies not counted) and everything after SHOWN_WIDTH characters print as
# `...`, a natural of more than SHOWN_DIGITS digits as its first digits and its length, a byte
# string of more than SHOWN_BYTES bytes as its first bytes and its length.  The value is read
# back only as far as is printed (quote_shown).

SHOWN_WIDTH = 300
SHOWN_DEPTH = 12
SHOWN_DIGITS = 40
SHOWN_BYTES = 32
SHOWN_TEXT_BYTES = 4096          # a byte string of printable text (a plan's message): shown whole up to this
# `bobc eval --type` prints a type whole, up to this many characters
PRINTED_TYPE_WIDTH = 1 << 16


def _text(data: bytes) -> bool:
    """Printable ASCII text (tab and newline allowed): what a plan writes as a message."""
    return all(0x20 <= b < 0x7F or b in (0x09, 0x0A) for b in data)


def show_natural(value: int, digits: int = SHOWN_DIGITS) -> str:
    """A natural in decimal; past `digits` digits, its first digits and how many it has."""
    if value.bit_length() > digits * 3:         # only then can it have more digits
        text = str(value)
        if len(text) > digits:
            return f"{text[:min(digits, SHOWN_DIGITS) // 2]}...({len(text):,} digits)"
        return text
    return str(value)


def show_bytes_cut(value: bytes, length: int = SHOWN_BYTES) -> str:
    """A byte-string literal; past `length` bytes, its first bytes and its length.  Text of at
    most SHOWN_TEXT_BYTES printable bytes is shown whole: it is what a plan says (a refusal a
    failed proof's side carries, the reason a shape is not served), which a cut would lose."""
    if len(value) > length and not (len(value) <= SHOWN_TEXT_BYTES and _text(value)):
        return f"{show_bytes(value[:min(length, SHOWN_BYTES) // 2])}...({len(value):,} bytes)"
    return show_bytes(value)


def _constant(value, width: int | None = None) -> str:
    """A literal or a constant type; a literal longer than a message shows (`width` None)
    or than `width` characters is cut."""
    if isinstance(value, VNat):
        return show_natural(value.value, SHOWN_DIGITS if width is None else width)
    if isinstance(value, VBytes):
        return show_bytes_cut(value.value, SHOWN_BYTES if width is None else width // 4)
    if isinstance(value, VType):
        return f"Type {show_natural(value.level, SHOWN_DIGITS if width is None else width)}"
    if value is NAT_TYPE:
        return "Nat"
    if value is BYTES_TYPE:
        return "Bytes"
    return repr(value)


class _Printer:
    """A core term as text, in at most about `width` characters: past them, `...`."""

    __slots__ = ("out", "left", "literals", "scope", "root", "free")

    def __init__(self, width, names=None):
        self.out: list = []
        self.left = width
        # the names of the variables in scope as printed, outermost first: the context's
        # (`names`, else each free variable prints as written), then the binders printed around
        # the term at hand
        self.scope = list(names) if names is not None else []
        self.root = None        # the term printed (show_term)
        self.free = None        # the names of the definitions, primitives, built-in types in it
        # literals past what a message shows are cut in a message, past the width otherwise
        self.literals = None if width is not None and width <= SHOWN_WIDTH else (width or 1 << 62)

    def text(self, piece: str) -> None:
        self.out.append(piece)
        if self.left is not None:
            self.left -= len(piece)

    def spent(self) -> bool:
        return self.left is not None and self.left <= 0

    def seq(self, terms) -> None:
        """` a b c`, each a term; after the width, one ` ...` for the rest."""
        for item in terms:
            self.text(" ")
            if self.spent():
                self.text("...")
                return
            self.term(item)

    def bound(self, names, body) -> None:
        """`body`, under binders named `names` (as printed: see binder_names)."""
        self.scope.extend(names)
        try:
            self.term(body)
        finally:
            del self.scope[len(self.scope) - len(names):]

    def binder_names(self, names, body) -> list:
        """The names to print for binders named `names` over `body`: each as written, unless the
        body names a variable of the scope printed so, or a definition or primitive so (a type
        read back after a substitution: `(pi A : Type 0 . (pi x : B . A))` with the outer A for
        B); that binder then prints with `'` added until its name is free, so the text printed
        reads back as the same term."""
        shown = list(names)
        if self.free is None:
            self.free = _free_names(self.root)
        for position, name in enumerate(names):
            if name not in self.free and name not in self.scope and name not in shown[:position]:
                continue            # nothing the body could mean by it (the common case: no walk)
            # the variables the body could mean by `name`: the scope's, the earlier binders'
            if not _names(body, name, [len(self.scope) - 1 - k + len(names)
                                       for k, bound in enumerate(self.scope) if bound == name]
                          + [len(names) - 1 - k for k in range(position)
                             if shown[k] == name]):
                continue
            taken = set(self.scope) | set(shown)
            while name in taken or _names(body, name, []):
                name += "'"
            shown[position] = name
        return shown

    def term(self, term) -> None:
        if self.spent():
            self.text("...")
            return
        text, kind = self.text, type(term)
        if kind is Elided:
            text("...")
        elif kind is c.Local:
            scope = self.scope
            text(scope[-1 - term.index] if 0 <= term.index < len(scope) else term.name)
        elif kind is c.Global:
            text(term.definition.name)
        elif kind is c.Prim:
            text(term.primitive.name)
        elif kind is c.Constant:
            text(_constant(term.value, self.literals))
        elif kind is c.Lam or kind is c.Pi:
            names = self.binder_names([term.name], term.body)
            text(f"({'lambda' if kind is c.Lam else 'pi'} {term.multiplicity} {names[0]} : ")
            self.term(term.domain)
            text(" . ")
            self.bound(names, term.body)
            text(")")
        elif kind is c.Let:
            names = self.binder_names([term.name], term.body)
            text(f"(let {term.multiplicity} {names[0]}")
            if term.type is not None:
                text(" : ")
                self.term(term.type)
            text(" = ")
            self.term(term.value)
            text(" in ")
            self.bound(names, term.body)
            text(")")
        elif kind is c.App:
            text("(")
            head, scope = term.function, self.scope
            if type(head) is c.Local:
                name = scope[-1 - head.index] if 0 <= head.index < len(scope) else head.name
            else:
                name = head.definition.name if type(head) is c.Global else None
            if name in FORM_HEADS:
                text("app ")        # `(succ 3)` would read back as the form (syntax.FORM_HEADS)
            self.term(term.function)
            self.seq(term.arguments)
            text(")")
        elif isinstance(term, c.PrimCall):
            text("(" + term.primitive.name)
            self.seq(term.arguments)
            text(")")
        elif kind is c.FamilyT:
            text("(family " + term.declaration.name)
            self.seq(term.arguments)
            text(")")
        elif kind in (c.Con, c.Record):
            if len(term.params) != len(term.declaration.parameters):
                # a record's value, whose parameters came from its type, not from the form:
                # a constructor form without them would not read back
                text(f"(record {term.declaration.name}")
                for field, value in zip(term.ctor.fields, term.fields):
                    text(f" ({field.name} = ")
                    if self.spent():
                        text("...)")
                        break
                    self.term(value)
                    text(")")
                text(")")
                return
            text(f"(constructor {term.declaration.name} {term.ctor.name}")
            self.seq([*term.params, *term.fields])
            text(")")
        elif kind is c.Elim:
            text("(eliminate " + term.declaration.name)
            self.seq([term.motive, term.scrutinee, *term.branches])
            text(")")
        elif kind is c.ElimBranch:
            names = self.binder_names(list(term.binders), term.body)
            text("(branch " + " ".join([term.ctor.name, *names]) + " . ")
            self.bound(names, term.body)
            text(")")
        elif kind is c.NatElim:
            text("(nat-eliminate")
            self.seq([term.motive, term.base, term.step, term.target])
            text(")")
        elif kind is c.Succ:
            text("(succ")
            self.seq([term.predecessor])
            text(")")
        elif kind is c.EqualT:
            text("(equal")
            self.seq([term.type, term.left, term.right])
            text(")")
        elif kind is c.ReflT:
            text("(refl")
            self.seq([term.type, term.value])
            text(")")
        elif kind is c.Encode:
            text("(compiler-native-encode")
            self.seq([term.type, term.value])
            text(")")
        elif kind is c.The:
            text("(the")
            self.seq([term.type, term.expression])
            text(")")
        else:
            text(f"<{kind.__name__}>")


def _free_names(term) -> set:
    """The names of the definitions, primitives and built-in types a term mentions."""
    found = set()
    stack, seen = [term], set()
    while stack:
        item = stack.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        kind = type(item)
        if kind is c.Global:
            found.add(item.definition.name)
        elif kind is c.Constant:
            if item.value is NAT_TYPE:
                found.add("Nat")
            elif item.value is BYTES_TYPE:
                found.add("Bytes")
        elif kind is c.ElimBranch:
            stack.append(item.body)
        else:
            if kind is c.Prim or isinstance(item, c.PrimCall):
                found.add(item.primitive.name)
            for klass in kind.__mro__:
                for slot in getattr(klass, "__slots__", ()):
                    if slot in ("span", "declaration", "ctor", "program", "definition", "written",
                                "induction", "defines"):
                        continue
                    child = getattr(item, slot, None)
                    if isinstance(child, c.Term):
                        stack.append(child)
                    elif isinstance(child, list):
                        stack.extend(x for x in child
                                     if isinstance(x, (c.Term, c.ElimBranch)))
    return found


def _names(term, name: str, indices) -> bool:
    """Whether `term` names a variable whose de Bruijn index (seen from `term`) is in `indices`,
    or a definition, primitive or built-in type called `name` (a variable bound inside `term` is
    not one of these).  A DAG is walked once per binder depth."""
    wanted = set(indices)
    stack = [(term, 0)]
    seen = set()
    while stack:
        item, depth = stack.pop()
        if item is None or (id(item), depth) in seen:
            continue
        seen.add((id(item), depth))
        kind = type(item)
        if kind is c.Local:
            if item.index - depth in wanted:
                return True
        elif kind is c.Global:
            if item.definition.name == name:
                return True
        elif kind is c.Constant:
            if (item.value is NAT_TYPE and name == "Nat") or (item.value is BYTES_TYPE
                                                                and name == "Bytes"):
                return True
        elif kind is c.Prim or isinstance(item, c.PrimCall):
            if item.primitive.name == name:
                return True
            stack.extend((a, depth) for a in getattr(item, "arguments", ()))
        elif kind is c.Lam or kind is c.Pi:
            stack += [(item.domain, depth), (item.body, depth + 1)]
        elif kind is c.Let:
            stack += [(item.type, depth), (item.value, depth), (item.body, depth + 1)]
        elif kind is c.ElimBranch:
            stack.append((item.body, depth + len(item.binders)))
        elif kind is c.Elim:
            stack += [(item.motive, depth), (item.scrutinee, depth)]
            stack += [(b, depth) for b in item.branches]
        else:
            for klass in kind.__mro__:
                for slot in getattr(klass, "__slots__", ()):
                    if slot in ("span", "declaration", "ctor", "program", "definition", "written"):
                        continue
                    child = getattr(item, slot, None)
                    if isinstance(child, c.Term):
                        stack.append((child, depth))
                    elif isinstance(child, list):
                        stack.extend((x, depth) for x in child if isinstance(x, c.Term))
    return False


def show_term(term: c.Term, width: int | None = PRINTED_TYPE_WIDTH, names=None) -> str:
    """A core term in the language's syntax (one line), cut to about `width` characters
    (None: whole, literals too; a message passes SHOWN_WIDTH).  `names`: what to call the
    variables of the context the term is in, outermost first (shown_names)."""
    printer = _Printer(width, names)
    printer.root = term
    printer.term(term)
    return "".join(printer.out)


def show_value(value, level: int = 0, width: int | None = PRINTED_TYPE_WIDTH,
               depth: int | None = None, by_name: bool = False) -> str:
    """A value (a type, usually) in the language's syntax, read back only as far as it is
    printed: whole up to `width` characters (a message passes SHOWN_WIDTH and SHOWN_DEPTH:
    shown_value); `by_name`: as quote_shown."""
    nodes = width if width is not None else PRINTED_TYPE_WIDTH
    return show_term(quote_shown(level, value, nodes, depth, by_name), width)


def shown_names(names) -> list:
    """The context's variable names as a message prints them: a name bound more than once is
    the innermost binder's; each outer one is `name@k`, k the binders of that name inside it
    (`A@1` is the A the innermost A shadows), so two variables never print alike and every
    term of one message calls each the same."""
    shown, inner = [], {}
    for name in reversed(names):
        count = inner.get(name, 0)
        shown.append(f"{name}@{count}" if count else name)
        inner[name] = count + 1
    return shown[::-1]


def shown_value(value, level: int = 0, names=None, by_name: bool = True) -> str:
    """A value as a message shows it: cut to SHOWN_WIDTH characters and SHOWN_DEPTH forms;
    `names` (shown_names) for the context's variables; a stuck application of a definition by
    its name (`(T n)`) unless `by_name` is False (a failed proof's sides show what they
    computed)."""
    return show_term(quote_shown(level, value, SHOWN_WIDTH, SHOWN_DEPTH, by_name), SHOWN_WIDTH,
                     names)


def shown_term(term: c.Term) -> str:
    """A term as a message shows it: cut to SHOWN_WIDTH characters."""
    return show_term(term, SHOWN_WIDTH)
