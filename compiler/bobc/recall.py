"""What loading a plan found, and what `bobc check` concluded, kept between runs (issue 21).

A warm `bobc check` or `bobc build` spent most of its time parsing (unpickling) every
module's tree and resolving every definition only to compute the key of a verdict it had
already stored (stored.py; bench/results/build.md measures it).  This module keeps, per plan, which file each module was found
at, so that key can be computed from the files alone, and what a check printed, so a check
of an unchanged plan loads one small entry:

  programs/<key>  the search path, each module's name and folder, the verdict key and the
                  facts a build needs of the program (plan module, its definitions and
                  native hosts); key: bobc's code, the target, the plan path as given and
                  resolved, the -I folders, the specs folder.
  outcomes/<key>  a passed `bobc check`: its warnings and result, with each kernel contract
                  source the certifier read; key: the verdict key, the --entry, the folders.

An entry is used only while everything it was made from still holds, checked on every use:
the search path derived from the plan file is the same; each module is still found in the
same folder (no file with its name appeared in an earlier folder of the search path); the
digest of every module's path and text is the stored verdict key, whose own entry still
holds (stored.py: the kernel sources evaluation read are unchanged); each kernel's contract
source is still the file the certifier finds for the target, with the same bytes (a per-target
variant, bobc.kernel_search, added, edited or removed is a miss for that target only).  So an
edited, added or shadowing module is a miss, and the command does the whole work again.  Only success is
stored: a refused program, proof or plan is found again, with its message, every time.  A
damaged entry is a miss; `BOBC_CACHE_DIR=off` stores and finds nothing.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from . import cache, stored

FORMAT = 2      # change when an entry's layout changes (2: a variant's base in the contracts)


@dataclass
class Recalled:
    """A program found well typed before, as far as a build needs it (pipeline.compile_plan):
    stands in for the loaded language.Program where stored.py and the host generator read."""
    plan_name: str
    search_path: list
    plan_definitions: list      # names the plan module defines, in source order
    hosts: list                 # its native host definitions (plan.extract.host_entries)
    bobc_verdict: str           # the verdict key (stored.py), as a checked Program carries it
    module_paths: tuple = ()    # every module file the program is made of, the plan's first (read
                                # as a loaded Program's modules are: an output never replaces one)


def _text(path: Path) -> str:
    """A module's text as the parser reads it (modules.parse_stored): UTF-8, universal newlines.
    OSError (a miss: the loader then refuses it by name) for a module that is no regular file or
    is over limits.MODULE_FILE_BYTES, read no further than the loader reads it: a FIFO there hung
    the warm build forever, a link to /dev/zero filled memory (probe s34 cache34 finding 2)."""
    from .language.limits import MODULE_FILE_BYTES

    data = cache.read_regular(path, MODULE_FILE_BYTES)
    if data is None:
        raise OSError(f"{path} is not a module file bobc reads")
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def _sha256(path: Path) -> str:
    """A kernel source's SHA-256; OSError (a miss) when it is no regular file (a FIFO: probe s34
    cache34 finding 3)."""
    digest = cache.regular_sha256(path)
    if digest is None:
        raise OSError(f"{path} is not a regular file")
    return digest


def _program_key(plan_path, target, include) -> str | None:
    from .language.modules import specs_folder

    try:
        resolved = str(Path(plan_path).resolve())
    except OSError:
        return None
    return cache.digest(cache.package_identity(), "program", str(FORMAT), target.name, str(Path(plan_path)),
                        resolved, *(str(Path(folder)) for folder in include), "specs", str(specs_folder()))


def remember(program) -> None:
    """Store where `program`'s modules were found (call only once it is known well typed)."""
    from .language.modules import module_relative_path
    from .plan.extract import host_entries

    verdict = getattr(program, "bobc_verdict", None)
    if verdict is None:
        return
    plan = program.modules[program.plan_name]
    folders = [str(folder) for folder in program.search_path]
    modules = []
    for name, module in program.modules.items():
        if name == program.plan_name:
            continue
        relative = module_relative_path(name)
        found = [i for i, folder in enumerate(program.search_path) if Path(folder) / relative == Path(module.path)]
        if not found:
            return          # not found by the search path (cannot happen): nothing to remember
        modules.append([name, found[0]])
    key = _program_key(plan.path, program.target, program.search_path[1:-1])
    if key is None:
        return
    record = {"format": FORMAT, "plan": program.plan_name, "search_path": folders, "modules": modules,
              "verdict": verdict, "definitions": list(program.scopes[program.plan_name].definitions),
              "hosts": host_entries(program)}
    cache.write("programs", key, json.dumps(record).encode())


def recall(plan_path, target, include=()) -> Recalled | None:
    """The program at `plan_path` as it was when found well typed, or None (never seen, or
    anything it was made from changed: then load it)."""
    key = _program_key(plan_path, target, include)
    data = cache.read("programs", key) if key is not None else None
    if data is None:
        return None
    try:
        record = json.loads(data)
        return _validated(record, Path(plan_path), target, include) if record.get("format") == FORMAT else None
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None         # a damaged entry, an unreadable file: a miss


