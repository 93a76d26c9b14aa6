"""Seed 004's host built from a variant tree (variant_tree.py's changes, e.g. `fusedadamw`, `clusters`),
run through bobc's simulator for one update of the small configuration, against the host built from
this tree: every output -- checkpoint, predictions, result record -- must be byte for byte the same.
Each side runs in its own tree's Python (outputs(): build, stream, fresh checkpoint, one simulated
train invocation); about a minute each here.  Exit status 1 when they differ.

    BOBC_CACHE_DIR=off python bench/coppelius_host/sim_variant.py CHANGE...

Session 24: clusters identical (results/coppelius-host-sim-clusters-s24.txt, through sim_clusters.py).
Session 25: fusedadamw, fusedadamw leaftree (+ tn2stages) and leaftree identical
(results/coppelius-host-sim-variants-s25.txt).
"""
import argparse
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEXT = REPO / "tests" / "data" / "coppelius" / "tinyshakespeare-64k.txt"
# one side's digests, printed by this file in the tree it is run from
DIGESTS = """
import json, sys, tempfile, importlib.util
from pathlib import Path
spec = importlib.util.spec_from_file_location("sim_variant", Path("bench/coppelius_host/sim_variant.py").resolve())
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
with tempfile.TemporaryDirectory(prefix="sim-variant-") as folder:
    print(json.dumps(module.outputs(Path(folder))))
"""


def prepared(folder: Path, seed: int = 3) -> tuple[Path, Path, Path]:
    """This tree's seed 004 host (small, sm_90, one publication of one update), the tests' text as a
    stream and a fresh checkpoint of `seed`, under `folder`."""
    sys.path[:0] = [str(REPO / "compiler"), str(REPO / "examples" / "coppelius")]
    from coppelius_host import build, checkpoint
    from coppelius_model import stream
    root = build.plan_copy(folder / "plan", 1, 1, "small")
    host = build.build_from(root, "sm_90", folder / "coppelius-host")
    text = folder / "text.stream"
    text.write_bytes(stream.from_bytes(TEXT.read_bytes()).encode())
    fresh = folder / "fresh.ckpt"
    fresh.write_bytes(checkpoint.encode(checkpoint.fresh("small", seed=seed), "small", 1))
    return host, text, fresh


def simulate(host: Path, text: Path, fresh: Path, runs: Path, seed: int = 3, say=print) -> None:
    """One simulated train invocation from `fresh`, its outputs under `runs`."""
    from coppelius_host import sim_compare
    sim_compare.compare(host, text, fresh, runs, invocations=1, seed=seed, config_name="small", say=say)


def outputs(folder: Path, seed: int = 3) -> dict[str, str]:
    """One simulated train invocation of one update from a fresh checkpoint: each output's digest."""
    runs = folder / "runs"
    simulate(*prepared(folder, seed), runs, seed)
    return {str(path.relative_to(runs)): hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            for path in sorted(runs.rglob("*")) if path.is_file() and not path.name.startswith("start")}


def digests(tree: Path) -> dict[str, str]:
    """The outputs' digests of one simulated update of the host built from `tree`."""
    env = dict(os.environ, PYTHONPATH=str(tree / "compiler"), BOBC_CACHE_DIR="off")
    done = subprocess.run([sys.executable, "-c", DIGESTS], cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{tree}: the simulated update failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def arguments(argv: list[str]) -> list[str]:
    """variant_tree.py's arguments after the tree (its CHANGEs, --split, --empty), checked here,
    before anything is built: --help says what this script does, a misspelt change stops it."""
    spec = importlib.util.spec_from_file_location("variant_tree", REPO / "bench/coppelius_host/variant_tree.py")
    variant_tree = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(variant_tree)
    parser = argparse.ArgumentParser(prog="sim_variant.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("changes", nargs="*", metavar="CHANGE",
                        help="variant_tree.py's changes: " + " ".join(variant_tree.CHANGES))
    parser.add_argument("--split", metavar="MAX,MIN[,FEW]", help="variant_tree.py's --split")
    parser.add_argument("--empty", action="append", default=[], metavar="GLOB", help="variant_tree.py's --empty")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.changes) - set(variant_tree.CHANGES))
    if unknown:
        parser.error(f"unknown change {', '.join(unknown)} (known: {' '.join(variant_tree.CHANGES)})")
    if not args.changes and not args.split and not args.empty:
        parser.error("name the variant_tree.py CHANGEs (or --split, --empty) to simulate against this tree's host")
    return args.changes + (["--split", args.split] if args.split else []) + \
        [word for glob in args.empty for word in ("--empty", glob)]


def main(changes: list[str] | None = None) -> int:
    changes = arguments(sys.argv[1:] if changes is None else changes)
    with tempfile.TemporaryDirectory(prefix="sim-variant-tree-") as folder:
        tree = Path(folder) / "tree"
        subprocess.run([sys.executable, str(REPO / "bench/coppelius_host/variant_tree.py"), str(tree), *changes],
                       check=True)
        plain, variant = digests(REPO), digests(tree)
    print(f"this tree: {plain}")
    print(f"{' '.join(changes)}: {variant}")
    same = plain == variant
    print("every output byte for byte this tree's host's:", same)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
