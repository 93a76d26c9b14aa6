"""A listing is assembled as printed and held to what it prints: each instruction's word must be
the one nvdisasm printed beside it (probe-sass finding 6: NaN payloads, and finding 1's '~', came
out different with no error), NaN immediates take their payload from the printed word, and a
listing made for one target is refused for the other (finding 7)."""
from __future__ import annotations

import re

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble_kernel
from bobc.sass.assembler import assemble_listing

# CUDA's CUDART_NAN_F (0f7FFFFFFF) and a quiet NaN with a payload: nvdisasm prints both +QNAN
NAN_PAYLOADS = """
.version 8.0
.target sm_86
.address_size 64
.visible .entry nanpayload(.param .u64 out)
{
  .reg .f32 f<6>; .reg .pred p<2>; .reg .b64 rd<4>; .reg .b32 r<4>;
  ld.param.u64 rd1, [out];
  cvta.to.global.u64 rd2, rd1;
  mov.u32 r1, %tid.x;
  cvt.rn.f32.u32 f1, r1;
  setp.gt.f32 p1, f1, 0f41200000;
  selp.f32 f2, 0f7FFFFFFF, f1, p1;
  mul.f32 f3, f2, 0f7FC00001;
  st.global.f32 [rd2], f3;
  ret;
}
"""


def _printed_words(listing: str, kernel: str) -> bytes:
    section = re.split(r"\n\s*\.section\s", listing.split(f".section\t.text.{kernel},")[1])[0]
    return b"".join(int(w, 16).to_bytes(8, "little") for w in re.findall(r"/\* (0x[0-9a-f]{16}) \*/", section))


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_nan_payloads_come_from_the_printed_words(arch, ptxas_listing):
    listing = ptxas_listing(NAN_PAYLOADS, arch)
    assert "0x7fffffff" in listing and "+QNAN" in listing
    assert assemble_listing(listing, arch)["nanpayload"].code == _printed_words(listing, "nanpayload")


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_a_word_the_text_does_not_give_is_refused(arch, ptxas_listing):
    listing = ptxas_listing(NAN_PAYLOADS, arch)
    lines = listing.splitlines()
    number, line = next((i, l) for i, l in enumerate(lines, 1) if re.search(r"/\*0000\*/\s+[A-Z].*/\* 0x", l))
    word = re.search(r"/\* (0x[0-9a-f]{16}) \*/", line).group(1)
    changed = f"{int(word, 16) ^ 1 << 16:#018x}"        # the destination register, R(n) -> R(n^1)
    lines[number - 1] = line.replace(word, changed)
    with pytest.raises(BobcError) as info:
        assemble_listing("\n".join(lines), arch, source_name="k.lst")
    e = info.value
    assert (e.span.path, e.span.line) == ("k.lst", number)
    assert "but the listing prints" in e.message and changed[2:] in e.message and "bits 16 differ" in e.message


def test_a_listing_for_another_target_is_refused(ptxas_listing, tmp_path):
    listing = ptxas_listing(NAN_PAYLOADS, "sm_86")
    with pytest.raises(BobcError) as info:
        assemble_listing(listing, "sm_90", source_name="k.lst")
    assert info.value.message == "this listing is for sm_86 (.target sm_86), not sm_90"
    assert info.value.span.line == next(i for i, l in enumerate(listing.splitlines(), 1) if ".target" in l)
    path = tmp_path / "k.lst"
    path.write_text(ptxas_listing(NAN_PAYLOADS, "sm_90"))
    with pytest.raises(BobcError, match=r"this listing is for sm_90 \(.target sm_90\), not sm_86"):
        assemble_kernel(path, "sm_86")
    assert assemble_kernel(path, "sm_90").kernel_name == "nanpayload"
