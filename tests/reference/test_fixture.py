"""The fixture builder: targets derived by hand from tiny corpora."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from bob_model.fixture import bigram_targets, build_record, main
from bob_model.formats import decode_input_record


def identity_except(**changes) -> list[int]:
    targets = list(range(256))
    for key, value in changes.items():
        targets[ord(key)] = value
    return targets


def test_most_frequent_follower():
    # "abacab": a->b, b->a, a->c, c->a, a->b.  a: b twice, c once -> b; b -> a; c -> a;
    # every other byte never occurs (or is never followed) -> itself
    assert bigram_targets(b"abacab").tolist() == identity_except(a=ord("b"), b=ord("a"),
                                                                 c=ord("a"))


def test_ties_go_to_the_smallest_byte():
    # "qzqy": q->z, z->q, q->y.  q: y once, z once -> y (121 < 122); the last y has no follower
    assert bigram_targets(b"qzqy").tolist() == identity_except(q=ord("y"), z=ord("q"))


def test_self_loops_and_bytes_beyond_ascii():
    # "ll\xc3\xa9l": l->l, l->\xc3, \xc3->\xa9, \xa9->l.  l: l once, \xc3 once -> l (108 < 195)
    targets = bigram_targets("llél".encode("utf-8"))
    assert targets[ord("l")] == ord("l")
    assert targets[0xC3] == 0xA9 and targets[0xA9] == ord("l")
    assert bigram_targets(b"").tolist() == list(range(256))
    assert bigram_targets(b"x").tolist() == list(range(256))


def test_prompts_use_their_last_byte():
    record = build_record(b"abacab", ["hello w", b"it", "caf\u00e9"])
    assert record.prompts.tolist() == [ord("w"), ord("t"), 0xA9]
    with pytest.raises(ValueError):
        build_record(b"ab", ["a", "b"])
    with pytest.raises(ValueError):
        build_record(b"ab", ["a", "", "c"])


def test_reference_corpus_gives_the_reference_targets(bob_case):
    # the PyTorch case's targets were computed from its corpus independently
    case = bob_case["case"]
    assert bigram_targets(case["corpus"].tobytes()).tolist() == case["targets"].tolist()


def test_command_line_writes_a_valid_record(tmp_path, repo):
    out = tmp_path / "record.bin"
    assert main([str(repo / "examples/bob/corpus.txt"), "--prompts-file",
                 str(repo / "examples/bob/prompts.txt"), "-o", str(out)]) == 0
    record = decode_input_record(out.read_bytes(), out)
    assert record.prompts.tolist() == [ord("w"), ord("t"), ord(" ")]
    assert record.targets[ord("q")] == ord("u")
    assert record.targets[ord(".")] == ord(" ")


def test_example_script_and_errors(tmp_path, repo):
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"abacab")
    out = tmp_path / "r.bin"
    script = repo / "examples/bob/build_fixture.py"
    done = subprocess.run([sys.executable, str(script), str(corpus), "--prompt", "xa",
                           "--prompt", "b", "--prompt", "c", "-o", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    record = decode_input_record(out.read_bytes())
    assert record.targets[ord("a")] == ord("b") and record.prompts.tolist() == [97, 98, 99]
    bad = subprocess.run([sys.executable, str(script), str(corpus), "--prompt", "x",
                          "-o", str(out)], capture_output=True, text=True)
    assert bad.returncode == 2 and "3 prompts" in bad.stderr
    assert np.array_equal(decode_input_record(out.read_bytes()).prompts, [97, 98, 99])


# ---- probe s26 (probe-bob 9): CRLF prompts files, non-UTF-8 prompts, bounded inputs, safe outputs

def test_crlf_prompts_file_gives_the_last_byte_before_the_line_end(tmp_path, repo):
    prompts = tmp_path / "p.txt"
    prompts.write_bytes(b"x\r\ny\r\nz\r\n")
    out = tmp_path / "r.bin"
    assert main([str(repo / "examples/bob/corpus.txt"), "--prompts-file", str(prompts), "-o", str(out)]) == 0
    assert decode_input_record(out.read_bytes()).prompts.tolist() == [ord("x"), ord("y"), ord("z")]


def test_a_non_utf8_prompt_is_its_bytes(tmp_path, repo):
    out = tmp_path / "r.bin"
    done = subprocess.run([sys.executable, str(repo / "examples/bob/build_fixture.py"),
                           str(repo / "examples/bob/corpus.txt"), "--prompt", "a", "--prompt", b"\xff",
                           "--prompt", "c", "-o", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert decode_input_record(out.read_bytes()).prompts.tolist() == [97, 255, 99]


def test_a_corpus_that_is_not_a_regular_file_is_refused_unread(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["/dev/zero", "-o", str(tmp_path / "r.bin")])
    assert stopped.value.code == 2
    assert "cannot read /dev/zero: a device, not a regular file" in capsys.readouterr().err
    assert not (tmp_path / "r.bin").exists()


def test_the_record_is_never_written_over_an_input_or_through_a_symlink(tmp_path, repo, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"abacab")
    assert main([str(corpus), "-o", str(corpus)]) == 8
    assert corpus.read_bytes() == b"abacab"
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    (tmp_path / "link").symlink_to(victim)
    assert main([str(corpus), "-o", str(tmp_path / "link")]) == 8
    assert victim.read_bytes() == b"precious"
    assert "symbolic link" in capsys.readouterr().err
