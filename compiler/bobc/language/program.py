"""A loaded plan: every module it reaches, resolved, ready to evaluate and check.

This is the public face of the language for the rest of bobc:

    program = load_program(plan_path, include=(), *, target, intrinsics=None)   # target: a bobc.targets.Target
    program.value("launchCount")             # forced value of a definition
    program.apply(f, a, b)                   # forced result of a call
    program.force(v), program.field(vcon, "name")
    program.check()                          # type check everything reachable

Deep structures (a list of a hundred thousand cells) make deep evaluation: the entry
points run with a high recursion limit, and when even that is not enough the
work moves to a thread with a large stack (thunks interrupted by the
RecursionError are left retryable, so nothing is computed twice).
"""
from __future__ import annotations

import contextvars
import gc
import sys
import threading
from pathlib import Path

from ..children import wait_for_thread
from ..errors import BobcError
from ..resources import doc
from . import core as c
from .intrinsics import IntrinsicContext, Intrinsics
from .limits import LimitExceeded
from .modules import ModuleLoader
from .resolve import Resolver, ScopeError, declare, link_visibility
from .values import EvalError, VCon, VFamily, describe, force

_RECURSION_LIMIT = 1_000_000
# the recursion limit of an evaluation on the caller's own thread, before a big-stack thread
_MAIN_THREAD_LIMIT = 20_000
_BIG_STACK = 1 << 30
# the stacks tried, largest first, for an evaluation deeper than the main thread's stack takes
_STACKS = (_BIG_STACK, 1 << 28, 1 << 26)


def _mib(size: int) -> str:
    return f"{size >> 30} GiB" if size >= 1 << 30 else f"{size >> 20} MiB"


def _run_deep(function, *args):
    """Run `function(*args)`, retrying on a big-stack thread after a RecursionError.

    The cyclic garbage collector is paused meanwhile: evaluation allocates
    many small acyclic objects (reference counting frees them), and a
    collection pass over a deep stack costs more than the evaluation.
    """
    _evaluation_starts()
    try:
        return _run_deep_uncollected(function, *args)
    finally:
        _evaluation_ends()


# The recursion limit, the collector's switch and the new threads' stack size are the process's,
# not a thread's, and evaluations run on several threads at once (seed 003's pair: two threads
# each load and evaluate a plan).  So they are changed for all the evaluations in flight together,
# under _SETTINGS: the first to start finds the caller's, each raises the limit as far as it needs,
# none lowers it, and the last to end puts the caller's back.  Python moves every thread's budget
# when the limit changes: a thread left deeper than a lowered limit ends the interpreter ("Fatal
# Python error: Cannot recover from stack overflow"), as one thread's evaluation ending while the
# other's was 5,000 frames deep did when each put back the limit it had found (reverted eaddbcb).
_SETTINGS = threading.Lock()
_in_flight = 0                          # evaluations started and not ended, on every thread
_callers: tuple[int, bool] = (0, False)     # the limit and collector the first of them found


def _evaluation_starts() -> None:
    global _in_flight, _callers
    with _SETTINGS:
        if _in_flight == 0:
            _callers = (sys.getrecursionlimit(), gc.isenabled())
            gc.disable()
        _in_flight += 1
        if sys.getrecursionlimit() < _MAIN_THREAD_LIMIT:
            sys.setrecursionlimit(_MAIN_THREAD_LIMIT)


def _evaluation_ends() -> None:
    global _in_flight
    with _SETTINGS:
        _in_flight -= 1
        if _in_flight:
            return
        limit, collecting = _callers
        try:
            sys.setrecursionlimit(limit)
        except RecursionError:          # this thread is deeper than its caller's limit: left raised
            pass
        if collecting:
            gc.enable()


def _raise_limit(limit: int) -> None:
    with _SETTINGS:
        if sys.getrecursionlimit() < limit:
            sys.setrecursionlimit(limit)


