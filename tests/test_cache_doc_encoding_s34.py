"""docs/cache.md names every input of a cache key (probe s34 docs34 finding 2): since s34 every key
also holds Python's filesystem encoding (cache.digest), which the page did not say.  The page's
rule and the key are held to each other here: the same parts under each encoding the page names
give different keys, and the page names the encoding as an input of every key."""
from __future__ import annotations

import re
import sys
from pathlib import Path

from bobc import cache

REPO = Path(__file__).resolve().parents[1]


def test_every_key_holds_the_filesystem_encoding_as_the_page_says(monkeypatch):
    text = " ".join((REPO / "docs/cache.md").read_text().split())
    said = re.search(r"every key holds Python's filesystem encoding \(`sys.getfilesystemencoding\(\)`: "
                     r"`([\w-]+)`, or `([\w-]+)` under `LC_ALL=C PYTHONUTF8=0`\)", text)
    assert said, "docs/cache.md does not name the filesystem encoding as an input of every key"
    keys = {}
    for encoding in said.groups():
        monkeypatch.setattr(sys, "getfilesystemencoding", lambda encoding=encoding: encoding)
        keys[encoding] = cache.digest("parsed", "/work/plan.bob", b"def x = 1")
    assert len(set(keys.values())) == 2, keys
