"""Helpers the plan tests share: Bob's plan paths, fake kernels, values of definitions."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BOB = REPO / "examples" / "bob" / "Bob"
PHYSICAL = BOB / "Build" / "PhysicalComponents.bob"
NATIVE_HOST = BOB / "Build" / "NativeHost.bob"

# fake machine code sizes per kernel source (bytes, multiples of 16 like SASS)
FAKE_SIZES = {
    "bob-row-gather.sass": 384,
    "bob-loss-gradient.sass": 1296,
    "bob-adamw.sass": 736,
    "bob-greedy-argmax.sass": 512,
}


def fake_kernels():
    """An Intrinsics registry whose SM86Program handler returns FAKE_SIZES zero bytes."""
    from bobc.language import Intrinsics, VBytes

    def kernel(value, context):
        program = context.program
        source = program.force(program.force(value).fields[0]).value.decode()
        return VBytes(bytes(FAKE_SIZES[Path(source).name]))

    def images(value, context):
        raise AssertionError("the tests do not encode images")

    registry = Intrinsics()
    registry.register("SM86Program", kernel)
    registry.register("NvidiaWholeProgramPlan", images)
    return registry


def nat(program, name):
    return program.value(name).value


def call(program, name, *args):
    """Apply definition `name` to naturals/bytes, returning the forced result's Python value."""
    from bobc.language import VBytes, VNat
    values = [VNat(a) if isinstance(a, int) else VBytes(a) for a in args]
    return program.apply(program.value(name), *values).value
