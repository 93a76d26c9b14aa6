"""Seed 004's host built from a variant tree (variant_tree.py's changes, e.g. `fusedadamw`), run
through bobc's simulator for one update of the small configuration, against the host built from this
tree: every output -- checkpoint, predictions, result record -- must be byte for byte the same.
Each side runs in its own tree's Python (sim_clusters.outputs: build, stream, fresh checkpoint,
one simulated train invocation); about a minute each here.  Exit status 1 when they differ.

    BOBC_CACHE_DIR=off python bench/coppelius_host/sim_variant.py CHANGE...

Session 25: fusedadamw, fusedadamw leaftree and leaftree identical (bench/results/coppelius-host-sim-variants-s25.txt).
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DIGESTS = """
import json, sys, tempfile, importlib.util
from pathlib import Path
spec = importlib.util.spec_from_file_location("sim_clusters", Path("bench/coppelius_host/sim_clusters.py").resolve())
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps(module.outputs(Path(tempfile.mkdtemp(prefix="sim-variant-")), False)))
"""


def digests(tree: Path) -> dict[str, str]:
    """The outputs' digests of one simulated update of the host built from `tree`."""
    env = dict(os.environ, PYTHONPATH=str(tree / "compiler"), BOBC_CACHE_DIR="off")
    done = subprocess.run([sys.executable, "-c", DIGESTS], cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{tree}: the simulated update failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    changes = sys.argv[1:]
    if not changes:
        raise SystemExit("name the variant_tree.py CHANGEs to simulate against this tree's host")
    tree = Path(tempfile.mkdtemp(prefix="sim-variant-tree-")) / "tree"
    subprocess.run([sys.executable, str(REPO / "bench/coppelius_host/variant_tree.py"), str(tree), *changes], check=True)
    plain, variant = digests(REPO), digests(tree)
    print(f"this tree: {plain}")
    print(f"{' '.join(changes)}: {variant}")
    same = plain == variant
    print("every output byte for byte this tree's host's:", same)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
