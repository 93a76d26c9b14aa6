"""`bobc diff` on built hosts: one bit flipped in each image kind is named by meaning.

The bits are flipped in the ELF file itself (in its .bobc.* sections, found
with lief), the way a corrupted or regressed host would differ; what each bit
is comes from the public layouts, written out here by hand:
- a control code's stall count is bits 105..108 of the 128-bit instruction
  (bit 41 of the high word), so +1 stall is bit 1 of byte 13;
- V04_00's CTA_THREAD_DIMENSION0 is MW(1167:1152) (open-gpu-doc clcbc0qmd.h):
  its low bit is bit 0 of QMD byte 144;
- a GPFIFO entry's LENGTH is bits 10..30 of its second dword, so byte 5 bit 2
  (entry bit 42) is length bit 0;
- the first data dword of a submission segment is SEND_PCAS_A's (the QMD
  address >> 8), at segment byte 4;
- bank 0 argument 1 on sm_90 is the word at 0x218 of the launch's block.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path


REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"


def bobc(*args):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True)


def section_offsets(path: Path) -> dict[str, int]:
    import lief

    binary = lief.ELF.parse(str(path))
    return {s.name[len(".bobc."):]: s.offset for s in binary.sections if s.name.startswith(".bobc.")}


def flip(path: Path, offset: int, bit: int) -> None:
    """Flip one bit of an image section, keeping the host consistent (restamp): a damaged host
    is refused (test_raw_bytes.py), a regressed one is compared."""
    data = bytearray(path.read_bytes())
    data[offset] ^= 1 << bit
    path.write_bytes(bytes(restamp(data)))


def restamp(data: bytearray) -> bytearray:
    """A host's bytes with the plan identity in its .bobc.version section made to match its
    (changed) images: a consistent rebuild, not a damaged copy, which diff and dump refuse."""
    from bobc.host import sections, version

    at = sections.spans(bytes(data), "host")
    part = lambda name: bytes(data[at[name][0]:at[name][0] + at[name][1]])      # noqa: E731
    identity = version.identity_of(*(part(n) for n in ("program", "qmd", "push", "gpfifo"))).encode()
    start = at["version"][0] + part("version").index(b"plan identity: sha256 ") + len(b"plan identity: sha256 ")
    data[start:start + 64] = identity
    return data


def test_identical_hosts_are_equal(host):
    done = bobc("diff", host, host)
    assert done.returncode == 0 and "hold the same images" in done.stdout


def test_one_bit_in_each_image_kind_is_named_by_meaning(host, tmp_path):
    changed = tmp_path / "bob-host"
    shutil.copy(host, changed)
    at = section_offsets(changed)
    manifest = json.loads(_section(host, "manifest"))
    region = manifest["regions"][2]
    launch5, launch13 = manifest["launches"][5], manifest["launches"][13]
    submission = manifest["submissions"][3]
    flip(changed, at["program"] + region["place"] + 0x50 + 13, 1)          # stall +1 (if even; the kernel's
                                                                             # fifth instruction, after ACQBULK)
    flip(changed, at["qmd"] + launch5["qmd_offset"] + 1152 // 8, 0)          # CTA_THREAD_DIMENSION0 bit 0
    flip(changed, at["push"] + submission["push_offset"] + 8, 0)             # SEND_PCAS_A data bit 0 (after the
                                                                             # constant-cache invalidate)
    flip(changed, at["gpfifo"] + 4 * 8 + 5, 2)                               # entry 4 LENGTH bit 0 (10 -> 11)
    flip(changed, at["program"] + launch13["parameter_offset"] + 0x218, 0)   # argument 1 bit 0

    done = bobc("diff", host, changed)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("6 difference(s)")

    def line(prefix):
        found = [x for x in lines if x.startswith(prefix)]
        assert len(found) == 1, (prefix, lines)
        return found[0]

    code = line(f"region[2].code[0x0050] ({region['identity']}): ")
    assert "control code [" in code and "(stall 4 -> 5)" in code and "instruction SHF.L.U32" in code
    assert line(f"launch[5].qmd.CTA_THREAD_DIMENSION0 ({launch5['identity']}): 0x40 -> 0x41")
    assert line(f"launch[5].block ({launch5['identity']}): [0x40, 0x1, 0x1] -> [0x41, 0x1, 0x1]")
    push = line(f"submission[3].push[1].SEND_PCAS_A ({submission['identity']}): ")
    assert "QMD at 0x1010000600 -> QMD at 0x1010000700" in push
    ring = line("gpfifo[4] (bob-submission): ")
    assert "length 10 dwords (40 bytes)" in ring and "length 11 dwords (44 bytes)" in ring
    parameter = line(f"launch[13].bank0[0x218] ({launch13['identity']}): 0x11000c0000 -> 0x11000c0001")
    assert "argument 1: the gradients G" in parameter

    as_json = json.loads(bobc("diff", host, changed, "--json").stdout)
    assert {d["kind"] for d in as_json} == {"code", "qmd", "launch", "push", "gpfifo", "bank0"}


def _section(path: Path, name: str) -> bytes:
    import lief

    binary = lief.ELF.parse(str(path))
    return bytes(binary.get_section(".bobc." + name).content)


def test_a_host_and_its_own_images_are_equal(host, tmp_path):
    images = tmp_path / "images"
    assert bobc("build", PLAN, "--target", "sm_90", "--emit-images", images).returncode == 0
    done = bobc("diff", images, host)
    assert done.returncode == 0, done.stdout


def test_diff_usage_errors_exit_2(host, tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    for args in ((host, tmp_path / "absent"), (text, host)):
        done = bobc("diff", *args)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
    assert "neither an image folder nor a host" in bobc("diff", text, host).stderr
    assert bobc("diff", host).returncode == 2


def test_disasm_of_a_host_shows_only_code_regions(host):
    done = bobc("disasm", host, "--region", "bob-adamw")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("region 2 bob-adamw at ")
    assert "nvdisasm:" not in done.stdout and "EXIT" in done.stdout
    assert sum(1 for x in done.stdout.splitlines() if x.startswith("region ")) == 1
    everything = bobc("disasm", host)
    assert everything.returncode == 0 and "nvdisasm:" not in everything.stdout
    assert [x.split()[2] for x in everything.stdout.splitlines() if x.startswith("region ")] == \
        ["bob-row-gather", "bob-loss-gradient", "bob-adamw", "bob-greedy-argmax"]
    wrong = bobc("disasm", host, "--region", "bob-adam")
    assert wrong.returncode == 2 and "bob-adamw" in wrong.stderr
