"""A prompts file's every line is a prompt (probe s28 texts, finding 6): an empty line is an
empty prompt, refused naming its line as `--prompt ""` is refused, never dropped (a 3-line
file with an empty middle line used to be "need exactly 3 prompts, got 2")."""
from __future__ import annotations

import pytest

from bob_model.fixture import main, prompt_lines
from bob_model.formats import decode_input_record


@pytest.mark.parametrize("data, lines", [
    (b"a\nb\nc\n", [b"a", b"b", b"c"]),
    (b"a\nb\nc", [b"a", b"b", b"c"]),              # the last newline may be left out
    (b"a\r\nb\r\nc\r\n", [b"a", b"b", b"c"]),
    (b"a\n\nc\n", [b"a", b"", b"c"]),               # an empty line is an (empty) prompt
    (b"a\r\n\r\nc\r\n", [b"a", b"", b"c"]),
    (b"a\nb\nc\n\n", [b"a", b"b", b"c", b""]),
    (b"", []),
])
def test_every_line_is_a_prompt(data, lines):
    assert prompt_lines(data) == lines


@pytest.mark.parametrize("data, line", [(b"and he w\n\nOnce upon a time \n", 2), (b"\nx\ny\n", 1),
                                        (b"x\r\n\r\ny\r\n", 2), (b"x\ny\nz\n\n", 4)])
def test_an_empty_line_is_refused_by_its_number(tmp_path, repo, capsys, data, line):
    prompts = tmp_path / "p.txt"
    prompts.write_bytes(data)
    with pytest.raises(SystemExit) as stopped:
        main([str(repo / "examples/bob/corpus.txt"), "--prompts-file", str(prompts), "-o", str(tmp_path / "r.bin")])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert f"prompts file {prompts}: line {line} is empty, and a prompt must not be" in err, err
    assert "got" not in err
    assert not (tmp_path / "r.bin").exists()


def test_three_lines_without_a_final_newline_still_make_a_record(tmp_path, repo):
    prompts = tmp_path / "p.txt"
    prompts.write_bytes(b"x\ny\nz")
    out = tmp_path / "r.bin"
    assert main([str(repo / "examples/bob/corpus.txt"), "--prompts-file", str(prompts), "-o", str(out)]) == 0
    assert decode_input_record(out.read_bytes()).prompts.tolist() == [ord("x"), ord("y"), ord("z")]


@pytest.mark.parametrize("data, count", [(b"x\ny\n", "2 lines"), (b"x\n", "1 line"), (b"", "0 lines"),
                                         (b"w\nx\ny\nz\n", "4 lines")])
def test_a_prompts_file_with_another_number_of_lines_is_named(tmp_path, repo, capsys, data, count):
    """probe s32 checkpoint finding 9: "need exactly 3 prompts, got 2" did not name the file."""
    prompts = tmp_path / "p.txt"
    prompts.write_bytes(data)
    with pytest.raises(SystemExit) as stopped:
        main([str(repo / "examples/bob/corpus.txt"), "--prompts-file", str(prompts), "-o", str(tmp_path / "r.bin")])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (f"build_fixture: error: prompts file {prompts}: {count}, "
                                                        f"need exactly 3 prompts, one per line: write 3 lines")
    assert not (tmp_path / "r.bin").exists()


@pytest.mark.parametrize("corpus, said", [(b"", "0 bytes"), (b"a", "1 byte")])
def test_a_corpus_with_no_pair_of_bytes_writes_a_record_and_says_so(tmp_path, capsys, corpus, said):
    """probe s32 checkpoint finding 9: an empty corpus made a record silently (write_stream.py
    notes an empty stream)."""
    source = tmp_path / "corpus.txt"
    source.write_bytes(corpus)
    out = tmp_path / "r.bin"
    assert main([str(source), "--prompt", "x", "--prompt", "y", "--prompt", "z", "-o", str(out)]) == 0
    assert decode_input_record(out.read_bytes()).targets.tolist() == list(range(256))
    assert capsys.readouterr().err == (f"build_fixture: note: the corpus {source} holds {said}, so no byte is "
                                       f"followed by another: every byte targets itself\n")


def test_a_corpus_with_pairs_says_nothing(tmp_path, repo, capsys):
    assert main([str(repo / "examples/bob/corpus.txt"), "-o", str(tmp_path / "r.bin")]) == 0
    assert capsys.readouterr().err == ""
