"""The plan modules (examples/coppelius/Coppelius) and the Python specification
(coppelius_model) declare the same Coppelius: the parameter counts, the checkpoint's
payload and chunks, every arena resident's address and extent, the submission count
the seed's proofs use, and every launch of every submission, kernel, grid and parameter
word, in order (small, and large since session 45).  The arena is certified and the device
side has no hazard (small); the large configuration's numbers agree too."""
from __future__ import annotations

import pytest

from bobc.language import Intrinsics, load_program
from bobc.targets import SM86

from coppelius_model import graph, layout
from coppelius_model.config import LARGE, SMALL

from .conftest import EXAMPLE

PROBE = """module Probe

import Coppelius.ArenaPlan
import Coppelius.Build.DeviceImages
import Coppelius.Build.Graph
import Coppelius.Build.PhysicalComponents
import Coppelius.TrainingRun
import Hardware.Nvidia.SM86.Command.WholeProgramPlan
import Runtime.ArenaCertificate

def parameters : Nat = coppeliusParameterCount
def payload : Nat = coppeliusCheckpointPayloadBytesNatural
def chunks : Nat = cgChunks
def submissions : Nat = coppeliusSubmissionCount
def launches : Nat = coppeliusLaunchCount
def video : Nat = coppeliusSM86CompatVideoBytesNatural
def residents : (family ArenaResidents) = coppeliusArenaResidents
def certified : Nat = (coppeliusArenaCertifiedOf 0)
def admitted : Nat = coppeliusSchedulesAdmitted
def adamw0 : Nat = (coppeliusAdamWLaunch 0 0)
def schedule : (family NvidiaLaunchSchedule) = (coppeliusLaunchScheduleAt cgNoPlace)
def hazard : Nat = (coppeliusDeviceHazardOf 0)
def runHazard : Nat = (coppeliusRunDeviceHazardOf 0)
"""


def load(tmp_path, *folders):
    path = tmp_path / "Probe.bob"
    path.write_text(PROBE, encoding="utf-8")
    program = load_program(path, include=[*folders, EXAMPLE], intrinsics=Intrinsics(), target=SM86)
    program.check()
    return program


def residents_of(program):
    out, value = [], program.value("residents")
    while value.constructor == "ArenaResidentsNext":
        resident = program.force(value.fields[0])
        name, address, size = (program.force(resident.fields[i]).value for i in range(3))
        out.append((name.decode(), address, size))
        value = program.force(value.fields[1])
    return out


def launches_of(program, value):
    value = program.force(value)
    if value.constructor == "NvidiaLaunchScheduleEmpty":
        return []
    if value.constructor == "NvidiaLaunchScheduleAppend":
        return launches_of(program, value.fields[0]) + launches_of(program, value.fields[1])
    template = program.force(value.fields[0])
    identity = program.force(template.fields[0]).value.decode()
    kernel = program.force(template.fields[1])
    grid = tuple(program.force(kernel.fields[i]).value for i in (1, 2, 3))
    patches, words = program.force(program.force(template.fields[2]).fields[0]), {}
    while patches.constructor == "NvidiaParameterPatchesNext":
        patch = program.force(patches.fields[0])
        word = program.force(patch.fields[0]).value - 0x160 // 8
        words[word] = program.force(program.force(patch.fields[1]).fields[0]).value
        patches = program.force(patches.fields[1])
    return [(identity, grid, tuple(words[i] for i in range(len(words))))]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return load(tmp_path_factory.mktemp("small"))


def check_numbers(program, config):
    assert program.value("parameters").value == config.parameter_count
    assert program.value("payload").value == layout.checkpoint_payload_bytes(config)
    assert program.value("chunks").value == len(layout.chunks(config))
    pieces = graph.pieces(config)
    assert program.value("submissions").value == len(pieces)
    assert program.value("launches").value == sum(len(p.launches) for p in pieces)
    assert program.value("video").value == layout.arena_bytes(config)
    python = [(r.name.split(".")[-1], r.address, r.bytes) for r in layout.arena(config).values()]
    assert residents_of(program) == python
    assert program.value("certified").value == 1
    update_first = sum(len(p.launches) for p in pieces[:[p.name for p in pieces].index("update")])
    adamw = [i for i, l in enumerate(graph.update_launches(config)) if l.kernel == "coppelius-adamw-half"]
    assert program.value("adamw0").value == update_first + adamw[0]


