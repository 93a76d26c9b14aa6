"""Extraction of Bob's native host into the Plan dataclasses (bobc.plan.extract).

Machine code is faked with known sizes (plan_support.FAKE_SIZES: 384, 1296, 736,
512 bytes), so the region places are hand-derived: gather at 0, loss at
align256(384) = 512, AdamW at align256(512 + 1296) = 2048, argmax at
align256(2048 + 736) = 2816; code extent align256(2816 + 512) = 3328.
The launch order is bob.md's: the initial loss, 3 x (gather, argmax),
10 x (AdamW, loss).
"""
import struct
import textwrap

import numpy as np
import pytest

from plan_support import BOB, fake_kernels

PROGRAM_BASE = 0x10_0000_0000
ARENA = 0x11_0000_0000
PARAMETER_WORD = 0x160 // 8       # word 44: the SM86 parameter base


def expected_order():
    order = ["bob-loss-gradient"]
    order += ["bob-row-gather", "bob-greedy-argmax"] * 3
    order += ["bob-adamw", "bob-loss-gradient"] * 10
    return order


def test_regions(plan_fake):
    regions = plan_fake.program.regions
    assert [(r.identity, r.place, len(r.code), r.registers, r.block_x, r.shared_bytes) for r in regions] == [
        ("bob-row-gather", 0, 384, 24, 64, 0),
        ("bob-loss-gradient", 512, 1296, 32, 256, 0),
        ("bob-adamw", 2048, 736, 32, 256, 0),
        ("bob-greedy-argmax", 2816, 512, 32, 1, 0),
    ]
    assert plan_fake.program.program_bytes == 3328 + 27 * 512


def test_launch_schedule(plan_fake):
    launches = plan_fake.program.launches
    assert len(launches) == plan_fake.program.launch_count == 27
    assert [l.identity for l in launches] == expected_order()
    regions = plan_fake.program.regions
    for launch in launches:
        region = regions[launch.region]
        assert region.identity == launch.identity
        assert launch.program_address == PROGRAM_BASE + region.place
        assert launch.grid == ((256, 1, 1) if launch.identity == "bob-adamw" else (1, 1, 1))
        assert launch.block == (region.block_x, 1, 1)
        assert launch.parameter_bytes == 512


def test_parameter_patches(plan_fake):
    launches = plan_fake.program.launches
    words = lambda launch: {p.word - PARAMETER_WORD: p.value for p in launch.patches}
    initial_loss = words(launches[0])
    assert initial_loss == {
        0: ARENA, 1: ARENA + 0xC0000, 2: ARENA + 0x100000 + 528, 3: ARENA + 0x101000,
        6: 0x3fb8aa3b | 0x3f317218 << 32,    # log2 e, ln 2
        7: 0x3b800000,                       # 1 / 256
    }
    assert words(launches[8])[3] == ARENA + 0x102000     # the training loss block
    gather, argmax = words(launches[3]), words(launches[4])   # prompt 1
    assert gather == {0: ARENA + 0x103000 + 1024, 1: ARENA + 0x100000 + 1552 + 4, 2: ARENA}
    assert argmax == {0: ARENA + 0x104000 + 8, 1: ARENA + 0x103000 + 1024}
    adamw = words(launches[7])
    assert [adamw[i] for i in range(4)] == [ARENA, ARENA + 0xC0000, ARENA + 0x40000, ARENA + 0x80000]
    scalars = b"".join(struct.pack("<Q", adamw[4 + i]) for i in range(5))
    assert struct.unpack("<7f2I", scalars[:36])[7:] == (65536, 1)
    assert scalars[36:] == bytes(4)
    # update k carries global step k + 1
    for k in range(10):
        step = words(launches[7 + 2 * k])[8] & 0xFFFFFFFF
        assert step == k + 1


