"""Seed 004's built host with its GPU simulated: the images the H200 runs (ring entries,
pushbuffer, QMDs, parameter blocks and our SASS kernels, executed by bobc's simulator:
coppelius_host.sim_device) through one train invocation of one update, compared with the
formula reference (coppelius_model.model.update on the same context) within
docs/coppelius.md's tolerances, as tests/gpu/test_coppelius_host.py compares the H200's.

The NumPy device (test_host_reference.py) reads only the parameters its kernels know and
none of the QMD's launch shape; here a wrong grid (the split products' z), block, shared
size, constant bank or parameter word changes what runs.  Memory starts zeroed, as the
native host gives it (docs/native-host.md: the split products' tickets count on it).
About 40 s (the scatter, the forward, one update, the gather) plus the build.
"""
from __future__ import annotations

import pytest

from .conftest import assert_one_update_agrees, simulate_one_update

SEED = 3


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    return simulate_one_update(tmp_path_factory.mktemp("coppelius-host-simulated"), "small", SEED)


def test_one_simulated_update_agrees_with_the_formula_reference(compared):
    [result] = compared
    assert_one_update_agrees(result)     # the first update's mean loss: measured 2e-7 relative
