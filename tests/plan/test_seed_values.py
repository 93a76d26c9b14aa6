"""The seeds' numbers, computed by the evaluator from Bob's plans and the library.

Expected values come from the seeds' comments and the issue: 256 * 256 * 3
* 4 = 786432 payload bytes; 16 + 2*256 + 4*256 + 4*3 = 1564 input bytes;
1 + 3*2 + 10*2 = 27 launches; 27 + 6 = 33 submissions.
"""
from plan_support import nat


def test_checkpoint_payload_bytes(physical):
    assert nat(physical, "bobCheckpointPayloadBytes") == 786432


def test_input_record_layout(physical):
    assert nat(physical, "bobInputRecordBytes") == 1564
    assert nat(physical, "bobInputTargetsOffset") == 528      # docs/formats.md
    assert nat(physical, "bobInputPromptsOffset") == 1552


def test_launch_and_submission_counts(physical):
    assert nat(physical, "bobLaunchCount") == 27
    assert nat(physical, "bobSubmissionCount") == 33
    assert nat(physical, "bobForwardLaunches") == 7           # loss + 3 x (gather, argmax)
    assert nat(physical, "bobStepLaunches") == 2              # adamw, loss
    assert nat(physical, "bobPredictionLaunches") == 6


def test_adamw_launch_indices(physical):
    from plan_support import call
    # update k's AdamW comes after the 7 forward launches and k earlier (adamw, loss) pairs
    assert [call(physical, "bobAdamWLaunch", k) for k in range(10)] == [7 + 2 * k for k in range(10)]


def test_qmd_table_and_inverse_rows(physical):
    assert nat(physical, "bobQMDTableBytes") == 27 * 256
    assert nat(physical, "bobInverseRows") == 0x3b800000     # 1/256 = 2^-8: exponent 119


def test_checkpoint_contract(physical):
    contract = physical.value("bobCheckpointContract")
    field = lambda name: physical.field(contract, name).value
    assert field("checkpointEnvelopeSchema") == (
        b"bob-raw-pmv-f32-v1|parameter-order:p-then-m-then-v|payload=" + b"786432".rjust(24, b"0"))
    assert field("checkpointEnvelopeData") == (
        b"raw-byte-sequence|vocabulary=" + b"256".rjust(24, b"0") + b"|prompts=" + b"3".rjust(24, b"0")
        + b"|record=" + b"1564".rjust(24, b"0"))
    learner = field("checkpointEnvelopeLearner")
    # the five hyperparameters' binary32 bytes close the learner identity
    assert learner.endswith(bytes.fromhex("cdcccc3d" "6666663f" "77be7f3f" "77cc2b32" "0ad7233c"))
    assert field("checkpointEnvelopeSeed") == b"bob-seed-v1"
    assert field("checkpointEnvelopePayloadBytes") == 786432
    assert field("checkpointEnvelopeChunkBytes") == 262144
    assert field("checkpointEnvelopeUpdatesPerInvocation") == 10


def test_training_run_records(physical):
    # Bob.TrainingRun's own records evaluate with the library's ByteCount
    schema = physical.value("bobCheckpointSchema")
    assert physical.field(schema, "bobCheckpointPayloadBytes").value == 786432
    assert physical.field(schema, "bobCheckpointInBandStepMetadata").value == 1
    semantics = physical.value("bobTrainingRunSemantics")
    fresh = physical.field(semantics, "bobRunFreshCheckpointInputBytes")
    assert fresh.family == "StdByteCount" and physical.force(fresh.fields[0]).value == 0
    assert physical.field(semantics, "bobRunUpdatesPerInvocation").value == 10
