"""Build Coppelius's host with bobc, for a target and (for tests and benchmarks) a
shorter or longer run than the plan's.

    python -m coppelius_host.build sm_90 -o coppelius-host [--interval N --publications P] [--config C]
        [--max-evaluation-steps S]

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


def build_from(root: Path, target: str, output: Path, max_evaluation_steps: int | None = None) -> Path:
    """`bobc build ROOT/Coppelius/Build/DirectArtifact.bob --entry coppeliusHost`; returns `output`.
    Raises RuntimeError with bobc's message on a refusal."""
    output = Path(output).absolute()      # bobc runs from the repository: the caller's path, not its
    arguments = ["build", str(root / "Coppelius/Build/DirectArtifact.bob"), "--entry", "coppeliusHost",
                 "--target", target, "-I", str(EXAMPLE), "-o", str(output)]
    if max_evaluation_steps is not None:
        arguments += ["--max-evaluation-steps", str(max_evaluation_steps)]
    command = [sys.executable, "-m", "bobc", *arguments]
    done = subprocess.run(command, cwd=REPOSITORY, capture_output=True, text=True, env=bobc_environment())
    if done.returncode != 0:
        raise RuntimeError(f"bobc build failed (exit {done.returncode}):\n{done.stderr}")
    return output


# --interval and --publications: at least 1 (0 updates is no run, and 0 publications publish
# nothing), at most what one loop of the plan language unrolls (docs/limits.md: a schedule's loop
# past it is refused before it is unrolled)
def run_most() -> int:
    from bobc.language.limits import STRUCTURE_LOOP_COUNT
    return STRUCTURE_LOOP_COUNT


def run_refusal(option: str, value: int | None) -> str:
    """Why `--interval`/`--publications` VALUE builds no host ('' when it may)."""
    if value is None:
        return ""
    most = run_most()
    if not 1 <= value <= most:
        what = "updates a period" if option == "--interval" else "checkpoints published an invocation"
        return f"{option} {value} is outside 1..{most} ({what}: docs/coppelius-host.md, \"Building it\")"
    return ""


def shape_refusal(config: str) -> str:
    """Why --config CONFIG builds no host ('' when it may): the plan's shape rules
    (Coppelius.Model.coppeliusShapeRefusal), before any copy is made or built."""
    from .checkpoint import config_named, host_refusal

    try:
        config_named(config)
    except ValueError as error:
        return f"--config: {error}"
    said = host_refusal(config)
    return f"--config {config}: no host serves this shape: {said} (docs/coppelius.md, \"Shapes\")" if said else ""


def build(target: str, output: Path, interval: int | None = None, publications: int | None = None,
          config: str = "small", max_evaluation_steps: int | None = None) -> Path:
    """Build the host (from a rewritten copy when the run or the configuration differs from the plan's).
    Refuses (ValueError) a run length or shape no host serves before building anything; a refusal of
    bobc's in the copy names examples/coppelius's files, which the copy's lines are."""
    for refusal in (run_refusal("--interval", interval), run_refusal("--publications", publications),
                    shape_refusal(config)):
        if refusal:
            raise ValueError(refusal)
    if interval is None and publications is None and config == "small":
        return build_from(EXAMPLE, target, output, max_evaluation_steps)
    with tempfile.TemporaryDirectory(prefix="coppelius-host-") as scratch:
        try:
            return build_from(plan_copy(Path(scratch), interval, publications, config), target, output,
                              max_evaluation_steps)
        except RuntimeError as error:
            options = " ".join(f"{option} {value}" for option, value in
                               (("--interval", interval), ("--publications", publications), ("--config", config))
                               if value is not None and not (option == "--config" and value == "small"))
            said = str(error).replace(str(Path(scratch)), str(EXAMPLE))
            raise RuntimeError(f"{said.rstrip()}\nnote: built from a copy of {EXAMPLE / 'Coppelius'} for {options} "
                               "(its Coppelius/TrainingRun.bob's run and Coppelius/Configuration.bob's shape "
                               "rewritten, every line where it was); the copy is removed") from None


SEED_NUMBERS = ("coppeliusRunSubmissionCount", "coppeliusRunPublications", "coppeliusRunCheckpointInterval",
                "coppeliusRunSteps", "coppeliusCheckpointPayloadBytesNatural", "coppeliusContextStreamBytes",
                "coppeliusTokenStreamHeaderBytes", "coppeliusChunkBytes", "cgChunks", "coppeliusContext")


def seed_numbers(root: Path = EXAMPLE) -> dict[str, int]:
    """The numbers seed 004 states, evaluated from the plan modules under `root`."""
    from bobc.language import Intrinsics, load_program

    program = load_program(root / "Coppelius/Build/NativeHost.bob", include=[str(EXAMPLE)], intrinsics=Intrinsics())
    return {name: program.value(name).value for name in SEED_NUMBERS}


def _count(option: str):
    """An argparse type for --interval/--publications: a whole number the plan can run."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        refusal = run_refusal(option, value)
        if refusal:
            raise argparse.ArgumentTypeError(refusal.split(" ", 1)[1])
        return value
    return parse


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coppelius_host.build", description=__doc__.splitlines()[0])
    parser.add_argument("target", choices=("sm_86", "sm_90"))
    parser.add_argument("-o", "--output", type=Path, required=True)
    most = run_most()
    parser.add_argument("--interval", type=_count("--interval"), help=f"updates a period, 1 to {most}")
    parser.add_argument("--publications", type=_count("--publications"),
                        help=f"checkpoints published an invocation, 1 to {most}")
    from .checkpoint import config_choices
    parser.add_argument("--config", default="small", help=config_choices())
    parser.add_argument("--max-evaluation-steps", type=_positive, metavar="N",
                        help="bobc build's evaluation-step limit (docs/limits.md), for a plan meant to take more")
    args = parser.parse_args(argv)
    try:
        build(args.target, args.output, args.interval, args.publications, args.config, args.max_evaluation_steps)
    except (RuntimeError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
