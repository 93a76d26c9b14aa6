"""NVIDIA class IDs by name, for naming what a SET_OBJECT binds and for tests.

Source: open-gpu-kernel-modules src/nvidia/generated/g_gpu_class_list.c and
the class headers (open-gpu-doc classes/, SDK class/cl*.h), as collected in
shared/docs/nvidia-driver-facts.md.  The build's Target carries the IDs it
uses; this table only names them.
"""
from __future__ import annotations

CLASS_IDS: dict[str, int] = {
    "TURING_USERMODE_A": 0xC461,
    "HOPPER_USERMODE_A": 0xC661,
    "AMPERE_CHANNEL_GPFIFO_A": 0xC56F,
    "HOPPER_CHANNEL_GPFIFO_A": 0xC86F,
    "AMPERE_COMPUTE_A": 0xC6C0,       # GA100
    "AMPERE_COMPUTE_B": 0xC7C0,       # GA10x (sm_86)
    "HOPPER_COMPUTE_A": 0xCBC0,       # GH100 (sm_90)
    "AMPERE_DMA_COPY_B": 0xC7B5,
    "HOPPER_DMA_COPY_A": 0xC8B5,
}

CLASS_NAMES: dict[int, str] = {value: name for name, value in CLASS_IDS.items()}


def class_name(class_id: int) -> str:
    """The class's name, or its hex ID when this table does not know it."""
    return CLASS_NAMES.get(class_id, f"CLASS_{class_id:#06x}")
