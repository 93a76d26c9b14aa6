"""A listing's `.nv.shared.<kernel>` section is the kernel's static shared memory
(Assembled.shared_bytes), as `.shared N` is a source's (probe s28 asm finding 4: it was ignored, so
`bobc asm --cubin` of a listing could not declare it)."""
from __future__ import annotations

import gzip

from bobc.sass import assemble_kernel
from bobc.sass.assembler import assemble_listing
from bobc.sass.learn import CORPUS


def test_listing_kernels_carry_their_shared_section(tmp_path):
    for arch, size in (("sm_86", 2048), ("sm_90", 3072)):    # ptxas's .zero for shared_and_shuffle
        text = gzip.decompress((CORPUS / "listings" / f"corpus.{arch}.lst.gz").read_bytes()).decode()
        kernels = assemble_listing(text, arch)
        assert kernels["shared_and_shuffle"].shared_bytes == size
        assert kernels["control_flow"].shared_bytes is None      # no .nv.shared section
        listing = tmp_path / f"corpus.{arch}.lst"
        listing.write_text(text)
        assert assemble_kernel(listing, arch, kernel="shared_and_shuffle").shared_bytes == size
        assert assemble_kernel(listing, arch, kernel="control_flow").shared_bytes is None


def test_a_source_shared_directive_still_counts(tmp_path):
    source = tmp_path / "k.sass"
    source.write_text(".shared 4096\nSTS [R0.X4], R0\nEXIT\n")
    assert assemble_kernel(source, "sm_86").shared_bytes == 4096


def test_kernel_names_a_listing_kernel_not_a_source_one(tmp_path):
    """probe s28 asm finding 8: `bobc asm --kernel foo k.sass` (a plain source) ignored foo."""
    import pytest

    from bobc.errors import BobcError

    source = tmp_path / "k.sass"
    source.write_text("EXIT\n")
    assert assemble_kernel(source, "sm_86", kernel="k").kernel_name == "k"
    with pytest.raises(BobcError) as info:
        assemble_kernel(source, "sm_86", kernel="foo")
    assert info.value.message == "k.sass is the source of one kernel, 'k' (its file name), not 'foo'"
    assert (info.value.span.path, info.value.span.line) == (str(source), 1)
    source.write_text(".kernel scale\nEXIT\n")
    assert assemble_kernel(source, "sm_86", kernel="scale").kernel_name == "scale"
    with pytest.raises(BobcError) as info:
        assemble_kernel(source, "sm_86", kernel="k")
    assert "'scale' (its .kernel directive), not 'k'" in info.value.message


def test_nvdisasm_messages_name_no_temporary_file(needs_nvdisasm):
    """probe s28 asm finding 8: `bobc disasm` of an empty file printed nvdisasm's
    `Object file /tmp/tmpXXXX/code.bin is not readable`."""
    from bobc.sass.oracle import disassemble

    errors = disassemble(b"", "SM86").errors
    assert errors and not any("/tmp" in e or "code.bin" in e for e in errors)
    assert "the instruction stream" in errors[0]
