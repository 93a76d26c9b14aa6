"""Finding NVIDIA's own tools (nvdisasm, ptxas), which bobc uses as oracles.

They come from the package index (nvidia-cuda-nvdisasm, nvidia-cuda-nvcc) and
install under site-packages/nvidia/cu*/bin, off PATH; a PATH copy (for example
a CUDA toolkit's) is the fallback.  BOBC_NVDISASM / BOBC_PTXAS override both.
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
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


# The cache folder of nvdisasm's answers (docs/cache.md: `nvdisasm-runs/<key>`).
RUNS_KIND = "nvdisasm-runs"
# What a temporary file's path is said as in nvdisasm's text (it names the file it read: `Object
# file /tmp/.../code.bin is not readable` for an empty stream): the path means nothing to the reader,
# and an answer kept in the cache is the same whatever folder the run wrote its input in.
STREAM = "the instruction stream"


@dataclass(frozen=True)
class Answer:
    """What one nvdisasm run printed and how it ended (subprocess's returncode: -N for signal N)."""

    stdout: str
    stderr: str
    returncode: int


def run_on_code(tool: str, options: list[str], code: bytes, running=None, prefix: str | None = None) -> Answer:
    """nvdisasm (`tool`) with `options` over the raw instruction stream `code`, written to a
    temporary file named last on its command line (its path said as STREAM in what it printed).

    nvdisasm's start-up is most of what one run costs (0.1-0.25 s of CPU), and every `bobc sim`,
    `dump`, `diff` and `disasm` process read the same code again.  So a run that succeeds (exit
    status 0) is kept in the user cache under the SHA-256 of the tool's identity (tool_identity: its
    resolved path, size, mtime, inode and device -- another nvdisasm, or this one upgraded, is another
    key, as the C compiler is keyed), `options` and `code`; the next process reads it there instead
    of running nvdisasm.  A damaged entry is a miss (bobc/cache.py's seal): nvdisasm runs again and
    the entry is replaced.  A run that fails is never kept (it may be the machine's, not the code's:
    a signal, no memory), so each one is asked again.  `running`: the children.Running of the pool
    this runs in, else None.  OSError when nvdisasm cannot be started (for the caller to say)."""
    from . import cache, children
    from .errors import temporary_folder, write_temporary

    key = cache.digest("nvdisasm run", tool_identity(tool), *options, code)
    kept = _answer(cache.read(RUNS_KIND, key))
    if kept is not None:
        return kept
    with temporary_folder(prefix=prefix) as folder:       # a full disk: one message, exit 8
        path = Path(folder) / "code.bin"
        write_temporary(path, code)
        done = (children if running is None else running).run([tool, *options, str(path)], text=True)
    answer = Answer(done.stdout.replace(str(path), STREAM), done.stderr.replace(str(path), STREAM), done.returncode)
    if answer.returncode == 0:
        cache.write(RUNS_KIND, key, json.dumps({"stdout": answer.stdout, "stderr": answer.stderr}).encode())
    return answer


def _answer(stored: bytes | None) -> Answer | None:
    """The Answer an entry of RUNS_KIND holds, or None (no entry, or not one run_on_code wrote)."""
    if stored is None:
        return None
    try:
        value = json.loads(stored)
    except ValueError:
        return None
    if not (isinstance(value, dict) and isinstance(value.get("stdout"), str) and isinstance(value.get("stderr"), str)):
        return None
    return Answer(value["stdout"], value["stderr"], 0)
