"""`bobc cache [--prune DAYS]`: where bobc's user cache is, its size by folder, and pruning it.

Nothing is evicted by itself (docs/cache.md, "Size and pruning"): every change to bobc, a plan's
path or an evaluation limit makes new entries.  `--prune DAYS` removes the entries no build has
used for DAYS days (a hit marks its entry used, so entries in use stay) and the temporaries of
killed builds that no live process holds (bobc.cache.prune)."""
import math


def add_arguments(p):
    p.add_argument("--prune", metavar="DAYS", type=float,
                   help="remove the entries not used for DAYS days (0: all of them)")


def run(args):
    from .. import cache
    from ..errors import UsageError
    from ..reference.safe_io import shown

    root = cache.folder()
    if root is None:
        print("bobc cache: off (BOBC_CACHE_DIR=off)")
        return 0
    if args.prune is not None:
        if not math.isfinite(args.prune) or args.prune < 0:
            raise UsageError(f"--prune {args.prune:g}: not a number of days",
                             hint="give the age in days of the entries to remove, 0 or more (--prune 30)")
        removed, freed = cache.prune(root, args.prune)
        print(f"removed {removed} entries not used for {args.prune:g} days ({_human(freed)}) from {shown(root)}")
        return 0
    found = cache.usage(root)
    print(f"{shown(root)}: {_human(sum(size for _, size in found.values()))}")
    for kind, (entries, size) in found.items():
        print(f"  {kind:<20} {entries:>8} entries {_human(size):>10}")
    return 0


def _human(size: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
