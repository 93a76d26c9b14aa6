"""Probe s37 ringfuzz finding 3: a Submit that issues entries after a Reissue is refused by the
certifier, at the Submit, naming the Reissue's place too (docs/host-steps.md "What a Submit may
issue").  The typed hosts (bobc run --reference, bobc sim, runtime_c/plan_host.c) issue such a
Submit the ring image's entries from where the Submits before it ended; a request program
(PlanHost.bob nvidiaPlanHostRequestCommands) keeps the image in the ring it issues through, so
the Reissue's entry overwrote the slot the Submit reads, and it went on from the Reissue's gpPut:
Submit 1, Reissue of piece 0 (gpPut 2), Submit 3 issued image words 0, 0, 2 there and 0, 0, 1, 2
on the typed hosts."""
from __future__ import annotations

from tests.certify.test_ring_positions_s37 import PLAN
from tests.certify.test_ring_positions_s37 import check as ring_check

FORWARD_SUBMIT = "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepSubmit lrForwardLaunches 0"
TRAINING_PUBLISH = "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepCheckpointPublish linRegUpdatesPerInvocation 1 lrEnd)"
# ring entry 0 of the plan's own GPFIFO image (what check_reissues holds a Reissue's entry to)
RING_ENTRY = """
def lrRingEntry =
  (lambda unrestricted index : Nat .
    (eliminate NvidiaPlanHostImages (lambda unrestricted current : (family NvidiaPlanHostImages) . Nat) lrImages
      (branch NvidiaPlanHostImagesValue program qmd push gpfifo . (nvidiaPlanHostTableWord gpfifo index))))
"""


def reissue(gp_put: str, stride: int = 0) -> str:
    return f"(constructor NvidiaPlanHostSteps NvidiaPlanHostStepReissue {gp_put} {stride} 0 0 (lrRingEntry 0) 0"


def check(tmp_path, *replacements, drop_proof=False):
    return ring_check(tmp_path, *replacements, drop_proof=drop_proof, before_train_steps=RING_ENTRY)


def place(tmp_path, needle: str) -> str:
    """file:line:column of `needle`'s first occurrence in the plan"""
    lines = (tmp_path / PLAN).read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines, 1) if needle in text)
    return f"{PLAN}:{line}:{lines[line - 1].index(needle) + 1}"


def test_reissues_after_the_last_submit_are_certified(tmp_path):
    """The shape the rule leaves: every Submit first, the Reissues after it."""
    done = check(tmp_path, (TRAINING_PUBLISH, TRAINING_PUBLISH.replace(
        "lrEnd)", f"\n              {reissue('(succ lrSubmissionCount)')} lrEnd))")), drop_proof=True)
    assert done.returncode == 0, done.stderr


def test_the_training_submit_after_a_reissue_is_refused(tmp_path):
    forward = f"{FORWARD_SUBMIT}\n      {reissue('(succ lrForwardLaunches)')}"
    done = check(tmp_path, (FORWARD_SUBMIT, forward), ("StepOperation lrTrainSteps)))))))", "StepOperation lrTrainSteps))))))))"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    # the training Submit opens lrTrainSteps: its place is the definition's (as
    # tests/certify/test_ring_positions_s37.py finds it)
    submit = place(tmp_path, "lrTrainSteps : (family NvidiaPlanHostSteps)")
    reissued = place(tmp_path, "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepReissue")
    said = [line for line in done.stderr.splitlines() if "submits the ring's entries" in line]
    assert len(said) == 1, done.stderr
    assert said[0].startswith(f"  - {submit}: the host's step"), done.stderr
    assert "submits the ring's entries 2 to 42 after the host's step" in said[0], done.stderr
    assert f"(reissue) at {reissued}:" in said[0], done.stderr
    assert "issue every Submit before the Reissues, or re-issue those submissions with Reissue" in done.stderr


def test_every_iteration_of_a_repeat_is_held_to_it(tmp_path):
    """Repeat 2 of (Submit 1 stride 1, Reissue of piece 0): iteration 1's Submit, up to 2, comes
    after iteration 0's Reissue."""
    repeated = ("(constructor NvidiaPlanHostSteps NvidiaPlanHostStepRepeat 2\n"
                "        (constructor NvidiaPlanHostSteps NvidiaPlanHostStepSubmit 1 1\n"
                f"          {reissue('2', 2)} lrEnd))\n      {FORWARD_SUBMIT}")
    done = check(tmp_path, (FORWARD_SUBMIT, repeated), ("StepOperation lrTrainSteps)))))))", "StepOperation lrTrainSteps))))))))"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    submit = place(tmp_path, "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepSubmit 1 1")
    said = [line for line in done.stderr.splitlines() if "submits the ring's entry 1 at its repeat's "
                                                         "iteration 1 after" in line]
    assert len(said) == 1 and said[0].startswith(f"  - {submit}: "), done.stderr
