"""The host tools refuse a --config shape with the plan's own rules (probe s33 shapes, findings 1, 2).

Every tool (coppelius_host.checkpoint, .build, .sim_compare) and coppelius_model.config.named
refuse a shape no host serves with the rules `bobc check` reports for the shape's
Coppelius.Configuration (Coppelius.Model.coppeliusShapeRefusal): every broken rule, its field,
value and owner, the same words -- a width that is not a multiple of the head dimension (160, 96,
64, 0) among them, which the tools once refused for "the head dimension 64" alone -- naming
`--config`, a usage error (exit 2).  sim_compare also refuses, before it simulates anything, a
--config that is not its host's shape, naming the host's and the one asked for.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .conftest import EXAMPLE, REPOSITORY

SHAPES = ["1x160x128", "1x96x128", "1x64x128", "2x200x96:1048576", "0x0x128", "1x320x128"]
DOCS = ' (docs/coppelius.md, "Shapes")'


def plans_rules(shape: str, folder) -> list[str]:
    """The broken rules `bobc check` reports for a Coppelius.Configuration of `shape` (written as
    docs/coppelius.md's "A shape of your own" says), in its order."""
    name, _, chunk = shape.partition(":")
    layers, width, context = name.split("x")
    module = folder / "Coppelius" / "Configuration.bob"
    module.parent.mkdir(parents=True)
    module.write_text("module Coppelius.Configuration\n\nimport Coppelius.Model\n\n"
                      "def coppeliusShape : (family CoppeliusShape) =\n"
                      f"  (constructor CoppeliusShape CoppeliusShapeValue b\"coppelius-{shape}-v1\" {layers} {width} "
                      f"{context} {chunk or 8388608} (refl Bytes b\"\"))\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "bobc", "check", str(module), "-I", str(EXAMPLE)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler")})
    assert done.returncode == 1, done.stderr
    assert f"{module}:5:5: error: the equality coppeliusShape claims in field coppeliusShapeServed" in done.stderr
    return done.stderr.split('left:  b"', 1)[1].split('"\n', 1)[0].split("; ")


def tools_rules(said: str, shape: str) -> list[str]:
    """The rules in a tool's refusal of --config SHAPE."""
    head = f"--config: no host serves configuration {shape}: "
    assert head in said, said
    return said.split(head, 1)[1].split(DOCS, 1)[0].split("; ")


@pytest.mark.parametrize("shape", SHAPES)
def test_every_tool_refuses_a_shape_with_the_plans_rules_naming_config(shape, tmp_path, capsys):
    from coppelius_host import build, checkpoint, sim_compare
    from coppelius_model.config import ShapeRefused, config_refusal, named

    rules = plans_rules(shape, tmp_path / "plan")
    assert rules and all(rule.endswith(")") for rule in rules)

    width = int(shape.split("x")[1])
    if width <= 0 or width % 64:                          # no model of heads of 64 can be laid out
        with pytest.raises(ShapeRefused) as refused:
            named(shape)
        assert refused.value.refusal.split("; ") == rules
    else:                                                 # the NumPy model's, which no host serves
        assert config_refusal(named(shape)).split("; ") == rules

    output = tmp_path / "f.ckpt"
    for command in (["fresh", "-o", str(output)], ["show", str(output)]):
        assert checkpoint.main([*command, "--config", shape]) == 2
        assert tools_rules(capsys.readouterr().err, shape) == rules
    assert not output.exists()

    with pytest.raises(SystemExit) as exited:
        build.main(["sm_90", "-o", str(tmp_path / "host"), "--config", shape])
    assert exited.value.code == 2                         # a usage error, as main's docstring says
    assert tools_rules(capsys.readouterr().err, shape) == rules
    assert not (tmp_path / "host").exists()
    with pytest.raises(build.Refused) as refused_build:
        build.build("sm_90", tmp_path / "host", config=shape)
    assert refused_build.value.exit_code == 2 and tools_rules(str(refused_build.value), shape) == rules

    (tmp_path / "HOST").write_bytes(b"not read: the shape is refused first")
    with pytest.raises(SystemExit) as exited:
        sim_compare.main([str(tmp_path / "HOST"), "s", "c", "--out", str(tmp_path / "runs"), "--config", shape])
    assert exited.value.code == 2
    assert tools_rules(capsys.readouterr().err, shape) == rules
    assert not (tmp_path / "runs").exists()


def test_a_name_that_is_no_shape_is_refused_naming_config(tmp_path, capsys):
    from coppelius_host import build, checkpoint

    assert checkpoint.main(["fresh", "-o", str(tmp_path / "f.ckpt"), "--config", "4x256"]) == 2
    assert "error: --config: no Coppelius configuration '4x256'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        build.main(["sm_90", "-o", str(tmp_path / "host"), "--config", "4x256"])
    assert exited.value.code == 2 and "error: --config: no Coppelius configuration '4x256'" in capsys.readouterr().err


@pytest.fixture(scope="module")
def small_host(tmp_path_factory):
    from coppelius_host import build
    folder = tmp_path_factory.mktemp("small-host")
    return build.build("sm_90", folder / "coppelius-host", interval=1, publications=1)


@pytest.mark.parametrize("asked", ["1x384x128", "4x256x256", "large"])
def test_sim_compare_refuses_a_config_that_is_not_its_hosts_before_simulating(small_host, asked, tmp_path, capsys):
    from coppelius_host import sim_compare

    runs = tmp_path / "runs"
    with pytest.raises(SystemExit) as exited:
        sim_compare.main([str(small_host), "stream", "fresh.ckpt", "--out", str(runs), "--config", asked])
    said = capsys.readouterr().err
    assert exited.value.code == 2, said
    assert (f"error: --config {asked}: the host {small_host} is built for configuration small" in said
            and f"{asked} is the configuration asked for: pass --config small" in said), said
    assert "this host's" not in said and not runs.exists()          # nothing simulated
    with pytest.raises(sim_compare.ConfigRefused):
        sim_compare.compare(small_host, tmp_path / "stream", tmp_path / "fresh.ckpt", runs, config_name=asked)
    assert not runs.exists()


def test_sim_compare_takes_its_hosts_shape_however_it_is_spelt(small_host):
    from coppelius_host import sim_compare

    for spelling in ("small", "4x256x128", "04x256x128:8388608"):
        assert sim_compare.config_mismatch(small_host, spelling) == ""
    said = sim_compare.config_mismatch(small_host, "1x256x96")
    assert said.startswith("--config: no host serves configuration 1x256x96: context (coppeliusShapeContext) 96 ")
