"""Seed 004's host with its split products in thread-block clusters of (1, 1, S) (variant_tree's
`clusters` change), run through bobc's simulator for one update of the small configuration (its
QMDs read back: QMD_TYPE 3 and the cluster's shape; bank 0 says the cluster, so the sm_90 products
add their partials on chip), against the same host unclustered (through W): every output --
checkpoint, predictions, result record -- must be byte for byte the same.  About 10 minutes on
2 cores; exit status 1 when they differ.

    BOBC_CACHE_DIR=off python bench/coppelius_host/sim_clusters.py

Session 24: identical (bench/results/cuda-cluster-launch-h200.md).
"""
import hashlib
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "compiler"), str(REPO / "examples" / "coppelius")]
TEXT = REPO / "tests" / "data" / "coppelius" / "tinyshakespeare-64k.txt"


def _variant_tree():
    spec = importlib.util.spec_from_file_location("variant_tree", Path(__file__).with_name("variant_tree.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def prepared(folder: Path, clustered: bool = False, seed: int = 3) -> tuple[Path, Path, Path]:
    """Seed 004's host (small, sm_90, one publication of one update; its split products in clusters
    when `clustered`), the tests' text as a stream and a fresh checkpoint of `seed`, under `folder`."""
    from coppelius_host import build, checkpoint
    from coppelius_model import stream
    root = build.plan_copy(folder / "plan", 1, 1, "small")
    if clustered:
        variant_tree = _variant_tree()
        graph = variant_tree.Source(root / "Coppelius" / "Build" / "Graph.bob")
        variant_tree.split_clusters(graph)
        graph.save()
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


def outputs(folder: Path, clustered: bool, seed: int = 3) -> dict[str, str]:
    """One simulated train invocation of one update from a fresh checkpoint: each output's digest."""
    runs = folder / "runs"
    simulate(*prepared(folder, clustered, seed), runs, seed)
    return {str(path.relative_to(runs)): hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            for path in sorted(runs.rglob("*")) if path.is_file() and not path.name.startswith("start")}


def main() -> int:
    out = Path(tempfile.mkdtemp(prefix="sim-clusters-"))
    digests = {}
    for name, clustered in (("plain", False), ("clusters", True)):
        began = time.monotonic()
        digests[name] = outputs(out / name, clustered)
        print(f"{name}: {time.monotonic() - began:.0f} s, {digests[name]}")
    same = digests["plain"] == digests["clusters"]
    print("every output byte for byte the plain host's:", same)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
