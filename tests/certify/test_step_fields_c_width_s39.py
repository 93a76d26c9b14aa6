"""Probe s39 nativewrap finding 2: a plan host step's naturals were held to 2^64 - 1 whatever the C
member they become.  A Read's tolerateEmpty is a `uint32_t` (runtime_c/plan_steps.h): 2^32 passed
the certifier, the generator wrote `.tolerate_empty = 4294967296u` (0 once converted, which would be a read that
tolerates no empty file where the plan said it does), and gcc's -Werror=overflow then refused the
generated C as "a bobc bug".  Each step field is now held to its own C member's width, by name."""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "platform"))

import synthetic_support  # noqa: E402

WRITTEN = "synStagingBytes 0 synStagingBytes 1\n"


def test_the_c_member_is_32_bits():
    """The oracle: the header the host is compiled against."""
    header = (REPO / "runtime_c" / "plan_steps.h").read_text()
    read = re.search(r"typedef struct \{([^}]*)\} bobc_step_read;", header).group(1)
    assert re.search(r"\buint32_t tolerate_empty;", read), read


def limits_of(tmp_path: Path, tolerate: int) -> list:
    from bobc.certify.limits import check_limits
    from bobc.language import load_program
    from bobc.plan.extract import extract_plan
    from bobc.targets import SM90

    copy = tmp_path / "Synthetic"
    shutil.copytree(synthetic_support.SYNTHETIC, copy)
    source = (copy / "Staging.bob").read_text()
    assert source.count(WRITTEN) == 1
    (copy / "Staging.bob").write_text(source.replace(WRITTEN, WRITTEN.replace(" 1\n", f" {tolerate}\n")))
    program = load_program(copy / "Staging.bob", include=[synthetic_support.plan_support.BOB.parent],
                           intrinsics=synthetic_support.fake_registry())
    program.check()
    return [f.message for f in check_limits(extract_plan(program, "synStagingHost"), SM90)]


@pytest.mark.parametrize("tolerate, refused", [((1 << 32) - 1, False), (1 << 32, True), ((1 << 64) - 1, True)])
def test_a_read_steps_tolerate_empty_is_held_to_its_uint32_t(tmp_path, tolerate, refused):
    messages = [m for m in limits_of(tmp_path, tolerate) if "tolerate_empty" in m]
    if not refused:
        assert messages == []
        return
    assert messages and all(m.startswith(f"the host's read step's tolerate_empty holds {tolerate:,}: outside "
                                         f"0..4,294,967,295, the generated C's uint32_t") for m in messages), messages
