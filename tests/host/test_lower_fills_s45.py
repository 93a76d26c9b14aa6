"""bobc.plan.schedule.lower: which plan fills are computed before each Submit and Reissue, in which order, and
the refusal of a Submit past the plan's submissions -- on a hand-made schedule whose answer is worked out from
docs/host-steps.md ("Lowering": before a Submit or Reissue each plan fill of a launch the submission runs is
computed; the Submit row: "issue the ring image's entries from the last one issued up to gpPut").

The shipped plans fill at most one scalar per launch, each launch once, and submit forward only, so the fast
tests around the lowering let these pass (probe s45 mutants11, mutants P4-P7, P13, P16): the bound on gpPut
one past the submissions (an IndexError traceback instead of the refusal) or refusing the last submission;
fills computed again for submissions already issued; a Submit to an earlier gpPut moving the issue point
back; two fills of one launch computed in reverse order or only the first of them."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from bobc.plan.host import make_step
from bobc.plan.schedule import ScheduleError, lower


def _plan(steps, submissions=((0,), (1,), (2,)), fills=(1, 2, 1)):
    """Submissions as the launches each runs; fills as the launch each fills (fill i is index i)."""
    return SimpleNamespace(program=SimpleNamespace(submissions=[SimpleNamespace(launches=l) for l in submissions]),
                           host=SimpleNamespace(fills=[SimpleNamespace(launch=l) for l in fills], steps=tuple(steps)))


def _shown(lowered):
    return [(s.name, s.values.get("fill", s.values.get("gp_put"))) for s in lowered]


def test_each_submission_fills_its_launches_once_in_fill_order():
    # submit 2 issues submissions 0 and 1: launch 0 has no fill, launch 1 has fills 0 and 2 (in that order);
    # submit 3 issues submission 2 only: fill 1; a submit back to 1, then to 3 again, issues nothing new
    steps = [make_step("submit", gp_put=2, stride=0), make_step("submit", gp_put=3, stride=0),
             make_step("submit", gp_put=1, stride=0), make_step("submit", gp_put=3, stride=0)]
    assert _shown(lower(_plan(steps))) == [("scalar_fill", 0), ("scalar_fill", 2), ("submit", 2),
                                           ("scalar_fill", 1), ("submit", 3),
                                           ("submit", 1), ("submit", 3)]


def test_a_reissue_fills_its_pieces_launches_again():
    steps = [make_step("submit", gp_put=3, stride=0),
             make_step("reissue", gp_put=4, stride=0, piece=1, piece_stride=0, entry=0, entry_stride=0)]
    assert _shown(lower(_plan(steps)))[-3:] == [("scalar_fill", 0), ("scalar_fill", 2), ("reissue", 4)]


def test_a_submit_to_the_last_submission_is_lowered_and_one_past_it_refused():
    assert _shown(lower(_plan([make_step("submit", gp_put=3, stride=0)], fills=())))[-1] == ("submit", 3)
    for past in (4, 5):
        with pytest.raises(ScheduleError) as caught:
            lower(_plan([make_step("submit", gp_put=past, stride=0)]))
        assert str(caught.value) == f"the schedule submits up to entry {past}; the plan has 3 submissions"


def _read(file, tolerate_empty=0):
    return make_step("read", file=file, host=0x100, extent=8, offset=0, stride=0, tolerate_empty=tolerate_empty)


def test_which_requests_need_a_checkpoint():
    """checkpoint_refusal / checkpoint_needed (mutants P9, P11, P12): the first Read of the input checkpoint with
    tolerateEmpty 0 among the steps a request carries out refuses it, and a predict stops at its first Operation
    step (PlanHost.bob NvidiaPlanHostStepRead; docs/host-steps.md) -- so a read after the operation binds a
    train only, a read before it both; reads of other files, or tolerating an empty one, bind neither."""
    from bobc.plan.schedule import (CHECKPOINT_NEEDED, CHECKPOINT_OPTIONAL, CHECKPOINT_TRAIN_NEEDS,
                                    checkpoint_needed, checkpoint_refusal)

    after = lower(_plan([make_step("operation"), _read("checkpoint-in")], fills=()))
    before = lower(_plan([_read("checkpoint-in"), make_step("operation")], fills=()))
    neither = lower(_plan([_read("input"), _read("checkpoint-in", tolerate_empty=1), make_step("operation")],
                          fills=()))
    assert checkpoint_refusal(after, "predict") is None
    assert checkpoint_refusal(after, "train").startswith("missing --checkpoint CHECKPOINT: the schedule's step 1 (read)")
    assert checkpoint_refusal(before, "predict").startswith("missing --checkpoint CHECKPOINT: the schedule's step 0 (read)")
    assert checkpoint_refusal(neither, "train") is None and checkpoint_refusal(neither, "predict") is None
    assert [checkpoint_needed(s) for s in (after, before, neither)] == [CHECKPOINT_TRAIN_NEEDS, CHECKPOINT_NEEDED,
                                                                        CHECKPOINT_OPTIONAL]
    # runtime_c's RT_CHECKPOINT_* values, read from its header (the C host prints --help from them)
    import re
    from pathlib import Path
    header = "".join(p.read_text() for p in (Path(__file__).resolve().parents[2] / "runtime_c").glob("*.h"))
    values = dict(re.findall(r"(RT_CHECKPOINT_[A-Z_]+)\s*=?\s*(\d+)", header))
    assert values, "RT_CHECKPOINT_* not found in runtime_c/*.h"
    assert (CHECKPOINT_OPTIONAL, CHECKPOINT_TRAIN_NEEDS, CHECKPOINT_NEEDED) == tuple(
        int(values[k]) for k in ("RT_CHECKPOINT_OPTIONAL", "RT_CHECKPOINT_TRAIN_NEEDS", "RT_CHECKPOINT_NEEDED"))
