"""Seed 004's host with its split products in thread-block clusters of (1, 1, S) (variant_tree's
`clusters` change), run through bobc's simulator for one update of the small configuration (its
QMDs read back: QMD_TYPE 3 and the cluster's shape; bank 0 says the cluster), against the same host
unclustered: every output --
checkpoint, predictions, result record -- must be byte for byte the same.  sim_variant.py's
`clusters` case; exit status 1 when they differ.

    BOBC_CACHE_DIR=off python bench/coppelius_host/sim_clusters.py

Session 24: identical, with the sm_90 products then adding their partials on chip in clusters
(bench/results/cuda-cluster-launch-h200.md); that reduction, wrong on the H200, was taken out in session 27.
"""
import importlib.util
import sys
from pathlib import Path

if __name__ == "__main__":
    spec = importlib.util.spec_from_file_location("sim_variant", Path(__file__).with_name("sim_variant.py"))
    sim_variant = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sim_variant)
    sys.exit(sim_variant.main(["clusters"]))
