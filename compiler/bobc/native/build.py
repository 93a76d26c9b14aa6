"""`bobc build PLAN --entry DEF`, when DEF is a native artifact rather than a host plan.

A plan whose host is a native physical program (a definition the plan names with --entry) gives
its executable as a value: Bytes that are an ELF (`nativePhysicalNativeELF program`,
possibly wrapped by Runtime.NativePhysicalEmbeddedArtifact).  The build type checks the
plan, evaluates DEF and writes those bytes; nothing is extracted or certified here (the
plan's own admission rules are its proofs).  An entry of any other type than Bytes or
(family NvidiaPlanHost) is refused naming its type.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import BobcError

ELF_IDENT = b"\x7fELF\x02\x01\x01"


def entry_kind(program, entry: str, command: str = "build") -> str:
    """"native" (a Bytes entry), "host" (a NvidiaPlanHost entry), or a refusal naming the type and
    what `bobc COMMAND` (build, check) does with an --entry."""
    from ..language.quote import shown_value
    from ..language.values import VBytesType, VFamily
    from ..plan.extract import HOST_FAMILY

    declared = program.type_of(entry)
    if isinstance(declared, VBytesType):
        return "native"
    if isinstance(declared, VFamily) and declared.family == HOST_FAMILY:
        return "host"
    # the type itself, as `bobc eval --type` prints it, cut as a message cuts a term (a function's
    # (pi ...), never describe()'s "a type", which every type value is)
    shown = shown_value(declared)
    does = {"build": "builds", "check": "checks"}.get(command, "takes")
    raise BobcError(f"{entry} is of type {shown}; `bobc {command}` {does} a native artifact "
                    f"(Bytes: an ELF, e.g. nativePhysicalNativeELF program) or a host plan "
                    f"(family {HOST_FAMILY})",
                    hint="name a definition of one of those types with --entry")



def refuse_empty_host(entry: str, data: bytes, program=None) -> None:
    """A host definition that evaluated to b"": the plan refused the request (its admission), so
    there is no host to write or run (`bobc build` and `bobc run PLAN native` say the same).  With
    the `program`, the hint names the plan's definitions that build it and the library's refusal
    functions that say why (docs/native-host.md, "When the plan builds no host")."""
    if data:
        return
    makers, refusals = _empty_host_sources(program, entry) if program is not None else ([], [])
    made = (f"{entry} is built by {_listed(makers)}, which gave b\"\" in place of the host; " if makers else "")
    if refusals:
        why = (f"evaluate the plan's refusal {'function' if len(refusals) == 1 else 'functions'} "
               f"{_listed(refusals)} with the host's arguments (`bobc eval` of a Bytes definition "
               f"applying it; b\"\" means admitted, else it names the rule that refused)")
    else:
        why = ("evaluate the parts the host is made of (`bobc eval`) to find the one that answers b\"\", "
               "or check the request's values")
    raise BobcError(f"{entry} evaluates to empty bytes: the plan built no host for this request",
                    hint="an empty program is how a plan refuses a request it does not admit (a port, a "
                         "worker, a count outside what it serves): " + made + why)


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# a refusal function, by the libraries' convention (docs/native-host.md): a name holding this word
REFUSAL_WORD = "Refusal"


def _empty_host_sources(program, entry: str, most: int = 3) -> tuple[list[str], list[str]]:
    """For an empty host: the plan's own definitions (outside the standard library) that `entry`
    applies, "name (Module)", and the refusal functions of the plan's library: definitions named
    with "Refusal" in the modules of the definitions the host is built from, or in the other
    modules of their folders (loaded or not: a refusal module is often one the plan does not
    import), those sharing the longest name prefix with one of them first."""
    import re

    from ..language import core as c
    from ..language.modules import specs_folder

    try:
        specs = specs_folder().resolve()
    except OSError:
        specs = None

    def own(definition) -> bool:
        path = getattr(program.modules.get(definition.module), "path", None)
        if path is None:
            return False
        resolved = Path(path).resolve()
        return specs is None or specs not in resolved.parents

    def references(term, found: list):
        stack, seen = [term], set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, c.Global):
                found.append(node.definition)
                continue
            if isinstance(node, (list, tuple)):
                stack.extend(reversed(node))
                continue
            if isinstance(node, (c.Term, c.ElimBranch)):
                for slot in _slots(type(node)):
                    value = getattr(node, slot, None)
                    if isinstance(value, (c.Term, c.ElimBranch, list, tuple)):
                        stack.append(value)
        return found

    def head(term):
        """The definition a body applies (its lambdas and `the` skipped): (f a b) gives f."""
        while True:
            if isinstance(term, c.Lam):
                term = term.body
            elif isinstance(term, c.The):
                term = term.expression
            elif isinstance(term, c.App):
                term = term.function
            else:
                return term.definition if isinstance(term, c.Global) else None

    try:
        start = program.definition(entry)
    except BobcError:
        return [], []
    # the chain of the plan's own definitions the host is applied from: entry = (f ...), f = (g ...)
    chain, at = [], head(start.body)
    while at is not None and own(at) and at not in chain and at is not start and len(chain) < 8:
        chain.append(at)
        at = head(at.body)
    direct = [d for d in dict.fromkeys(references(start.body, [])) if own(d) and d is not start]
    makers = [f"{d.name} ({d.module})" for d in (chain[:1] or direct)[:most]]
    reached, queue = {start.key: start}, [start]
    while queue and len(reached) < 2000:
        for definition in references(queue.pop().body, []):
            if definition.key not in reached and own(definition):
                reached[definition.key] = definition
                queue.append(definition)
    folders = {Path(program.modules[d.module].path).resolve().parent for d in reached.values()}
    candidates: dict[str, str] = {}          # name -> module
    for name, module in program.modules.items():
        if Path(module.path).resolve().parent in folders:
            for short in program.scopes[name].definitions:
                if REFUSAL_WORD in short:
                    candidates.setdefault(short, name)
    loaded = {Path(module.path).resolve() for module in program.modules.values()}
    pattern = re.compile(rf"^def\s+([A-Za-z_][\w-]*{REFUSAL_WORD}[\w-]*)", re.M)
    for folder in sorted(folders):
        try:
            others = sorted(p for p in folder.glob("*.bob") if p.resolve() not in loaded)
        except OSError:
            continue
        for path in others:
            try:
                text = path.read_text(encoding="utf-8", errors="replace")[:1 << 20]
            except OSError:
                continue
            heading = re.match(r"\s*module\s+([\w.]+)", text)
            for short in pattern.findall(text):
                candidates.setdefault(short, heading.group(1) if heading else path.name)
    if not candidates:
        return makers, []
    names = [d.name for d in chain] or [d.name for d in direct] or [entry]

    def shared(name: str) -> int:
        return max(len(_common_prefix(name, other)) for other in names)

    best = max(shared(name) for name in candidates)
    if not best:
        return makers, []               # none shares a name with what builds the host: none is named
    chosen = sorted(name for name in candidates if shared(name) == best)[:most]
    return makers, [f"{name} ({candidates[name]})" for name in chosen]


def _common_prefix(a: str, b: str) -> str:
    import os

    return os.path.commonprefix([a, b])


def _slots(cls) -> tuple:
    found = []
    for klass in cls.__mro__:
        found.extend(getattr(klass, "__slots__", ()))
    return tuple(found)


def native_artifact(plan_path: Path, target, include, entry: str, modules: list | None = None):
    """DEF's bytes when DEF is a Bytes entry (checked to be an x86-64 ELF), else None.  A list
    given as `modules` receives every module file the program is made of (the build's inputs:
    `bobc build -o` never replaces one).

    Evaluating an artifact is a whole build's work (seconds to minutes for a large plan), and
    its bytes depend only on what a well-typed program's verdict key covers (every module's
    text, the target, bobc, the evaluation limit), the kernel sources evaluation read and the
    interpreter: a program found well typed before and unchanged is not loaded, and DEF's
    bytes stored then are written again (stored.artifact; BOBC_CACHE_DIR=off: never)."""
    from .. import pipeline, recall, stored
    from ..language.values import VBytes
    from .writer import host_interpreter

    recalled = recall.recall(plan_path, target, include)
    if recalled is not None and entry in recalled.plan_definitions:
        # kept while it starts with the interpreter a build writes today: the same executable and
        # the same build facts (a new commit of bobc is a new .bobc.version section)
        kept = stored.artifact(recalled.bobc_verdict, entry, host_interpreter(target.name))
        if kept is not None:
            if modules is not None:
                modules.extend(recalled.module_paths)
            return kept
    program = pipeline.load(plan_path, target, include)
    if modules is not None:
        modules.extend(Path(module.path) for module in program.modules.values())
    pipeline.require_entry(program, entry)
    if entry_kind(program, entry) != "native":
        return None
    pipeline.check(program)
    value = program.value(entry)
    data = bytes(value.value) if isinstance(value, VBytes) else b""
    refuse_empty_host(entry, data, program)
    if data[:7] != ELF_IDENT or int.from_bytes(data[18:20], "little") != 62:
        raise BobcError(f"{entry} is Bytes but not an x86-64 ELF executable "
                        f"(it starts {data[:8].hex() or 'empty'}); a native artifact is what "
                        f"nativePhysicalNativeELF gives",
                        hint="build the definition that holds the host executable")
    stored.keep_artifact(program, entry, data)
    return data
