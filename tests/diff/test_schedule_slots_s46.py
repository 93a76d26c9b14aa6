"""A launch's decoded schedule slot (`launch[i].schedules[k] = launch N (kernel)`: the launch its
QMD's dependent pointer starts) read through the launch alignment (session 46 mutants12:
golden.relocated_facts not judging these slots at all survived the alignment tests).  Expected
by hand: a = [grad, sgd], b = [grad, extra, sgd]: grad's slot naming launch 1 (sgd) in a and
launch 2 (sgd) in b names the same paired launch -- moved, no difference; a = [grad, sgd],
b = [grad, sgd2, sgd] with the slot naming launch 1 on both sides names sgd in a and sgd2 (an
inserted launch) in b -- the same index, renamed.
"""
from __future__ import annotations

from types import SimpleNamespace

from bobc.nvidia import decode
from bobc.nvidia.golden import LaunchAlignment, Relocation, SubmissionAlignment, region_keys, relocated_facts

SLOT = "launch[0].schedules[0]"


def manifest(*kernels):
    return {"launches": [{"index": i, "identity": k, "grid": [1, 1, 1], "block": [32, 1, 1]}
                         for i, k in enumerate(kernels)],
            "submissions": [], "sizes": {}, "qmd_layout": "none", "regions": []}


def found(ma, mb, named_a, named_b):
    lines_a = [decode.Line(SLOT, named_a, "", "grad", "launch")]
    lines_b = [decode.Line(SLOT, named_b, "", "grad", "launch")]
    launches = LaunchAlignment.of(ma, mb)
    assert launches.keys_a[0] == "launch[0]"
    submissions = SubmissionAlignment.of(ma, mb, launches, lines_a, lines_b)
    regions = region_keys(ma, mb)
    relocation = Relocation.of(ma, mb, launches, submissions, regions)
    return relocated_facts(SimpleNamespace(manifest=ma), SimpleNamespace(manifest=mb), lines_a, lines_b,
                           relocation, launches, submissions, regions)


def test_a_slot_naming_the_same_launch_at_its_new_index_moved():
    result = found(manifest("grad", "sgd"), manifest("grad", "extra", "sgd"), "launch 1 (sgd)", "launch 2 (sgd)")
    assert SLOT in result.moved and SLOT not in result.renamed and SLOT not in result.notes, result


def test_a_slot_whose_index_names_an_inserted_launch_is_renamed():
    result = found(manifest("grad", "sgd"), manifest("grad", "sgd2", "sgd"), "launch 1 (sgd)", "launch 1 (sgd2)")
    assert SLOT not in result.moved
    assert result.renamed.get(SLOT, "").startswith("the same indices, which name launch[1->2] in a, launch[+1] in b"), \
        result
