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


class BuildFailed(RuntimeError):
    """`bobc build` refused: its message, and its exit code (`exit_code`), which main passes on."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


def build_from(root: Path, target: str, output: Path, max_evaluation_steps: int | None = None) -> Path:
    """`bobc build ROOT/Coppelius/Build/DirectArtifact.bob --entry coppeliusHost`; returns `output`.
    Raises BuildFailed with bobc's message and exit code on a refusal."""
    output = Path(output).absolute()      # bobc runs from the repository: the caller's path, not its
    arguments = ["build", str(root / "Coppelius/Build/DirectArtifact.bob"), "--entry", "coppeliusHost",
                 "--target", target, "-I", str(EXAMPLE), "-o", str(output)]
    if max_evaluation_steps is not None:
        arguments += ["--max-evaluation-steps", str(max_evaluation_steps)]
    command = [sys.executable, "-m", "bobc", *arguments]
    done = subprocess.run(command, cwd=REPOSITORY, capture_output=True, text=True, env=bobc_environment())
    if done.returncode != 0:
        raise BuildFailed(f"bobc build failed (exit {done.returncode}):\n{done.stderr}", done.returncode)
    return output


# --interval and --publications: each at least 1 (0 updates is no run, and 0 publications publish
# nothing); together, no more updates an invocation than one host's program holds.  The seed's
# request is lowered (nvidiaPlanHostRequestCommands) to one native program with every update and
# publication unrolled: 29 commands an update, 2 x CHUNKS + 2 a publication (the checkpoint gathered
# chunk by chunk) and 5 x CHUNKS + 56 besides, CHUNKS being the shape's checkpoint chunks (5 small,
# 16 large; tests/coppelius/test_shape_limits.py checks this against built hosts' --version).
# `bobc build` evaluates the program's command list one level a command, so a long one nests past
# the evaluation depth (docs/limits.md: "evaluation nests too deeply even with a 1 GiB stack"),
# minutes into the build.  Measured (probe s32 stream finding 1; sm_86 and sm_90 alike): 2,560 x 1
# updates of the small shape (74,333 commands) build, 2,816 x 1 (81,757) nest too deeply.
COMMANDS_AN_UPDATE = 29
MOST_COMMANDS = 74_333


def program_commands(interval: int, publications: int, chunks: int) -> int:
    """The commands of the host's program for `interval` x `publications` updates of a shape whose
    checkpoint has `chunks` chunks (the count `--version` of the built host prints)."""
    return (COMMANDS_AN_UPDATE * interval * publications + (2 * chunks + 2) * publications
            + 5 * chunks + 56)


def shape_chunks(config: str) -> int:
    """The chunks of `config`'s checkpoint (coppelius_model.config: the plan's cgChunks)."""
    from .checkpoint import config_named
    from coppelius_model.config import chunks_for, payload_bytes_for

    shape = config_named(config)
    return chunks_for(payload_bytes_for(shape.layers, shape.width, shape.context), shape.chunk_bytes)


