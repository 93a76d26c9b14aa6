"""bench/coppelius_host/variant_tree.py edits a copy of the tree by exact replacements; every
change it offers must still find its text in today's sources (or the experiment tool has rotted),
and the edited encoder must still be Python."""
from __future__ import annotations

import ast
import importlib.util

import pytest

from tests.conftest import REPO

spec = importlib.util.spec_from_file_location("variant_tree", REPO / "bench" / "coppelius_host" / "variant_tree.py")
variant_tree = importlib.util.module_from_spec(spec)
spec.loader.exec_module(variant_tree)

ENCODER_CHANGES = ("sched", "cbinv", "chase", "selfcopy", "membar3", "presend", "grid1", "nonext", "nolatch")


@pytest.mark.parametrize("changes", [(c,) for c in ENCODER_CHANGES] + [ENCODER_CHANGES],
                         ids=list(ENCODER_CHANGES) + ["all"])
def test_each_encoder_change_finds_its_text_and_leaves_python(changes, tmp_path):
    copy = tmp_path / "encode.py"
    copy.write_text((REPO / "compiler" / "bobc" / "nvidia" / "encode.py").read_text())
    source = variant_tree.Source(copy)
    variant_tree.encode_changes(source, set(changes))
    assert source.text != copy.read_text()
    ast.parse(source.text)


def test_a_change_whose_text_is_gone_stops_with_the_file_named(tmp_path):
    copy = tmp_path / "encode.py"
    copy.write_text("nothing to change here\n")
    with pytest.raises(SystemExit, match="encode.py"):
        variant_tree.encode_changes(variant_tree.Source(copy), {"sched"})


def test_the_video_memory_change_moves_seed_004s_three_tables(tmp_path):
    copy = tmp_path / "NativeHost.bob"
    copy.write_text((REPO / "examples" / "coppelius" / "Coppelius" / "Build" / "NativeHost.bob").read_text())
    host = variant_tree.Source(copy)
    variant_tree.video_tables(host)
    for name in ('b"program"', 'b"qmd"', 'b"qmd-overflow"'):
        assert "(coppeliusSystemBuffer " + name not in host.text
        assert "(coppeliusVideoBuffer (coppeliusHostTargetChannelMemory target) " + name in host.text


# (most, least, few, splits of 256 x 768 x 3072 (48 tiles, 96 slices), of 256 x 768 x 768 (24 slices),
# of 256 x 2304 x 768 (144 tiles)): the largest s <= most dividing the slices into parts of at least
# `least`, for a product of fewer than `few` tiles
@pytest.mark.parametrize("most, least, few, long_k, short_k, wide", [
    (1, 12, 66, 1, 1, 1), (2, 12, 66, 2, 2, 1), (8, 6, 66, 8, 4, 1), (4, 12, 66, 4, 2, 1), (4, 12, 150, 4, 2, 2)])