def test_adamw_step_sizes_match_the_hosts_binary64(plan_fake):
    # docs/formats.md: the host computes alpha_t in binary64 and rounds; the
    # plan's exact values agree for the ten baked steps
    lr, b1, b2, eps = (float(np.float32(x)) for x in (0.1, 0.9, 0.999, 1e-8))
    for k in range(10):
        t = k + 1
        launch = plan_fake.program.launches[7 + 2 * k]
        word = {p.word - PARAMETER_WORD: p.value for p in launch.patches}[4]
        alpha = np.float32(lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t))
        epsilon = np.float32(eps * np.sqrt(1 - b2 ** t))
        assert word == int(alpha.view(np.uint32)) | int(epsilon.view(np.uint32)) << 32, t


def test_fills_reproduce_the_baked_scalars(plan_fake):
    """A fresh invocation's fills (input step 0), computed in binary64 by the host, write
    exactly the bytes the plan baked (exactly, in rational arithmetic) into each AdamW block."""
    for fill in plan_fake.host.fills:
        launch = plan_fake.program.launches[fill.launch]
        words = {p.word - PARAMETER_WORD: p.value for p in launch.patches}
        block = b"".join(struct.pack("<Q", words.get(i, 0)) for i in range(9))
        assert fill.encode(fill.step) == block[fill.offset:fill.offset + 4], (fill.launch, fill.offset)


def test_submissions(plan_fake):
    submissions = plan_fake.program.submissions
    assert len(submissions) == plan_fake.program.submission_count == plan_fake.program.gpfifo_entries == 33
    assert [s.launches for s in submissions] == [(i,) for i in range(27)] + [(i,) for i in range(1, 7)]
    assert [s.semaphore_offset for s in submissions] == [16 * i for i in range(33)]
    assert {s.identity for s in submissions} == {"bob-submission"}


def test_whole_program_fields(plan_fake):
    program = plan_fake.program
    assert program.component == "program"
    assert (program.architecture, program.compute_class, program.spa_version) == (0x86, 0xC7C0, 0x86)
    assert (program.program_base, program.qmd_base, program.pushbuffer_base, program.semaphore_base) == (
        0x10_0000_0000, 0x10_1000_0000, 0x10_2000_0000, 0x10_3000_0000)
    assert program.region_alignment == 256
    assert program.qmd_table_bytes == 27 * 256
    for base in (program.program_base, program.qmd_base, program.pushbuffer_base, program.semaphore_base):
        assert base < 2 ** 40 and base % (2 << 20) == 0


def test_contract_and_typed_host(plan_fake):
    import dataclasses

    from bobc.plan.host import Initializer, RecordCheck, RecordLayout
    assert plan_fake.checkpoint.payload_bytes == 786432
    assert plan_fake.checkpoint.chunk_bytes == 262144
    assert plan_fake.checkpoint.seed == b"bob-seed-v1"
    host = plan_fake.host
    assert host.identity == "bob-native-host-v1" and host.device_hazard == 0
    assert host.forward_launches == 7
    assert [(f.launch, f.offset, f.step, f.encoding) for f in host.fills] == [
        (7 + 2 * k, offset, k + 1, encoding) for k in range(10)
        for offset, encoding in ((32, "binary32"), (36, "binary32"), (64, "word32"))]
    assert host.semaphore_stride == 16
    assert dataclasses.replace(host.request, input_checks=()) == RecordLayout(
        input_magic=b"BOBINPUT", input_version=1, input_record_bytes=1564,
        input_targets_offset=528, input_prompts_offset=1552, prompt_count=3,
        prediction_bytes=8, result_record_bytes=5120,          # docs/formats.md
        result_initial_loss_offset=0, result_training_loss_offset=1024,
        result_logit_rows_offset=2048)
    # docs/formats.md's input record: magic, version, pairs (b, target b), target words, prompts
    assert host.request.input_checks == (
        RecordCheck("bytes", "magic", 0, data=b"BOBINPUT"),
        RecordCheck("word", "version", 8, width=8, value=1),
        RecordCheck("index", "pair", 16, width=1, stride=2, count=256),
        RecordCheck("below", "target word", 528, width=4, stride=4, count=256, value=256),
        RecordCheck("same", "pair's target", 17, width=1, stride=2, count=256, other=528, other_width=4,
                    other_stride=4),
        RecordCheck("below", "prompt", 1552, width=4, stride=4, count=3, value=256))
    # docs/formats.md's fresh state: P from SplitMix64 over FNV-1a of the seed, M = V = 0
    assert host.initializers == (Initializer("splitmix64", b"bob-seed-v1", 40, 8388608, 838860800),
                                 Initializer("zero"), Initializer("zero"))
    names = [b.name for b in host.buffers]
    assert names == ["program", "qmd", "pushbuffer", "semaphores", "gpfifo", "arena"]
    for b in host.buffers:
        assert b.host == b.gpu and b.extent % 4096 == 0
    # what the GPU reads again and again in video memory; what the host polls or writes in system memory
    assert {b.name: b.memory for b in host.buffers} == {
        "program": "video", "qmd": "video", "pushbuffer": "video", "arena": "video",
        "semaphores": "system", "gpfifo": "system"}
    arena = host.buffers[-1]
    assert (arena.gpu, arena.extent) == (ARENA, 0x105000)
    assert [(h.name, h.gpu_address, h.size) for h in plan_fake.host_buffers][0] == (
        "program", PROGRAM_BASE, 20480)


