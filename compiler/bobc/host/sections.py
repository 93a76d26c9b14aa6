"""Device images as named ELF sections of the host executable.

The host is linked first; the build then adds one non-loaded section per image
(written with lief), and the host reads its own sections from /proc/self/exe
at start.  Keeping the images out of the C source keeps the compile fast and
lets `bobc inspect` and regression tests read exactly what a node will run.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..errors import BobcError

PREFIX = ".bobc."


class HostImageError(BobcError):
    pass


def _lief():
    try:
        import lief
    except ImportError as error:  # a dependency of the package: only a broken install lacks it
        raise HostImageError("lief is not installed", hint="pip install lief") from error
    lief.logging.disable()
    return lief


def embed(executable: Path, sections: dict[str, bytes]) -> None:
    """Add `sections` (name -> bytes) to `executable` in place, keeping it executable."""
    lief = _lief()
    binary = lief.ELF.parse(str(executable))
    if binary is None:
        raise HostImageError(f"{executable} is not an ELF file")
    for name, content in sections.items():
        if binary.get_section(PREFIX + name) is not None:
            raise HostImageError(f"{executable} already has a section {PREFIX + name}")
        section = lief.ELF.Section(PREFIX + name)
        section.type = lief.ELF.Section.TYPE.PROGBITS
        section.alignment = 16
        section.content = list(content)
        binary.add(section, loaded=False)
    temporary = executable.with_name(executable.name + ".sections")
    binary.write(str(temporary))
    os.chmod(temporary, 0o755)
    os.replace(temporary, executable)


def read(executable: Path) -> dict[str, bytes]:
    """The .bobc.* sections of a built host, by short name."""
    lief = _lief()
    binary = lief.ELF.parse(str(executable))
    if binary is None:
        raise HostImageError(f"{executable} is not an ELF file",
                             hint="pass a host built by `bobc build`")
    found = {s.name[len(PREFIX):]: bytes(s.content) for s in binary.sections if s.name.startswith(PREFIX)}
    if not found:
        raise HostImageError(f"{executable} carries no bobc images",
                             hint="pass a host built by `bobc build`")
    return found


def describe(executable: Path) -> str:
    """A human-readable listing for `bobc inspect`."""
    sections = read(executable)
    lines = [f"{executable}:"]
    manifest = {}
    if "manifest" in sections:
        try:
            manifest = json.loads(sections["manifest"])
        except ValueError:
            lines.append(f"  manifest {PREFIX}manifest is not JSON")
    if manifest:
        lines.append(f"  target   {manifest.get('target', '?')}")
        for key in ("plan", "entry", "identity"):
            if key in manifest:
                lines.append(f"  {key:<8} {manifest[key]}")
    for name, content in sections.items():
        digest = hashlib.sha256(content).hexdigest()[:16]
        lines.append(f"  {PREFIX + name:<16} {len(content):>9} bytes  sha256 {digest}")
    return "\n".join(lines)
