"""Coppelius.Build.DirectArtifact: seed 004's host built from the images (issue 17).

The realized tables the seed's host is a function of are read off the encoded images by
the module; here they are read again by decoders that are not the encoder: the
simulator's QMD reader (open-gpu-doc bit positions, compiler/bobc/sim/qmd_reader.py)
for each launch's constant bank 0, the simulator's GPFIFO entry decoder for the ring,
and coppelius_model.graph (the Python specification) for the parameter words the
program image must hold at each realized address.  The seed's admission holds for both
targets' pairings, and a seed copy whose chunk count disagrees with the plan's is
refused naming the proof and both values."""
from __future__ import annotations

import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

from coppelius_host import images as direct
from coppelius_model import graph, model
from coppelius_model.config import SMALL

from .conftest import EXAMPLE, REPOSITORY

TARGETS = ("sm_86", "sm_90")


@pytest.fixture(scope="module", params=TARGETS)
def evaluated(request):
    return direct.evaluate(request.param)


def test_the_seed_admits_the_pairing_built_from_the_images(evaluated):
    assert evaluated.admitted == 1


def test_each_parameter_address_is_its_qmds_constant_bank_plus_the_targets_parameter_base(evaluated):
    """The QMD reads bank 0 from the program residence (the arena plan's resident); the host
    writes the parameters into the program table at the same offset (bobc.nvidia.residence)."""
    from bobc.sim.qmd_reader import read_launch
    from coppelius_model import layout

    target = evaluated.target
    slot = target.qmd_record_bytes
    residence = layout.arena(SMALL)["program-residence"]
    assert evaluated.images.manifest["residence"]["base"] == residence.address
    assert len(evaluated.qmd) == evaluated.launch_count * slot
    assert len(evaluated.parameter_addresses) == evaluated.launch_count
    for launch in range(evaluated.launch_count):
        described = read_launch(evaluated.qmd[launch * slot:(launch + 1) * slot], target.compute_class,
                                f"launch {launch}")
        assert residence.address <= described.cb0_address < residence.end, launch
        assert described.program_address in range(residence.address, residence.end), launch
        table = evaluated.program_base + (described.cb0_address - residence.address)
        assert evaluated.parameter_addresses[launch] == table + target.parameter_base, launch


def test_every_tensor_map_word_names_its_map_in_the_program_residence(evaluated):
    """sm_90's products read their tensor maps through words of their parameter blocks: each
    word names its map's slot at the slot's offset in the residence, where the stage copies it."""
    from coppelius_model import layout

    manifest = evaluated.images.manifest
    maps = manifest.get("tensor_maps", [])
    assert bool(maps) == evaluated.target.tensor_maps
    residence = layout.arena(SMALL)["program-residence"]
    for mapped in maps:
        assert mapped["offset"] + mapped["bytes"] <= residence.bytes
        for user in mapped["users"]:
            block = manifest["launches"][user["launch"]]["parameter_offset"]
            at = block + evaluated.target.parameter_base + 8 * user["argument"]
            word = struct.unpack_from("<Q", evaluated.program, at)[0]
            assert word == residence.address + mapped["offset"], user


def test_the_program_image_holds_the_graphs_words_at_each_realized_address(evaluated):
    """Every launch's parameter words (coppelius_model.graph, in submission order) sit at
    its realized address in the program image, loaded at the program base."""
    launches = [launch for piece in graph.pieces(SMALL) for launch in piece.launches]
    assert len(launches) == evaluated.launch_count
    for index, (launch, address) in enumerate(zip(launches, evaluated.parameter_addresses)):
        offset = address - evaluated.program_base
        held = evaluated.program[offset:offset + 8 * len(launch.words)]
        assert held == launch.parameters(), (index, launch.kernel)


def test_the_adamw_step_words_are_the_first_steps_scalars(evaluated):
    """The word at byte 48 of each AdamW launch's block: alpha_1 and eps_1 as binary32,
    computed here in binary64 with NumPy (coppelius_model.model.adamw_scalars)."""
    scalars = model.adamw_scalars(SMALL, 1)
    expected = struct.unpack("<Q", struct.pack("<ff", scalars.step_size, scalars.epsilon))[0]
    assert len(evaluated.adamw_launches) == 2
    for launch in evaluated.adamw_launches:
        assert evaluated.step_words[launch] == expected, launch
    # and every word of the table is the program image's word at that offset
    for launch, address in enumerate(evaluated.parameter_addresses):
        offset = address + 48 - evaluated.program_base
        assert evaluated.step_words[launch] == struct.unpack_from("<Q", evaluated.program, offset)[0]


