"""Seed 003's device for bobc's reference runner (`bobc run PLAN native ARGS... --reference
--entry DEF --kernels examples/partitioned_regression/reference_kernels.py`): each Submit's
ring entry carried out by the emulated GPU (partitioned_regression.device), which runs the
entry's pushbuffer segment, the kernels' arithmetic (NumPy) and the semaphore's count."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from partitioned_regression.device import EmulatedDevice  # noqa: E402

SUBMIT = EmulatedDevice()