def _validated(record: dict, plan_path: Path, target, include) -> Recalled | None:
    from .language.modules import module_relative_path, specs_folder

    plan_name = record["plan"]
    depth = len(plan_name.split("."))
    root = plan_path.resolve().parents[depth - 1]
    search_path = [root, *(Path(folder) for folder in include), specs_folder()]
    if [str(folder) for folder in search_path] != record["search_path"]:
        return None
    if not all(folder.is_dir() for folder in search_path[1:-1]):
        return None
    parts: list = [(plan_name, str(plan_path), _text(plan_path))]
    for name, index in record["modules"]:
        relative = module_relative_path(name)
        if any((folder / relative).is_file() for folder in search_path[:index]):
            return None     # another file of that name now comes first
        path = search_path[index] / relative
        parts.append((name, str(path), _text(path)))
    verdict = stored.key_of(target, plan_name, parts, search_path)
    if verdict != record["verdict"] or not stored.verdict_key_holds(verdict):
        return None
    definitions, hosts = record["definitions"], record["hosts"]
    if not all(isinstance(name, str) for name in [*definitions, *hosts]):
        return None
    return Recalled(plan_name=plan_name, search_path=search_path, plan_definitions=list(definitions),
                    hosts=list(hosts), bobc_verdict=verdict, module_paths=tuple(Path(p) for _, p, _ in parts))


# ---- what `bobc check` concluded

def _contract_sources(plan, target, folders) -> list[list[str]] | None:
    """[kernel identity, its contract source, sha256, the base it is a variant of, its sha256]
    for each region, as the certifier finds them for `target` (certify.kernel_contracts: the
    target's variant where there is one, whose contract is compared with its base's, so the
    base's bytes decide the outcome too; "" for both when there is no base); None when one has
    none or is refused (never stored: the certifier refuses it)."""
    from .kernel_search import SourceError
    from .language.modules import specs_folder

    out = []
    for region in plan.program.regions if plan.program else ():
        try:
            listed = _listed_source(region.identity, [*folders, specs_folder()], target)
        except SourceError:
            return None
        if listed is None:
            return None
        out.append([region.identity, *listed])
    return out


def _listed_source(identity, folders, target) -> list[str] | None:
    """[source, sha256, base, sha256] of kernel `identity` for `target` (base "" and "" where the
    source is no variant); None when there is none."""
    from .kernel_search import find_source_and_base

    source, base = find_source_and_base(identity, folders, target)
    if source is None:
        return None
    digest = _sha256(source)
    if base is None:
        return [str(source), digest, "", ""]
    return [str(source), digest, str(base), _sha256(base)]


def _outcome_key(verdict: str, entry, folders) -> str:
    from .language.modules import specs_folder

    return cache.digest(verdict, "bobc check", str(FORMAT), repr(entry), *(str(f) for f in folders),
                        "specs", str(specs_folder()))


def contracts_before_certifying(plan, target, folders):
    """The contract sources' listing for `target`, taken before certification reads them (so a
    file edited meanwhile makes the stored outcome a miss, never a stale hit)."""
    try:
        return _contract_sources(plan, target, folders)
    except OSError:
        return None


def keep_outcome(program, entry, outcome: dict, contracts) -> None:
    """Store a passed check's `outcome` (its warnings and result) for `program` and --entry."""
    verdict = getattr(program, "bobc_verdict", None)
    if verdict is None or (outcome.get("certified") and contracts is None):
        return
    record = {"format": FORMAT, "outcome": outcome, "contracts": contracts or []}
    cache.write("outcomes", _outcome_key(verdict, entry, program.search_path), json.dumps(record).encode())


def outcome(recalled: Recalled, entry, target) -> dict | None:
    """The stored outcome of checking `recalled` with --entry `entry` for `target`, while every
    contract source the certifier read is still the one it finds for `target` (a variant added
    or removed is a miss), with the same bytes; else None."""
    from .kernel_search import SourceError
    from .language.modules import specs_folder

    data = cache.read("outcomes", _outcome_key(recalled.bobc_verdict, entry, recalled.search_path))
    if data is None:
        return None
    try:
        record = json.loads(data)
        if record.get("format") != FORMAT:
            return None
        folders = [*recalled.search_path, specs_folder()]
        for identity, *listed in record["contracts"]:
            if _listed_source(identity, folders, target) != listed:
                return None     # another source, other bytes, or a variant's base edited (probe s31 kernel)
        found = record["outcome"]
        return found if _well_formed(found) else None
    except (OSError, ValueError, TypeError, KeyError, AttributeError, SourceError):
        return None


_OUTCOME_FIELDS = {"plan": str, "modules": int, "families": int, "definitions": int, "entry": str,
                   "certified": bool}
_CERTIFIED_FIELDS = {"residents": int, "launches": int, "submissions": int}


def _well_formed(outcome) -> bool:
    """Whether a stored outcome has every field `bobc check` prints, of its type."""
    if not isinstance(outcome, dict) or not isinstance(outcome.get("warnings"), list):
        return False
    if not all(isinstance(warning, str) for warning in outcome["warnings"]):
        return False
    fields = {**_OUTCOME_FIELDS, **(_CERTIFIED_FIELDS if outcome.get("certified") is True else {})}
    return all(isinstance(outcome.get(name), kind) for name, kind in fields.items())
