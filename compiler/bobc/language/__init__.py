"""The plan language: parse, resolve, evaluate (call by need) and type check.

Entry point for the rest of bobc: `load_program(plan_path, include=(),
target=SM86, intrinsics=None)` -> Program (see program.py).
"""
from .intrinsics import IntrinsicContext, Intrinsics
from .program import Program, load_program
from .values import VBytes, VCon, VFamily, VLam, VNat, VNeutral, VPi, VType

__all__ = [
    "IntrinsicContext", "Intrinsics", "Program", "load_program",
    "VBytes", "VCon", "VFamily", "VLam", "VNat", "VNeutral", "VPi", "VType",
]
