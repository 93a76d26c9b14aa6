"""bobc's tensor-map encoder against the CUDA driver's own descriptors.

The oracle is tests/nvidia/data/tensor-maps-driver-580.json.gz: what cuTensorMapEncodeTiled
(driver 580.159.04) wrote or refused for 4102 parameter sets (tools/tensor_map/capture.py on the
H200).  Every accepted set must encode to the driver's 128 bytes, every refused set must be refused.
"""
import gzip
import json
from pathlib import Path

import pytest

from bobc.errors import BobcError
from bobc.nvidia import tensor_map
from bobc.nvidia.tensor_map import TiledTensor, decode, encode_tiled

DATA = Path(__file__).parent / "data" / "tensor-maps-driver-580.json.gz"


def _records():
    return json.loads(gzip.decompress(DATA.read_bytes()))["records"]


def _tensor(p) -> TiledTensor:
    return TiledTensor(data_type=p["data_type"], address=p["address"], dims=tuple(p["dims"]),
                       strides=tuple(p["strides"]), box=tuple(p["box"]),
                       element_strides=tuple(p["element_strides"]), interleave=p["interleave"],
                       swizzle=p["swizzle"], l2_promotion=p["l2_promotion"],
                       oob_fill={"zero": "zero", "nan_request_zero_fma": "nan"}[p["oob_fill"]])


RECORDS = _records()


def test_capture_covers_both_outcomes_and_every_choice():
    accepted = [r for r in RECORDS if r["rc"] == 0]
    refused = [r for r in RECORDS if r["rc"] != 0]
    assert len(accepted) > 1000 and len(refused) > 3000
    for key, table in (("data_type", tensor_map.DATA_TYPES), ("swizzle", tensor_map.SWIZZLES),
                       ("interleave", tensor_map.INTERLEAVES), ("l2_promotion", tensor_map.L2_PROMOTIONS)):
        assert {r["params"][key] for r in accepted} == set(table), key
    assert {r["params"]["rank"] for r in accepted} == {1, 2, 3, 4, 5}


def test_every_accepted_set_encodes_to_the_drivers_bytes():
    wrong = []
    for r in RECORDS:
        if r["rc"] == 0:
            ours = encode_tiled(_tensor(r["params"]))
            if ours.hex() != r["bytes"]:
                wrong.append((r["params"], ours.hex(), r["bytes"]))
    assert not wrong, wrong[:3]


def test_every_refused_set_is_refused():
    accepted_by_us = []
    for r in RECORDS:
        if r["rc"] != 0:
            try:
                encode_tiled(_tensor(r["params"]))
            except BobcError:
                continue
            accepted_by_us.append(r["params"])
    assert not accepted_by_us, accepted_by_us[:3]


def test_decode_reads_back_the_fields_of_a_driver_descriptor():
    base = RECORDS[0]
    assert base["kind"] == "designed" and base["rc"] == 0
    fields = decode(bytes.fromhex(base["bytes"]))
    p = base["params"]        # float16, 768 x 256 elements, rows of 1536 bytes, box 64 x 128, 128-byte swizzle
    assert fields["GLOBAL_ADDRESS"] == p["address"]
    assert fields["RANK_MINUS_ONE"] == 1
    assert fields["DIM_MINUS_ONE(0)"] == 767 and fields["DIM_MINUS_ONE(1)"] == 255
    assert fields["STRIDE_LOW(0)"] * 16 == 1536
    assert fields["BOX_MINUS_ONE(0)"] == 63 and fields["BOX_MINUS_ONE(1)"] == 127
    assert fields["BOX_BYTES"] == 64 * 128 * 2
    assert fields["SWIZZLE"] == tensor_map.SWIZZLES["128b"]


def test_fields_do_not_overlap_and_fit_the_descriptor():
    taken = set()
    for name, (high, low) in tensor_map.FIELDS.items():
        assert 0 <= low <= high < tensor_map.SIZE * 8, name
        bits = set(range(low, high + 1))
        assert not bits & taken, name
        taken |= bits


BASE = dict(data_type="float16", address=0x10000, dims=(768, 256), strides=(1536,), box=(64, 128),
            swizzle="128b")


@pytest.mark.parametrize("change, words", [
    (dict(box=(128, 128)), "does not fit the 128-byte swizzle"),
    (dict(strides=(1544,)), "stride of dimension 1 is 1544 bytes"),
    (dict(strides=()), "takes 1 strides"),
    (dict(address=0x10008), "16-byte aligned"),
    (dict(box=(64, 257)), "box dimension 1 is 257"),
    (dict(box=(4, 128), swizzle="none"), "box row is 8 bytes"),
    (dict(data_type="uint16", oob_fill="nan"), "floating-point data type"),
    (dict(data_type="half"), "data type 'half'"),
    (dict(box=(64, 256), dims=(768, 256, 4), strides=(1536, 393216), interleave="none",
          element_strides=(1, 1, 1)), "takes 3 box"),
])
def test_refusals_name_the_parameter(change, words):
    with pytest.raises(BobcError) as caught:
        encode_tiled(TiledTensor(**{**BASE, **change}), context="launch 3 operand A")
    assert words in caught.value.message
    assert caught.value.message.startswith("launch 3 operand A: ")


def test_box_larger_than_shared_memory_is_refused():
    big = TiledTensor(data_type="float32", address=0, dims=(1 << 20, 1 << 20, 8), strides=(1 << 22, 1 << 30),
                      box=(32, 256, 8))        # 32 x 256 x 8 x 4 = 256 KiB
    with pytest.raises(BobcError, match="shared memory a block can have"):
        encode_tiled(big)