def test_the_split_rule_changes_every_place_that_holds_it(most, least, few, long_k, short_k, wide, tmp_path):
    """Graph.bob's rule, the arena's partials (both places) and graph.py's constants move together;
    graph.py's split_count then gives the rule asked for."""
    example = tmp_path / "examples" / "coppelius"
    for relative in ("Coppelius/Build/Graph.bob", "Coppelius/ArenaPlan.bob", "coppelius_model/layout.py",
                     "coppelius_model/graph.py"):
        (example / relative).parent.mkdir(parents=True, exist_ok=True)
        (example / relative).write_text((REPO / "examples" / "coppelius" / relative).read_text())
    variant_tree.split_rule(tmp_path, most, least, few)
    graph = (example / "Coppelius/Build/Graph.bob").read_text()
    assert f"(naturalDivideUnchecked n 64)) {few}))" in graph
    assert f"(naturalLessOrEqual {least} (naturalDivideUnchecked slices s))" in graph
    assert (f"(cgSplitFits slices {most}) {most}" in graph) == (most > 1)
    assert f"(cgSplitFits slices {most + 1})" not in graph
    partials, tickets = 4 * most * (few - 1) * 64 * 64, 4 * (few - 1)
    arena = (example / "Coppelius/ArenaPlan.bob").read_text()
    assert f"coppeliusGemmPartialsBytes : Nat = {partials}" in arena and f"coppeliusGemmTicketsBytes : Nat = {tickets}" in arena
    layout = (example / "coppelius_model/layout.py").read_text()
    assert f"GEMM_PARTIALS_BYTES = 4 * {most} * {few - 1} * 64 * 64" in layout
    assert f"GEMM_TICKETS_BYTES = 4 * {few - 1}" in layout
    namespace = {}
    rule = (example / "coppelius_model/graph.py").read_text()
    start = rule.index("SPLIT_FEW_TILES, SPLIT_MIN_SLICES, SPLIT_MAX =")
    exec(rule[start:rule.index("\n\n\ndef f32")], namespace)    # the constants and split_count alone
    assert namespace["split_count"](256, 768, 3072) == long_k
    assert namespace["split_count"](256, 768, 768) == short_k
    assert namespace["split_count"](256, 2304, 768) == wide
    if (most, least, few) == (4, 12, 66):      # main's own rule: every file as it was
        for relative in ("Coppelius/Build/Graph.bob", "Coppelius/ArenaPlan.bob", "coppelius_model/layout.py",
                         "coppelius_model/graph.py"):
            assert (example / relative).read_text() == (REPO / "examples" / "coppelius" / relative).read_text()


def test_the_clusters_change_launches_each_split_product_in_clusters_of_its_splits(tmp_path):
    """The `clusters` experiment (the split products' on-chip reduction on sm_90): in the plan it
    makes, every launch the Python model (coppelius_model.graph) gives flag 16 -- and no other --
    runs in clusters of (1, 1, S), S its grid's z, in every submission."""
    import collections
    import shutil
    import sys
    example = tmp_path / "coppelius"
    shutil.copytree(REPO / "examples" / "coppelius", example, ignore=shutil.ignore_patterns("__pycache__"))
    graph = variant_tree.Source(example / "Coppelius" / "Build" / "Graph.bob")
    variant_tree.split_clusters(graph)
    graph.save()
    sys.path.insert(0, str(REPO / "examples" / "coppelius"))
    try:
        from coppelius_host import images
        from coppelius_model import graph as model
        from coppelius_model.config import named
    finally:
        sys.path.pop(0)
    manifest = images.evaluate("sm_90", root=example).images.manifest
    clustered = collections.Counter((launch["identity"], tuple(launch["grid"]), tuple(launch["cluster"]))
                                    for launch in manifest["launches"]
                                    if tuple(launch.get("cluster", (1, 1, 1))) != (1, 1, 1))
    split = collections.Counter((launch.kernel, launch.grid, (1, 1, launch.grid[2]))
                                for piece in model.pieces(named("small")) for launch in piece.launches
                                if launch.kernel.startswith("coppelius-gemm") and launch.words[7] >> 32 & 16)
    assert split and clustered == split


def test_the_fused_adamw_plan_applies_to_this_tree_and_is_the_model(tmp_path):
    """The `fusedadamw` experiment (bench/coppelius_host/fused-adamw.patch: AdamW in the weight-gradient
    products' epilogue, kept out of main until the H200 has measured it) still applies to this tree,
    and in the tree it makes the plan is the Python model's word for word, certified, and its update
    run launch by launch through the NumPy kernels is model.update bit for bit, an injected infinity
    skipped with nothing written (the tree's own tests of those, run there)."""
    import subprocess
    import sys
    tree = tmp_path / "tree"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "HEAD"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    applied = subprocess.run(["git", "apply", "--binary", str(variant_tree.FUSED_ADAMW)], cwd=tree,
                             capture_output=True, text=True)
    assert applied.returncode == 0, (
        f"{variant_tree.FUSED_ADAMW.name} no longer applies ({applied.stderr.strip()}): refresh it -- in a checkout "
        f"of HEAD, `git apply -3 --binary bench/coppelius_host/fused-adamw.patch`, resolve, run the tests, then "
        f"`git diff --binary HEAD -- . ':!bench/coppelius_host/fused-adamw.patch' > fused-adamw.patch`")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/coppelius/test_graph_executes.py",
         "tests/coppelius/test_overflow_skip.py", "tests/coppelius/test_device_runner.py",
         "tests/coppelius/test_plan_agrees.py::test_every_launch_agrees_word_for_word",
         "tests/coppelius/test_plan_agrees.py::test_the_device_side_is_certified"],
        cwd=tree, capture_output=True, text=True, env={**__import__("os").environ, "PYTHONPATH": str(tree / "compiler")})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "failed" not in result.stdout


