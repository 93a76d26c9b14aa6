"""The generated host: its data follows the plan, and on a machine without a GPU
it checks its inputs, refuses bad ones with the documented exit codes, and
says it needs a GPU (exit 6).  Kernel machine code is stood in (fixed-size
zero bytes) so these run before and apart from the assembler."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "plan"))

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


@pytest.fixture(scope="module")
def built_sm90():
    import plan_support
    from bobc.language import load_program
    from bobc.nvidia.encode import encode_images
    from bobc.pipeline import Built
    from bobc.plan.extract import extract_plan
    from bobc.targets import SM90

    program = load_program(plan_support.NATIVE_HOST, target=SM90, intrinsics=plan_support.fake_kernels())
    plan = extract_plan(program, "bobNativeHost")
    return Built(program, plan, encode_images(plan.program, SM90))


@pytest.fixture(scope="module")
def host(built_sm90, tmp_path_factory):
    from bobc.host import generate
    from bobc.targets import SM90

    output = tmp_path_factory.mktemp("host") / "bob-host"
    generate.build_host(built_sm90, SM90, output)
    return output


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    output = tmp_path_factory.mktemp("record") / "record.bin"
    subprocess.run([sys.executable, str(REPO / "examples" / "bob" / "build_fixture.py"),
                    str(REPO / "examples" / "bob" / "corpus.txt"),
                    "--prompts-file", str(REPO / "examples" / "bob" / "prompts.txt"), "-o", str(output)],
                   check=True)
    return output


def run(host, *args, cwd):
    return subprocess.run([str(host), *args], capture_output=True, text=True, cwd=cwd)


def test_steps_follow_the_plan(built_sm90):
    """Seed 001 and bob.md: forward = 7 submissions (loss, 3 x gather/argmax), then for train the
    10 AdamW updates' fills (step size, epsilon, t into launches 7, 9, ..., 25) before the
    remaining 26 submissions."""
    from bobc.host import generate

    steps = generate._steps(built_sm90.plan, built_sm90.images.manifest)
    submits = [s.values["gp_put"] for s in steps if s.name == "submit"]
    assert submits == [7, 33]
    fills = [built_sm90.plan.host.fills[s.values["fill"]] for s in steps if s.name == "scalar_fill"]
    assert [(f.launch, f.step) for f in fills] == [(7 + 2 * k, k + 1) for k in range(10) for _ in range(3)]
    names = [s.name for s in steps]
    assert names.index("operation") < names.index("scalar_fill") < names.index("submit", 3)
    assert names.count("checkpoint_publish") == 1


def test_c_string_escapes_are_exact():
    from bobc.host.generate import HostGenerationError, c_string

    assert c_string(b'a"b\\c?1') == '"a\\042b\\134c\\0771"'
    assert c_string(bytes([0xcd, 0x33])) == '"\\3153"'   # octal never swallows the next digit
    with pytest.raises(HostGenerationError):
        c_string(b"a\0b")


def test_double_literal_is_the_exact_binary64(tmp_path):
    """gcc reads each literal back as exactly the double it was made from."""
    import struct

    from bobc.host.generate import double_literal

    values = (0.1, float(struct.unpack("<f", struct.pack("<I", 0x3f7fbe77))[0]), 1e-300, 1.0, 0.0, 2.0 ** 31)
    source = tmp_path / "d.c"
    source.write_text("#include <stdio.h>\n#include <string.h>\n#include <stdint.h>\nint main(void){"
                      "double v[] = {" + ", ".join(double_literal(v) for v in values) + "};"
                      "for (unsigned i = 0; i < sizeof v / sizeof v[0]; i++) { uint64_t b; memcpy(&b, &v[i], 8);"
                      " printf(\"%016llx\\n\", (unsigned long long)b); } return 0; }\n")
    subprocess.run(["gcc", "-o", str(tmp_path / "d"), str(source)], check=True)
    out = subprocess.run([str(tmp_path / "d")], capture_output=True, text=True, check=True).stdout.split()
    assert [int(x, 16) for x in out] == [struct.unpack("<Q", struct.pack("<d", v))[0] for v in values]


def test_host_embeds_the_encoded_images(host, built_sm90):
    from bobc.host import sections

    embedded = sections.read(host)
    images = built_sm90.images
    assert embedded["program"] == images.program and embedded["qmd"] == images.qmd
    assert embedded["push"] == images.push and embedded["gpfifo"] == images.gpfifo


def test_host_is_statically_linked(host):
    listing = subprocess.run(["readelf", "-d", str(host)], capture_output=True, text=True).stdout
    assert "NEEDED" not in listing


@pytest.mark.skipif(os.path.exists("/dev/nvidiactl"), reason="this machine has a GPU")
def test_without_a_gpu_the_host_says_so(host, record, tmp_path):
    result = run(host, "train", "--input", str(record), "--checkpoint-out", "c.bin",
                 "--predictions", "p.bin", "--result", "r.bin", cwd=tmp_path)
    assert result.returncode == 6, result.stderr
    assert "no NVIDIA GPU" in result.stderr
    assert not any(tmp_path.iterdir()), "nothing may be written when the GPU is missing"


def test_bad_record_is_refused_before_the_gpu(host, tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"BOBINPUT" + bytes(100))
    result = run(host, "predict", "--input", str(bad), "--checkpoint-out", "c.bin",
                 "--predictions", "p.bin", "--result", "r.bin", cwd=tmp_path)
    assert result.returncode == 3
    assert "bad.bin" in result.stderr and "1,564" in result.stderr


def test_foreign_checkpoint_is_refused_by_part(host, record, built_sm90, tmp_path):
    import dataclasses

    import numpy as np

    from bob_model import formats

    contract = dataclasses.replace(built_sm90.plan.checkpoint, seed=b"someone-elses-seed")
    zeros = np.zeros(65536, dtype=np.float32)
    foreign = tmp_path / "foreign.bin"
    foreign.write_bytes(formats.encode_checkpoint(contract, formats.Checkpoint(zeros, zeros, zeros, 0)))
    result = run(host, "train", "--input", str(record), "--checkpoint", str(foreign), "--checkpoint-out", "c.bin",
                 "--predictions", "p.bin", "--result", "r.bin", cwd=tmp_path)
    assert result.returncode == 5, result.stderr
    assert "seed" in result.stderr


def test_usage_errors_exit_2(host, tmp_path):
    result = run(host, "fly", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("bob-host: error: unknown operation 'fly'")   # the executable's name
    helped = run(host, "--help", cwd=tmp_path)
    assert helped.returncode == 0
    # the usage names the plan's host and its record, from the plan
    assert "bob-native-host-v1" in helped.stdout and "the 1564-byte input record" in helped.stdout


@pytest.mark.parametrize("target,layout,compute_class", [("sm_86", "V03_00", 0xC7C0), ("sm_90", "V04_00", 0xCBC0)])
def test_bobc_build_makes_a_host_for_each_target(target, layout, compute_class, tmp_path):
    """The whole pipeline through the CLI, real kernels: the host carries its target's
    images (sm_86: Ampere's AMPERE_COMPUTE_B and V03_00 QMDs, ready for an RTX node)."""
    import json

    from bobc.host import sections

    plan = REPO / "examples" / "bob" / "Bob" / "Build" / "NativeHost.bob"
    result = subprocess.run([sys.executable, "-m", "bobc", "build", str(plan), "--target", target, "-o", "host"],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    embedded = sections.read(tmp_path / "host")
    manifest = json.loads(embedded["manifest"])
    assert (manifest["target"], manifest["qmd_layout"], manifest["compute_class"]) == (target, layout, compute_class)
    golden = REPO / "tests" / "golden" / f"bob-{target}"
    for name, file in (("program", "program.bin"), ("qmd", "qmd.bin"), ("push", "push.bin"), ("gpfifo", "gpfifo.bin")):
        assert embedded[name] == (golden / file).read_bytes(), name
    inspected = subprocess.run([sys.executable, "-m", "bobc", "inspect", "host"], capture_output=True, text=True,
                               cwd=tmp_path)
    assert target in inspected.stdout and ".bobc.qmd" in inspected.stdout


def test_buffers_go_where_the_plan_declares_them(built_sm90):
    """Each buffer gets the memory Bob.Build.NativeHost declares (video memory for the
    arena and the command images, system memory for the semaphores and the GPFIFO),
    changing a declaration changes the host, and a kind the runtime cannot map is refused."""
    import dataclasses

    from bobc.host import generate
    from bobc.targets import SM90

    def line_of(source, name):
        return next(l for l in source.splitlines() if f'"{name}"' in l).rstrip()

    source = generate.render(built_sm90, SM90)
    for name in ("program", "qmd", "pushbuffer", "arena"):
        assert line_of(source, name).endswith("RT_MEM_VIDEO },"), name
    for name in ("semaphores", "gpfifo"):
        assert line_of(source, name).endswith("RT_MEM_SYSTEM },"), name
    def with_buffers(buffers):
        host = dataclasses.replace(built_sm90.plan.host, buffers=tuple(buffers))
        return dataclasses.replace(built_sm90, plan=dataclasses.replace(built_sm90.plan, host=host))

    buffers = [dataclasses.replace(b, memory="system") if b.name == "arena" else b
               for b in built_sm90.plan.host.buffers]
    system = with_buffers(buffers)
    assert line_of(generate.render(system, SM90), "arena").endswith("RT_MEM_SYSTEM },")
    odd = with_buffers(dataclasses.replace(b, memory="gpu-cached-system") for b in buffers)
    with pytest.raises(generate.HostGenerationError, match="gpu-cached-system"):
        generate.render(odd, SM90)
