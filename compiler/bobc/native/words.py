"""How a message counts something, the same in every host message and its C twin."""
from __future__ import annotations


def count(n: int, noun: str) -> str:
    """"1 byte", "2 bytes", "0 bytes": a count and its noun (runtime_c/host_runtime.h rt_plural
    says the same: "%llu byte%s")."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
