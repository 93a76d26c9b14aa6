"""Running NVIDIA's nvdisasm over raw instruction streams and reading its answer.

nvdisasm is the independent judge of our encodings: it is called once per
stream (never once per instruction), with -hex so that each decoded line
comes back paired with the two 64-bit words it was decoded from.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import BobcError
from ..nvtools import nvdisasm, run_on_code, tool_identity

_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;?\s*/\* (0x[0-9a-f]{16}) \*/\s*$")
_HI = re.compile(r"^\s*/\* (0x[0-9a-f]{16}) \*/\s*$")


@dataclass(frozen=True)
class Decoded:
    offset: int
    text: str          # the instruction as nvdisasm prints it, without the trailing ';'
    lo: int
    hi: int


@dataclass(frozen=True)
class Disassembly:
    lines: list[Decoded]
    stderr: str
    returncode: int = 0    # nvdisasm's exit status (-N: ended by signal N)

    @property
    def errors(self) -> list[str]:
        """Everything that says nvdisasm rejected a word: stderr lines and INVALID mnemonics."""
        problems = [line for line in self.stderr.splitlines() if line.strip()]
        problems += [f"{d.offset:#06x}: {d.text}" for d in self.lines if "INVALID" in d.text]
        return problems


def require_nvdisasm() -> str:
    tool = nvdisasm()
    if tool is None:
        raise BobcError("nvdisasm is not installed",
                        hint="pip install nvidia-cuda-nvdisasm (or set BOBC_NVDISASM)")
    return tool


_AT_ADDRESS = re.compile(r"at address 0x([0-9a-fA-F]+)")


def disassemble(code: bytes, nvdisasm_arch: str, raw: bool = False) -> Disassembly:
    """Decode a raw instruction stream with nvdisasm -hex (-raw keeps nvdisasm's plain form).

    nvdisasm prints no instruction of a stream holding a word it cannot decode, and has no option to
    go on (probe s33 asmfuzz finding 5); its errors name each such word's address ("Unrecognized
    operation ... at address 0x00000020").  Then the stream is decoded again with a NOP in each of
    their places, so every decodable instruction is listed with its own address and branch target,
    and each undecodable word is an error naming its address and bits.  Where nvdisasm names no
    address, the stream is decoded in halves, each at its own address (-base), down to the words
    it refuses (read_words)."""
    done = _run(code, nvdisasm_arch, raw, 0)
    if len(done.lines) != len(code) // 16 and code and not len(code) % 16:
        refuse_broken_tool(nvdisasm_arch)
    if not done.stderr.strip() or len(done.lines) == len(code) // 16 or len(code) < 32 or len(code) % 16:
        return done
    words = _around(code, nvdisasm_arch, raw, done)
    problems = [(a, _undecodable(code, a, _said(refusal.said))) for a, refusal in words.refused.items()]
    problems = sorted(problems + words.notes, key=lambda problem: problem[0])    # stable: notes keep their order
    return Disassembly(words.lines, "\n".join(problem for _, problem in problems))


@dataclass(frozen=True)
class Refusal:
    """nvdisasm's refusal of one word: what it said of it (the stderr line naming the word's address,
    or all it printed for the word read alone) and that run's exit status."""

    said: str
    returncode: int


@dataclass(frozen=True)
class Words:
    """A stream read word by word (read_words): each instruction nvdisasm decodes, listed at its own
    address; each word it refuses, by address; and nvdisasm's other stderr lines, each with the
    address of the piece whose run printed it (the stream's end for a run over the whole
    stream), so that sorting them with the refusals by address gives the order they were met in."""

    lines: list[Decoded]
    refused: dict[int, Refusal]
    notes: list[tuple[int, str]]


