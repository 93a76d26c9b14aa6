"""The plan language: parse, resolve, evaluate (call by need) and type check.

Entry point for the rest of bobc: `load_program(plan_path, include=(), *,
target, intrinsics=None)` -> Program (see program.py); the target is always named.

The names below are imported on first use (PEP 562), so a light submodule
(language.modules, whose search path a warm `bobc check` reads: bobc/recall.py)
is imported without the evaluator and the checker.
"""
import importlib

_HOMES = {
    "IntrinsicContext": "intrinsics", "Intrinsics": "intrinsics",
    "Program": "program", "load_program": "program",
    "VBytes": "values", "VCon": "values", "VFamily": "values", "VLam": "values", "VNat": "values",
    "VNeutral": "values", "VPi": "values", "VType": "values",
}

__all__ = list(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value
