"""The certifier's grid and block bounds, edge by edge (session 43 mutants9 of certify/limits.py:
grid x allowed 0, grid y held to grid x's bound, block z held to block x's, the threads check
skipped for a block x of exactly 1024, and 1025 threads allowed each survived the certify tests).

The bounds are CUDA's for compute capability 8.x and 9.x (CUDA C++ Programming Guide, "Technical
Specifications per Compute Capability"): grid x at most 2^31 - 1, grid y and z at most 65,535,
block x and y at most 1,024, block z at most 64, at most 1,024 threads a block; every dimension
at least 1.  A launch's parameter bytes fit the target's parameter block (bobc.targets: the
bank 0 block the QMD points at); 8 more (one more word) is refused.  A cluster may have
8 blocks (CUDA's portable cluster size, bobc.targets cluster_blocks); a parameter word holds a u64."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from bobc.certify.limits import check_limits
from bobc.targets import SM86, SM90


def findings(target, grid, block, parameter_bytes=None, cluster=(1, 1, 1), patches=()):
    parameter_bytes = target.parameter_block_bytes if parameter_bytes is None else parameter_bytes
    launch = SimpleNamespace(identity="k", grid=grid, block=block, parameter_bytes=parameter_bytes,
                             patches=patches, cluster=cluster, at=None)
    program = SimpleNamespace(launches=(launch,), launch_count=1, submissions=(), submission_count=0,
                              gpfifo_entries=1, program_base=0, qmd_base=0, pushbuffer_base=0, semaphore_base=0,
                              program_bytes=0, qmd_table_bytes=0, region_alignment=256, at=None)
    return [f.message for f in check_limits(SimpleNamespace(program=program, host=None, checkpoint=None), target)]


@pytest.mark.parametrize("target", [SM86, SM90])
@pytest.mark.parametrize("grid, block", [((2 ** 31 - 1, 65535, 65535), (1, 1, 64)), ((1, 1, 1), (1024, 1, 1)),
                                         ((1, 1, 1), (1, 1024, 1)), ((1, 1, 1), (16, 1, 64))])
def test_the_largest_of_each_are_accepted(target, grid, block):
    assert findings(target, grid, block) == []


@pytest.mark.parametrize("target", [SM86, SM90])
@pytest.mark.parametrize("grid, block, said", [
    ((0, 1, 1), (32, 1, 1), "grid x is 0"),
    ((1, 65536, 1), (32, 1, 1), "grid y is 65,536"),
    ((1, 1, 65536), (32, 1, 1), "grid z is 65,536"),
    ((1, 1, 1), (1, 1, 65), "block z is 65"),
    ((1, 1, 1), (1024, 2, 1), "threads per block is 2,048"),
    ((1, 1, 1), (1025, 1, 1), "block x is 1,025"),
    ((1, 1, 1), (41, 5, 5), "threads per block is 1,025"),
])
def test_one_past_is_refused(target, grid, block, said):
    messages = findings(target, grid, block)
    assert any(said in m for m in messages), messages


@pytest.mark.parametrize("target", [SM86, SM90])
def test_parameters_one_word_past_the_block_are_refused(target):
    messages = findings(target, (1, 1, 1), (32, 1, 1), target.parameter_block_bytes + 8)
    assert any(f"parameter bytes is {target.parameter_block_bytes + 8:,}" in m for m in messages), messages


def test_a_cluster_of_eight_blocks_is_accepted():
    assert findings(SM90, (8, 2, 1), (32, 1, 1), cluster=(8, 1, 1)) == []
    assert findings(SM90, (4, 4, 2), (32, 1, 1), cluster=(2, 2, 2)) == []


def test_a_parameter_word_holds_a_u64():
    word = lambda value: SimpleNamespace(word=44, value=value, at=None)      # noqa: E731
    assert findings(SM86, (1, 1, 1), (32, 1, 1), patches=(word(2 ** 64 - 1),)) == []
    messages = findings(SM86, (1, 1, 1), (32, 1, 1), patches=(word(2 ** 64),))
    assert any("parameter word 44's value is 18,446,744,073,709,551,616" in m for m in messages), messages