def read_words(code: bytes, nvdisasm_arch: str, raw: bool = False, running=None, base: int = 0) -> Words:
    """`code` (a whole number of 16-byte words, at least one) read so that every word is either
    listed (its text as nvdisasm gives it in the whole stream at address 0) or refused with
    nvdisasm's reason: a stream nvdisasm refuses is read again with a NOP in place of each word its
    errors name, and in halves only where it names none (as disassemble; `bobc dump` and `diff`
    use this for a region's instruction texts).  A tool that cannot list one NOP is refused by its
    path (refuse_broken_tool).  `running`: the children.Running of the pool this runs in, else None.
    `base`: the stream's address (-base); every address of the answer is one (`base` + offset)."""
    done = _run(code, nvdisasm_arch, raw, base, running)
    if len(done.lines) == len(code) // 16:
        return Words(done.lines, {}, [(base + len(code), line) for line in done.stderr.splitlines() if line.strip()])
    refuse_broken_tool(nvdisasm_arch, running)
    return _around(code, nvdisasm_arch, raw, done, running, base)


def _around(code: bytes, nvdisasm_arch: str, raw: bool, done: Disassembly, running=None, base: int = 0) -> Words:
    """`code` read word by word after nvdisasm's reading `done` of it (at `base`) left words out:
    again with a NOP in place of each word its errors name (at most 4 rounds: a patched stream may
    name more), else in halves (_pieces)."""
    bad: dict[int, Refusal] = {}
    for _ in range(4):
        named = {int(m.group(1), 16): line for line in done.stderr.splitlines()
                 for m in [_AT_ADDRESS.search(line)] if m}
        named = {a: line for a, line in named.items()
                 if 0 <= a - base < len(code) and (a - base) % 16 == 0 and a not in bad}
        if not named:
            break
        bad.update({a: Refusal(line, done.returncode) for a, line in named.items()})
        done = _run(_patched(code, [a - base for a in bad], nvdisasm_arch), nvdisasm_arch, raw, base, running)
        if len(done.lines) == len(code) // 16:
            return Words([line for line in done.lines if line.offset not in bad], bad,
                         [(base + len(code), line) for line in done.stderr.splitlines() if line.strip()])
    refuse_broken_tool(nvdisasm_arch, running)
    words = Words([], {}, [])
    _pieces(code, nvdisasm_arch, raw, base, words, running)
    return words


# (nvtools.tool_identity, arch) of each nvdisasm this process saw list one NOP of the target:
# asked again after every listing that went wrong (a stream decoded in halves asks at each
# refused half), the answer for the same file is the same, so it is asked once per tool and arch;
# another file (BOBC_NVDISASM changed, an upgrade) is another identity and is asked again
_WORKING: set[tuple[str, str]] = set()


def refuse_broken_tool(nvdisasm_arch: str, running=None) -> None:
    """Refuse (exit 1, by its path) an nvdisasm that does not list one NOP of the target as one
    instruction, which every working nvdisasm does: asked only after a listing went wrong, so a
    tool that fails (or prints no listing) is not said as every word of the code being
    undecodable, nor as code with no instruction (probe s36 exitcodes finding 4).  `running`: the
    children.Running of the pool this runs in (a stopped pool starts no NOP run), else None."""
    known = (tool_identity(require_nvdisasm()), nvdisasm_arch)
    if known in _WORKING:
        return
    done = _run(nop_word(nvdisasm_arch), nvdisasm_arch, False, 0, running)
    if len(done.lines) == 1 and not done.stderr.strip():
        _WORKING.add(known)
        return
    said = done.stderr.strip().splitlines()
    what = f"it fails on one NOP ({said[0]})" if said else f"it lists {len(done.lines)} instructions for one NOP"
    raise BobcError(f"nvdisasm at {require_nvdisasm()} does not work: {what}",
                    hint="reinstall it (pip install --force-reinstall nvidia-cuda-nvdisasm), or point "
                         "BOBC_NVDISASM at a working nvdisasm")


def _said(stderr: str) -> str:
    return "; ".join(line.replace("nvdisasm error", "").strip(" :") for line in stderr.splitlines()
                     if line.strip()) or "nvdisasm decodes nothing"