def test_the_leaf_tree_change_keeps_every_conflict_ordered_and_runs_leaves_together(tmp_path):
    """`leaftree`: the edited launch_order keeps every conflicting pair ordered on random programs
    (tests/images/test_launch_order.py's check), and eight leaves of one spine launch hang from it as
    a tree four deep (the spine launch's one free slot, then 2, 4, 1) where main's make a chain of eight."""
    import sys
    copy = tmp_path / "launch_order.py"
    copy.write_text((REPO / "compiler" / "bobc" / "nvidia" / "launch_order.py").read_text())
    source = variant_tree.Source(copy)
    variant_tree.leaf_tree(source)
    source.save()
    spec = importlib.util.spec_from_file_location("launch_order_tree", copy)
    tree = importlib.util.module_from_spec(spec)
    sys.modules["launch_order_tree"] = tree
    spec.loader.exec_module(tree)
    from tests.images.test_launch_order import conflicts_of, ordered_everywhere, random_program
    for seed in range(40):
        submissions, touches = random_program(seed)
        order = tree.launch_order(submissions[:1], conflicts_of(touches), 2)
        assert all(len(after) <= 2 for after in order.dependents.values())
        ordered_everywhere(submissions[:1], conflicts_of(touches), order)
    # a spine launch writing g, eight leaves reading g into their own w_i, a spine launch after them,
    # and one reading every w_i
    touches = {0: ({"x"}, {"g"}), **{1 + i: ({"g"}, {f"w{i}"}) for i in range(8)}, 9: ({"g"}, {"k"}),
               10: ({"k"} | {f"w{i}" for i in range(8)}, {"out"})}

    def depth(order, launch=0, level=0):
        return max([level] + [depth(order, child, level + 1) for child in order.schedules(launch) if 1 <= child <= 8])
    chain, binary = (module.launch_order([list(range(11))], conflicts_of(touches), 2) for module in
                     (sys.modules["bobc.nvidia.launch_order"], tree))
    assert depth(chain) == 8 and depth(binary) == 4


def test_the_two_stage_change_regenerates_the_weight_gradient_kernel_with_half_the_ring(tmp_path):
    """`tn2stages`: the tree's coppelius-gemm-tn.sm_90.sass is the generator's with 2 stages (its
    `.shared` half the ring's), the other product kernels as they are."""
    import subprocess
    import sys
    from bobc.sass.generate import gemm_sm90
    tree = tmp_path / "tree"
    subprocess.run([sys.executable, str(REPO / "bench" / "coppelius_host" / "variant_tree.py"), str(tree), "tn2stages"],
                   check=True, capture_output=True)
    folder = "examples/coppelius/Realization/Nvidia/SM86"
    text = (tree / folder / "coppelius-gemm-tn.sm_90.sass").read_text()
    assert text == gemm_sm90.generate(gemm_sm90.VARIANTS["tn"], "coppelius-gemm", stages=2)
    assert f".shared {gemm_sm90.shared_bytes(2)}" in text and gemm_sm90.shared_bytes(2) < gemm_sm90.shared_bytes()
    for other in ("nn", "nt"):
        name = f"coppelius-gemm-{other}.sm_90.sass"
        assert (tree / folder / name).read_text() == (REPO / folder / name).read_text()
