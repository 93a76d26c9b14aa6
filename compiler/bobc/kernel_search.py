"""Where a kernel's assembly source is, for the build's target: the one rule every path that
finds a kernel source uses (the encoder's SM86Program, the certifier's contracts, the launch
footprints, the recall cache, the decoder's argument names).

A kernel may have a per-target variant: `<stem>.<target>.sass` beside `<stem>.sass`
(`gemm.sm_90.sass` beside `gemm.sass`), because a design may need what only one target has
(sm_90's TMA copies and warpgroup MMA).  The variant replaces the base for that target only;
every other target keeps the base.

- By identity (`find_source`): per folder of the search path in order (each searched
  recursively), `<identity>.<target>.sass` wins over `<identity>.sass`; the first folder
  that has either decides, so folder order still rules (a base in the plan's folder beats
  a variant in specs/).  A variant without a base is fine: that kernel then exists for
  that target only, and other targets find no source (or a later folder's).  Two files of
  the one name under one folder (a backup copy beside the real one) are refused, naming both.
  The recursive search skips what holds installed software rather than the plan's kernels
  (`_skipped`): hidden folders (`.venv`, `.git`), `__pycache__`, `site-packages` and
  `dist-packages`, a virtual environment (a folder holding `pyvenv.cfg`, whatever its name)
  and an installed bobc package (a `bobc` folder holding `_share`, as `pip install --target`
  or setuptools' build/lib leave it); a folder named on the search path is searched even
  when it is one of those.
- By path (`variant_of`, `find_named`): a source the plan names (`Realization/.../x.sass`)
  is replaced by `x.<target>.sass` beside it when that file exists.  A plan names the base:
  a source named as a variant is refused, and so is an absent base beside which only another
  target's variant lies (naming both the target and the variant).
- The suffix: a stem whose last dot-part has a target's shape (`sm_` and digits, then
  letters: sm_86, sm_90a, sm_121) marks a variant -- of a target bobc knows or not yet -- and
  is never a kernel of its own.  So `x.sm_89.sass` is no kernel named `x.sm_89` (an identity
  or source of that shape is refused), and a search for `x` never returns another target's
  variant.
- A variant is the same kernel: its `.kernel NAME` (else its base's stem) must be its
  base's; a mismatch is refused naming both files.  It is assembled and certified on its
  own, and must honour what the plan declares for the region like the base.

Its own module so that finding a source imports nothing of the certifier: a warm `bobc
check` only confirms its contract sources are still the files it certified (recall.py).
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import re
from pathlib import Path

from .errors import BobcError, shown_plan_text, source_lines

_TARGET_SUFFIX = re.compile(r"sm_\d+[a-z]*")
_KERNEL = re.compile(r"^\s*\.kernel(?:\s+(.*))?$")


class SourceError(BobcError):
    """A kernel source the rule refuses (a variant of another kernel, a variant-shaped name)."""


def target_name(target) -> str:
    """The suffix of `target` (a bobc.targets.Target or its name)."""
    name = getattr(target, "name", target)
    if not isinstance(name, str) or not _TARGET_SUFFIX.fullmatch(name):
        raise ValueError(f"a kernel search needs the build's target (a Target or a name such as sm_90), "
                         f"not {target!r}")
    return name


def variant_suffix(path) -> str | None:
    """The target whose variant `path` is (`x.sm_90.sass` -> 'sm_90'), else None (a base)."""
    stem = Path(path).name.removesuffix(".sass")
    base, dot, suffix = stem.rpartition(".")
    return suffix if dot and base and _TARGET_SUFFIX.fullmatch(suffix) else None


def _refuse_variant_shaped(name: str, what: str) -> None:
    base, dot, suffix = name.rpartition(".")
    if dot and base and _TARGET_SUFFIX.fullmatch(suffix):
        raise SourceError(f"{what} {shown_plan_text(name)} ends in a target suffix: a file {shown_plan_text(name)}.sass "
                          f"is kernel {shown_plan_text(base)}'s "
                          f"variant for {suffix}, never a kernel of its own",
                          hint=f"name the base kernel ({shown_plan_text(base)}); a target's own code goes in "
                               f"{shown_plan_text(base)}.{suffix}.sass")


def kernel_name(path: Path, default: str) -> str:
    """The name a source gives its kernel: its `.kernel NAME` directive, else `default`.  Read
    through the assembler's bounded reader (bobc.sass.source: past 4 MiB refused, unread).  A
    `.kernel` without a name, with several words or given twice is refused at its line, as the
    assembler refuses it (bobc.sass.assembler.source_directives), before a plan's name is compared
    with it.  A line's comments are the assembler's (bobc.sass.syntax.line_code): a `//` inside a
    closed `/* ... */` is the block comment's, not the end of the line."""
    from .errors import Span
    from .sass.source import read_source
    from .sass.syntax import _LABEL, line_code

    name, first = default, None
    for number, line in enumerate(source_lines(read_source(path)), start=1):
        try:
            code = line_code(line, str(path), number)     # comments read as the assembler reads them
        except BobcError as error:      # a /* left open: the assembler's refusal, as a source's
            raise SourceError(error.message, error.span, hint=error.hint) from None
        labels = _LABEL.match(code.lstrip())
        while labels:                   # `start: .kernel x` is a directive after a label, as the parser reads it
            code = " " * (len(code) - len(code.lstrip()) + labels.end()) + code.lstrip()[labels.end():]
            labels = _LABEL.match(code.lstrip())
        found = _KERNEL.match(code)
        if not found:
            continue
        words = (found.group(1) or "").split()
        where = Span(str(path), number, code.index(".kernel") + 1)
        if first is not None:
            raise SourceError(f".kernel is given twice (first at line {first}): a source declares it once", where,
                              hint="keep one .kernel line")
        if len(words) != 1:
            raise SourceError(".kernel needs the kernel's name (.kernel scale_rows)" if not words else
                              f".kernel takes one name, found {len(words)} words ('{found.group(1).strip()}')",
                              where, hint="a kernel has one name (its cubin symbol); write a remark as a // comment")
        name, first = words[0], number
    return name