def test_small_numbers_and_arena_agree(small):
    check_numbers(small, SMALL)


def test_every_launch_agrees_word_for_word(small):
    planned = launches_of(small, small.definition("schedule").thunk)
    python = [(l.kernel, l.grid, l.words) for p in graph.pieces(SMALL) for l in p.launches]
    assert len(planned) == len(python)
    for index, (a, b) in enumerate(zip(planned, python)):
        assert a == b, (index, a[0], b[0])


def test_the_device_side_is_certified(small):
    assert small.value("admitted").value == 1
    assert small.value("hazard").value == 0
    assert small.value("runHazard").value == 0


def test_large_numbers_and_arena_agree(tmp_path):
    check_numbers(load(tmp_path, EXAMPLE / "large"), LARGE)


def test_every_large_launch_agrees_word_for_word(tmp_path):
    """The large plan's launches too (session 45: its split products differ from the small one's --
    h in 2 splits, x', dln2, dln1 in 4 -- and the layer norms that finish their partials read S from
    the plan's own split rule; a few seconds of evaluation)."""
    program = load(tmp_path, EXAMPLE / "large")
    planned = launches_of(program, program.definition("schedule").thunk)
    python = [(l.kernel, l.grid, l.words) for p in graph.pieces(LARGE) for l in p.launches]
    assert len(planned) == len(python)
    for index, (a, b) in enumerate(zip(planned, python)):
        assert a == b, (index, a[0], b[0])


@pytest.mark.parametrize("target_name", ["sm_86", "sm_90"])
def test_every_kernel_region_has_its_kernels_own_budgets(tmp_path, target_name):
    """Each device region's shared memory is what its kernel for the build's target uses (the
    products ask their kernel's `.shared`: on sm_86 the HMMA kernels' tile rings,
    bobc.sass.generate.gemm.shared_bytes, on sm_90 their TMA + warpgroup-MMA variants' ring,
    gemm_sm90.shared_bytes; the others their source's `.shared`, none where it declares none:
    the attention kernels' rows), its block the launches' block,
    and its register budget the source's `.registers` (a QMD that declares less shared memory
    than the kernel touches faults on the GPU; registers declared beyond the kernel's lower how
    many of its blocks an SM holds)."""
    import re

    from bobc.plan.intrinsics import default_intrinsics
    from bobc.sass.generate import gemm, gemm_sm90
    from bobc.targets import TARGETS

    from .conftest import EXAMPLE as example
    count = 17
    text = "module Probe\n\nimport Coppelius.Build.DeviceImages\n\n" + "".join(
        f"def name{k} : Bytes = (coppeliusKernelName {k})\ndef shared{k} : Nat = (coppeliusKernelSharedBytes {k})\n"
        f"def block{k} : Nat = (coppeliusKernelBlockX {k})\ndef registers{k} : Nat = (coppeliusKernelRegisters {k})\n"
        for k in range(count)) + "def count : Nat = coppeliusKernelCount\n"
    (tmp_path / "Probe.bob").write_text(text, encoding="utf-8")
    program = load_program(tmp_path / "Probe.bob", include=[example], target=TARGETS[target_name],
                           intrinsics=default_intrinsics())
    assert program.value("count").value == count
    blocks = {l.kernel: l.block for p in graph.pieces(SMALL) for l in p.launches}
    for k in range(count):
        name = program.value(f"name{k}").value.decode()
        assert name in blocks, f"{name}: a region no launch uses (the encoder would prune it)"
        source = (example / "Realization/Nvidia/SM86" / f"{name}.sass").read_text(encoding="utf-8")
        variant = gemm.VARIANTS.get(name.removeprefix("coppelius-gemm-")) if name.startswith("coppelius-gemm-") else None
        declared_shared = re.search(r"^\.shared (\d+)", source, re.M)
        needs = ((gemm.shared_bytes(variant) if target_name == "sm_86" else gemm_sm90.shared_bytes()) if variant
                 else int(declared_shared.group(1)) if declared_shared else 0)
        assert program.value(f"shared{k}").value == needs, name
        assert program.value(f"block{k}").value == blocks[name], name
        declared = int(re.search(r"^\.registers (\d+)", source, re.M).group(1))
        assert program.value(f"registers{k}").value == declared, name
