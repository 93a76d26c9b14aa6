"""NVIDIA class IDs by name, for naming what a SET_OBJECT binds and for tests.

Source: open-gpu-kernel-modules src/nvidia/generated/g_gpu_class_list.c and
the class headers (open-gpu-doc classes/, SDK class/cl*.h), as collected in
shared/docs/nvidia-driver-facts.md.  The IDs are bobc.targets.CLASS_NAMES
(declared once, with the targets that use them); this module only names them.
"""
from __future__ import annotations

from ..targets import CLASS_NAMES

CLASS_IDS: dict[str, int] = {name: value for value, name in CLASS_NAMES.items()}


def class_name(class_id: int) -> str:
    """The class's name, or its hex ID when this table does not know it."""
    return CLASS_NAMES.get(class_id, f"CLASS_{class_id:#06x}")
