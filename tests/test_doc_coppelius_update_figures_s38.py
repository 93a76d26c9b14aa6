"""The Coppelius update figures README.md and docs/coppelius.md quote are the latest run's in
bench/results/coppelius-update-h200.md (probe s38 docs6 finding 1: README still quoted session
23's 0.31 / 2.07 ms against PyTorch's 3.63 / 7.46 ms after session 34's run, 0.309 / 2.063 ms
against 4.817 / 10.083, had become the file's first section and docs/coppelius.md's "Where it
stands").

The file's first section is its newest run: its heading names the session, its table the host's
row (`seed 004's host, its own pushbuffer`) and PyTorch's variants, whose smallest median per
size is "PyTorch's best".  Each quoted figure is that value rounded to the digits the doc shows."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULT = REPO / "bench" / "results" / "coppelius-update-h200.md"
NUMBER = r"([0-9]+(?:\.[0-9]+)?)"


def latest_run() -> dict:
    text = RESULT.read_text(encoding="utf-8")
    session = re.search(r"^# .*\bsession (\d+)\)", text, re.M)
    assert session, f"{RESULT.name}'s title names no session"
    first = text.split("\n## ", 1)[0]            # the newest run: everything before the next section
    rows = {}
    for line in first.splitlines():
        cells = [c.strip().strip("*").strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"[0-9.]+", cells[1]) and re.fullmatch(r"[0-9.]+", cells[2]):
            rows[cells[0]] = (float(cells[1]), float(cells[2]))
    host = rows["seed 004's host, its own pushbuffer"]
    torch = [v for k, v in rows.items() if k.startswith("PyTorch")]
    assert len(torch) >= 4, rows
    return {"session": int(session.group(1)), "host small": host[0], "host large": host[1],
            "torch small": min(v[0] for v in torch), "torch large": min(v[1] for v in torch)}


def same(shown: str, value: float) -> bool:
    digits = len(shown.split(".")[1]) if "." in shown else 0
    return float(shown) == round(value, digits)


def flat(doc: str) -> str:
    return re.sub(r"\s+", " ", (REPO / doc).read_text(encoding="utf-8"))


def test_readme_quotes_the_latest_update_run():
    run = latest_run()
    found = re.search(rf"pushbuffer it takes {NUMBER} / {NUMBER} ms small / large against PyTorch's best "
                      rf"\([^)]*\) {NUMBER} / {NUMBER} ms in the same run \([^;]*; "
                      rf"bench/results/coppelius-update-h200\.md, session (\d+);", flat("README.md"))
    assert found, "README.md no longer quotes the Coppelius update as this test reads it"
    small, large, torch_small, torch_large, session = found.groups()
    assert int(session) == run["session"], f"README cites session {session}; the file's latest is {run['session']}"
    for shown, key in ((small, "host small"), (large, "host large"),
                       (torch_small, "torch small"), (torch_large, "torch large")):
        assert same(shown, run[key]), f"README quotes {shown} for {key}; the latest run has {run[key]}"


def test_coppelius_where_it_stands_quotes_the_latest_update_run():
    run = latest_run()
    found = re.search(rf"Where it stands \(session (\d+), H200\): one update through seed 004's host takes "
                      rf"{NUMBER} ms large and {NUMBER} ms small .*? at {NUMBER} / {NUMBER} ms in the same run",
                      flat("docs/coppelius.md"))
    assert found, "docs/coppelius.md's \"Where it stands\" no longer reads as this test expects"
    session, large, small, torch_large, torch_small = found.groups()
    assert int(session) == run["session"]
    for shown, key in ((small, "host small"), (large, "host large"),
                       (torch_small, "torch small"), (torch_large, "torch large")):
        assert same(shown, run[key]), f"docs/coppelius.md quotes {shown} for {key}; the latest run has {run[key]}"
