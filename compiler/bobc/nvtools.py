"""Finding NVIDIA's own tools (nvdisasm, ptxas), which bobc uses as oracles.

They come from the package index (nvidia-cuda-nvdisasm, nvidia-cuda-nvcc) and
install under site-packages/nvidia/cu*/bin, off PATH; a PATH copy (for example
a CUDA toolkit's) is the fallback.  BOBC_NVDISASM / BOBC_PTXAS override both.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path


def _package_bins() -> list[Path]:
    try:
        import nvidia  # namespace package from the nvidia-cuda-* wheels
    except ImportError:
        return []
    bins: list[Path] = []
    for root in getattr(nvidia, "__path__", []):
        for candidate in sorted(Path(root).glob("cu*/bin"), reverse=True):  # newest first
            bins.append(candidate)
        if (Path(root) / "cuda_nvcc" / "bin").is_dir():
            bins.append(Path(root) / "cuda_nvcc" / "bin")
    return bins


def find_tool(name: str) -> str | None:
    """The path of NVIDIA tool `name`, or None when it is not installed: looked for on every call
    (a few stats), so a process that lives on sees BOBC_NVDISASM / BOBC_PTXAS, PATH and the
    packages as they are now, not as its first call found them (probe s35 inprocess finding 7)."""
    override = os.environ.get(f"BOBC_{name.upper()}")
    if override:
        return override
    for folder in _package_bins():
        path = folder / name
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return shutil.which(name)


def tool_identity(path: str) -> str:
    """What tells one installed tool from another for the texts it printed: its resolved path and
    its file's size, modification time, inode and device (an upgrade or another BOBC_NVDISASM is
    another file).  A stat, taken on every call: a memo of a tool's output is keyed by it, so a
    process that lives on never gives one tool's text for another's (probe s36 inprocess2 finding 3)."""
    resolved = Path(path).resolve()
    try:
        status = resolved.stat()
    except OSError:
        return f"{resolved}\nunreadable"
    return f"{resolved}\n{status.st_size} {status.st_mtime_ns} {status.st_ino} {status.st_dev}"


def nvdisasm() -> str | None:
    return find_tool("nvdisasm")


def ptxas() -> str | None:
    return find_tool("ptxas")
