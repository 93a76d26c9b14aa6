"""`bobc diff` aligns launches as a sequence (probe s28 newmodel2 finding 7): one launch inserted
is one launch only in b, and every launch after it is compared with its counterpart, not with
the launch that now sits at its old place (which made ~1,100 lines of one insertion)."""
from __future__ import annotations

from bobc.nvidia import decode
from bobc.nvidia.golden import LaunchAlignment, _differences, manifest_differences


def manifest(kernels):
    return {"launches": [{"index": i, "identity": k, "grid": [1, 1, 1], "block": [32, 1, 1],
                          "qmd_offset": 0x100 * i} for i, k in enumerate(kernels)]}


def launch_lines(m):
    out = []
    for launch in m["launches"]:
        i, k = launch["index"], launch["identity"]
        out += [decode.Line(f"launch[{i}].kernel", k, "", k, "launch"),
                decode.Line(f"launch[{i}].qmd.CTA_THREAD_DIMENSION0", 32, "", k, "qmd"),
                decode.Line(f"launch[{i}].qmd.REGISTER_COUNT_V", 16 if k == "sgd" else 32, "", k, "qmd"),
                decode.Line(f"launch[{i}].qmd_address", 0x1000 + 0x100 * i, "", k, "launch")]
    return out


def test_an_inserted_launch_is_one_launch_only_in_b():
    a = manifest(["grad", "predict", "sgd", "grad", "sgd", "grad", "sgd"])
    b = manifest(["grad", "predict", "extra", "sgd", "grad", "sgd", "grad", "sgd"])
    alignment = LaunchAlignment.of(a, b)
    assert alignment.keys_b[2] == "launch[+2]"
    assert [alignment.keys_a[i] for i in range(7)] == ["launch[0]", "launch[1]"] + [f"launch[{i}->{i + 1}]"
                                                                                  for i in range(2, 7)]
    found = _differences(alignment.rename(launch_lines(a), alignment.keys_a),
                         alignment.rename(launch_lines(b), alignment.keys_b))
    only_b = [d for d in found if d.a is None]
    assert {d.key.split(".")[0] for d in only_b} == {"launch[2]"} and not [d for d in found if d.b is None]
    changed = [d for d in found if d.a is not None and d.b is not None]
    # the matched launches differ only in their QMD address, not in their kernel or fields
    assert [d.key for d in changed] == [f"launch[{i}->{i + 1}].qmd_address" for i in range(2, 7)], changed
    assert alignment.moved == [(2, 7, 3, 8)]
    # the manifest's QMD offsets follow the same pairing: no launch[i].identity changes
    extra = manifest_differences(a, b, found, alignment)
    assert not [d for d in extra if d.key.endswith(".identity")], extra


def test_the_same_launches_keep_their_places():
    a = manifest(["grad", "sgd"])
    alignment = LaunchAlignment.of(a, a)
    assert alignment.keys_a == alignment.keys_b == {0: "launch[0]", 1: "launch[1]"} and not alignment.moved
    assert _differences(launch_lines(a), launch_lines(a)) == []


def test_a_changed_kernel_in_place_is_compared_with_its_place():
    a, b = manifest(["grad", "sgd", "grad"]), manifest(["grad", "predict", "grad"])
    alignment = LaunchAlignment.of(a, b)
    assert alignment.keys_b == {0: "launch[0]", 1: "launch[1]", 2: "launch[2]"}
    found = _differences(alignment.rename(launch_lines(a), alignment.keys_a),
                         alignment.rename(launch_lines(b), alignment.keys_b))
    assert [d.key for d in found] == ["launch[1].kernel", "launch[1].qmd.REGISTER_COUNT_V"]
