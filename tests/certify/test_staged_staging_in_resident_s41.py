"""A staging area inside a resident is still no home (docs/host-steps.md, "Where a checkpoint is saved
from", staged: payload byte p's home is the resident byte it ends in, "outside the staging areas";
bobc.certify.host_steps._staged_homes end_restore).  Probe s41 mutants6: with the staging area in no
resident (test_staged_checkpoint_homes_s41.py's), dropping that exclusion -- or not recording the
staging areas at all -- passed every test.

The plan is that file's staged LinReg with its 16-byte staging area moved into the input-record
resident (0x1100002000, 2,064 bytes; written by the record's Read before the restore, only read by
the kernels after): the restore leaves chunk 1 (payload bytes [16, 32)) in the staging area as well
as in parameters + 16.  Were the staging bytes a home, the save (from parameters + 16, the agreeing
gather) would be refused as publishing bytes a resume puts into input-record; it agrees, so it
certifies."""
from __future__ import annotations

from bobc.certify.host_steps import check_host_steps

from . import test_staged_checkpoint_homes_s41 as staged_plan
from .test_staged_checkpoint_homes_s41 import linreg  # noqa: F401


def test_a_staging_area_inside_a_resident_is_no_home(linreg, monkeypatch):  # noqa: F811
    plan, contracts = linreg
    monkeypatch.setattr(staged_plan, "STAGING", 0x1100002100)
    made = staged_plan.staged(plan)
    assert any(r.name == "input-record" and r.address <= 0x1100002100 and 0x1100002110 <= r.address + r.size
               for r in made.arena.globals)
    assert check_host_steps(made, contracts=contracts) == []
