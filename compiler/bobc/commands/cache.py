"""`bobc cache [--prune DAYS]`: where bobc's user cache is, its size by folder, and pruning it.

Nothing is evicted by itself (docs/cache.md, "Size and pruning"): every change to bobc, a plan's
path or an evaluation limit makes new entries.  `--prune DAYS` removes the entries no build has
used for DAYS days (a hit marks its entry used, so entries in use stay) and the temporaries of
killed builds that no live process holds (bobc.cache.prune)."""
import math
import os

from ..errors import BobcError


# the youngest entries --prune may remove: a build marks what it uses at most once an hour
# (cache._touch), so entries not used for a day are in no running build's hands
MIN_PRUNE_DAYS = 1


def add_arguments(p):
    p.add_argument("--prune", metavar="DAYS",
                   help=f"remove the entries not used for DAYS days (at least {MIN_PRUNE_DAYS}; "
                        "to empty the cache, delete its folder while no bobc runs)")


def run(args):
    from .. import cache
    from ..errors import BobcError, UsageError
    from ..errors import shown

    days = None
    if args.prune is not None:
        try:
            days = float(args.prune)
        except ValueError:
            days = math.nan
        if not math.isfinite(days) or days < MIN_PRUNE_DAYS:
            raise UsageError(f"--prune {args.prune}: give a number of days of at least {MIN_PRUNE_DAYS}",
                             hint="entries no build used for that many days are removed (--prune 30); "
                                  "to empty the cache, delete its folder while no bobc runs")
    root = cache.folder()
    if root is None:
        print(f"bobc cache: off ({cache.off_reason()})")
        return 0
    if os.path.lexists(root) and not os.path.isdir(root):
        raise BobcError(f"the cache folder {shown(root)} is not a folder: builds run without a cache",
                        hint="point BOBC_CACHE_DIR at a folder (or unset it for ~/.cache/bobc)")
    try:
        os.stat(root)
    except NotADirectoryError:      # a part of its path is a file: no build can ever store there
        raise BobcError(f"the cache folder {shown(root)} cannot be made (a part of its path is a file, not a "
                        f"folder): builds run without a cache",
                        hint="point BOBC_CACHE_DIR at a folder (or unset it for ~/.cache/bobc)") from None
    except OSError:
        pass
    if not os.path.isdir(root):
        print(f"{shown(root)}: no cache yet (nothing stored)")
        return 0
    if days is not None:
        try:
            pruned = cache.prune(root, days)
        except OSError as error:
            # a folder that is there but unreadable: exit 1, as `bobc cache` says it (README's table;
            # nothing was asked of an output) -- probe s37 leftovers finding 3
            raise BobcError(f"cannot prune the cache folder {shown(root)}: it cannot be read "
                              f"({error.strerror or error}); nothing was removed",
                              hint="run it as the user who owns the cache folder (or point BOBC_CACHE_DIR at yours)") from None
        removed, freed = pruned
        print(f"removed {removed} {'entry' if removed == 1 else 'entries'} not used for {args.prune} {'day' if days == 1 else 'days'} ({_human(freed)}) "
              f"from {shown(root)}")
        unreadable = (f"cannot read {len(pruned.unreadable)} of bobc's folders in {shown(root)}: "
                      + ", ".join(f"{kind}/ ({error.strerror or error})" for kind, error in pruned.unreadable)
                      + "; their entries were not pruned") if pruned.unreadable else None
        if pruned.kept:
            # a cache it cannot change is said, and the exit is not 0: from cron or a CI job's
            # cleanup, "removed 0" forever would read as "nothing to prune" (probe s33 resources 10)
            raise PruneFailed(f"could not remove {_count(pruned.kept, 'entry', 'entries')} not used for "
                              f"{args.prune} {'day' if days == 1 else 'days'} from {shown(root)} "
                              f"({pruned.reason}); they are still there" + (f"; and {unreadable}" if unreadable else ""),
                              hint="run it as the user who owns the cache folder, or make its folders writable, "
                                   "then prune again")
        if unreadable:
            # a folder that is there but unreadable: exit 1, as `bobc cache` says the same folder
            raise BobcError(unreadable, hint="run it as the user who owns the cache folder, or make its folders "
                                             "readable, then prune again")
        return 0
    try:
        counted = cache.usage(root)
    except OSError as error:
        # not "0 B in 0 entries": a cache it cannot read is not an empty one (probe s36 exitcodes2 1)
        raise BobcError(f"cannot read the cache folder {shown(root)} ({error.strerror or error}): its size is "
                        f"not known",
                        hint="run it as the user who owns the cache folder (or point BOBC_CACHE_DIR at yours)") from None
    found, (temporaries, temporary_bytes), foreign = counted
    entries = sum(count for count, _ in found.values())
    total = sum(size for _, size in found.values()) + temporary_bytes
    # counted as --prune judges it: bobc's entries and temporaries, whose sizes add up to the first
    # line; anything else there is named apart, in no number (leftovers finding 3)
    print(f"{shown(root)}: {_human(total)} in bobc's {_count(entries, 'entry', 'entries')}"
          + (f" and {_count(temporaries, 'temporary', 'temporaries')}" if temporaries else "")
          + " (what --prune acts on)")
    for kind, (count, size) in found.items():
        print(f"  {kind:<20} {count:>8} {'entry  ' if count == 1 else 'entries'} {_human(size):>10}")
    if temporaries:
        print(f"  {'.tmp-* temporaries':<20} {temporaries:>8} {'':7} {_human(temporary_bytes):>10}"
              "  (killed builds'; --prune removes those no running bobc holds)")
    if foreign:
        named = ", ".join(shown(name) for name in foreign[:FOREIGN_NAMED])
        more = f" and {len(foreign) - FOREIGN_NAMED} more" if len(foreign) > FOREIGN_NAMED else ""
        print(f"  also there, {len(foreign)} not bobc's (left alone by --prune, in no number above): {named}{more}")
    if counted.unreadable:
        # said after what could be counted, and the exit is not 0: the sizes above leave these out
        said = ", ".join(f"{kind}/ ({error.strerror or error})" for kind, error in counted.unreadable)
        raise BobcError(f"cannot read {len(counted.unreadable)} of bobc's folders in {shown(root)}: {said}; "
                        f"their entries are in no number above",
                        hint="run it as the user who owns the cache folder, or make its folders readable")
    return 0


class PruneFailed(BobcError):
    """`bobc cache --prune` could not remove entries it was asked to (a read-only or someone else's
    cache): exit 8, as for an output not written -- the change asked for was not made.  A cache
    folder it cannot read is exit 1 (README: a file that is there but unreadable), as `bobc cache`."""

    exit_code = 8


# how many of the files and folders that are not bobc's the report names
FOREIGN_NAMED = 5


def _count(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"


def _human(size: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
