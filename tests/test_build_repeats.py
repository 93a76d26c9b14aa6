"""Work a build repeats for every launch, image encode or value, done once per process
(probe s35 buildspeed): the answers stay the same, only the repetition goes."""
from __future__ import annotations

import pytest

from bobc.sass import cubin, encoder
from bobc.sass.assembler import assemble


def _code(barrier: int, arch: str) -> bytes:
    return bytes(assemble(f"BAR.SYNC.DEFER_BLOCKING {barrier:#x} ;\nEXIT ;\n", arch).code)


class _Counted(bytes):
    """Code that counts the slices taken of it: one scan of its words takes one slice a word."""
    slices = 0

    def __getitem__(self, key):
        _Counted.slices += 1
        return bytes.__getitem__(self, key)


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_a_regions_barrier_count_is_found_once_however_often_its_launches_ask(monkeypatch, arch):
    """probe s35 buildspeed finding 1: each of a plan's launches asks its region's barrier count
    (nvidia/encode.py qmd_barriers) and a build encodes its images four times; the BAR forms of
    the target were gathered from its whole encoding table, and the code scanned, every time
    (Bob: 108 times a build, 16 % of a warm build's profile)."""
    five, two = _code(5, arch), _code(2, arch)
    gathered = []
    real = encoder.forms_for
    monkeypatch.setattr(encoder, "forms_for", lambda a: gathered.append(a) or real(a))
    _Counted.slices = 0
    words = len(five) // 16
    for _ in range(27):
        assert cubin.code_barrier_count(_Counted(five), arch) == 6
    assert len(gathered) <= 1, "the target's BAR forms are gathered once"
    assert _Counted.slices <= words, "one region's code is scanned at most once"
    # other code is its own answer, not the one kept for the first
    assert cubin.code_barrier_count(two, arch) == 3
    assert cubin.code_barrier_count(b"", arch) == 0


def test_the_certifier_reads_a_kernel_the_build_assembled_without_parsing_its_source_again(monkeypatch):
    """probe s35 buildspeed finding 2: a cold build or check assembles each kernel source, then the
    certifier's parameter reads (certify/kernels.py code_reads) parsed the same text a second time
    (Bob's cold check: 11 % of its profile).  Each instruction line is parsed once, and the reads
    found are the same."""
    from pathlib import Path

    from bobc.certify.kernels import as_written, code_reads
    from bobc.sass import assemble_kernel, syntax
    from bobc.targets import target_named

    source = (Path(__file__).resolve().parents[1] / "examples" / "linear_regression" / "LinReg" / "kernels"
              / "linreg-sgd.sass")
    target = target_named("sm_90")
    parsed = []
    real = syntax.parse_instruction
    monkeypatch.setattr(syntax, "parse_instruction", lambda *a, **k: parsed.append(a[0]) or real(*a, **k))
    built = assemble_kernel(source, target, launched=True)
    once = len(parsed)
    reads, problems = code_reads(source, as_written(built, target), target.parameter_base, target)
    assert len(parsed) == once, "the certifier parsed the source the build had just parsed"
    assert not problems and reads
    assert reads == code_reads(source, assemble_kernel(source, target, launched=False).code,
                               target.parameter_base, target)[0]


def test_a_parsed_sources_lines_are_the_callers_own_list():
    """The lines are shared between readers of one text; the list is not."""
    from bobc.sass.syntax import parse_source

    text = "top:\n    EXIT ;\n"
    lines = parse_source(text, "<shared>")
    lines.clear()
    again = parse_source(text, "<shared>")
    assert [line.label for line in again] == ["top", None] and again[1].instruction.mnemonic == "EXIT"
    assert parse_source(text, "<other>")[0].span.path == "<other>"


def test_where_bobcs_library_lives_is_decided_once_per_process(monkeypatch):
    """probe s35 buildspeed finding 3: the extraction asks for the specs/ folder at every library
    family value it reads (plan/extract.py is_library_family), and each ask read and searched the
    checkout's pyproject.toml again (Coppelius's cold build: 8,717 reads, 4 % of its profile).
    The answer is the same every time; the file is read at most once."""
    from pathlib import Path

    from bobc import resources
    from bobc.language.modules import specs_folder

    first = specs_folder()
    reads = []
    real = Path.read_text
    monkeypatch.setattr(Path, "read_text",
                        lambda self, *a, **k: (reads.append(self) if self.name == "pyproject.toml" else None)
                        or real(self, *a, **k))
    assert all(specs_folder() == first for _ in range(100))
    assert all(resources.doc("limits.md") == resources.doc("limits.md") for _ in range(10))
    assert len(reads) <= 1


