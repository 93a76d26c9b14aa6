"""Hostile inputs and output paths: the C host and the reference runner give the
same verdict (exit code) for every case, nothing hangs, nothing crashes."""
from __future__ import annotations

import os
import struct
import zlib

from fuzzing import SCALE, Verdicts, rng_for

HEADER = struct.Struct("<8sIIQQQQ4I")


def recrc(data: bytes) -> bytes:
    """The checkpoint with its CRC made right again (so the checks after it run)."""
    h, payload = struct.unpack_from("<I", data, 8)[0], struct.unpack_from("<Q", data, 24)[0]
    body = h + payload
    if body + 12 != len(data):
        return data
    return data[:body] + struct.pack("<I", zlib.crc32(data[:body])) + data[body + 4:]


def folder_with(tmp_path, index: int, files: dict):
    folder = tmp_path / f"case{index:05d}"
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


def agree(verdicts: Verdicts, category: str):
    differences = verdicts.compare(category)
    assert not differences, f"{len(differences)} disagreements (label, C, reference): {differences[:10]}"


def test_checkpoint_header_bit_flips(host, plan_files, tmp_path):
    """Single-bit flips of the header (and some of the payload and trailer), CRC left
    as it is and CRC made right again: every one refused alike."""
    rng = rng_for("bit-flips")
    good, record = plan_files["checkpoint"], plan_files["record"]
    h = struct.unpack_from("<I", good, 8)[0]
    verdicts = Verdicts(host, tmp_path)
    for index in range(60 * SCALE):
        where = rng.choice(["header"] * 4 + ["payload", "trailer"])
        if where == "header":
            bit = rng.randrange(8 * h)
        elif where == "payload":
            bit = rng.randrange(8 * h, 8 * (len(good) - 12))
        else:
            bit = rng.randrange(8 * (len(good) - 12), 8 * len(good))
        flipped = bytearray(good)
        flipped[bit // 8] ^= 1 << (bit % 8)
        data = recrc(bytes(flipped)) if rng.random() < 0.5 else bytes(flipped)
        folder = folder_with(tmp_path, index, {"record.bin": record, "in.ckpt": data})
        verdicts.add(f"flip bit {bit}", folder, op=rng.choice(["train", "predict"]),
                     checkpoint="in.ckpt")
    agree(verdicts, "checkpoint bit flips")


def test_truncations_and_extensions(host, plan_files, tmp_path):
    rng = rng_for("truncations")
    good, record = plan_files["checkpoint"], plan_files["record"]
    verdicts = Verdicts(host, tmp_path)
    for index in range(30 * SCALE):
        kind = rng.choice(["checkpoint", "record"])
        base = good if kind == "checkpoint" else record
        if rng.random() < 0.7:
            data = base[:rng.randrange(len(base))]
        else:
            data = base + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        files = {"record.bin": data if kind == "record" else record}
        if kind == "checkpoint":
            files["in.ckpt"] = data
        folder = folder_with(tmp_path, index, files)
        verdicts.add(f"{kind} of {len(data)} bytes", folder,
                     checkpoint="in.ckpt" if kind == "checkpoint" else None)
    agree(verdicts, "truncations")


FORGED_VALUES = [0, 1, 15, 16, 63, 64, 65, 443, 2 ** 31, 2 ** 32 - 10, 2 ** 32 - 1, 2 ** 32,
                 2 ** 63, 2 ** 64 - 1, 2 ** 64 - 443]


def test_forged_sizes_and_steps(host, plan_files, tmp_path):
    """Header fields forged with the CRC made right: sizes, identity lengths, chunk
    fields, steps near the u32 edge (step room), non-zero padding."""
    rng = rng_for("forged")
    good, record = plan_files["checkpoint"], plan_files["record"]
    fields = {"header bytes": (8, "<I"), "chunk count": (12, "<I"), "step": (16, "<Q"),
              "payload bytes": (24, "<Q"), "chunk bytes": (32, "<Q"), "updates": (40, "<Q"),
              "schema length": (48, "<I"), "learner length": (52, "<I"),
              "data length": (56, "<I"), "seed length": (60, "<I")}
    verdicts = Verdicts(host, tmp_path)
    cases = [("step", v) for v in (2 ** 32 - 10, 2 ** 32 - 11, 2 ** 32 - 12, 2 ** 32 - 1, 2 ** 32,
                                   2 ** 63, 2 ** 64 - 1)]
    cases += [(rng.choice(sorted(fields)), rng.choice(FORGED_VALUES)) for _ in range(40 * SCALE)]
    for index, (name, value) in enumerate(cases):
        offset, fmt = fields[name]
        data = bytearray(good)
        struct.pack_into(fmt, data, offset, value % (1 << (8 * struct.calcsize(fmt))))
        folder = folder_with(tmp_path, index, {"record.bin": record, "in.ckpt": recrc(bytes(data))})
        verdicts.add(f"{name} = {value}", folder, op=rng.choice(["train", "train", "predict"]),
                     checkpoint="in.ckpt")
    h = struct.unpack_from("<I", good, 8)[0]
    identities = sum(struct.unpack_from("<4I", good, 48))
    for index in range(len(cases), len(cases) + 4):
        data = bytearray(good)
        if 64 + identities < h:
            data[rng.randrange(64 + identities, h)] = rng.randrange(1, 256)
        folder = folder_with(tmp_path, index, {"record.bin": record, "in.ckpt": recrc(bytes(data))})
        verdicts.add("non-zero padding", folder, checkpoint="in.ckpt")
    agree(verdicts, "forged sizes and steps")


def test_special_files_as_inputs(host, plan_files, tmp_path):
    """FIFOs, devices, folders, symlinks, a sparse 3 GiB file, a missing file."""
    good, record = plan_files["checkpoint"], plan_files["record"]
    verdicts = Verdicts(host, tmp_path)
    kinds = ["fifo", "dev-null", "dev-zero", "folder", "symlink-to-file", "dangling-symlink",
             "sparse-3GiB", "missing", "empty"]
    index = 0
    for role in ("record", "checkpoint"):
        for kind in kinds:
            folder = folder_with(tmp_path, index, {"record.bin": record, "good.ckpt": good})
            target = folder / ("special.bin")
            if kind == "fifo":
                os.mkfifo(target)
            elif kind == "dev-null":
                target.symlink_to("/dev/null")
            elif kind == "dev-zero":
                target.symlink_to("/dev/zero")
            elif kind == "folder":
                target.mkdir()
            elif kind == "symlink-to-file":
                target.symlink_to("good.ckpt" if role == "checkpoint" else "record.bin")
            elif kind == "dangling-symlink":
                target.symlink_to("nowhere")
            elif kind == "sparse-3GiB":
                with open(target, "wb") as handle:
                    handle.truncate(3 << 30)
            elif kind == "empty":
                target.write_bytes(b"")
            if role == "record":
                verdicts.add(f"record: {kind}", folder, input="special.bin")
            else:
                verdicts.add(f"checkpoint: {kind}", folder, checkpoint="special.bin")
            index += 1
    agree(verdicts, "special files")


def test_output_path_cases(host, plan_files, tmp_path):
    """Symlinks (to a file, a folder, nowhere), folders, FIFOs, devices, trailing
    slashes, missing folders, aliases of each other and of the inputs."""
    good, record = plan_files["checkpoint"], plan_files["record"]
    verdicts = Verdicts(host, tmp_path)

    def case(label, setup=None, checkpoint=None, **paths):
        index = len(verdicts.cases)
        folder = folder_with(tmp_path, index, {"record.bin": record, "in.ckpt": good,
                                               "old.bin": b"old"})
        if setup:
            setup(folder)
        verdicts.add(label, folder, checkpoint=checkpoint, **paths)

    case("plain")
    case("resume in place", checkpoint="in.ckpt", checkpoint_out="in.ckpt")
    case("into a subfolder", lambda f: (f / "sub").mkdir(), result="sub/r.bin")
    case("symlink to a file", lambda f: (f / "link").symlink_to("old.bin"), predictions="link")
    case("symlink to a folder", lambda f: ((f / "d").mkdir(), (f / "link").symlink_to("d")),
         result="link")
    case("dangling symlink", lambda f: (f / "link").symlink_to("nowhere"), checkpoint_out="link")
    case("folder", lambda f: (f / "d").mkdir(), predictions="d")
    case("fifo", lambda f: os.mkfifo(f / "p"), result="p")
    case("/dev/null", predictions="/dev/null")
    case("trailing slash", checkpoint_out="ck/")
    case("trailing slash on a folder", lambda f: (f / "ck").mkdir(), checkpoint_out="ck/")
    case("missing folder", result="nowhere/r.bin")
    case("folder is a file", result="old.bin/r.bin")
    case("dot", result=".")
    case("dot-dot", result="sub/..", setup=lambda f: (f / "sub").mkdir())
    case("same text twice", predictions="x.bin", result="x.bin")
    case("two spellings", predictions="x.bin", result="./x.bin")
    case("through a symlinked folder",
         lambda f: ((f / "d").mkdir(), (f / "alias").symlink_to("d")),
         predictions="d/x.bin", result="alias/x.bin")
    case("hardlinked outputs", lambda f: os.link(f / "old.bin", f / "hard.bin"),
         predictions="old.bin", result="hard.bin")
    case("result is the input record", result="record.bin")
    case("result is the input record by another name", result="./record.bin")
    case("result is a hardlink of the record", lambda f: os.link(f / "record.bin", f / "r2.bin"),
         result="r2.bin")
    case("predictions is the input checkpoint", checkpoint="in.ckpt", predictions="in.ckpt")
    case("checkpoint-out is the input record", checkpoint_out="record.bin")
    case("output through a symlink to the record",
         lambda f: (f / "rl").symlink_to("record.bin"), result="rl")
    agree(verdicts, "output paths")
