"""The test data carried in tests/data/shared: each file is what PROVENANCE says (sha256), and
where the project's shared folder sits beside the checkout, still a byte copy of it."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.conftest import REPO, SHARED, SIBLING_SHARED

DATA = REPO / "tests" / "data"


def provenance() -> list[tuple[str, str]]:
    rows = []
    for line in (DATA / "PROVENANCE").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            digest, path = line.split()[:2]
            rows.append((digest, path))
    return rows


ROWS = provenance()


def test_provenance_lists_every_vendored_file():
    listed = {path for _, path in ROWS}
    present = {str(p.relative_to(DATA / "shared")) for p in (DATA / "shared").rglob("*") if p.is_file()}
    assert listed == present


@pytest.mark.parametrize("digest,path", ROWS, ids=[p for _, p in ROWS])
def test_vendored_file_matches_its_provenance(digest, path):
    content = (DATA / "shared" / path).read_bytes()
    assert hashlib.sha256(content).hexdigest() == digest
    sibling = SIBLING_SHARED / path
    if sibling.is_file():  # the original is here too: the copy must not have drifted
        assert sibling.read_bytes() == content, f"{path} differs from {sibling}"


def test_the_tests_read_the_vendored_copy():
    assert (SHARED / "data" / "bob-reference" / "case.npz").is_file()