def test_an_instructions_operands_are_placed_once_per_assembly(monkeypatch):
    """probe s35 buildspeed finding 4: the assembler placed every operand of every instruction twice
    (once to learn what it reads and writes for the scheduler, once more to encode the word), a
    third of a cold assembly.  The words stay Encoder.encode's (tests/sass/test_golden_kernels.py,
    tests/golden: every shipped kernel byte for byte)."""
    from pathlib import Path

    from bobc.sass import assemble_kernel
    from bobc.sass.encoder import Encoder
    from bobc.targets import target_named

    source = (Path(__file__).resolve().parents[1] / "examples" / "linear_regression" / "LinReg" / "kernels"
              / "linreg-loss-grad.sass")
    for name in ("sm_86", "sm_90"):
        target = target_named(name)
        placed = []
        real = Encoder.place_operands
        monkeypatch.setattr(Encoder, "place_operands", lambda self, inst, pc=0: placed.append(pc) or real(self, inst, pc))
        built = assemble_kernel(source, target, launched=True)
        monkeypatch.setattr(Encoder, "place_operands", real)
        assert len(placed) == len(built.instructions)


def test_a_kernels_contract_is_parsed_once_for_the_certifier_and_the_launch_order(monkeypatch, tmp_path):
    """probe s35 buildspeed finding 5: a build's certifier (certify.kernel_contracts) and its launch
    ordering (certify/footprints.py program_conflicts) each parsed every kernel's contract.  The
    file is still read each time: an edited source is its new contract, a refused one refused."""
    from pathlib import Path

    from bobc.certify import kernels

    source = tmp_path / "linreg-sgd.sass"
    source.write_bytes((Path(__file__).resolve().parents[1] / "examples" / "linear_regression" / "LinReg"
                        / "kernels" / "linreg-sgd.sass").read_bytes())
    lines = []
    real = kernels._keyword
    monkeypatch.setattr(kernels, "_keyword", lambda path, number, line: lines.append(number) or real(path, number, line))
    first = kernels.parse_contract(source, "linreg-sgd")
    once = len(lines)
    assert once and kernels.parse_contract(source, "linreg-sgd") == first
    assert len(lines) == once, "the same text was parsed again"
    source.write_text(source.read_text() + "//@ block 0\n")
    with pytest.raises(kernels.ContractError, match=":1: |block"):
        kernels.parse_contract(source, "linreg-sgd")


def _counted_encodes(monkeypatch) -> dict:
    """Count the image encodes and launch orderings from here on (every caller reaches them
    through these module attributes at call time)."""
    from bobc.nvidia import encode

    counts = {"encode_images": 0, "launch_order": 0}
    for name in counts:
        real = getattr(encode, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            counts[_name] += 1
            return _real(*args, **kwargs)
        monkeypatch.setattr(encode, name, counted)
    return counts


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_a_build_encodes_its_images_once_per_target(monkeypatch, arch):
    """probe s36 encodeonce finding 1: a `bobc build` of Bob encoded its device images (and
    ordered its launches) four times for one target -- three times in the certifier
    (check_host_buffers, then _mapped_spans for check_host_steps and again for
    check_host_writes) and once more for the build -- and a `bobc check` three times.  The
    certifier's one encode is the build's (footprints.shipped_images), which the build takes:
    the same images as an encode of their own."""
    from pathlib import Path

    from bobc import pipeline
    from bobc.certify.footprints import program_conflicts
    from bobc.nvidia.encode import encode_images
    from bobc.targets import target_named

    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    target = target_named(arch)
    plan_path = Path(__file__).resolve().parents[1] / "examples" / "bob" / "Bob" / "Build" / "NativeHost.bob"
    counts = _counted_encodes(monkeypatch)
    built = pipeline.compile_plan(plan_path, target)
    assert counts == {"encode_images": 1, "launch_order": 1}
    folders = getattr(built.program, "search_path", ())
    fresh = encode_images(built.plan.program, target, program_conflicts(built.plan.program, target, folders))
    assert (built.images.program, built.images.qmd, built.images.push, built.images.gpfifo, built.images.manifest) \
        == (fresh.program, fresh.qmd, fresh.push, fresh.gpfifo, fresh.manifest)
    # handed over once: a second encode of the plan encodes again, the same images
    counts.update(encode_images=0, launch_order=0)
    again = pipeline.encode(built.plan, target, folders)
    assert counts["encode_images"] == 1 and again.push == fresh.push and again is not built.images


def test_a_check_encodes_its_images_once(monkeypatch, capsys):
    from bobc.cli import main

    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    counts = _counted_encodes(monkeypatch)
    assert main(["check", "examples/bob/Bob/Build/NativeHost.bob", "--target", "sm_90"]) == 0
    assert counts == {"encode_images": 1, "launch_order": 1}