def check_variant(variant: Path, base: Path) -> None:
    """Refuse a variant that names another kernel than its base (both files named)."""
    stem = base.name.removesuffix(".sass")
    ours, theirs = kernel_name(variant, stem), kernel_name(base, stem)
    if ours != theirs:
        raise SourceError(f"kernel source {variant} is a variant of {base}, but names kernel {ours!r} "
                          f"where its base names {theirs!r}",
                          hint="a per-target variant is the same kernel: give it its base's .kernel name")


_SKIPPED_NAMES = frozenset({"__pycache__", "site-packages", "dist-packages"})


def _skipped(folder: str, name: str) -> bool:
    """Whether the recursive search leaves out the subfolder `name` of `folder`: a hidden
    folder, a Python cache, an installed-packages folder, a virtual environment or an
    installed bobc (whose _share/specs holds copies of the standard library's kernels)."""
    if name.startswith(".") or name in _SKIPPED_NAMES:
        return True
    path = os.path.join(folder, name)
    if os.path.isfile(os.path.join(path, "pyvenv.cfg")):
        return True
    return name == "bobc" and os.path.isdir(os.path.join(path, "_share"))


# folder -> {file name: [paths]} of the .sass files under it, while a `listed_once` is open
_LISTED: contextvars.ContextVar[dict | None] = contextvars.ContextVar("bobc_kernel_search_listed", default=None)


@contextlib.contextmanager
def listed_once():
    """`with listed_once():` each folder the search walks is walked once meanwhile (in this
    thread and the threads started with its context), its kernel sources kept by name, so a
    plan of n regions walks its folders once rather than n times (a plan of 2,000 kernels beside
    it spent 27 s walking its folder again for each; bench/scale_bench.py, its regions).  Opened by
    each command (bobc.cli), which writes no kernel source while it runs; outside one, every
    search walks the folders afresh."""
    token = _LISTED.set({})
    try:
        yield
    finally:
        _LISTED.reset(token)


