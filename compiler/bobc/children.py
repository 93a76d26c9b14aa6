"""The processes bobc started: finding them (cli._ending's sweep reads `descendants` from a
signal handler, so nothing is imported here at the top but `os`)."""
from __future__ import annotations

import os


def descendants(root: int) -> list[int]:
    """The process ids descended from `root` (found in /proc; none without it), parents first."""
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
    children: dict = {}
    for name in names:
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(name))
        except (OSError, IndexError, ValueError):
            continue
    found: list[int] = []
    waiting = list(children.get(root, ()))
    while waiting:
        pid = waiting.pop(0)
        if pid != root and pid not in found:
            found.append(pid)
            waiting.extend(children.get(pid, ()))
    return found