def _undecodable(code: bytes, address: int, why: str) -> str:
    lo = int.from_bytes(code[address:address + 8], "little")
    hi = int.from_bytes(code[address + 8:address + 16], "little")
    return f"{address:#06x}: undecodable word {lo:#018x} {hi:#018x} ({why})"


def _patched(code: bytes, bad, nvdisasm_arch: str) -> bytes:
    """`code` with a NOP of the target in place of each undecodable word (`bad`: their offsets)."""
    if not bad:
        return code
    nop = nop_word(nvdisasm_arch)
    out = bytearray(code)
    for address in bad:
        out[address:address + 16] = nop
    return bytes(out)


def nop_word(nvdisasm_arch: str) -> bytes:
    """One NOP of the target nvdisasm calls `nvdisasm_arch` (SM90, SM86), as our encoder writes it."""
    from ..targets import TARGETS
    from .encoder import Encoder
    from .syntax import parse_instruction

    arch = next(t.name for t in TARGETS.values() if t.nvdisasm_arch == nvdisasm_arch.rstrip("af"))
    return Encoder(arch).encode(parse_instruction("NOP")).to_bytes(16, "little")


def _pieces(code: bytes, arch: str, raw: bool, base: int, words: Words, running=None) -> None:
    """Decode `code` (at `base`) in halves until each piece nvdisasm refuses is one word."""
    done = _run(code, arch, raw, base, running)
    if len(done.lines) == len(code) // 16:
        words.lines.extend(done.lines)
        words.notes.extend((base, line) for line in done.stderr.splitlines() if line.strip())
        return
    if len(code) == 16:
        words.refused[base] = Refusal(done.stderr, done.returncode)
        return
    half = len(code) // 32 * 16
    _pieces(code[:half], arch, raw, base, words, running)
    _pieces(code[half:], arch, raw, base + half, words, running)


def _run(code: bytes, nvdisasm_arch: str, raw: bool, base: int, running=None) -> Disassembly:
    """One nvdisasm call over `code`, placed at address `base` (nvtools.run_on_code: a run that
    succeeded is kept in the user cache).  `running`: the children.Running of the pool this runs
    in, else None."""
    tool = require_nvdisasm()
    from ..errors import descriptors_exhausted

    options = ["-b", nvdisasm_arch, "-hex"] + (["-raw"] if raw else []) + (["-base", f"{base:#x}"] if base else [])
    try:
        done = run_on_code(tool, options, code, running)
    except OSError as e:
        exhausted = descriptors_exhausted(e, "starting nvdisasm")     # ulimit -n: exit 8, not the tool's fault
        if exhausted is not None:
            raise exhausted from None
        raise BobcError(f"cannot run nvdisasm at {tool}: {e.strerror}",
                        hint="pip install nvidia-cuda-nvdisasm (or set BOBC_NVDISASM)") from None
    # nvdisasm names the file it read (`Object file /tmp/tmpXXXX/code.bin is not readable` for an
    # empty stream): run_on_code says it as "the instruction stream"
    stderr = done.stderr
    if not code and not stderr.strip():
        stderr = "the instruction stream is empty"
    return Disassembly(parse_hex_listing(done.stdout), stderr, done.returncode)


def parse_hex_listing(listing: str) -> list[Decoded]:
    """(offset, text, lo, hi) for each instruction of an `nvdisasm -hex` listing."""
    out: list[Decoded] = []
    pending: tuple[int, str, int] | None = None
    for line in listing.splitlines():
        m = _LINE.search(line)
        if m:
            text = m.group(2).strip()
            if text.endswith(";"):
                text = text[:-1].rstrip()
            text = re.sub(r"\s+", " ", text)
            text = text.replace(" ;", "").strip()
            pending = (int(m.group(1), 16), text, int(m.group(3), 16))
            continue
        m = _HI.match(line)
        if m and pending is not None:
            out.append(Decoded(pending[0], pending[1], pending[2], int(m.group(1), 16)))
            pending = None
    return out