def most_interval(publications: int, config: str = "small") -> int:
    """The longest period a host of `config` with `publications` publications can be built for (0: none)."""
    chunks = shape_chunks(config)
    return max(0, (MOST_COMMANDS - program_commands(0, publications, chunks)) // (COMMANDS_AN_UPDATE * publications))


def most_publications(interval: int, config: str = "small") -> int:
    """The most publications of `interval` updates a host of `config` can be built for (0: none)."""
    chunks = shape_chunks(config)
    besides = program_commands(0, 0, chunks)
    return max(0, (MOST_COMMANDS - besides) // (program_commands(interval, 1, chunks) - besides))


def plan_run(root: Path = EXAMPLE) -> dict[str, int]:
    """The plan's own --interval and --publications (Coppelius.TrainingRun, read, not evaluated)."""
    text = (root / "Coppelius" / "TrainingRun.bob").read_text(encoding="utf-8")
    found = {}
    for key, name in RUN_DEFINITIONS.items():
        match = re.search(rf"^def {name} : Nat = (\d+)$", text, flags=re.M)
        if match is None:
            raise RuntimeError(f"{root / 'Coppelius' / 'TrainingRun.bob'}: no single `def {name} : Nat = <number>`")
        found[key] = int(match.group(1))
    return found


def run_refusal(option: str, value: int | None) -> str:
    """Why `--interval`/`--publications` VALUE builds no host on its own ('' when it may)."""
    if value is None or value >= 1:
        return ""
    what = "updates a period" if option == "--interval" else "checkpoints published an invocation"
    return f"{option} {value} is not at least 1 ({what}: docs/coppelius-host.md, \"Building it\")"


def length_refusal(interval: int | None, publications: int | None, config: str = "small") -> str:
    """Why `interval` x `publications` updates an invocation build no host of `config` ('' when they
    may, or when `config` names no shape: shape_refusal says so): more commands than a program
    `bobc build` can evaluate.  Said at once, before anything is copied or evaluated."""
    if interval is None and publications is None:
        return ""
    try:
        chunks = shape_chunks(config)
    except ValueError:
        return ""
    plan = plan_run()
    n = interval if interval is not None else plan["interval"]
    p = publications if publications is not None else plan["publications"]
    commands = program_commands(n, p, chunks)
    if commands <= MOST_COMMANDS:
        return ""
    given = " ".join(f"{option} {value}" + ("" if said else " (the plan's)") for option, value, said in
                     (("--interval", n, interval is not None), ("--publications", p, publications is not None)))
    longest, most = most_interval(p, config), most_publications(n, config)
    by_interval = f"with --publications {p}, --interval at most {longest:,}"
    by_publications = f"with --interval {n}, --publications at most {most:,}"
    if longest and (interval is not None or not most):
        instead = by_interval
    elif most:
        instead = by_publications
    else:
        instead = (f"with --publications 1, --interval at most {most_interval(1, config):,}; with --interval 1, "
                   f"--publications at most {most_publications(1, config):,}")
    return (f"{given}: {n * p:,} updates an invocation make a host program of {commands:,} commands "
            f"({COMMANDS_AN_UPDATE} an update, {2 * chunks + 2} a publication, {program_commands(0, 0, chunks)} "
            f"besides: {config} has {chunks} checkpoint chunk{'' if chunks == 1 else 's'}), more than the {MOST_COMMANDS:,} a build evaluates "
            f"(a longer one nests too deeply: docs/limits.md); {instead} (docs/coppelius-host.md, \"Building it\")")


def shape_refusal(config: str) -> str:
    """Why --config CONFIG builds no host ('' when it may): the plan's shape rules
    (Coppelius.Model.coppeliusShapeRefusal), before any copy is made or built."""
    from .checkpoint import config_refusal

    return config_refusal(config)


class Refused(ValueError):
    """A run length or shape no host serves, refused before anything is built: a usage error."""

    exit_code = 2


def build(target: str, output: Path, interval: int | None = None, publications: int | None = None,
          config: str = "small", max_evaluation_steps: int | None = None) -> Path:
    """Build the host (from a rewritten copy when the run or the configuration differs from the plan's).
    Refuses (ValueError) a run length or shape no host serves before building anything; a refusal of
    bobc's in the copy names examples/coppelius's files, which the copy's lines are."""
    for refusal in (lambda: run_refusal("--interval", interval), lambda: run_refusal("--publications", publications),
                    lambda: length_refusal(interval, publications, config), lambda: shape_refusal(config)):
        said = refusal()
        if said:
            raise Refused(said)
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
            raise BuildFailed(f"{said.rstrip()}\nnote: built from a copy of {EXAMPLE / 'Coppelius'} for {options} "
                              "(its Coppelius/TrainingRun.bob's run and Coppelius/Configuration.bob's shape "
                              "rewritten, every line where it was); the copy is removed",
                              getattr(error, "exit_code", 1)) from None


SEED_NUMBERS = ("coppeliusRunSubmissionCount", "coppeliusRunPublications", "coppeliusRunCheckpointInterval",
                "coppeliusRunSteps", "coppeliusCheckpointPayloadBytesNatural", "coppeliusContextStreamBytes",
                "coppeliusTokenStreamHeaderBytes", "coppeliusChunkBytes", "cgChunks", "coppeliusContext")


def seed_numbers(root: Path = EXAMPLE) -> dict[str, int]:
    """The numbers seed 004 states, evaluated from the plan modules under `root`."""
    from bobc.language import Intrinsics, load_program
    from bobc.targets import SM86

    program = load_program(root / "Coppelius/Build/NativeHost.bob", include=[str(EXAMPLE)], intrinsics=Intrinsics(), target=SM86)
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
    """The command line; its exit code: 0 built, 2 a usage error (the run or the --config shape refused
    before anything is built among them), bobc's own when bobc refused (1, 8 an output it cannot write), else 1."""
    description = " ".join((__doc__ or "").split("\n\n")[0].split())      # the docstring's first paragraph
    parser = argparse.ArgumentParser(prog="python -m coppelius_host.build", description=description)
    parser.add_argument("target", choices=("sm_86", "sm_90"),
                        help="the GPU built for: sm_90 (H100, H200) or sm_86 (RTX A5000 class); it picks the host too")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="HOST",
                        help="the host executable written (replaced atomically; bobc build -o)")
    plan = plan_run()
    parser.add_argument("--interval", type=_count("--interval"), metavar="N",
                        help=f"updates a period (the plan's: {plan['interval']}); at least 1")
    parser.add_argument("--publications", type=_count("--publications"), metavar="P",
                        help=f"checkpoints published an invocation (the plan's: {plan['publications']}); at least 1, "
                             f"and N x P updates no more than a host's program of {MOST_COMMANDS:,} commands holds "
                             f"({most_interval(1):,} for small with P 1; a usage error names the rule): "
                             f"docs/coppelius-host.md, \"Building it\"")
    from .checkpoint import config_choices
    parser.add_argument("--config", default="small", help=config_choices())
    parser.add_argument("--max-evaluation-steps", type=_positive, metavar="S",
                        help="bobc build's evaluation-step limit (docs/limits.md), for a plan meant to take more")
    args = parser.parse_args(argv)
    refusal = length_refusal(args.interval, args.publications, args.config) or shape_refusal(args.config)
    if refusal:
        parser.error(refusal)
    try:
        build(args.target, args.output, args.interval, args.publications, args.config, args.max_evaluation_steps)
    except (RuntimeError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return getattr(error, "exit_code", 1)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
