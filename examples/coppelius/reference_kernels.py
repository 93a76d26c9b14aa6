"""Coppelius's kernels in NumPy, registered with the plan-driven reference host
(docs/host-steps.md, "Reference kernels"; `bobc run --reference` finds this file in
the plan's root folder).  The kernel authors' references come first where they
exist (coppelius_model/ref_gemm.py for the matrix products, ref_ops.py for the rest);
coppelius_model/kernels.py supplies every kernel, in the arithmetic of the whole-update
reference (coppelius_model/model.py), and fills in any the others do not register.
"""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from coppelius_model.kernels import KERNELS as _OWN  # noqa: E402

KERNELS = dict(_OWN)
for _name in ("coppelius_model.ref_gemm", "coppelius_model.ref_ops"):
    try:
        KERNELS.update(importlib.import_module(_name).KERNELS)
    except ModuleNotFoundError as missing:
        if missing.name != _name:
            raise
