"""The compiler-native-encode handlers (bobc.plan.intrinsics)."""
import pytest

from plan_support import FAKE_SIZES, NATIVE_HOST, PHYSICAL, REPO


KERNELS = REPO / "specs" / "Realization" / "Nvidia" / "SM86"


def test_registry_names():
    from bobc.plan.intrinsics import default_intrinsics
    assert default_intrinsics().names() == ["NativePhysicalProgram", "NvidiaResidentProgram", "NvidiaResourceHost",
                                            "NvidiaWholeProgramPlan", "SM86Program", "SM86ProgramSharedMemory"]


def test_kernel_is_assembled_or_refused_by_name():
    """Never empty code: the assembled kernel, or an error naming the kernel's source."""
    from bobc.errors import BobcError
    from bobc.language import load_program
    from bobc.plan.intrinsics import default_intrinsics
    from bobc.targets import SM86
    program = load_program(PHYSICAL, target=SM86, intrinsics=default_intrinsics())
    if not (KERNELS / "bob-greedy-argmax.sass").is_file():
        with pytest.raises(BobcError, match="bob-greedy-argmax.sass"):
            program.value("bobArgmaxMachineBytes")
        return
    code = program.value("bobArgmaxMachineBytes").value
    assert code and len(code) % 16 == 0         # whole 128-bit instructions


def test_whole_program_component_dispatch():
    """Each NvidiaWholeProgramComponent gives that image of the encoder's output."""
    from bobc.language import load_program
    from bobc.nvidia.encode import encode_images
    from bobc.plan.extract import extract_whole_program
    from bobc.plan.intrinsics import default_intrinsics
    from bobc.targets import SM86
    from plan_support import fake_kernels
    registry = default_intrinsics()
    registry.register("SM86Program", fake_kernels().lookup("SM86Program"))
    program = load_program(NATIVE_HOST, target=SM86, intrinsics=registry)
    images = program.value("bobImages")
    fields = {name: program.force(value).value for name, value in zip(images.field_names, images.fields)}
    expected = encode_images(extract_whole_program(program, program.value("bobWholeProgram")), SM86)
    assert fields["nvidiaPlanHostImagesProgram"] == expected.program
    assert fields["nvidiaPlanHostImagesQMD"] == expected.qmd
    assert fields["nvidiaPlanHostImagesPushbuffer"] == expected.push
    assert fields["nvidiaPlanHostImagesGPFIFO"] == expected.gpfifo
    assert len(expected.gpfifo) == 33 * 8            # one 8-byte entry per submission
    assert len(expected.qmd) == 27 * 256             # one V03_00 record per launch
    # the fake code is placed whole
    assert sum(FAKE_SIZES.values()) <= len(expected.program)
