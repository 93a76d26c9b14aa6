"""What evaluating a plan found, kept between builds: the type check's verdict and the
extracted plan (with what its certification is given of its kernels: KERNEL_FACTS), in bobc's
user cache (bobc/cache.py).

Checking a plan's proofs by computation and extracting its plan were most of `bobc check`'s
time once parsing was cached.  Both results depend only on:
  - every module's path and text (what the program loaded),
  - the target and the plan module's name,
  - bobc itself (all its code and tables: the checker evaluates, and evaluation reaches
    the compiler's own encoders and assembler),
  - the search path (the plan's root, -I folders, specs/), and
  - the kernel sources evaluation read (compiler-native-encode of SM86Program, the build
    target's variant where one exists: bobc.kernel_search), recorded with their SHA-256 when
    the result is stored and compared again when it is reused, the candidates looked for
    and absent (a variant added later is a miss), and the file the recursive kernel search
    found for each kernel it encoded (a copy or a variant added anywhere under a search
    folder, which a cold build refuses, is a miss: probe s45 determinism3 finding 1).
A program loaded with other intrinsics (a benchmark's empty kernels) is never stored.
Only success is stored: a refused program is checked again, with its message, every time;
a stored plan is certified again on every build.  The evaluation-step limit counts the check
and what is evaluated after it together, so a verdict alone never stands in for the check
(pipeline.check): a build or check skips it only when the plan it would extract is stored
too, and a verdict kept by a run then refused in extraction changes nothing.
"""
from __future__ import annotations

import json
import pickle
from pathlib import Path

from . import cache, kernel_cache

WELL_TYPED = b"well typed\n"


def _key(program) -> str | None:
    if not getattr(program, "bobc_default_intrinsics", False):
        return None
    return key_of(program.target, program.plan_name,
                  [(name, str(module.path), module.source) for name, module in program.modules.items()],
                  getattr(program, "search_path", ()))


def key_of(target, plan_name: str, modules, search_path) -> str:
    """The verdict key of a program of `modules` ((name, path, text) each) for `target`, loaded
    with the folders `search_path` (the plan's root, -I, specs/): also computed from the files
    alone, without parsing them (recall.py).  The folders are in it because evaluation asks the
    kernel search in them which file it finds for each kernel it encodes (an -I folder that holds
    no module may hold a kernel source found first: refused), and a search's answer is checked
    again only in the folders it was asked in (_files_unchanged)."""
    import os

    parts: list[bytes | str] = [cache.package_identity(), target.name, plan_name]
    for name, path, text in sorted(modules):
        parts += [name, path, text]
    parts += ["search path", *(os.path.abspath(folder) for folder in search_path)]
    return cache.digest(*parts)


def _files_unchanged(listing) -> bool:
    """Whether every (path, sha256) recorded with an entry still holds (a path recorded as
    absent, kernel_cache.ABSENT, still does not exist), and every kernel search recorded with it
    (kernel_cache.SEARCHED) still finds the same file."""
    try:
        for entry in listing:
            if len(entry) == 5 and entry[0] == kernel_cache.SEARCHED:
                if not kernel_cache.search_holds(entry):      # a file the search now finds first
                    return False
                continue
            path, digest = entry
            if digest == kernel_cache.ABSENT:
                if Path(path).exists():
                    return False
                continue
            # a FIFO or a device in a source's place is a change, found without reading it
            # (a blocking read hung the warm build forever: probe s34 cache34 finding 3)
            if cache.regular_sha256(path) != digest:
                return False
    except (OSError, TypeError, ValueError):
        return False
    return True


def verdict_holds(program) -> bool:
    """True when this program was found well typed before (and nothing it read changed)."""
    key = _key(program)
    if key is None or not verdict_key_holds(key):
        return False
    program.bobc_verdict = key
    return True


def verdict_key_holds(key: str) -> bool:
    """True when the program of verdict key `key` was found well typed before, and the kernel
    sources its evaluation read are unchanged."""
    data = cache.read("checked", key)
    if data is None or not data.startswith(WELL_TYPED):
        return False
    try:
        listing = json.loads(data[len(WELL_TYPED):])
    except ValueError:
        return False
    return _files_unchanged(listing)


def keep_verdict(program) -> None:
    """Record that this program is well typed (call only after its check passed)."""
    key = _key(program)
    if key is None:
        return
    program.bobc_verdict = key
    cache.write("checked", key, WELL_TYPED + json.dumps(_read_by(program)).encode())


# The layout of a plans/ entry: change when it changes.  It is in the entry's key and its record,
# so an entry of another layout is a miss (the plan is extracted again), never read as this one.
# 1: the kernel facts in the slot of the registers the kernels need; 2: a field of their own.
PLAN_FORMAT = 2

# What a certification is told of the build's own kernels besides the plan (pipeline.py
# _kernel_facts), each region identity -> its value, kept with the extracted plan: the registers
# its assembled kernel uses (None: not known), the source its code was assembled from, and that
# assembly.  A stored plan is certified with every one, as a fresh plan is (a cache never changes
# a verdict: probe s33 soundness finding 5); an entry without all of them, of these types, is a miss.
KERNEL_FACTS = {"needs": (dict, type(None)), "encoded_from": (dict,), "assembled": (dict,)}


