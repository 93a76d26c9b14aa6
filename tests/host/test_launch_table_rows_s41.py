"""bobc.host.generate.module_place and _launch_table on hand-made inputs (probe s41 mutants6): the
end-to-end tests (test_gpu_fault_launches_s41.py) build hosts and reach neither a plan module lying
beside, not inside, a search folder nor the manifest's refusals.

module_place's rule (its docstring, docs/native-host.md "GPU faults"): the module's path relative
to the first search folder it lies INSIDE, '/'-separated, with line and column; None where none
holds it or the plan says no place.  A folder whose name only starts like another's
(/p/plan vs /p/planB) does not hold it."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from bobc.host.generate import HostGenerationError, _launch_table, module_place


def _at(path, line=3, column=4):
    return SimpleNamespace(path=path, line=line, column=column)


def test_a_module_inside_a_search_folder_is_named_relative_to_it(tmp_path):
    plan = tmp_path / "plan"
    assert module_place(_at(plan / "A" / "M.bob"), [plan]) == "A/M.bob:3:4"
    assert module_place(_at(plan / "A" / "M.bob"), [tmp_path / "other", plan]) == "A/M.bob:3:4"   # the one holding it
    assert module_place(None, [plan]) is None


def test_a_folder_that_only_starts_like_the_modules_does_not_hold_it(tmp_path):
    assert module_place(_at(tmp_path / "planB" / "M.bob"), [tmp_path / "plan"]) is None
    assert module_place(_at(tmp_path / "plan"), [tmp_path / "plan"]) is None       # the folder itself is no module in it


def _built(manifest_launches, submissions=()):
    launches = [SimpleNamespace(identity="k0", grid=(1, 2, 3), at=None), SimpleNamespace(identity="k1", grid=(4, 1, 1), at=None)]
    return SimpleNamespace(images=SimpleNamespace(manifest={"launches": manifest_launches, "submissions": list(submissions)}),
                           plan=SimpleNamespace(program=SimpleNamespace(launches=launches)), program=SimpleNamespace(search_path=()))


def test_the_table_follows_the_manifests_launch_indices_not_its_order():
    rows, submissions = _launch_table(_built([{"index": 1, "identity": "k1", "grid": [4, 1, 1]},
                                              {"index": 0, "identity": "k0", "grid": [1, 2, 3]}],
                                             [{"launches": [1, 0]}]))
    assert [(r["kernel"], list(r["grid"]), r["place"]) for r in rows] == [("k0", [1, 2, 3], None), ("k1", [4, 1, 1], None)]
    assert submissions == [[1, 0]]


@pytest.mark.parametrize("launches, says", [
    ([{"index": 0, "identity": "k0", "grid": [1, 2, 3]}], "lists launches [0], the plan has 2"),
    ([{"index": 0, "identity": "k0", "grid": [1, 2, 3]}, {"index": 1, "identity": "k1", "grid": [4, 1, 2]}],
     "launch 1 runs k1 on grid [4, 1, 2], the plan's k1 on [4, 1, 1]"),
    ([{"index": 0, "identity": "kx", "grid": [1, 2, 3]}, {"index": 1, "identity": "k1", "grid": [4, 1, 1]}],
     "launch 0 runs kx on grid [1, 2, 3], the plan's k0"),
])
def test_a_manifest_that_disagrees_with_the_plan_is_refused(launches, says):
    with pytest.raises(HostGenerationError) as refused:
        _launch_table(_built(launches))
    assert says in str(refused.value)
