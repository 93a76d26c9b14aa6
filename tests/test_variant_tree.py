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