def _walk(folder):
    """os.walk of `folder`, symlinked folders not followed, the folders _skipped leaves out not
    entered."""
    for parent, subfolders, files in os.walk(folder, followlinks=False):
        subfolders[:] = [name for name in subfolders if not _skipped(parent, name)]
        yield parent, files


def _files_named(folder, names) -> list[Path]:
    """Every file under `folder` (recursively, symlinked folders not followed, the folders
    _skipped leaves out not entered) whose name is one of `names`, sorted."""
    listed = _LISTED.get()
    if listed is not None and all(name.endswith(".sass") for name in names):
        key = os.fspath(folder)
        index = listed.get(key)
        if index is None:
            index = {}
            for parent, files in _walk(folder):
                for name in files:
                    if name.endswith(".sass"):
                        index.setdefault(name, []).append(Path(parent) / name)
            listed[key] = index
        return sorted(path for name in set(names) for path in index.get(name, ()))
    found = []
    for parent, files in _walk(folder):
        found += [Path(parent) / name for name in files if name in names]
    return sorted(found)


def find_source(identity: str, folders, target) -> Path | None:
    """The source of kernel `identity` for `target`: per folder in order (recursively),
    `<identity>.<target>.sass`, else `<identity>.sass`; None when no folder has either."""
    return find_source_and_base(identity, folders, target)[0]


def find_source_and_base(identity: str, folders, target) -> tuple[Path | None, Path | None]:
    """(find_source's file, the base it is a variant of: the one its .kernel name is checked
    against and its contract compared with, or None when the file is a base or the variant
    has none)."""
    suffix = target_name(target)
    _refuse_variant_shaped(identity, "kernel identity")
    base_name, variant_name = f"{identity}.sass", f"{identity}.{suffix}.sass"
    for folder in folders:
        hits = _files_named(folder, (base_name, variant_name))
        variants = [p for p in hits if p.name == variant_name]
        bases = [p for p in hits if p.name == base_name]
        for name, found in ((variant_name, variants), (base_name, bases)):
            if len(found) > 1:
                raise SourceError(f"kernel {shown_plan_text(identity)} has {len(found)} sources named {name} under {folder}: "
                                  f"{', '.join(str(p) for p in found)}; which one the plan means is not "
                                  f"certain", hint="keep one of them there (a backup or an experiment's copy "
                                                   "under the plan's folder counts: the search is recursive)")
        if variants:
            beside = variants[0].with_name(base_name)
            base = beside if beside.is_file() else (bases[0] if bases else None)
            if base is not None:
                check_variant(variants[0], base)
            return variants[0], base
        if bases:
            return bases[0], None
    return None, None


def variant_path(path, target) -> Path:
    """Where the variant of the named source `x.sass` for `target` is: `x.<target>.sass` beside it."""
    path = Path(path)
    return path.with_name(f"{path.name.removesuffix('.sass')}.{target_name(target)}.sass")


def variant_of(path, target) -> Path:
    """`x.<target>.sass` beside the named source `x.sass` when it exists (checked against
    it), else `path` itself.  A path that is itself a variant is refused for another target."""
    path = Path(path)
    suffix = target_name(target)
    named = variant_suffix(path)
    if named is not None:
        if named != suffix:
            raise SourceError(f"kernel source {path} is the variant for {named}, but the build is for {suffix}",
                              hint=f"name the base source ({path.name.replace('.' + named, '', 1)}): "
                                   f"each target then finds its own variant beside it")
        return path
    variant = variant_path(path, suffix)
    if variant.is_file():
        if path.is_file():
            check_variant(variant, path)
        return variant
    return path


def base_source(path) -> str:
    """The base a plan names for the source `path` (`x.sm_90.sass` -> `x.sass`; a base itself)."""
    path = Path(path)
    named = variant_suffix(path)
    return path.name if named is None else path.name.removesuffix(f".{named}.sass") + ".sass"


_NAMED_RULE = "a kernel source is named relative to the plan's root, an -I folder or specs/"


