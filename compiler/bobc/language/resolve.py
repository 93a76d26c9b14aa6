"""Names -> references: surface syntax to core terms, with scope errors.

What a module sees: its own definitions and families, and those of the
modules it imports directly.  Imports are not re-exported: a module that
needs a name from a module further down imports that module itself, even
when a module it imports imports that one too.  Two different
definitions of one name visible in one module are an error that names both.

Inside expressions, a name is looked up among the enclosing binders first,
then the visible definitions, then the built-ins (Nat, Bytes, zero and the
primitives).  Families, constructors and fields have their own namespaces:
`(family F)`, `(constructor F C ...)`, `(record F (f = ...))`.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import BobcError, Span
from ..resources import doc
from . import core as c
from . import syntax as s
from .primitives import PRIMITIVES

# the names the language itself gives a meaning to (besides PRIMITIVES), for did-you-mean
BUILT_IN_NAMES = ("Nat", "Bytes", "zero", "Type")


class ScopeError(BobcError):
    """A name that is unknown, ambiguous, or used with the wrong shape."""


class DeclarationError(BobcError):
    """A family declaration that is not well formed (e.g. not strictly positive)."""


class ModuleScope:
    def __init__(self, module: s.Module):
        self.module = module
        self.name = module.name
        self.definitions: dict[str, c.Definition] = {}
        self.families: dict[str, c.FamilyDeclaration] = {}
        self.visible_definitions: dict[str, c.Definition] = {}
        self.visible_families: dict[str, c.FamilyDeclaration] = {}


def _where(thing) -> str:
    return f"{thing.module} ({thing.span})"


def _shown(name: str) -> str:
    """A name as a refusal shows it: a long one cut to its beginning and its length
    (suggest.shown_name; probe s43 fuzz finding F1)."""
    from .suggest import shown_name

    return shown_name(name)


def declare(module: s.Module) -> ModuleScope:
    """Create the (empty) declarations of one module, refusing duplicates within it."""
    scope = ModuleScope(module)
    for declaration in module.declarations:
        if isinstance(declaration, s.Definition):
            table, made = scope.definitions, c.Definition(module.name, declaration.name,
                                                            declaration.span, declaration)
        else:
            table, made = scope.families, c.FamilyDeclaration(module.name, declaration.name,
                                                                declaration.span, declaration)
        previous = table.get(declaration.name)
        if previous is not None:
            kind = "definition" if isinstance(declaration, s.Definition) else "family"
            raise ScopeError(f"{kind} {_shown(declaration.name)} is declared twice in {module.name} "
                             f"(first at {previous.span})", declaration.span,
                             hint="rename one of them")
        table[declaration.name] = made
    return scope


def link_visibility(scope: ModuleScope, scopes: dict[str, ModuleScope]):
    """Fill a module's visible names from itself and its direct imports."""
    for kind, own, visible in (("definition", "definitions", "visible_definitions"),
                               ("family", "families", "visible_families")):
        table = getattr(scope, visible)
        table.update(getattr(scope, own))
        for imported in scope.module.imports:
            for name, thing in getattr(scopes[imported.module], own).items():
                previous = table.get(name)
                if previous is None:
                    table[name] = thing
                elif previous is not thing:
                    if previous.module == scope.name:
                        span, hint = previous.span, "rename the local one"
                    else:
                        span, hint = imported.span, "rename one of them in its module"
                    raise ScopeError(
                        f"{kind} {_shown(name)} is defined twice among the modules {scope.name} sees: "
                        f"in {_where(previous)} and in {_where(thing)}", span, hint=hint)


# a built-in type written where a family's name goes ((eliminate Nat ...), (family Bytes)), and
# no family of that name visible: what the language writes instead (probe s46 plantexts2)
_BUILT_IN_TYPES = {
    "Nat": "write Nat alone as the type (not (family Nat)); a natural is a literal or (succ n), "
           "and recursion on one is (nat-eliminate motive base step n)",
    "Bytes": 'write Bytes alone as the type (not (family Bytes)); a byte string is a literal b"..." '
             "or what the bytes- primitives compute (bytes-append, bytes-slice, ...)",
}


