"""`bobc cache` counts what `bobc cache --prune DAYS` acts on (session 30 review, leftovers finding 3).
Before, the report counted every file of every folder in the cache folder as an entry and summed
every byte, while prune removes only bobc's own entries (a key's 64 hex digits in a folder of bobc's
kinds) and temporaries: a user's file there showed up as entries that prune would never remove.
Now the first line's size is bobc's entries and temporaries, which its rows add up to, and anything
else there is named apart as not bobc's, left alone, in no number.  prune and the report judge
with one rule (cache._kinds, cache._is_entry), whose kinds are the ones the code stores under."""
from __future__ import annotations

import importlib.util
import os
import re
import time
from pathlib import Path

from bobc import cache
from bobc.cli import main

REPO = Path(__file__).resolve().parents[1]


def _filled(root: Path) -> dict[str, int]:
    """A cache holding bobc's entries, a killed build's temporary and things that are not bobc's;
    every one of them last used 40 days ago.  Returns the bytes of bobc's files by what they are."""
    entries = {}
    for n in (1, 2, 3):
        key = "%064x" % n
        cache.write("kernels", key, b"k" * (10 * n))
        entries[f"kernels/{key}"] = (root / "kernels" / key).stat().st_size
    scratch = cache.scratch_folder("objects")
    (scratch / "a.o").write_bytes(b"o" * 100)
    published = cache.publish_folder("objects", "%064x" % 4, scratch, ["a.o"])
    entries["objects"] = sum(p.stat().st_size for p in published.iterdir())
    leftover = root / "objects" / ".tmp-killed"
    leftover.write_bytes(b"t" * 7)                     # a killed build's temporary file: no one holds it
    (root / "Documents").mkdir()
    (root / "Documents" / "thesis.tex").write_text("important")
    (root / "notes.txt").write_text("mine")
    (root / "kernels" / "README").write_text("mine too")
    (root / "mine").mkdir()                            # a kind's name pattern, but no kind of bobc's
    (root / "mine" / ("%064x" % 9)).write_text("looks like a key")
    (root / "kernels" / "link").symlink_to(root / "notes.txt")
    for path in [*root.rglob("*")]:
        os.utime(path, (time.time() - 40 * 86400,) * 2, follow_symlinks=False)
    return entries


FOREIGN = "Documents/, mine/, notes.txt, kernels/README, kernels/link"


