"""The certifier's host buffer bounds, edge by edge (session 43 mutants9 of certify/limits.py: 49
buffers allowed, a host address off a 4 KiB page allowed, a buffer at the address space's first
page refused and a 1-byte buffer refused each survived the certify tests).

The bounds are runtime_c's, as limits.py cites them: at most 48 buffers (BUFFER_COUNT, of
nv_shim.h's 64 allocations), buffers mapped at 4 KiB pages (nv_shim.c PAGE_4K) on both sides, the
GPU VA space beginning at 0x1000 (nv_rm.h RT_VASPACE_BASE: a buffer there is inside it), and a
buffer of at least 1 byte (rt_gpu_alloc_at refuses 0)."""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from bobc.certify.limits import check_limits
from bobc.targets import SM86


@dataclasses.dataclass
class _Request:
    words: int = 0


def findings(buffers):
    program = SimpleNamespace(launches=(), launch_count=0, submissions=(), submission_count=0, gpfifo_entries=1,
                              program_base=0, qmd_base=0, pushbuffer_base=0, semaphore_base=0, program_bytes=0,
                              qmd_table_bytes=0, region_alignment=256, at=None, architecture="sm_86",
                              compute_class=0xC7C0)
    host = SimpleNamespace(buffers=tuple(buffers), fills=(), initializers=(), steps=(), semaphore_stride=0,
                           forward_launches=0, request=_Request())
    return [f.message for f in check_limits(SimpleNamespace(program=program, host=host, checkpoint=None), SM86)]


def buffer(k, gpu=None, host=None, extent=4096):
    return SimpleNamespace(name=f"b{k}", gpu=0x100000 + 0x10000 * k if gpu is None else gpu,
                           host=0x7000000 + 0x10000 * k if host is None else host, extent=extent, at=None)


def test_48_buffers_are_accepted_and_49_refused():
    assert findings([buffer(k) for k in range(48)]) == []
    assert any("host buffer count is 49" in m for m in findings([buffer(k) for k in range(49)]))


def test_a_host_address_off_a_page_is_refused():
    assert any("not 4 KiB aligned" in m for m in findings([buffer(0, host=0x7000800)]))


def test_a_buffer_at_the_address_spaces_first_page_is_accepted():
    assert findings([buffer(0, gpu=0x1000)]) == []
    assert any("below the GPU address space" in m for m in findings([buffer(0, gpu=0)]))


def test_a_one_byte_buffer_is_accepted():
    assert findings([buffer(0, extent=1)]) == []
    assert any("has 0 bytes" in m for m in findings([buffer(0, extent=0)]))


def test_a_buffer_ending_where_the_shims_addresses_begin_is_accepted():
    # nv_shim.h RT_GPU_DEFAULT_CHANNEL_VA 0x00FC00000000: [start, end) ending there does not reach it
    shim = 0x00FC00000000
    assert findings([buffer(0, gpu=shim - 4096, extent=4096)]) == []
    assert any("reaches the driver shim's own addresses" in m for m in findings([buffer(0, gpu=shim - 4096, extent=4097)]))
