"""The `--kernels` file that runs seed 004's host without a GPU: `bobc run` takes SUBMIT from it
and calls it for every submission; here that is device.py's EmulatedDevice, the launches
decoded from the host's own images and computed by the model's NumPy kernels.

    bobc run examples/coppelius/Coppelius/Build/DirectArtifact.bob native predict \\
        --entry coppeliusHost --reference --kernels examples/coppelius/coppelius_host/reference_submit.py \\
        --input STREAM --checkpoint IN --checkpoint-out OUT --predictions P --result R
"""
from __future__ import annotations

import sys
from pathlib import Path

if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coppelius_host.device import EmulatedDevice  # noqa: E402  (the path above)

SUBMIT = EmulatedDevice()
