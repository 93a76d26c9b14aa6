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
