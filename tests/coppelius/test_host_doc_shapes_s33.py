"""docs/coppelius-host.md's cursor and result-file sentences hold for a shape of one's own (probe s33
shapes, finding 3): they once gave small's numbers (the 128 row losses, 64 + 512 x step), which a
host of context T = 256 does not write.  A 1x256x256 host (one update an invocation) run from a
checkpoint at step 3 through bobc's reference interpreter reads its context at byte 64 + 4 T x step
of the stream, and its result holds the forward record, one loss record of 16 + 4 T bytes, the
three stat words, the final forward's loss block as big again and its record."""
from __future__ import annotations

from .conftest import REPOSITORY, TEXT

SHAPE, T = "1x256x256", 256
DOC = REPOSITORY / "docs" / "coppelius-host.md"


def test_the_cursor_and_the_loss_records_are_the_docs_at_context_256(tmp_path):
    from coppelius_host import build, checkpoint, reference
    from coppelius_model import stream

    text = " ".join(DOC.read_text(encoding="utf-8").split())
    assert "byte 64 + 4 T x step of the stream (T the shape's context" in text
    assert "then the T row losses, binary32: 16 + 4 T bytes" in text
    assert "the final forward's loss block (summary and T row losses, as big again), its record (32)" in text

    host = build.build("sm_90", tmp_path / "host", interval=1, publications=1, config=SHAPE)
    (tmp_path / "t.stream").write_bytes(stream.from_bytes(TEXT.read_bytes()).encode())
    start = checkpoint.fresh(SHAPE, seed=3)
    start.step = 3
    (tmp_path / "in.ckpt").write_bytes(checkpoint.encode(start, SHAPE, 1))
    outcome = reference.run(host, ["train", "--input", str(tmp_path / "t.stream"), "--checkpoint",
                                   str(tmp_path / "in.ckpt"), "--checkpoint-out", str(tmp_path / "out.ckpt"),
                                   "--predictions", str(tmp_path / "p"), "--result", str(tmp_path / "r")])
    assert outcome.status == 0, outcome.stderr
    contexts = {(offset, extent) for file, offset, extent in outcome.trace.reads if extent == 4 * T}
    assert contexts == {(64 + 4 * T * 3, 4 * T), (64 + 4 * T * 3 + 4, 4 * T)}     # inputs, then the targets
    result = (tmp_path / "r").read_bytes()
    record = 16 + 4 * T
    assert result[:16] == b"COPPELIUS-RESULT"
    final = 32 + record + 12 + record                    # one update's record, the stat words, the final block
    assert result[final:final + 16] == b"COPPELIUS-RESULT"
    assert len(result) == final + 32 + 4096 + 16 + 24   # its record, the semaphore page, notifier, status
