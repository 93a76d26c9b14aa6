"""bobc's temporary folders and leftovers (probe s32 tmpfolders).

Finding 1 (environ finding 4, the rest): the folders errors.temporary_folder makes (bobc-host-*,
bobc-build-*, ...) and the native interpreter's scratch folder bobc-native-* are owner-writable
(0700) whatever the umask, as cache.own_folder makes the cache's own; under a umask of 277 they were
0500 and the build could not write host_plan.c in them."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def umask_277():
    old = os.umask(0o277)
    yield
    os.umask(old)


def test_a_temporary_folder_is_its_owners_to_write_whatever_the_umask(tmp_path, umask_277):
    from bobc.errors import temporary_folder

    with temporary_folder(prefix="bobc-host-", dir=tmp_path) as folder:
        assert stat.S_IMODE(Path(folder).stat().st_mode) == 0o700
        (Path(folder) / "host_plan.c").write_text("int x;\n")      # what a build writes there
    assert not list(tmp_path.iterdir())


def test_the_native_interpreters_scratch_folder_is_its_owners_to_write_whatever_the_umask(tmp_path, monkeypatch,
                                                                                           umask_277):
    import tempfile

    from bobc.host import gcc
    from bobc.native import interpreter

    class Seen(Exception):
        pass

    modes = []

    def notice(scratch):
        modes.append((Path(scratch).name, stat.S_IMODE(Path(scratch).stat().st_mode)))
        raise Seen

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    monkeypatch.setattr(gcc, "compiler", lambda: "gcc")
    monkeypatch.setattr(gcc, "library_key", lambda *args: "key")
    monkeypatch.setattr(gcc, "compiling_notice", notice)
    with pytest.raises(Seen):
        interpreter.interpreter_bytes()
    assert len(modes) == 1 and modes[0][0].startswith("bobc-native-") and modes[0][1] == 0o700
    assert not list(tmp_path.iterdir())


# Finding 2 (probe s32 concur finding 2): a `.NAME.tmp-XXXXXX` a killed `bobc build -o NAME` left is
# named by the next build that publishes NAME (not removed: no lock tells whether a live bobc writes it).

def test_a_temporary_left_beside_the_output_is_named_by_the_next_publication(tmp_path, capsys):
    from bobc.reference import safe_io

    host = tmp_path / "host"
    safe_io.publish_file(host, b"first", "-o", mode=0o755)
    assert capsys.readouterr().err == ""
    (tmp_path / ".host.tmp-zZjFU5").write_bytes(b"half")         # what a SIGKILL leaves
    (tmp_path / ".host.tmp-short").write_bytes(b"")              # not bobc's form: not named
    (tmp_path / ".other.tmp-aaaaaa").write_bytes(b"")            # another output's: not named
    safe_io.publish_file(host, b"second", "-o", mode=0o755)
    assert host.read_bytes() == b"second"
    assert capsys.readouterr().err == (f"bobc: note: {tmp_path}/.host.tmp-zZjFU5 beside {host} is a temporary of a "
                                       f"bobc that did not finish writing it (killed?): delete it once no bobc "
                                       f"writes into {tmp_path}\n")
    assert (tmp_path / ".host.tmp-zZjFU5").exists()
    (tmp_path / ".host.tmp-AAAAAA").write_bytes(b"")
    safe_io.publish_file(host, b"third", "-o", mode=0o755)
    assert capsys.readouterr().err.startswith(f"bobc: note: {tmp_path}/.host.tmp-AAAAAA (and 1 more like it) beside ")


def test_gcc_runs_with_the_owners_bits_of_the_umask_cleared():
    """Under umask 277 gcc made its own temporaries (cc*.s) read-only to itself and a non-root
    build stopped in cc1 ("cannot open ... for writing": fix-tmpfolders' note); gcc now runs
    with the user's umask less its owner bits, the group and other bits kept."""
    import os
    import sys

    from bobc.host import gcc

    child = [sys.executable, "-c", "import os, sys; m = os.umask(0); sys.exit(0 if m == 0o077 else 1)"]
    before = os.umask(0o277)
    try:
        gcc._run(child, "a child reporting its umask")      # raises when the child exits 1
    finally:
        os.umask(before)