def check_named_path(source: str) -> None:
    """Refuse a kernel source a plan names that cannot be relative to a folder of the search path
    (docs/writing-a-plan.md, section 2): an empty name, an absolute path (`/etc/passwd` would be read
    wherever the plan is), or one that climbs out of the folder it is named from (`../../x.sass`)."""
    if not source.strip():
        shown = "is empty" if not source else f"{source!r} is only spaces"
        raise SourceError(f"the kernel source {shown}: {_NAMED_RULE}",
                          hint="name the kernel's .sass file from one of those folders (kernels/x.sass for "
                               "PLAN_ROOT/kernels/x.sass)")
    if os.path.isabs(source):
        raise SourceError(f"kernel source {source} is an absolute path: {_NAMED_RULE}",
                          hint="name it from the plan's root, or add its folder with -I and name it from there")
    normal = os.path.normpath(source)
    if normal == ".." or normal.startswith("../"):
        raise SourceError(f"kernel source {source} climbs out of the folder it is named from ('..'): "
                          f"{_NAMED_RULE}",
                          hint="name it from the plan's root, or add its folder with -I and name it from there")


def find_named(source: str, folders, target, missing: list | None = None) -> Path | None:
    """The source named `source` (relative to a folder of the search path) for `target`:
    per folder in order, its variant beside it (variant_of), else itself; None when none has
    either.  `missing` receives each candidate looked for and found absent (a cache that
    reuses the result must miss when one of them appears).  A plan names the base: a source
    named as a variant (`x.sm_90.sass`) is refused for every target, and so is a base that is
    absent where another target's variant lies beside it (a target never gets another's)."""
    suffix = target_name(target)
    check_named_path(source)
    named = variant_suffix(source)
    if named is not None:
        from .targets import TARGETS

        base = Path(source).with_name(base_source(source)).as_posix()
        # a build for the variant's target is an action only where bobc builds for it (`x.sm_89.sass`,
        # `x.sm_90a.sass`: no build ever finds that file, as find_named's own hint below says)
        hint = (f"name {base}: a build for {named} finds {Path(source).name} beside it, and every other target the base"
                if named in TARGETS else
                f"name {base}: {named} is not a target bobc builds for (it builds for {', '.join(TARGETS)}), so no "
                f"build finds {Path(source).name}; every target finds the base, or its own variant beside it")
        raise SourceError(f"kernel source {source} is kernel {base_source(source).removesuffix('.sass')}'s "
                          f"variant for {named}: a plan names the base source, never a variant", hint=hint)
    others = []          # another target's variants beside the named base, where the base is absent
    for folder in folders:
        base = Path(folder) / source
        candidates = [base] if variant_suffix(base) else [variant_path(base, suffix), base]
        found = variant_of(base, suffix)
        if found.is_file():
            if missing is not None:
                missing += candidates[:candidates.index(found)]
            return found
        if missing is not None:
            missing += candidates
        stem = base.name.removesuffix(".sass")
        try:
            # a variant is a file: a folder (or FIFO) named like one is no kernel of another target
            others += sorted(p for p in base.parent.glob(f"{stem}.sm_*.sass") if variant_suffix(p) not in
                             (None, suffix) and p.name.removesuffix(".sass").rpartition(".")[0] == stem
                             and p.is_file())
        except (OSError, ValueError):
            pass
    if others:
        from .targets import TARGETS

        named = list(dict.fromkeys(variant_suffix(p) for p in others))
        targets = ", ".join(named)
        # only a target bobc builds for is an action; a variant for another (`x.sm_89.sass`) is
        # one bobc never builds, which the hint says rather than offering it
        builds = [name for name in named if name in TARGETS]
        unknown = [name for name in named if name not in TARGETS]
        hint = (f"write the base {Path(source).name} beside it (the kernel for every target without a "
                f"variant of its own)")
        if builds:
            hint += f", or build for {', '.join(builds)}"
        if unknown:
            hint += (f"; {', '.join(unknown)} {'is not a target' if len(unknown) == 1 else 'are not targets'} "
                     f"bobc builds for (it builds for {', '.join(TARGETS)})")
        raise SourceError(f"kernel source {source} is absent for {suffix}: only its variant for {targets} is "
                          f"there ({others[0]}), and a target never gets another target's variant",
                          hint=hint)
    return None