def test_the_report_counts_what_prune_acts_on_and_names_the_rest(tmp_path, monkeypatch, capsys):
    root = tmp_path / "cache"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(root))
    sizes = _filled(root)
    kernels = sum(size for name, size in sizes.items() if name.startswith("kernels/"))
    total = kernels + sizes["objects"] + 7
    assert main(["cache"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{root}: {total} B in bobc's 4 entries and 1 temporary (what --prune acts on)"
    assert lines[1] == f"  {'kernels':<20} {3:>8} entries {f'{kernels} B':>10}"
    assert lines[2] == f"  {'objects':<20} {1:>8} entry   {str(sizes['objects']) + ' B':>10}"
    assert lines[3].split() == [".tmp-*", "temporaries", "1", "7", "B", "(killed", "builds';", "--prune", "removes",
                                "those", "no", "running", "bobc", "holds)"]
    assert lines[4] == f"  also there, 5 not bobc's (left alone by --prune, in no number above): {FOREIGN}"
    assert len(lines) == 5

    assert main(["cache", "--prune", "30"]) == 0         # everything is 40 days old: it removes what was counted
    assert capsys.readouterr().out == f"removed 4 entries not used for 30 days ({total} B) from {root}\n"
    assert (root / "Documents" / "thesis.tex").read_text() == "important"
    assert (root / "mine" / ("%064x" % 9)).read_text() == "looks like a key"
    assert (root / "kernels" / "README").read_text() == "mine too" and (root / "kernels" / "link").is_symlink()
    assert main(["cache"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{root}: 0 B in bobc's 0 entries (what --prune acts on)"
    assert lines[-1] == f"  also there, 5 not bobc's (left alone by --prune, in no number above): {FOREIGN}"


def test_many_things_not_bobcs_are_counted_and_a_few_named(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path))
    for n in range(8):
        (tmp_path / f"file{n}").write_text("x")
    assert main(["cache"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{tmp_path}: 0 B in bobc's 0 entries (what --prune acts on)",
        "  also there, 8 not bobc's (left alone by --prune, in no number above): "
        "file0, file1, file2, file3, file4 and 3 more"]


def test_bobcs_kinds_are_every_folder_the_code_stores_under():
    spec = importlib.util.spec_from_file_location("cache_doc", REPO / "tests" / "test_cache_doc.py")
    cache_doc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cache_doc)
    assert cache.KINDS == cache_doc.kinds_in_code() == cache_doc.documented()


def test_prune_of_one_day_says_day(tmp_path, monkeypatch, capsys):
    """`--prune 1` says "not used for 1 day", not "1 days" (the one plural rule, bobc.native.words)."""
    root = tmp_path / "cache"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(root))
    cache.write("kernels", "%064x" % 1, b"k")
    assert main(["cache", "--prune", "1"]) == 0
    assert capsys.readouterr().out == f"removed 0 entries not used for 1 day (0 B) from {root}\n"   # it is fresh


def test_a_users_file_named_after_a_key_is_not_bobcs(tmp_path, monkeypatch, capsys):
    """probe s31 certholes finding 5: `<key>.bak` and `<key>-notes.txt` in a kind's folder were
    counted as entries and removed by --prune (the entry rule was a prefix match).  An entry is
    exactly a key's 64 hex digits and its kind's suffix (only native-interpreter's `-static`)."""
    root = tmp_path / "cache"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(root))
    key = "a" * 64
    cache.write("kernels", key, b"k")                              # bobc's: counted and pruned
    cache.write("native-interpreter", "b" * 64 + "-static", b"elf")
    mine = {"kernels": [f"{key}.bak", f"{key}-notes.txt", f"{key}-static", "A" * 64, "a" * 63, "a" * 65],
            "native-interpreter": ["b" * 64, "b" * 64 + "-static.old", "b" * 64 + "-staticx"]}
    for kind, names in mine.items():
        for name in names:
            (root / kind / name).write_text("mine")
    (root / "kernels" / (key + "-old")).mkdir()
    for path in root.rglob("*"):
        os.utime(path, (time.time() - 40 * 86400,) * 2)
    found, temporaries, foreign = cache.usage(root)
    assert found == {"kernels": (1, (root / "kernels" / key).stat().st_size),
                     "native-interpreter": (1, (root / "native-interpreter" / ("b" * 64 + "-static")).stat().st_size)}
    assert temporaries == (0, 0)
    assert sorted(foreign) == sorted([f"{kind}/{name}" for kind, names in mine.items() for name in names]
                                     + [f"kernels/{key}-old/"])
    assert main(["cache", "--prune", "30"]) == 0
    assert capsys.readouterr().out.startswith("removed 2 entries not used for 30 days")
    for kind, names in mine.items():
        for name in names:
            assert (root / kind / name).read_text() == "mine", name
    assert (root / "kernels" / (key + "-old")).is_dir()
    assert not (root / "kernels" / key).exists()
    assert not (root / "native-interpreter" / ("b" * 64 + "-static")).exists()


def test_the_entry_suffixes_are_the_documented_ones():
    """docs/cache.md's table names each kind's entries (`kernels/<key>`, `objects/<key>/`,
    `native-interpreter/<key>-static`); cache.SUFFIXES is what follows the key, for each kind."""
    text = (REPO / "docs/cache.md").read_text()
    table = text[text.index("| folder | what |"):text.index("Rules every entry follows")]
    rows = re.findall(r"^\| `([^`/]+)/<key>([^`]*)` \|", table, re.M)
    assert {kind for kind, _ in rows} == cache.KINDS
    assert {kind: suffix.rstrip("/") for kind, suffix in rows if suffix.rstrip("/")} == cache.SUFFIXES