def test_host_steps(plan_fake):
    from bobc.plan import host
    steps = plan_fake.host.steps
    assert [s.kind.name for s in steps] == [
        "read", "read", "submit", "write", "write", "write", "write", "operation",
        "submit", "write_at", "write_at", "write_at", "checkpoint_begin", "write", "checkpoint_publish"]
    assert steps[0] == host.ReadStep(file="input", host=ARENA + 0x100000, extent=1564, offset=0, stride=0,
                                     tolerate_empty=0)
    assert steps[1].file == "checkpoint-in" and steps[1].extent == 786432 and steps[1].tolerate_empty == 1
    # the forward launches are the first 7 submissions; a train request issues the rest
    assert steps[2] == host.SubmitStep(gp_put=7, stride=0)
    assert steps[8] == host.SubmitStep(gp_put=33, stride=0)
    # before the operation: the predictions and the result record's three parts in
    # its order (5120 bytes; the training loss block still zeros)
    assert [(s.file, s.host, s.extent) for s in steps[3:7]] == [
        ("predictions", ARENA + 0x104000, 24),
        ("result", ARENA + 0x101000, 1024),
        ("result", ARENA + 0x102000, 1024),
        ("result", ARENA + 0x103000, 3072),
    ]
    # after training: the same places rewritten from the trained table
    assert [(s.file, s.host, s.extent, s.offset) for s in steps[9:12]] == [
        ("predictions", ARENA + 0x104000, 24, 0),
        ("result", ARENA + 0x102000, 1024, 1024),
        ("result", ARENA + 0x103000, 3072, 2048),
    ]
    assert steps[13] == host.WriteStep(file="checkpoint-out", host=ARENA, extent=786432)
    assert steps[14] == host.CheckpointPublishStep(updates=10, invocations=1)


def test_host_issues_every_submission(host_fake):
    count = host_fake.apply(host_fake.value("Platform.Linux.Nvidia.PlanHost.nvidiaPlanHostStepSubmissions"),
                            host_fake.value("bobHostSteps"))
    assert count.value == 33


# ---- refusals name the definition and the value ----

def load_scratch(tmp_path, text, real_kernels=False):
    from bobc.language import load_program
    from bobc.targets import SM86
    folder = tmp_path / "Scratch"
    folder.mkdir(exist_ok=True)
    (folder / "Bad.bob").write_text(textwrap.dedent(text))
    if real_kernels:
        from bobc import pipeline
        return pipeline.load(folder / "Bad.bob", SM86, include=[BOB.parent])
    return load_program(folder / "Bad.bob", include=[BOB.parent], intrinsics=fake_kernels(), target=SM86)


