"""A hand-written Coppelius.Configuration (docs/coppelius.md, "A shape of your own") whose identity is
not the one the tools name its shape by is refused where it is defined, naming the identity to write.

Probe s45 coppuser: the docs' example copied with other numbers and the identity left as it was
(b"coppelius-1x384x256-v1" 1 256 128 ...) type checked and built a host whose every checkpoint
`coppelius_host.checkpoint fresh --config 1x256x128` writes was refused as foreign (exit 5); the only
other start, no --checkpoint, is the all-zero state, from which Coppelius never learns.

The expected identity is the tools' own (coppelius_model.config.named(SHAPE).identity, what
`checkpoint fresh --config SHAPE` writes into the envelope), not the plan's computation."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from coppelius_model.config import named

from .conftest import EXAMPLE, REPOSITORY


def check(folder, identity: str, layers: int, width: int, context: int, chunk: int):
    module = folder / "Coppelius" / "Configuration.bob"
    module.parent.mkdir(parents=True)
    module.write_text("module Coppelius.Configuration\n\nimport Coppelius.Model\n\n"
                      "def coppeliusShape : (family CoppeliusShape) =\n"
                      f"  (constructor CoppeliusShape CoppeliusShapeValue b\"{identity}\" {layers} {width} {context} "
                      f"{chunk} (refl Bytes b\"\"))\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "bobc", "check", str(module), "-I", str(EXAMPLE)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler")})
    return module, done


@pytest.mark.parametrize("identity, numbers, shape", [
    ("coppelius-1x384x256-v1", (1, 256, 128, 8388608), "1x256x128"),        # the docs' example, numbers changed
    ("coppelius-4x256x128-v1", (4, 256, 128, 8388608), "small"),            # small's numbers are small
    ("coppelius-1x256x128:8388608-v1", (1, 256, 128, 8388608), "1x256x128"),  # the default chunk is not spelt
    ("coppelius-1x256x128-v1", (1, 256, 128, 4194304), "1x256x128:4194304"),  # another chunk is
])
def test_an_identity_the_tools_do_not_name_the_shape_by_is_refused(tmp_path, identity, numbers, shape):
    module, done = check(tmp_path, identity, *numbers)
    assert done.returncode == 1, done.stderr
    expected = named(shape).identity.decode()
    assert f"{module}:5:5: error: the equality coppeliusShape claims in field coppeliusShapeServed" in done.stderr
    assert (f'left:  b"identity (coppeliusShapeIdentity) {identity} is not {expected}, the identity '
            "coppelius_host.checkpoint fresh --config and coppelius_host.build --config name this shape by") in done.stderr


@pytest.mark.parametrize("shape", ["1x256x128", "1x256x128:4194304", "small"])
def test_the_tools_identity_is_admitted(tmp_path, shape):
    c = named(shape)
    _, done = check(tmp_path, c.identity.decode(), c.layers, c.width, c.context, c.chunk_bytes)
    assert done.returncode == 0, done.stderr


def test_a_broken_rule_and_the_identity_are_both_said(tmp_path):
    _, done = check(tmp_path, "mine", 2, 192, 128, 8388608)
    assert done.returncode == 1
    said = done.stderr.split('left:  b"', 1)[1].split('"\n', 1)[0].split("; ")
    assert [rule.split(" ", 2)[:2] for rule in said] == [["width", "(coppeliusShapeWidth)"]] * 2 + [
        ["identity", "(coppeliusShapeIdentity)"]]
    assert said[-1].startswith("identity (coppeliusShapeIdentity) mine is not coppelius-2x192x128-v1,")
