"""reference_kernels.py registers a NumPy kernel for every region of the plan (each
kernel Coppelius.Build.DeviceImages names, each launch graph.py builds)."""
from __future__ import annotations

import importlib.util

from coppelius_model import graph
from coppelius_model.config import SMALL

from .conftest import EXAMPLE


def test_every_kernel_the_plan_launches_is_registered():
    spec = importlib.util.spec_from_file_location("coppelius_reference_kernels", EXAMPLE / "reference_kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    launched = {launch.kernel for piece in graph.pieces(SMALL) for launch in piece.launches}
    # the 17 regions Coppelius.Build.DeviceImages declares (test_plan_agrees holds each to a launch): no
    # bias-backward, gelu-forward or -backward (the products do their work), no softmax-forward or
    # -backward (the attention kernels do theirs)
    assert len(launched) == 17
    assert launched <= set(module.KERNELS)
    assert all(callable(module.KERNELS[name]) for name in launched)
