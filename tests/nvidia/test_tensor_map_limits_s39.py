"""The tensor-map refusal limits at their exact edges (probe s39 mutants2: a limit moved by one --
an address at 2^49, a dimension of 2^32 + 1 elements, a box 16 bytes over 227 KiB -- and a decode
of a descriptor that is not 128 bytes went through every other test).

Expected values from docs/tensor-maps.md ("Refusals": an address at 2^49 and above, a dimension
outside 1..2^32, a box of more than 227 KiB, an sm_90 block's largest shared memory) and CUDA's
CUtensorMap, 128 bytes; the encoded field values by hand (DIM_MINUS_ONE is elements - 1)."""
import pytest

from bobc.errors import BobcError
from bobc.nvidia.tensor_map import TiledTensor, decode, encode_tiled


def rank1(**kw) -> TiledTensor:
    args = dict(data_type="float32", address=0x10000, dims=(64,), strides=(), box=(16,))
    args.update(kw)
    return TiledTensor(**args)


def test_an_address_below_2_49_is_accepted_and_2_49_is_refused():
    top = (1 << 49) - 16
    assert decode(encode_tiled(rank1(address=top)))["GLOBAL_ADDRESS"] == top
    with pytest.raises(BobcError, match="address 0x2000000000000 must be 16-byte aligned and below"):
        encode_tiled(rank1(address=1 << 49))


def test_a_dimension_of_2_32_elements_is_accepted_and_one_more_is_refused_by_name():
    assert decode(encode_tiled(rank1(dims=(1 << 32,))))["DIM_MINUS_ONE(0)"] == 0xFFFFFFFF
    # refused as the driver refuses it, naming the dimension -- not an overflow of the 32-bit field
    with pytest.raises(BobcError, match="dimension 0 has 4294967297 elements; 1 to 2\\^32 are allowed"):
        encode_tiled(rank1(dims=((1 << 32) + 1,)))


def test_a_box_of_227_kib_is_accepted_and_16_bytes_more_is_refused():
    kib227 = 227 * 1024                                   # 232448 bytes
    whole = TiledTensor(data_type="uint8", address=0x10000, dims=(256, 256, 256), strides=(256, 65536),
                        box=(256, 227, 4))                # 256 * 227 * 4 = 232448
    assert decode(encode_tiled(whole))["BOX_BYTES"] == kib227
    over = TiledTensor(data_type="uint8", address=0x10000, dims=(256, 256, 256, 256),
                       strides=(256, 65536, 1 << 24), box=(16, 3, 29, 167))   # 16 * 3 * 29 * 167 = 232464
    with pytest.raises(BobcError, match="a tensor map box of 232464 bytes exceeds the 232448 bytes"):
        encode_tiled(over)


@pytest.mark.parametrize("size", [127, 129])
def test_decode_takes_exactly_128_bytes(size):
    with pytest.raises(BobcError, match=f"a tensor map is 128 bytes, not {size}"):
        decode(bytes(size))