class Resolver:
    """Turns one module's surface expressions into core terms."""

    def __init__(self, scope: ModuleScope, program):
        self.scope = scope
        self.program = program

    # ---- errors
    def _unknown(self, what: str, name: str, span: Span, table_name: str, names=()):
        """`names`: the local names in scope (lambda, pi, let and branch binders).  A long name
        is shown shortened (suggest.shown_name), so the error stays a few lines."""
        from .suggest import shown_name

        shown = shown_name(name)
        if table_name == "definitions":
            field = self._field_hint(name)
            if field is not None:
                return ScopeError(f"unknown name {shown}: it is a field, not a definition", span,
                                  hint=field)
            from .parse import not_a_form_hint

            form = not_a_form_hint(name)
            if form is not None and self._heads_a_form(span):
                return ScopeError(f"unknown {what} {shown}", span, hint=form)
        if table_name == "families" and name in _BUILT_IN_TYPES:
            return ScopeError(f"{name} is a built-in type, not a family", span,
                              hint=_BUILT_IN_TYPES[name])
        elsewhere = self.program.modules_defining(name, table_name)
        seen = [self.scope.name, *(i.module for i in self.scope.module.imports)]
        hint = f"{self.scope.name} sees its own and its imports' names (modules searched: " \
               f"{', '.join(seen)})"
        if elsewhere:
            hint += f"; {shown} is defined in {', '.join(elsewhere)}: import it"
        else:
            from .suggest import closest, modules_declaring

            # a module on the search path declaring the very name (an import left out) says more
            # than a visible name spelled like it (probe s41 messages6: a plan without
            # `import LinReg.Model` was offered checkpointEnvelopePayloadBytesOf)
            keyword = "family" if table_name == "families" else "def"
            found = modules_declaring(name, getattr(self.program, "search_path", ()), keyword)
            brought = self._bringers_hint(name, found)
            if brought:
                hint = f"{brought[2:]}; {hint}"
            else:
                candidates = list(getattr(self.scope, "visible_" + table_name))
                if table_name == "definitions":
                    candidates = [*reversed(names), *candidates, *BUILT_IN_NAMES, *PRIMITIVES]
                close = closest(name, candidates)
                if close:
                    hint = f"did you mean {' or '.join(close)}? " + hint
                if table_name == "definitions":
                    hint = (self._hyphen_hint(name, [*names, *candidates]) or "") + hint
        return ScopeError(f"unknown {what} {shown}", span, hint=hint)

    @staticmethod
    def _hyphen_hint(name: str, visible) -> str | None:
        """`x-1` or `a-b` where x (a) is a name in scope and 1 (b) a natural or a name in scope: a
        name may hold '-' between its parts (grammar.lark's NAME: nat-add), so this is one unknown
        name, not a subtraction (probe s43 fuzz finding F5)."""
        if "-" not in name:
            return None
        seen = set(visible)
        for at in range(name.find("-"), len(name)):
            if name[at] != "-":
                continue
            left, right = name[:at], name[at + 1:]
            if left in seen and (right.isdigit() or right in seen):
                return (f"{name} is one name (a name may hold '-' between its parts, as nat-add "
                        f"does), not {left} minus {right}: to subtract, write (nat-subtract {left} "
                        f"{right}), which gives 0 when {right} > {left}; ")
        return None

    def _heads_a_form(self, span: Span) -> bool:
        """Whether the name at `span` comes right after a '(' (blanks between) in its module's
        text: the head of a parenthesised form, `(if c a b)` or `(match)`."""
        source = getattr(self.scope.module, "source", "") or ""
        if span is None or not source:
            return False
        lines = source.split("\n")
        if not 1 <= span.line <= len(lines):
            return False
        offset = sum(len(line) + 1 for line in lines[:span.line - 1]) + span.column - 1
        before = source[:offset].rstrip()
        return before.endswith("(")

    def _field_hint(self, name: str):
        """How to read `name` when it is a field of a visible family's constructor (the language
        has no projections: a field is read with eliminate), or None."""
        for family in self.scope.visible_families.values():
            for ctor in family.constructors:
                if name in ctor.field_names:
                    inductions = [f"{ctor.fields[i].name}Induction" for i in ctor.recursive]
                    others = [] if len(family.constructors) == 1 else [
                        f" (branch {x.name} ... . ...)" for x in family.constructors
                        if x is not ctor]
                    binders = " ".join([*ctor.field_names, *inductions])
                    return (f"{name} is a field of {ctor.name} of family {family.name}; a field "
                            f"is read with eliminate: (eliminate {family.name} motive value "
                            f"(branch {ctor.name} {binders} . {name}){''.join(others)})")
        return None

    def _bringers_hint(self, name: str, found) -> str:
        """Where on the search path `name` is declared: an import that would bring it, or the
        module file that shadows it (its module is loaded, from a file earlier on the path)."""
        loaded = getattr(self.program, "modules", {})
        shadowed = [(m, p) for m, p in found if m in loaded
                    and Path(loaded[m].path).resolve() != p.resolve()]
        if shadowed:
            module, path = shadowed[0]
            return (f"; {name} is defined in {path}, but the module {module} that was loaded is "
                    f"{loaded[module].path}, which comes first on the search path (the plan's "
                    f"root, -I folders, specs/) and shadows it: rename or remove that file")
        bringers = [m for m in dict.fromkeys(m for m, _ in found) if m not in loaded]
        if not bringers:
            return ""
        shown = bringers[:3]
        listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
        more = f" (and {len(bringers) - 3} more)" if len(bringers) > 3 else ""
        return f"; {name} is defined in {listed}{more}: `import {bringers[0]}` would bring it"

    def family(self, name: str, span: Span) -> c.FamilyDeclaration:
        found = self.scope.visible_families.get(name)
        if found is None:
            raise self._unknown("family", name, span, "families")
        return found

    @staticmethod
    def constructor(family: c.FamilyDeclaration, name: str, span: Span):
        found = family.by_name.get(name)
        if found is None:
            names = ", ".join(_shown(x.name) for x in family.constructors) or "none"
            raise ScopeError(f"family {_shown(family.name)} has no constructor {_shown(name)}", span,
                             hint=f"its constructors: {names}")
        return found

    # ---- expressions
    def term(self, node: s.Node, names: list) -> c.Term:
        method = getattr(self, "_" + type(node).__name__)
        return method(node, names)

    def _Variable(self, node: s.Variable, names):
        name = node.name
        for position in range(len(names) - 1, -1, -1):
            if names[position] == name:
                return c.Local(node.span, len(names) - 1 - position, name)
        definition = self.scope.visible_definitions.get(name)
        if definition is not None:
            return c.Global(node.span, definition)
        if name == "Nat":
            return c.NatT(node.span)
        if name == "Bytes":
            return c.BytesT(node.span)
        if name == "zero":
            return c.NatLit(node.span, 0)
        primitive = PRIMITIVES.get(name)
        if primitive is not None:
            return c.Prim(node.span, primitive)
        if self.scope.visible_families.get(name) is not None:
            raise ScopeError(f"{name} is a family, not a value", node.span,
                             hint=f"write its type as (family {name} ...)")
        raise self._unknown("name", name, node.span, "definitions", names)

    def _Natural(self, node, names):
        return c.NatLit(node.span, node.value)

    def _ByteString(self, node, names):
        return c.BytesLit(node.span, node.value)

    def _Universe(self, node, names):
        return c.TypeU(node.span, node.level)

    def _Lambda(self, node: s.Lambda, names):
        binder = node.binder
        domain = self.term(binder.type, names)
        body = self.term(node.body, [*names, binder.name])
        return c.Lam(node.span, binder.multiplicity, binder.name, domain, body)

    def _Pi(self, node: s.Pi, names):
        binder = node.binder
        domain = self.term(binder.type, names)
        body = self.term(node.body, [*names, binder.name])
        return c.Pi(node.span, binder.multiplicity, binder.name, domain, body)

    def _Let(self, node: s.Let, names):
        type_ = self.term(node.type, names) if node.type is not None else None
        value = self.term(node.value, names)
        body = self.term(node.body, [*names, node.name])
        return c.Let(node.span, node.multiplicity, node.name, type_, value, body)

    def _Application(self, node: s.Application, names):
        function = self.term(node.function, names)
        arguments = [self.term(a, names) for a in node.arguments]
        if isinstance(function, c.Prim):
            arity = function.primitive.arity
            if len(arguments) >= arity:
                if len(arguments) > arity:
                    # a primitive's result is a Nat or Bytes, never a function: an argument past its
                    # arity is a mistake at that argument, not an application of its result
                    name = function.primitive.name
                    raise ScopeError(
                        f"{name} takes {arity} argument{'' if arity == 1 else 's'}, given {len(arguments)}",
                        node.arguments[arity].span,
                        hint=f"write ({name} {' '.join(function.primitive.argument_kinds)}); "
                             f"its result, of type {function.primitive.result_kind}, is no function to apply "
                             f"to more arguments")
                return c.make_prim_call(node.span, function.primitive, arguments)
        return c.App(node.span, function, arguments)

    def _FamilyType(self, node: s.FamilyType, names):
        family = self.family(node.family, node.span)
        if len(node.arguments) != len(family.surface.parameters):
            raise ScopeError(
                f"family {family.name} takes {len(family.surface.parameters)} parameter(s), "
                f"given {len(node.arguments)}", node.span,
                hint=_parameter_hint(family))
        return c.FamilyT(node.span, family, [self.term(a, names) for a in node.arguments])

    def _Constructor(self, node: s.Constructor, names):
        family = self.family(node.family, node.family_span or node.span)
        ctor = self.constructor(family, node.constructor, node.name_span or node.span)
        parameters = [p.name for p in family.surface.parameters]
        expected = len(parameters) + len(ctor.field_names)
        if len(node.arguments) != expected:
            shape = " ".join([family.name, ctor.name, *parameters, *ctor.field_names])
            raise ScopeError(
                f"constructor {ctor.name} of {family.name} takes {len(parameters)} "
                f"parameter(s) and {len(ctor.field_names)} field(s), given "
                f"{len(node.arguments)} argument(s)",
                node.arguments[expected].span if len(node.arguments) > expected else node.span,
                hint=f"write (constructor {shape})")
        arguments = [self.term(a, names) for a in node.arguments]
        count = len(parameters)
        return c.Con(node.span, family, ctor, arguments[:count], arguments[count:])

    def _Record(self, node: s.Record, names):
        family = self.family(node.family, node.name_span or node.span)
        if len(family.constructors) != 1:
            raise ScopeError(f"record needs a family with one constructor; {family.name} has "
                             f"{len(family.constructors)}", node.name_span or node.span,
                             hint="use (constructor F C ...) instead")
        ctor = family.constructors[0]
        given = {}
        for item in node.fields:
            if item.name not in ctor.field_names:
                fields = (f"its fields: {', '.join(ctor.field_names)}" if ctor.field_names
                          else f"its constructor {ctor.name} has no fields: write "
                               f"(record {family.name}) or (constructor {family.name} "
                               f"{ctor.name})")
                raise ScopeError(f"{family.name} has no field {item.name}", item.span,
                                 hint=fields)
            if item.name in given:
                raise ScopeError(f"field {item.name} is given twice", item.span)
            given[item.name] = item
        missing = [n for n in ctor.field_names if n not in given]
        if missing:
            raise ScopeError(f"record {family.name} is missing field(s) {', '.join(missing)}",
                             node.span)
        fields = [self.term(given[n].value, names) for n in ctor.field_names]
        record = c.Record(node.span, family, ctor, [], fields)
        record.written = [(item.name, item.span) for item in node.fields]
        return record

    def _Eliminate(self, node: s.Eliminate, names):
        family = self.family(node.family, node.name_span or node.span)
        motive = self.term(node.motive, names)
        scrutinee = self.term(node.scrutinee, names)
        branches = []
        seen = {}
        for branch in node.branches:
            ctor = self.constructor(family, branch.constructor, branch.span)
            if ctor.name in seen:
                raise ScopeError(f"two branches for constructor {ctor.name}", branch.span,
                                 hint=f"the first is at {seen[ctor.name]}")
            seen[ctor.name] = branch.span
            wanted = len(ctor.fields) + len(ctor.recursive)
            if len(branch.binders) != wanted:
                inductions = [f"{ctor.fields[i].name}Induction" for i in ctor.recursive]
                shape = " ".join([*ctor.field_names, *inductions])
                raise ScopeError(
                    f"branch {ctor.name} binds {len(branch.binders)} name(s); it needs "
                    f"{wanted}: its {len(ctor.fields)} field(s), then one induction "
                    f"hypothesis per recursive field ({len(ctor.recursive)})", branch.span,
                    hint=f"write (branch {ctor.name}{' ' if shape else ''}{shape} . ...)")
            binder_names = [b.name for b in branch.binders]
            bound: dict = {}
            for binder in branch.binders:
                if binder.name in bound:
                    raise ScopeError(f"branch {ctor.name} binds {binder.name} twice", binder.span,
                                     hint=f"the first is at {bound[binder.name]}; each name of "
                                          f"a branch stands for another field or induction "
                                          f"hypothesis, and the later would hide the earlier")
                bound[binder.name] = binder.span
            body = self.term(branch.body, [*names, *binder_names])
            branches.append(c.ElimBranch(ctor, binder_names, body, branch.span))
        missing = [x.name for x in family.constructors if x.name not in seen]
        if missing:
            raise ScopeError(f"eliminate {family.name} has no branch for "
                             f"{', '.join(missing)}", node.name_span or node.span,
                             hint="an eliminator needs one branch per constructor")
        return c.Elim(node.span, family, motive, scrutinee, branches)

    def _NatEliminate(self, node: s.NatEliminate, names):
        return c.NatElim(node.span, *(self.term(x, names) for x in
                                      (node.motive, node.base, node.step, node.target)))

    def _Successor(self, node, names):
        return c.Succ(node.span, self.term(node.predecessor, names))

    def _Equal(self, node, names):
        return c.EqualT(node.span, self.term(node.type, names), self.term(node.left, names),
                        self.term(node.right, names))

    def _Refl(self, node, names):
        return c.ReflT(node.span, self.term(node.type, names), self.term(node.value, names))

    def _NativeEncode(self, node, names):
        return c.Encode(node.span, self.term(node.type, names), self.term(node.value, names),
                        self.program)

    def _Annotation(self, node, names):
        return c.The(node.span, self.term(node.type, names), self.term(node.expression, names))

    # ---- declarations
    def family_declaration(self, family: c.FamilyDeclaration):
        """Resolve parameters, sort and constructors (fields see params and earlier fields)."""
        surface = family.surface
        names = []
        for parameter in surface.parameters:
            if parameter.name in names:
                first = surface.parameters[names.index(parameter.name)].span
                raise ScopeError(f"parameter {_shown(parameter.name)} is declared twice in family "
                                 f"{_shown(family.name)}", parameter.span,
                                 hint=f"the first is at {first}; give each parameter its own name")
            family.parameters.append(c.FieldDeclaration(
                parameter.multiplicity, parameter.name, self.term(parameter.type, names),
                parameter.span))
            names.append(parameter.name)
        family.sort = self.term(surface.sort, names)
        for index, ctor_surface in enumerate(surface.constructors):
            if ctor_surface.name in family.by_name:
                raise ScopeError(f"constructor {_shown(ctor_surface.name)} is declared twice in family "
                                 f"{_shown(family.name)}", ctor_surface.span)
            ctor = c.ConstructorDeclaration(family, ctor_surface.name, index, ctor_surface.span)
            ctor.field_names = tuple(f.name for f in ctor_surface.fields)
            family.constructors.append(ctor)
            family.by_name[ctor.name] = ctor

    def constructor_fields(self, family: c.FamilyDeclaration):
        names = [p.name for p in family.parameters]
        for ctor, ctor_surface in zip(family.constructors, family.surface.constructors):
            local = list(names)
            seen = set()
            for field in ctor_surface.fields:
                if field.name in seen:
                    raise ScopeError(f"field {_shown(field.name)} is declared twice in constructor "
                                     f"{_shown(ctor.name)}", field.span)
                seen.add(field.name)
                ctor.fields.append(c.FieldDeclaration(field.multiplicity, field.name,
                                                      self.term(field.type, local), field.span))
                local.append(field.name)
            ctor.recursive = tuple(_recursive_fields(family, ctor))

    def definition(self, definition: c.Definition):
        surface = definition.surface
        definition.type = self.term(surface.type, []) if surface.type is not None else None
        definition.set_body(self.term(surface.body, []))


