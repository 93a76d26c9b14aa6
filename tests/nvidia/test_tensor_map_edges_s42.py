"""Tensor-map parameters of zero, and element strides of the wrong count, refused by name before
anything is encoded (probe s42 mutants8: the checks `1 <= dim`, `1 <= box`, `1 <= element stride` could each be loosened to `0 <=` and every
test still passed -- the driver capture in tests/nvidia/data/ never asked a zero dimension, box or
element stride, so nothing held these lower edges; loosened, a zero then failed as an
AssertionError "field overflows" (DIM_MINUS_ONE / BOX_MINUS_ONE of -1) or a ZeroDivisionError
(box // element stride) traceback).  Likewise the count check on element strides could be dropped:
a rank-2 map given one element stride was then encoded with the second dimension's stride field
left 0 (zip stops early) and BOX_BYTES counting only dimension 0.

Expected values from CUDA's documented requirements of cuTensorMapEncodeTiled (CUDA driver API,
"Tensor Map Object Management"): globalDim "must be non-zero and less than or equal to 2^32",
boxDim "must be non-zero and less than or equal to 256", elementStrides "must be non-zero and less
than or equal to 8"; and docs/tensor-maps.md's refusals.  The smallest accepted values' fields by
hand: DIM_MINUS_ONE, BOX_MINUS_ONE and ELEMENT_STRIDE_MINUS_ONE hold the value minus one."""
import pytest

from bobc.errors import BobcError
from bobc.nvidia.tensor_map import TiledTensor, decode, encode_tiled


def rank2(**kw) -> TiledTensor:
    args = dict(data_type="float32", address=0x10000, dims=(64, 8), strides=(256,), box=(16, 4))
    args.update(kw)
    return TiledTensor(**args)


def test_one_is_the_smallest_dimension_box_and_element_stride_accepted():
    fields = decode(encode_tiled(rank2(dims=(64, 1), box=(16, 1), element_strides=(1, 1))))
    assert fields["DIM_MINUS_ONE(1)"] == 0
    assert fields["BOX_MINUS_ONE(1)"] == 0
    assert fields["ELEMENT_STRIDE_MINUS_ONE(1)"] == 0
    assert fields["BOX_BYTES"] == 16 * 1 * 4          # 16 float32 elements, one row


@pytest.mark.parametrize("dims, words", [
    ((0, 8), "dimension 0 has 0 elements; 1 to 2\\^32 are allowed"),
    ((64, 0), "dimension 1 has 0 elements; 1 to 2\\^32 are allowed"),
])
def test_a_dimension_of_zero_elements_is_refused_by_name(dims, words):
    with pytest.raises(BobcError, match=words):
        encode_tiled(rank2(dims=dims))


def test_a_box_dimension_of_zero_is_refused_by_name():
    with pytest.raises(BobcError, match="box dimension 1 is 0; 1 to 256 are allowed"):
        encode_tiled(rank2(box=(16, 0)))


def test_an_element_stride_of_zero_is_refused_by_name():
    with pytest.raises(BobcError, match="element stride 1 is 0; 1 to 8 are allowed"):
        encode_tiled(rank2(element_strides=(1, 0)))


@pytest.mark.parametrize("steps", [(1,), (1, 1, 1)])
def test_element_strides_of_another_count_than_the_rank_are_refused_by_name(steps):
    # cuTensorMapEncodeTiled takes one element stride per dimension (tensorRank of them)
    with pytest.raises(BobcError, match=f"a rank-2 tensor map takes 2 element strides, not {len(steps)}"):
        encode_tiled(rank2(element_strides=steps))


def test_a_negative_address_or_stride_is_refused_by_name():
    # cuTensorMapEncodeTiled takes the address as a pointer and the strides as cuuint64_t: neither
    # can be negative.  -16 is a multiple of 16, so only the range check refuses it (loosened to
    # `address < 2^49` / `stride < 2^40`, -16 failed as an AssertionError traceback instead)
    with pytest.raises(BobcError, match="address -0x10 must be 16-byte aligned and below 0x2000000000000"):
        encode_tiled(rank2(address=-16))
    with pytest.raises(BobcError, match="stride of dimension 1 is -16 bytes; it must be a multiple of 16 "
                                        "below 2\\^40"):
        encode_tiled(rank2(strides=(-16,)))