def _plan_with_one_more_launch(tmp_path, kernel: str):
    """A scratch whole-program plan: Bob's launches, then one more AdamW launch of `kernel`
    (an NvidiaLaunchKernel expression), as `badPlan`."""
    return load_scratch(tmp_path, f"""\
        module Scratch.Bad

        import Bob.ArenaPlan
        import Bob.Build.PhysicalComponents
        import Hardware.Nvidia.SM86.Command.WholeProgramPlan
        import Model.Word64

        def badSchedule : (family NvidiaLaunchSchedule) =
          (bobThen bobLaunchSchedule (bobLaunch b"bob-adamw" {kernel} (bobBlock bobNoPatches)))
        def badPlan =
          (constructor NvidiaWholeProgramPlan NvidiaWholeProgramPlanValue
            (constructor NvidiaWholeProgramComponent NvidiaWholeProgramQMDTable)
            (constructor ModelWord32 ModelWord32Value 0x86) (constructor ModelWord32 ModelWord32Value 0xC7C0)
            (constructor ModelWord32 ModelWord32Value 0x86)
            (bobWord64 bobProgramBase) (bobWord64 bobQMDBase) (bobWord64 bobPushbufferBase) (bobWord64 bobSemaphoreBase)
            bobRegionAlignment bobProgramBytes bobRegions badSchedule 28 bobQMDTableBytes bobSubmissionSchedule 33 33)
        """)


def test_launch_into_no_region_is_refused(tmp_path):
    from bobc.errors import BobcError
    from bobc.plan.extract import extract_whole_program
    program = _plan_with_one_more_launch(tmp_path, "(bobKernel 8 1)")
    with pytest.raises(BobcError, match=r"badPlan: launch 27 \(bob-adamw\) runs the program address "
                                        r"0x1000000008 \(place 0x8"):
        extract_whole_program(program, program.value("badPlan"), "badPlan")


def _clustered_plan(tmp_path, cluster: str):
    """Bob's plan with one more launch: AdamW (grid 256) in clusters of `cluster` blocks."""
    return _plan_with_one_more_launch(
        tmp_path, f"(constructor NvidiaLaunchKernel NvidiaLaunchKernelClustered (bobKernel 2048 256) {cluster})")


def test_a_clustered_launch_keeps_its_kernel_and_says_its_cluster(tmp_path):
    """NvidiaLaunchKernelClustered wraps the launch's kernel: the same grid, block and words, and
    the cluster's shape; the other launches are in no clusters."""
    from bobc.plan.extract import extract_whole_program
    program = _clustered_plan(tmp_path, "4 1 1")
    plan = extract_whole_program(program, program.value("badPlan"), "badPlan")
    last = plan.launches[-1]
    assert (last.identity, last.grid, last.block, last.cluster) == ("bob-adamw", (256, 1, 1), (256, 1, 1), (4, 1, 1))
    assert {launch.cluster for launch in plan.launches[:-1]} == {(1, 1, 1)}


def test_a_cluster_around_a_cluster_is_refused(tmp_path):
    from bobc.errors import BobcError
    from bobc.plan.extract import extract_whole_program
    _clustered_plan(tmp_path, "2 1 1")
    text = (tmp_path / "Scratch" / "Bad.bob").read_text().replace(
        "(bobKernel 2048 256) 2 1 1", "(constructor NvidiaLaunchKernel NvidiaLaunchKernelClustered (bobKernel 2048 256) 2 1 1) 2 1 1")
    (tmp_path / "Scratch" / "Bad.bob").write_text(text)
    from bobc.language import load_program
    from bobc.targets import SM86
    program = load_program(tmp_path / "Scratch" / "Bad.bob", include=[BOB.parent], intrinsics=fake_kernels(), target=SM86)
    with pytest.raises(BobcError, match=r"launch 27 \(bob-adamw\)'s clustered kernel should be "
                                        r"NvidiaLaunchKernel.NvidiaLaunchKernelValue"):
        extract_whole_program(program, program.value("badPlan"), "badPlan")