def _run_deep_uncollected(function, *args):
    try:
        return function(*args)
    except RecursionError:
        pass
    outcome: dict = {}
    # set as the worker's last act: waited for with the signals only noted, never with
    # Thread.join (children.wait_for_thread), and the worker stopped before a signal is raised here:
    # the caller's limit put back (_evaluation_ends) under a worker still thousands of frames
    # deep aborted the interpreter (probe s44 signals2 finding 1)
    done = threading.Event()
    fuel = c.current_fuel()

    def work():
        try:
            outcome["value"] = function(*args)
        except BaseException as error:      # re-raised on the caller's thread
            outcome["error"] = error
        finally:
            done.set()

    stack = None
    for size in _STACKS:
        # a stack this big may not fit the address space `ulimit -v` leaves: a smaller one, with
        # a recursion limit in proportion, before naming the limit (probe s33 resources 7); the
        # limit stays raised until the last evaluation in flight ends (_evaluation_ends)
        _raise_limit(_RECURSION_LIMIT * size // _BIG_STACK)
        # in the caller's context (contextvars: bobc.kernel_cache's records of what is read)
        worker = threading.Thread(target=contextvars.copy_context().run, args=(work,),
                                  name="bobc-deep-evaluation", daemon=True)
        with _SETTINGS:                 # the size new threads get is the process's: this one's alone
            previous_size = threading.stack_size(size)
            try:
                worker.start()
            except (RuntimeError, MemoryError):     # Thread.start: "can't start new thread"
                continue
            finally:
                threading.stack_size(previous_size)
        stack = size
        found: list = []        # the steps left when a signal stopped the worker: left again after

        def stop():
            found[:] = found or [fuel[0]]
            c.stop_fuel(fuel)

        try:
            wait_for_thread(done, stop)
        finally:
            if found:
                fuel[0] = max(found[0], 0)
        break
    if stack is None:
        from ..errors import ResourceExhausted, _limit

        raise ResourceExhausted(
            f"a plan's evaluation nests deeper than the main thread's stack takes, and no thread with a "
            f"stack of {_mib(_STACKS[-1])} or more could start to evaluate it: the memory limit (ulimit -v) "
            f"is {_limit('RLIMIT_AS')}; this is not a fault in the plan or in bobc",
            f"raise the memory limit (ulimit -v; a {_mib(_BIG_STACK)} stack is reserved, not used, so "
            f"`ulimit -v unlimited` costs no memory), then run again", "thread")
    if "error" in outcome:
        error = outcome["error"]
        if isinstance(error, RecursionError):
            definition = getattr(error, "definition", None)
            where = f", in definition {definition.name}" if definition is not None else ""
            refusal = EvalError(f"evaluation nests too deeply even with a {_mib(stack)} stack{where}",
                                getattr(definition, "span", None),
                                hint=deep_hint() + ("" if stack == _BIG_STACK else
                                                    f"; under this memory limit (ulimit -v) no thread with a "
                                                    f"{_mib(_BIG_STACK)} stack could start: raising it may be enough"))
            refusal.recurring = _recurring_function(error)
            del outcome["error"], error             # the million frames go now
            raise refusal
        raise error
    return outcome["value"]


# What to do about a nesting too deep.  In a checked plan never "a runaway recursion": a
# definition cannot call itself (cycles are refused before anything runs) and eliminate and
# nat-eliminate always end, so what nests this deep is a structure (a list of a million cells),
# or a chain of definitions, this deep (probe s31 limits finding 5).  Program._deep says which.
def deep_advice() -> str:
    return (f"build it shallower (the depth limit: {doc('limits.md')}): a list of chunks rather "
            f"than one list of a million cells, a balanced tree rather than a chain")


def deep_hint() -> str:
    return "a value (or a chain of definitions) this deep is past what bobc evaluates; " + deep_advice()


def _recurring_function(error):
    """The span of the function the most calls on `error`'s stack applied (a runaway recursion
    is a function calling itself), or None."""
    from collections import Counter

    code = c.apply.__code__
    counts: Counter = Counter()
    tb = error.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code is code:
            function = frame.f_locals.get("function")
            span = getattr(getattr(function, "term", None), "span", None)
            if span is not None:
                counts[span] += 1
        tb = tb.tb_next
    return counts.most_common(1)[0][0] if counts else None


class Program:
    def __init__(self, plan_path, include=(), *, target, intrinsics=None):
        self.target = target
        self._fuel = c.new_fuel()   # every program gets limits.EVALUATION_STEPS, its own
        self.intrinsics = intrinsics if intrinsics is not None else Intrinsics()
        loader = ModuleLoader(include)
        plan = loader.load_plan(plan_path)
        self.search_path = loader.search_path
        self.plan_name = plan.name
        self.modules = loader.modules            # name -> syntax.Module (with .path)
        self.module_order = loader.order         # dependencies first
        self.scopes = {}
        for name in self.module_order:
            self.scopes[name] = declare(self.modules[name])
        for scope in self.scopes.values():
            link_visibility(scope, self.scopes)
        resolvers = {name: Resolver(scope, self) for name, scope in self.scopes.items()}
        for name, scope in self.scopes.items():
            for family in scope.families.values():
                resolvers[name].family_declaration(family)
        for name, scope in self.scopes.items():
            for family in scope.families.values():
                resolvers[name].constructor_fields(family)
        for name, scope in self.scopes.items():
            for definition in scope.definitions.values():
                resolvers[name].definition(definition)
        self._checked = False
        self._checking_all = False      # inside check(): past its cycle check, families checked on use
        self._checked_keys: set = set()     # definitions check_definition found well typed
        self._checker = None

    # ---- names
    def modules_defining(self, name: str, table: str = "definitions") -> list[str]:
        return [m for m, scope in self.scopes.items() if name in getattr(scope, table)]

    def definition(self, name: str) -> c.Definition:
        """A definition by name: unqualified (the plan's scope) or Module.Path.name."""
        scope = self.scopes[self.plan_name]
        found = scope.visible_definitions.get(name)
        if found is None and "." in name:
            module, _, short = name.rpartition(".")
            if module in self.scopes:
                found = self.scopes[module].definitions.get(short)
        if found is None:
            raise self._no_definition(name)
        return found

    def _no_definition(self, name: str) -> BobcError:
        """Why `name` names no definition the plan sees, with what `bobc check` would say of the
        same name in a module: a family, a constructor or a field (which are not definitions),
        a module (the whole name), a definition of a loaded module the plan does not see, or of
        a module on the search path the plan does not load (Module.name or plain).  An empty
        name is a usage error (exit 2)."""
        if not name.strip():
            from ..errors import UsageError

            return UsageError("the name to evaluate is empty: name a definition",
                              hint="write a definition's plain name or Module.Path.name")
        scope = self.scopes[self.plan_name]
        module, _, short = name.rpartition(".")
        families = scope.visible_families
        if module:
            if module in self.scopes:
                families = self.scopes[module].families
            else:
                families = {}
        if short in families:
            return ScopeError(f"{name} is a family, not a definition",
                              hint=f"bobc eval evaluates a definition: name one whose type is "
                                   f"(family {short} ...)")
        for family in families.values():
            ctor = family.by_name.get(short) if hasattr(family, "by_name") else None
            if ctor is None:
                ctor = next((x for x in getattr(family, "constructors", ()) if x.name == short), None)
            if ctor is not None:
                return ScopeError(f"{name} is a constructor of family {family.name}, not a definition",
                                  hint=f"bobc eval evaluates a definition: name one whose value is "
                                       f"(constructor {family.name} {short} ...), or write such a "
                                       f"definition in {self.plan_name}")
        if not module or module in self.scopes:
            field = Resolver(self.scopes[module] if module else scope, self)._field_hint(short)
            if field is not None:
                return ScopeError(f"{name} is a field, not a definition",
                                  hint=f"bobc eval evaluates a definition; {field}")
        from .suggest import module_names, shown_name

        on_path = () if name in self.scopes else module_names(self.search_path)
        if name in self.scopes or name in on_path:
            return self._a_module(name)
        if module and (module in self.scopes or module in on_path):
            return self._not_in_module(name, module, short)
        if module:
            return ScopeError(f"no definition {shown_name(name)}: there is no module {shown_name(module)} "
                              f"on the search path (the plan's root, -I folders, specs/)",
                              hint="write Module.Path.name with a module the plan imports, or the "
                                   "plain name")
        builtin = None if module else self._built_in(name)
        if builtin is not None:
            return builtin
        elsewhere = self.modules_defining(name)
        if not elsewhere:
            from .suggest import modules_declaring

            # candidates by modules_declaring's scan; _declared_not_defined decides from the parse
            for keyword in ("family", "constructor", r"field\s+(?:unrestricted|0|1)"):
                for home in dict.fromkeys(m for m, _ in modules_declaring(name, self.search_path, keyword)):
                    declared = self._declared_not_defined(home, name, name)
                    if declared is not None:
                        return declared
        if elsewhere:
            hint = f"it is defined in {', '.join(elsewhere)}; write Module.Name to reach it"
        else:
            from .suggest import closest, modules_declaring

            unloaded = [m for m in dict.fromkeys(m for m, _ in modules_declaring(name, self.search_path))
                        if m not in self.scopes]
            hint = "names are looked up in the plan module and its imports"
            if unloaded:
                hint = (f"{name} is defined in {', '.join(unloaded)}, which {self.plan_name} does "
                        f"not import: add `import {unloaded[0]}` to evaluate it")
            else:
                close = closest(name, scope.visible_definitions)
                if close:
                    hint = f"did you mean {' or '.join(map(shown_name, close))}? " + hint
        return ScopeError(f"no definition {shown_name(name)} in {self.plan_name} or its imports",
                          hint=hint)

    def _built_in(self, name: str) -> BobcError | None:
        """A built-in name (Nat, Bytes, zero, Type), a primitive or a form's head that no
        definition of the plan's takes: what it is, and how to see it (a definition that uses it),
        rather than "no definition" and an import to add (probe s46 plantexts2)."""
        from .primitives import PRIMITIVES
        from .resolve import BUILT_IN_NAMES
        from .syntax import FORM_HEADS

        use = f"bobc eval evaluates a definition: write one that uses it in {self.plan_name}"
        if name in ("Nat", "Bytes"):
            return ScopeError(f"{name} is a built-in type, not a definition (its type is Type 0)",
                              hint=f"{use} (def x : Nat = 3) and evaluate that")
        if name == "zero":
            return ScopeError("zero is the built-in natural 0, not a definition",
                              hint=f"{use} (def x : Nat = 3) and evaluate that")
        if name == "Type" or name in BUILT_IN_NAMES:
            return ScopeError(f"{name} is the universe (Type n : Type n+1), not a definition",
                              hint=f"{use} (def x : Nat = 3) and evaluate that")
        primitive = PRIMITIVES.get(name)
        if primitive is not None:
            example = " ".join('b"abc"' if kind == "Bytes" else str(i + 1)
                               for i, kind in enumerate(primitive.argument_kinds))
            return ScopeError(f"{name} is a primitive, not a definition: {name} : {primitive.type}",
                              hint=f"{use} (def x = ({name} {example})) and evaluate that")
        if name in FORM_HEADS:
            return ScopeError(f"{name} is a form of the language, not a definition",
                              hint=f"{use} (def x : Nat = 3) and evaluate that")
        return None

    def _module_definitions(self, module: str) -> list[str]:
        """The names `module` defines, in its order: its scope's when loaded, else its file's
        top-level `def NAME` lines (a text scan of the first file the search path holds for it,
        as the import hints do: a hint, never a decision)."""
        if module in self.scopes:
            return list(self.scopes[module].definitions)
        import re
        from .suggest import module_files, read_head

        for found, path in module_files(self.search_path):
            if found == module:
                return list(dict.fromkeys(re.findall(r"^def\s+([^\s:()]+)", read_head(path),
                                                     re.MULTILINE)))
        return []

    def _declared_not_defined(self, module: str, short: str, name: str) -> ScopeError | None:
        """`short` is a family, a constructor or a field that `module` declares (its file on the search path,
        parsed, when the plan does not load it; its scope when it does), which `bobc eval` cannot
        evaluate (it evaluates a definition): saying so, as for a family the plan sees, rather than
        "defines no".  None when `module` declares no such family, constructor or field."""
        from .suggest import module_files

        families = []           # (family name, [(constructor name, its field names)])
        if module in self.scopes:
            for family in self.scopes[module].families.values():
                families.append((family.name, [(ctor.name, list(getattr(ctor, "field_names", ())))
                                               for ctor in getattr(family, "constructors", ())]))
        else:
            from .modules import parse_cached
            from .syntax import FamilyDeclaration

            path = next((found for listed, found in module_files(self.search_path) if listed == module), None)
            if path is None:
                return None
            try:
                parsed = parse_cached(path)
            except BobcError:
                return None                 # a module that does not parse: the plain refusal
            families = [(d.name, [(ctor.name, [b.name for b in ctor.fields]) for ctor in d.constructors])
                        for d in parsed.declarations if isinstance(d, FamilyDeclaration)]
        imports = "" if module in self.scopes else f", which {self.plan_name} does not import"
        for family, constructors in families:
            if family == short:
                return ScopeError(f"{name} is a family of {module}{imports}, not a definition",
                                  hint=f"bobc eval evaluates a definition: name one whose type is "
                                       f"(family {short} ...)"
                                       + (f" (with `import {module}` in {self.plan_name})" if imports else ""))
            for constructor, fields in constructors:
                if short in fields:
                    return ScopeError(f"{name} is a field of constructor {constructor} of family {family} of "
                                      f"{module}{imports}, not a definition",
                                      hint=f"bobc eval evaluates a definition: name one that gives a {family}, "
                                           f"or write one in {self.plan_name} that reads its {short}"
                                           + (f" (with `import {module}`)" if imports else ""))
            if short in (constructor for constructor, _ in constructors):
                return ScopeError(f"{name} is a constructor of family {family} of {module}{imports}, not a "
                                  f"definition",
                                  hint=f"bobc eval evaluates a definition: name one whose value is "
                                       f"(constructor {family} {short} ...), or write such a definition in "
                                       f"{self.plan_name}"
                                       + (f" (with `import {module}`)" if imports else ""))
        return None

    def _a_module(self, name: str) -> ScopeError:
        """`name` is a module (loaded or on the search path), not a definition."""
        names = self._module_definitions(name)
        plain = name == self.plan_name      # its definitions are named plainly too
        some = " or ".join(n if plain else f"{name}.{n}" for n in names[:3])
        if name not in self.scopes:
            hint = (f"{self.plan_name} does not import {name}: add `import {name}` to "
                    f"{self.plan_name}, then name one of its definitions"
                    + (f", e.g. {some}" if some else ""))
        elif names:
            hint = f"bobc eval evaluates a definition: name one of {name}'s, e.g. {some}"
        else:
            hint = f"bobc eval evaluates a definition, and {name} defines none"
        return ScopeError(f"{name} is a module, not a definition", hint=hint)

    def _not_in_module(self, name: str, module: str, short: str) -> ScopeError:
        """`module` (loaded or on the search path) defines no `short`: where the plan sees
        `short` if it does, where it is defined if elsewhere, else a did-you-mean among
        `module`'s definitions; an import only for a module that does define it."""
        from .suggest import closest, modules_declaring, shown_name

        scope = self.scopes[self.plan_name]
        loaded = module in self.scopes
        defined = self._module_definitions(module)
        imports = "" if loaded else (f"; {self.plan_name} does not import {module}, directly or "
                                     f"through its imports")
        if short in defined:        # only when not loaded: a loaded one would have been found
            return ScopeError(
                f"no definition {name}: {self.plan_name} does not import {module}, directly "
                f"or through its imports",
                hint=f"add `import {module}` to {self.plan_name} to evaluate {short}")
        if not loaded:
            declared = self._declared_not_defined(module, short, name)
            if declared is not None:
                return declared
        said = f"no definition {shown_name(name)}: {module} defines no {shown_name(short)}"
        homes = self.modules_defining(short)
        if homes:
            ways = [f"{home}.{short}" for home in homes]
            if short in scope.visible_definitions:
                ways.insert(0, short)
            return ScopeError(said, hint=f"{short} is defined in {', '.join(homes)}: write "
                                         f"{' or '.join(ways)}")
        unloaded = [m for m in dict.fromkeys(m for m, _ in modules_declaring(short, self.search_path))
                    if m not in self.scopes]
        if unloaded:
            return ScopeError(said + imports,
                              hint=f"{short} is defined in {', '.join(unloaded)}: add `import "
                                   f"{unloaded[0]}` to {self.plan_name} and write "
                                   f"{unloaded[0]}.{short}")
        close = [f"{module}.{n}" for n in closest(short, defined)]
        hint = f"did you mean {' or '.join(close)}?" if close else \
            "write Module.Path.name with a module that defines it, or the plain name"
        if close and not loaded:
            hint += f" {self.plan_name} does not import {module}: add `import {module}` to evaluate it"
        return ScopeError(said + (imports if not close else ""), hint=hint)

    def definition_span(self, name: str):
        return self.definition(name).span

    # ---- evaluation
    def _deep(self, function, *args):
        """_run_deep, a nesting too deep naming the definition whose function recurred; the
        evaluation draws on this program's own budget of steps."""
        c.use_fuel(self._fuel)
        try:
            return _run_deep(function, *args)
        except EvalError as error:
            span = getattr(error, "recurring", None)
            recurring = self._definition_around(span) if span is not None else None
            if recurring is not None:
                error.message += f", through {recurring.name} (its function calls nest deepest)"
                error.args = (error.message,)
                if error.span is None:
                    error.span = span
                if self._total(recurring):
                    error.hint = (f"{recurring.name} recurses once a level of a value (or a chain "
                                  f"of definitions) too deep to evaluate; it cannot be calling "
                                  f"itself without end, as it is checked ({doc('language.md')}, "
                                  f"\"Totality\"): " + deep_advice())
                else:
                    error.hint = (f"{recurring.name} likely calls itself without end (unchecked, a "
                                  f"definition may: a cycle, or a family that is not strictly "
                                  f"positive); recurse with eliminate or nat-eliminate; if it does "
                                  f"not, the value it walks is too deep: " + deep_advice())
            raise

    def _total(self, definition) -> bool:
        """Whether evaluating `definition` must end: the whole plan is checked (or being checked,
        past its cycle check: a family is checked on its first use), or the definition is
        (`bobc eval` checks it after its cycles)."""
        return self._checked or self._checking_all or definition.key in self._checked_keys

    def _definition_around(self, span):
        """The definition whose text holds `span` (the last one that begins before it)."""
        found = None
        for scope in self.scopes.values():
            for definition in scope.definitions.values():
                at = definition.span
                if at is not None and at.path == span.path and \
                        (at.line, at.column) <= (span.line, span.column) and \
                        (found is None or (at.line, at.column) > (found.span.line, found.span.column)):
                    found = definition
        return found

    def value(self, name: str):
        """The value of a definition, forced to weak head normal form."""
        return self._deep(force, self.definition(name).thunk)

    def force(self, value):
        return self._deep(force, value)

    def deep(self, function, *args):
        """Run `function(*args)` where deep evaluation may happen (e.g. printing a value)."""
        return self._deep(function, *args)

    def type_of(self, name: str):
        """The type of a definition (checking only what that needs), as a value."""
        definition = self.definition(name)
        return self._checking(definition, lambda checker: checker.definition_type(definition))

    def check_definition(self, name: str) -> None:
        """Type check a definition's body against its type, the bodies of the definitions it uses
        first (Checker.check_used; `bobc check` checks every body)."""
        definition = self.definition(name)
        self._checking(definition, lambda checker: checker.check_definition(definition))
        self._checked_keys.add(definition.key)

    def checker(self):
        """The program's one type checker: what it found (a definition's type, a body or family
        that checks) is kept for every later question, so asking for each definition of a chain
        in turn infers each once (a fresh checker per question re-inferred the chain below it:
        quadratic).  Only what checked is kept; a refusal is found again, the same, each time."""
        if self._checker is None:
            from .check import Checker
            self._checker = Checker(self)
        return self._checker

    def _checking(self, definition, work):
        """Run `work(checker)` where deep recursion may happen; a retry after RecursionError
        starts from what completed (Checker.begin).  A limit met or a recursion too deep names
        `definition` (the one asked about) when nothing nearer did, as `check` does."""
        checker = self.checker()

        def attempt():
            outermost = not checker.active
            if outermost:
                checker.begin()
            try:
                return work(checker)
            except RecursionError as error:     # _run_deep names the definition
                if definition is not None and not hasattr(error, "definition"):
                    error.definition = definition
                raise
            finally:
                if outermost:
                    checker.active = False
        try:
            return self._deep(attempt)
        except LimitExceeded as error:
            if definition is not None and not error.definitions:
                error.note(definition)
            raise

    def apply(self, function, *arguments):
        def call():
            result = force(function)
            for argument in arguments:
                result = c.apply(result, argument)
            return force(result)
        return self._deep(call)

    def field(self, value, name: str):
        value = self.force(value)
        if not isinstance(value, VCon):
            raise EvalError(f"asked for field {name} of {describe(value)}")
        try:
            index = value.field_names.index(name)
        except ValueError:
            raise EvalError(f"{value.family}.{value.constructor} has no field {name} "
                            f"(fields: {', '.join(value.field_names)})") from None
        return self.force(value.fields[index])

    def native_encode(self, term, type_value, value):
        """Evaluate `(compiler-native-encode T v)` through the registered handler."""
        if not isinstance(type_value, VFamily):
            raise EvalError(f"compiler-native-encode needs a family type, got {describe(type_value)}",
                            term.span)
        handler = self.intrinsics.lookup(type_value.family)
        if handler is None:
            known = ", ".join(self.intrinsics.names()) or "none"
            raise EvalError(f"no compiler-native-encode handler for family {type_value.family}",
                            term.span,
                            hint=f"this build registers handlers for: {known}")
        return force(handler(value, IntrinsicContext(self.target, self, term.span)))

    # ---- type checking
    def check(self, past_failed_claims: bool = False):
        """Type check every module this plan reaches (raises on the first error; with
        `past_failed_claims`, check_program's: a failed claim is raised after the rest is checked,
        saying whether the rest type checks)."""
        if self._checked:
            return
        from .check import check_program
        self._checking_all = True
        try:
            self._checking(None, lambda checker: check_program(self, checker, past_failed_claims))
        finally:
            self._checking_all = False
        self._checked = True


def load_program(plan_path, include=(), *, target, intrinsics=None) -> Program:
    """Parse and resolve a plan and every module it imports (BobcError on failure), for `target`
    (a bobc.targets.Target, which compiler-native-encode's handlers are given): always named, as
    every command names its own (--target, default sm_90) -- no default of its own to disagree with
    the commands' (probe s39 leftovers3 finding 5)."""
    path = Path(plan_path)
    if not path.is_file():
        from ..errors import printable
        from .modules import not_a_file

        what = not_a_file(path)
        if what is not None:
            raise BobcError(f"the plan {printable(plan_path)} is {what}, not a module file",
                            hint="a plan is a regular file A/B/C.bob that begins `module A.B.C`")
        raise BobcError(f"no such plan file: {printable(plan_path)}")
    return Program(path, include=include, target=target, intrinsics=intrinsics)