def test_the_ring_entries_point_at_the_submissions_pushbuffer_segments(evaluated):
    from bobc.sim.channel import decode_gp_entry

    manifest = evaluated.images.manifest
    base = manifest["bases"]["pushbuffer"]
    entries = [evaluated.gpfifo[i:i + 8] for i in range(0, len(evaluated.gpfifo), 8)]
    assert len(entries) == len(manifest["submissions"])
    end = 0
    for index, raw in enumerate(entries):
        entry = decode_gp_entry(raw, index)
        assert base <= entry.address and entry.address + 4 * entry.dwords <= base + len(evaluated.push), index
        assert entry.address >= end, index          # segments in submission order, disjoint
        end = entry.address + 4 * entry.dwords
    assert np.all(np.diff([decode_gp_entry(r, i).address for i, r in enumerate(entries)]) > 0)


def test_a_seed_copy_with_another_chunk_count_is_refused_naming_the_proof_and_both_values(tmp_path):
    """The seed's chunk size doubled: 3 chunks by the host's arithmetic, 5 by the plan's."""
    copy = tmp_path / "Coppelius"
    shutil.copytree(EXAMPLE / "Coppelius", copy)
    seed = copy / "Build" / "NativeHost.bob"
    text = seed.read_text(encoding="utf-8")
    line = "def coppeliusChunkBytes : Nat = coppeliusSM86CompatCheckpointStagingBytesNatural"
    assert text.count(line) == 1
    seed.write_text(text.replace(line, "def coppeliusChunkBytes : Nat = "
                                       "(naturalMultiply 2 coppeliusSM86CompatCheckpointStagingBytesNatural)"),
                    encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "bobc", "check", str(seed), "-I", str(EXAMPLE)],
                          capture_output=True, text=True,
                          cwd=REPOSITORY)
    assert done.returncode != 0
    assert "coppeliusChunksAgree" in done.stderr, done.stderr
    assert "left:  5" in done.stderr and "right: 3" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("target_name", TARGETS)
def test_bobc_build_writes_the_host_with_the_images_embedded(target_name, tmp_path):
    """`bobc build DirectArtifact.bob --entry coppeliusHost --target T -o HOST`: an x86-64 ELF
    whose program is the seed's request program for the target, with the four images
    DirectArtifact encoded appended under their identities (the sm_86 ones: the goldens)."""
    from bobc.native import artifact

    host = tmp_path / "coppelius-host"
    done = subprocess.run([sys.executable, "-m", "bobc", "build", str(direct.MODULE), "--entry", "coppeliusHost",
                           "--target", target_name, "-o", str(host)], capture_output=True, text=True, cwd=REPOSITORY)
    assert done.returncode == 0, done.stderr
    data = host.read_bytes()
    assert data[:4] == b"\x7fELF" and int.from_bytes(data[18:20], "little") == 62
    split = artifact.split(data, str(host))
    assert split.target == target_name
    evaluated = direct.evaluate(target_name)
    assert [kind for kind, _, _ in split.components] == [1, 2, 3, 4]
    assert [payload for _, _, payload in split.components] == [evaluated.program, evaluated.qmd, evaluated.push,
                                                                evaluated.gpfifo]
    for (_, name, _), part in zip(split.components, ("program", "qmd", "push", "gpfifo")):
        assert name.startswith(b"coppelius|") and name.endswith(f"|{target_name}|{part}".encode()), name
    version = subprocess.run([str(host), "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and f"target: {target_name}" in version.stdout
    card = "NVIDIA H200" if target_name == "sm_90" else "NVIDIA RTX A5000"
    assert f"program: {card}" in version.stdout


def test_every_launch_gets_the_shared_memory_its_kernel_touches(evaluated):
    """The kernels that use shared memory declare it (`.shared N`: the products' 1 KiB reserved
    and tile ring, bobc.sass.generate, which their headers also state as `shared memory N
    bytes`; the attention kernels' rows of S or dP (then v or k) and of P16 or dS); the others use
    none.  Each QMD, read by the simulator's reader, gives its launch at least that (a QMD with
    less faulted the H200)."""
    import re

    from bobc.sim.qmd_reader import read_launch

    from bobc.kernel_search import variant_of, variant_suffix

    sources = direct.EXAMPLE / "Realization" / "Nvidia" / "SM86"
    stated = {}
    for source in sources.glob("coppelius-*.sass"):
        if variant_suffix(source) is not None:
            continue                                  # read below for its target, in its base's place
        text = variant_of(source, evaluated.target).read_text(encoding="utf-8")
        found = re.search(r"^\.shared\s+(\d+)", text, re.M) or re.search(r"shared memory (\d+) bytes", text)
        uses_shared = re.search(r"^\s+(STS|LDS|LDSM|LDGSTS)\b", text, re.M) is not None
        assert found or not uses_shared, f"{source.name} touches shared memory but states no size"
        stated[source.stem] = int(found.group(1)) if found else 0
    target, slot = evaluated.target, evaluated.target.qmd_record_bytes
    for launch, placed in enumerate(evaluated.images.manifest["launches"]):
        described = read_launch(evaluated.qmd[launch * slot:(launch + 1) * slot], target.compute_class, str(launch))
        assert described.shared_memory >= stated[placed["identity"]], (launch, placed["identity"])