def _parameter_hint(family) -> str:
    names = [p.name for p in family.surface.parameters]
    return f"write (family {' '.join([family.name, *names])})"


def _recursive_fields(family: c.FamilyDeclaration, ctor: c.ConstructorDeclaration):
    """Indices of fields typed `(family F params...)`; refuse any other use of F.

    A field may be the family itself (with its parameters unchanged, seen from
    the field: params are the outermost binders, under the earlier fields);
    the family anywhere else in a field's type is refused: to the left of an
    arrow it is not strictly positive, and nested or under an arrow it would
    need induction hypotheses this language does not give.
    """
    parameter_count = len(family.parameters)
    for index, field in enumerate(ctor.fields):
        type_ = field.type
        if isinstance(type_, c.FamilyT) and type_.declaration is family:
            depth = parameter_count + index     # binders in scope at this field
            for position, argument in enumerate(type_.arguments):
                wanted = depth - 1 - position
                if not (isinstance(argument, c.Local) and argument.index == wanted):
                    # a parameter an earlier field of the same name hides cannot be written here
                    hidden = [(p.name, f) for p in family.parameters for f in ctor.fields[:index]
                              if f.name == p.name]
                    hint = _parameter_hint(family)
                    if hidden:
                        name, earlier = hidden[0]
                        hint = (f"field {name} of {ctor.name} ({earlier.span}) hides the parameter "
                                f"{name} from the fields after it: rename the field, then "
                                f"{hint}")
                    raise DeclarationError(
                        f"recursive field {field.name} of {ctor.name} must repeat {family.name}'s "
                        f"parameters unchanged", field.span, hint=hint)
            yield index
            continue
        where = _occurrence(type_, family, negative=False)
        if where == "negative":
            raise DeclarationError(
                f"family {family.name} is not strictly positive: field {field.name} of "
                f"{ctor.name} takes a {family.name} as a function argument", field.span,
                hint=f"{family.name} may appear in its fields only as the field's whole type")
        if where == "other":
            raise DeclarationError(
                f"field {field.name} of {ctor.name} uses {family.name} inside its type; "
                f"a recursive field must have type {_parameter_hint(family)[6:]} itself",
                field.span,
                hint="wrap the nested use in a separate family, or make the field the family "
                     "itself")