def _plan_key(program, entry) -> str | None:
    verdict = getattr(program, "bobc_verdict", None)     # a well-typed program's plans only
    return None if verdict is None else cache.digest(verdict, "extracted plan", str(PLAN_FORMAT), str(entry))


def _kept(kind: str, key: str | None, size: int) -> tuple | None:
    """What `_keep` stored under `kind/key` (a tuple of `size` values), when the kernel sources
    read when it was made are unchanged; None for a miss (a damaged entry is only a miss)."""
    data = cache.read(kind, key) if key is not None else None
    if data is None:
        return None
    try:
        listing, *values = pickle.loads(data)
    except Exception:
        return None
    return tuple(values) if len(values) == size and _files_unchanged(listing) else None


def _read_by(program) -> list:
    """The kernel sources evaluating `program` read for its target (their SHA-256, and the variants
    looked for and absent): its own record, never another compile's of this process."""
    record = kernel_cache.program_record(program)
    return kernel_cache.sources_read(program.target, record) + kernel_cache.searches_read(program.target, record)


def _keep(kind: str, key: str | None, program, *values) -> None:
    """Store `values` under `kind/key` with the kernel sources evaluating `program` read so far."""
    if key is not None and cache.entry(kind, key) is not None:      # cache off: nothing to pickle
        cache.write(kind, key, pickle.dumps((_read_by(program), *values), protocol=pickle.HIGHEST_PROTOCOL))


def whole_facts(facts) -> bool:
    """Whether `facts` holds every kernel fact (KERNEL_FACTS), each of its type, and nothing else."""
    return (isinstance(facts, dict) and set(facts) == set(KERNEL_FACTS)
            and all(isinstance(facts[name], kinds) for name, kinds in KERNEL_FACTS.items()))


def plan(program, entry):
    """The Plan extracted before from this well-typed program for `entry`, when its entry is of
    this PLAN_FORMAT and holds its kernel facts whole (facts_of gives them); else None."""
    from .plan.model import Plan

    kept = _kept("plans", _plan_key(program, entry), 1)
    record = kept[0] if kept is not None else None
    if not isinstance(record, dict) or record.get("format") != PLAN_FORMAT:
        return None
    found, facts = record.get("plan"), record.get("facts")
    if not isinstance(found, Plan) or not whole_facts(facts):
        return None
    program.bobc_stored_facts = (found, facts)
    return found


def keep_plan(program, entry, found, facts) -> None:
    """Keep the Plan `found` extracted for `entry` with its kernel facts (KERNEL_FACTS)."""
    _keep("plans", _plan_key(program, entry), program,
          {"format": PLAN_FORMAT, "plan": found, "facts": facts})


def facts_of(program, found) -> dict | None:
    """The kernel facts (KERNEL_FACTS) stored with `found`, when it is a stored plan; else None."""
    kept = getattr(program, "bobc_stored_facts", None)
    return kept[1] if kept is not None and kept[0] is found else None


# ---- native artifacts (`bobc build --entry DEF` of a Bytes definition: docs/native-host.md)
# The artifact is the interpreter executable (bobc/native/interpreter.py: gcc's build of the
# runtime's native sources, which the verdict key does not cover) followed by what evaluating
# DEF wrote; a stored artifact is reused only while it still starts with today's interpreter.

def _artifact_key(verdict: str | None, entry: str) -> str | None:
    return None if verdict is None else cache.digest(verdict, "native artifact", entry)


def artifact(verdict: str | None, entry: str, interpreter) -> tuple[bytes, dict | None, bytes | None] | None:
    """DEF's bytes, its embedded images' manifest and its launch table (None: none;
    native.build.carried_manifest), as `bobc build --entry entry` evaluated them before for the
    well-typed program of verdict key `verdict`, when nothing they were made from changed; else
    None.  `interpreter()` gives today's interpreter, called only when an artifact is kept:
    building it may compile the C runtime, which a build that keeps no artifact (a new entry, one
    refused before) must not do before its own refusal."""
    kept = _kept("artifacts", _artifact_key(verdict, entry), 3)
    if kept is None or not isinstance(kept[0], bytes) or not (kept[1] is None or isinstance(kept[1], dict)) or \
            not (kept[2] is None or isinstance(kept[2], bytes)) or not kept[0].startswith(interpreter()):
        return None
    return kept[0], kept[1], kept[2]


def keep_artifact(program, entry: str, data: bytes, manifest: dict | None = None, launches: bytes | None = None) -> None:
    """Keep a well-typed program's artifact for `entry` (after it was built and checked), with the
    manifest of the images it embeds and their launch table (native.build.carried_manifest; None:
    none)."""
    _keep("artifacts", _artifact_key(getattr(program, "bobc_verdict", None), entry), program, data, manifest, launches)
