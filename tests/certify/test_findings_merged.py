"""Findings that differ only in the launch they name are reported once, naming every launch."""
from bobc.certify.findings import CertificationError, Finding


def test_repeats_across_launches_become_one_line():
    faults = [Finding("stray-pointer", f"launch {i} (bob-adamw) argument 5 (word 49): 0x10 points into no resident")
              for i in (3, 7, 11)]
    faults.append(Finding("overlap", "W [0x0, 0x10) overlaps G [0x8, 0x18)"))
    faults.append(Finding("stray-pointer", "launch 2 (bob-row-gather) argument 1 (word 45): 0x20 points into no resident"))
    message = CertificationError(faults).message
    lines = message.splitlines()
    assert lines[0] == "the plan is not certified (5 faults):"
    assert lines[1] == ("  - launches 3, 7, 11 (3 alike) (bob-adamw) argument 5 (word 49): 0x10 points into no "
                        "resident")
    assert lines[2:] == ["  - W [0x0, 0x10) overlaps G [0x8, 0x18)",
                         "  - launch 2 (bob-row-gather) argument 1 (word 45): 0x20 points into no resident"]