def _occurrence(term, family, negative):
    """'negative' / 'other' / None: where `family` occurs in a field type term."""
    found = None
    for child, child_negative in _children(term, negative):
        if isinstance(child, c.FamilyT) and child.declaration is family:
            return "negative" if child_negative else "other"
        result = _occurrence(child, family, child_negative)
        if result == "negative":
            return result
        found = found or result
    return found


def _children(term, negative):
    if isinstance(term, c.Pi):
        yield term.domain, True
        yield term.body, negative
        return
    slots = [n for k in type(term).__mro__ for n in getattr(k, "__slots__", ())]
    for name in slots:
        # an eliminator's `induction` points back at the eliminator (walking it never ends)
        if name in ("span", "induction"):
            continue
        value = getattr(term, name, None)
        if isinstance(value, c.Term):
            yield value, negative
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, c.Term):
                    yield item, negative
                elif isinstance(item, c.ElimBranch):   # a branch's body is part of the type
                    yield item.body, negative


def built_in_shadow_warnings(module: s.Module) -> list:
    """Warnings for the definitions of one parsed module named like a built-in (Nat, Bytes,
    zero) or a primitive (nat-add ...).  Legal, since a definition is looked up before the
    built-ins, but every use of the name in this module and those importing it then means the
    definition (`def Nat : Type 0 = Bytes` makes `def x : Nat = b"hi"` check).  Also one for
    each import the module writes again (legal and harmless, but likely a slip: another module
    was meant)."""
    from .comments import Warning

    warnings = []
    written = {}
    for imported in module.imports:
        written.setdefault(imported.module, []).append(imported)
    for name, imports in written.items():      # one warning a module, at its second import
        if len(imports) == 2:
            said = (f"{module.name} imports {name} twice (first at line {imports[0].span.line}); "
                    f"this import adds nothing")
        elif len(imports) > 2:
            again = [str(i.span.line) for i in imports[1:]]
            said = (f"{module.name} imports {name} {len(imports)} times (first at line "
                    f"{imports[0].span.line}, again at lines {', '.join(again[:-1])} and "
                    f"{again[-1]}); the imports after the first add nothing")
        else:
            continue
        warnings.append(Warning(imports[1].span, said,
                                hint="remove them, or import the modules that were meant"
                                if len(imports) > 2 else
                                "remove it, or import the module that was meant"))
    for declaration in module.declarations:
        if not isinstance(declaration, s.Definition):
            continue
        name = declaration.name
        if name in PRIMITIVES:
            what = f"the primitive {name}"
        elif name in ("Nat", "Bytes"):
            what = f"the built-in type {name}"
        elif name == "zero":
            what = "the built-in natural zero"
        else:
            continue
        warnings.append(Warning(
            declaration.span,
            f"definition {name} hides {what}: in {module.name} and the modules importing it, "
            f"{name} means this definition",
            hint="give the definition another name (a definition is looked up before the "
                 f"built-ins, {doc('language.md')} \"Visibility\")"))
    return warnings
