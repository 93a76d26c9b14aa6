"""Coppelius's device images and realized tables as one `bobc build` of
Coppelius.Build.DirectArtifact computes them, read back for checks and goldens.

    python -m coppelius_host.images sm_86 OUTDIR     # the images folder (bobc dump reads it)

The images come from the language's evaluation of the module (the backend's
encoder behind compiler-native-encode), exactly what the built host embeds.
"""
from __future__ import annotations

import functools
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1]
MODULE = EXAMPLE / "Coppelius" / "Build" / "DirectArtifact.bob"


@dataclass
class Evaluated:
    """What DirectArtifact computed for one target."""

    target: object               # bobc.targets.Target
    images: object               # bobc.nvidia.encode.Images (the encoder's, with its manifest)
    program: bytes
    qmd: bytes
    push: bytes
    gpfifo: bytes
    parameter_addresses: list[int]
    step_words: list[int]
    admitted: int
    launch_count: int
    adamw_launches: list[int]    # the update's AdamW launches (pieces 0 and 1)
    program_base: int


def words(table: bytes) -> list[int]:
    return [w for (w,) in struct.iter_unpack("<Q", table)]


@functools.lru_cache(maxsize=None)
def evaluate(target_name: str, include=(), root: Path = EXAMPLE) -> Evaluated:
    """Load DirectArtifact for `target_name` (sm_86, sm_90) and evaluate its images and tables
    (from the plan under `root`: a copy of it for another shape, coppelius_host.build.plan_copy,
    with examples/coppelius in `include`)."""
    from bobc.language import load_program
    from bobc.plan.intrinsics import default_intrinsics
    from bobc.language.values import VNat
    from bobc.targets import target_named

    target = target_named(target_name)
    registry = default_intrinsics()
    module = MODULE if root == EXAMPLE else root / MODULE.relative_to(EXAMPLE)
    program = load_program(module, include=tuple(include), target=target, intrinsics=registry)
    value = lambda name: program.value(name).value                     # noqa: E731
    components = {name: bytes(value(f"coppelius{name}Image")) for name in ("Program", "QMD", "Push", "GPFIFO")}
    encoded = list(registry.encoders.images.values())
    images = encoded[-1] if encoded else None
    launches = value("coppeliusLaunchCount")
    return Evaluated(
        target=target, images=images, program=components["Program"], qmd=components["QMD"],
        push=components["Push"], gpfifo=components["GPFIFO"],
        parameter_addresses=words(bytes(value("coppeliusRealizedParameterTable"))),
        step_words=words(bytes(value("coppeliusRealizedStepWordTable"))),
        admitted=value("coppeliusDirectAdmitted"), launch_count=launches,
        adamw_launches=[program.apply(program.value("coppeliusAdamWLaunch"), VNat(0), VNat(k)).value
                        for k in (0, 1)],
        program_base=value("coppeliusProgramBase"))


def main(argv=None) -> int:
    from bobc.errors import BobcError
    from bobc.nvidia.encode import write_images

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m coppelius_host.images sm_86|sm_90 OUTDIR", file=sys.stderr)
        return 2
    try:     # a bad target, a kernel that does not assemble: bobc's own message, no traceback
        evaluated = evaluate(argv[0])
        write_images(evaluated.images, Path(argv[1]))
    except BobcError as error:
        print(f"python -m coppelius_host.images: {error.render()}", file=sys.stderr)
        return error.exit_code
    print(f"wrote {argv[0]} images to {argv[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
