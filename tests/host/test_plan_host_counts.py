"""A plan host's schedule faults count in the singular at 1 ("1 byte", "1 checkpoint byte"), in the
reference runner's words (bobc.reference.host): runtime_c/plan_host.c's messages are reached only
on a GPU, so their format strings are read from the source here and rendered with the C host's
rule (runtime_c/host_runtime.h rt_plural: "" at 1, else "s") at counts 1 and 2, and compared with
what the reference raises for the same step."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parents[2] / "runtime_c"


def c_message(starts: str, *arguments) -> str:
    """plan_host.c's snprintf into h->err (or a helper's err) whose format starts with `starts`, rendered."""
    source = (RUNTIME / "plan_host.c").read_text(encoding="utf-8")
    found = []
    # into the host's h->err, or into a helper's err (bobc_input_window: the offset exact, written as digits)
    for call in re.finditer(r'snprintf\((?:h->err, sizeof h->err|err, err_bytes),\s*((?:"(?:[^"\\]|\\.)*"\s*)+),', source):
        text = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', call.group(1)))
        if text.startswith(starts):
            found.append(text)
    assert len(found) == 1, (starts, found)
    python_format = re.sub(r"%(?:ll|z|l)?[ud]", "%d", found[0])
    assert "%" not in python_format.replace("%d", "").replace("%s", ""), found[0]
    return python_format % arguments


def rt_plural(count: int) -> str:
    return "" if count == 1 else "s"


@pytest.mark.parametrize("extent", [1, 2])
def test_a_read_past_the_input_is_counted_alike(extent):
    from bobc.reference.host import read_past_input

    want = f"{extent} byte{rt_plural(extent)} at 15 of a 16-byte input"
    said = read_past_input("read", extent, 15, 16).message
    assert said == c_message("the schedule reads %llu", extent, rt_plural(extent), 15, 16) == f"the schedule reads {want}"
    for kind, what in (("read_cyclic", "a cyclic read"), ("read_cursor", "a read at the cursor")):
        said = read_past_input(kind, extent, 15, 16).message
        assert said == c_message("%s: %llu byte", what, extent, rt_plural(extent), 15, 16) == f"{what}: {want}"


@pytest.mark.parametrize("written", [1, 2])
def test_a_checkpoint_of_another_size_is_counted_alike(written):
    from bobc.reference.host import wrote_other_than_the_contract

    said = wrote_other_than_the_contract(written, 40).message
    assert said == c_message("the schedule wrote %zu", written, rt_plural(written), 40) == \
        f"the schedule wrote {written} checkpoint byte{rt_plural(written)}, the contract holds 40"
