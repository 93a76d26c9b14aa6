"""Build Coppelius's host with bobc, for a target and (for tests and benchmarks) a
shorter or longer run than the plan's.

    python -m coppelius_host.build sm_90 -o coppelius-host [--interval N --publications P] [--config C]

C is small (the plan's), large, or a shape LAYERSxWIDTHxCONTEXT[:CHUNK_BYTES] (docs/coppelius.md,
"Shapes"; bobc refuses one the kernels cannot serve, naming the rule).  Without
--interval/--publications/--config this is exactly
`bobc build examples/coppelius/Coppelius/Build/DirectArtifact.bob --entry coppeliusHost
--target T -o OUT` (docs/coppelius-host.md).  With them, the plan modules are copied to a
scratch folder and Coppelius.TrainingRun's coppeliusRunCheckpointInterval and
coppeliusRunPublications are rewritten there (the seed reads its run from them; nothing
else changes), and the copy is built; --config large copies examples/coppelius/large's
Coppelius.Configuration into the copy (docs/coppelius.md, "Building the large configuration").
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1]
REPOSITORY = EXAMPLE.parents[1]
RUN_DEFINITIONS = {"interval": "coppeliusRunCheckpointInterval", "publications": "coppeliusRunPublications"}


def plan_copy(folder: Path, interval: int | None = None, publications: int | None = None,
              config: str = "small") -> Path:
    """examples/coppelius/Coppelius copied under `folder` with the run rewritten (and, for the
    large configuration, examples/coppelius/large's Coppelius.Configuration in place of the
    small one: a module beside the plan wins over the search path; for another shape, one
    written for it); the copy's root."""
    copy = folder / "Coppelius"
    shutil.copytree(EXAMPLE / "Coppelius", copy)
    if config == "large":
        shutil.copyfile(EXAMPLE / "large" / "Coppelius" / "Configuration.bob", copy / "Configuration.bob")
    elif config != "small":
        (copy / "Configuration.bob").write_text(configuration_module(config), encoding="utf-8")
    run = copy / "TrainingRun.bob"
    text = run.read_text(encoding="utf-8")
    for key, value in (("interval", interval), ("publications", publications)):
        if value is None:
            continue
        pattern = rf"^def {RUN_DEFINITIONS[key]} : Nat = \d+$"
        text, count = re.subn(pattern, f"def {RUN_DEFINITIONS[key]} : Nat = {int(value)}", text, flags=re.M)
        if count != 1:
            raise RuntimeError(f"{run}: no single `def {RUN_DEFINITIONS[key]} : Nat = <number>` to rewrite")
    run.write_text(text, encoding="utf-8")
    return folder


def configuration_module(name: str) -> str:
    """A Coppelius.Configuration choosing the shape `name` (coppelius_model.config.named)."""
    if str(EXAMPLE) not in sys.path:
        sys.path.insert(0, str(EXAMPLE))
    from coppelius_model.config import named

    c = named(name)
    return (f"module Coppelius.Configuration\n\nimport Coppelius.Model\n\n"
            f"-- the shape {name} (coppelius_host.build; docs/coppelius.md, \"Shapes\")\n"
            f"def coppeliusShape : (family CoppeliusShape) =\n"
            f"  (constructor CoppeliusShape CoppeliusShapeValue b\"{c.identity.decode()}\" {c.layers} {c.width} "
            f"{c.context} {c.chunk_bytes} (refl Bytes b\"\"))\n")


def bobc_environment() -> dict:
    """bobc from this checkout; wheels carried in .whl/ (the GPU machine has no lark) importable."""
    paths = [str(REPOSITORY / "compiler"), *map(str, sorted((REPOSITORY / ".whl").glob("*.whl")))]
    existing = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths + ([existing] if existing else []))}


def build_from(root: Path, target: str, output: Path) -> Path:
    """`bobc build ROOT/Coppelius/Build/DirectArtifact.bob --entry coppeliusHost`; returns `output`.
    Raises RuntimeError with bobc's message on a refusal."""
    output = Path(output).absolute()      # bobc runs from the repository: the caller's path, not its
    arguments = ["build", str(root / "Coppelius/Build/DirectArtifact.bob"), "--entry", "coppeliusHost",
                 "--target", target, "-I", str(EXAMPLE), "-o", str(output)]
    command = [sys.executable, "-m", "bobc", *arguments]
    done = subprocess.run(command, cwd=REPOSITORY, capture_output=True, text=True, env=bobc_environment())
    if done.returncode != 0:
        raise RuntimeError(f"bobc build failed (exit {done.returncode}):\n{done.stderr}")
    return output


def build(target: str, output: Path, interval: int | None = None, publications: int | None = None,
          config: str = "small") -> Path:
    """Build the host (from a rewritten copy when the run or the configuration differs from the plan's)."""
    if interval is None and publications is None and config == "small":
        return build_from(EXAMPLE, target, output)
    with tempfile.TemporaryDirectory(prefix="coppelius-host-") as scratch:
        return build_from(plan_copy(Path(scratch), interval, publications, config), target, output)


SEED_NUMBERS = ("coppeliusRunSubmissionCount", "coppeliusRunPublications", "coppeliusRunCheckpointInterval",
                "coppeliusRunSteps", "coppeliusCheckpointPayloadBytesNatural", "coppeliusContextStreamBytes",
                "coppeliusTokenStreamHeaderBytes", "coppeliusChunkBytes", "cgChunks", "coppeliusContext")


def seed_numbers(root: Path = EXAMPLE) -> dict[str, int]:
    """The numbers seed 004 states, evaluated from the plan modules under `root`."""
    from bobc.language import Intrinsics, load_program

    program = load_program(root / "Coppelius/Build/NativeHost.bob", include=[str(EXAMPLE)], intrinsics=Intrinsics())
    return {name: program.value(name).value for name in SEED_NUMBERS}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coppelius_host.build", description=__doc__.splitlines()[0])
    parser.add_argument("target", choices=("sm_86", "sm_90"))
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--interval", type=int)
    parser.add_argument("--publications", type=int)
    from .checkpoint import config_choices
    parser.add_argument("--config", default="small", help=config_choices())
    args = parser.parse_args(argv)
    try:
        build(args.target, args.output, args.interval, args.publications, args.config)
    except (RuntimeError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
