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

ENCODER_CHANGES = ("sched", "nocbinv", "chase", "selfcopy", "membar3", "presend", "grid1")


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


# (most, least, splits of K = 3072 (96 slices), splits of K = 768 (24 slices)): the largest s <= most
# dividing the slices into parts of at least `least`
@pytest.mark.parametrize("most, least, long_k, short_k", [(1, 12, 1, 1), (2, 12, 2, 2), (8, 6, 8, 4), (4, 12, 4, 2)])
def test_the_split_rule_changes_every_place_that_holds_it(most, least, long_k, short_k, tmp_path):
    """Graph.bob's rule, the arena's partials (both places) and graph.py's constants move together;
    graph.py's split_count then gives the rule asked for."""
    example = tmp_path / "examples" / "coppelius"
    for relative in ("Coppelius/Build/Graph.bob", "Coppelius/ArenaPlan.bob", "coppelius_model/layout.py",
                     "coppelius_model/graph.py"):
        (example / relative).parent.mkdir(parents=True, exist_ok=True)
        (example / relative).write_text((REPO / "examples" / "coppelius" / relative).read_text())
    variant_tree.split_rule(tmp_path, most, least)
    graph = (example / "Coppelius/Build/Graph.bob").read_text()
    assert f"(naturalLessOrEqual {least} (naturalDivideUnchecked slices s))" in graph
    assert (f"(cgSplitFits slices {most}) {most}" in graph) == (most > 1)
    assert f"(cgSplitFits slices {most + 1})" not in graph
    partials = 4 * most * 65 * 64 * 64
    assert f"coppeliusGemmPartialsBytes : Nat = {partials}" in (example / "Coppelius/ArenaPlan.bob").read_text()
    assert f"GEMM_PARTIALS_BYTES = {partials}" in (example / "coppelius_model/layout.py").read_text()
    namespace = {}
    rule = (example / "coppelius_model/graph.py").read_text()
    start = rule.index("SPLIT_FEW_TILES, SPLIT_MIN_SLICES, SPLIT_MAX =")
    exec(rule[start:rule.index("\n\n\ndef f32")], namespace)    # the constants and split_count alone
    assert namespace["split_count"](256, 768, 3072) == long_k
    assert namespace["split_count"](256, 768, 768) == short_k