def test_hazard_refuses_the_host(tmp_path):
    from bobc.errors import BobcError
    from bobc.plan.extract import extract_plan
    # the real kernels, not fake_kernels(): the certifier holds each region to its identity's
    # assembled code (session 33), so only Bob's own encodings leave the hazard as the one fault
    program = load_scratch(tmp_path, real_kernels=True, text="""\
        module Scratch.Bad

        import Bob.Build.NativeHost
        import Bob.Build.PhysicalComponents
        import Bob.Learner
        import Bob.TrainingRun
        import Platform.Linux.Nvidia.PlanHost
        import Runtime.ArenaCertificate
        import Runtime.DeviceArenaCertificate

        def badHost : (family NvidiaPlanHost) =
          (constructor NvidiaPlanHost NvidiaPlanHostValue b"bad" bobWholeProgram bobImages bobBuffers
            bobDeviceWindows bobDeviceGlobals bobDevicePhases
            (deviceArenaHazard (constructor ArenaResidents ArenaResidentsEnd) bobDeviceGlobals bobDevicePhases
              bobLaunchSchedule bobSubmissionSchedule)
            bobCheckpointContract bobInitializers bobRequestLayout bobHostFills bobForwardLaunches 16 bobHostSteps)
        """)
    assert extract_plan(program, "badHost").host.device_hazard == 1
    from bobc import pipeline
    from bobc.targets import SM86
    # the certifier finds nothing wrong with the real windows; the plan's own
    # certificate (computed over no windows) still refuses the build
    with pytest.raises(BobcError, match=r"hazard 1 \(a global resident lies outside every window\)"):
        pipeline.check_and_certify(program, SM86, "badHost")


@pytest.mark.parametrize("target_name", ["sm_86", "sm_90"])
def test_certifier_admits_bob(target_name):
    """The extracted plan passes bobc.certify for both targets (images from bobc.nvidia)."""
    from bobc.certify import findings
    from bobc.language import load_program
    from bobc.plan.extract import extract_plan
    from bobc.targets import target_named
    from plan_support import NATIVE_HOST
    target = target_named(target_name)
    plan = extract_plan(load_program(NATIVE_HOST, target=target, intrinsics=fake_kernels()), "bobNativeHost")
    assert findings(plan, target) == []


def test_failed_encoding_is_refused():
    """The seed turns a failed encoding into b""; extraction refuses it by region."""
    from bobc.errors import BobcError
    from bobc.language import Intrinsics, VBytes, load_program
    from bobc.targets import SM86
    from bobc.plan.extract import extract_plan
    from plan_support import NATIVE_HOST
    registry = Intrinsics()
    fake = fake_kernels().lookup("SM86Program")

    def kernel(value, context):
        code = fake(value, context)
        return VBytes(b"") if len(code.value) == 736 else code     # the AdamW kernel "fails"
    registry.register("SM86Program", kernel)
    with pytest.raises(BobcError, match=r"bobNativeHost's program: region bob-adamw has no machine code"):
        extract_plan(load_program(NATIVE_HOST, intrinsics=registry, target=SM86), "bobNativeHost")


def test_kernel_golden_budgets_are_the_plans(plan_fake):
    """bobc.sass.golden assembles the kernel goldens with the register budgets
    Bob.Build.PhysicalComponents declares for its regions."""
    from bobc.sass.golden import REGISTER_BUDGETS
    assert {r.identity: r.registers for r in plan_fake.program.regions} == REGISTER_BUDGETS


def test_bytes_the_schedule_appends_to_the_result(host_fake):
    """Platform.Linux.Nvidia.PlanHost.nvidiaPlanHostStepBytesWritten over Bob's schedule: the
    result record's 5120 bytes (docs/formats.md), appended before the operation step."""
    written = host_fake.value("Platform.Linux.Nvidia.PlanHost.nvidiaPlanHostStepBytesWritten")
    result = host_fake.value("Bob.Build.NativeHost.bobResultFile")
    assert host_fake.apply(written, result, host_fake.value("bobHostSteps")).value == 5120
    predictions = host_fake.value("Bob.Build.NativeHost.bobPredictionsFile")
    assert host_fake.apply(written, predictions, host_fake.value("bobHostSteps")).value == 24
