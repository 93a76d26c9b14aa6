"""Where bobc's sources name the NVIDIA header a fact comes from, it is the header that has it.

UPSTREAM holds where NVIDIA's published sources define the facts below (open-gpu-kernel-modules
580.105.08, the branch the shim speaks, and open-gpu-doc c8607fe; checked by probe s33 qmdaudit
against the headers themselves): the three allocation structs are in sdk nvos.h, the class
headers class/cla06c.h, cl9067.h, clc661.h holding only their class IDs; AMPERE_CHANNEL_GPFIFO_A's
GP entry (clc56f.h NVC56F_GP_ENTRY0/1) has FETCH, GET, GET_HI, LEVEL, LENGTH, SYNC and no PRIV,
which is Kepler's (cla06f.h NVA06F_GP_ENTRY1_PRIV 8:8); open-gpu-doc's QMD headers hold bare
MW(hi:lo) defines, with no comment on any field."""
from __future__ import annotations

import re
from pathlib import Path

from bobc.nvidia import gpfifo

REPO = Path(__file__).resolve().parents[1]

DEFINED_IN = {
    "NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS": "nvos.h",
    "NV_CTXSHARE_ALLOCATION_PARAMETERS": "nvos.h",
    "NV_HOPPER_USERMODE_A_PARAMS": "nvos.h",
}
CLC56F_GP_ENTRY_FIELDS = {"FETCH", "GET", "GET_HI", "LEVEL", "LENGTH", "SYNC", "OPCODE"}


def test_a_struct_comment_cites_the_header_that_defines_the_struct():
    wrong = []
    for path in sorted((REPO / "runtime_c").glob("*.[ch]")):
        for m in re.finditer(r"/\*\s*(\w+)(.*?)\*/", path.read_text(encoding="utf-8"), re.S):
            name, rest = m.groups()
            if name in DEFINED_IN:
                cited = re.search(r"[\w/]+\.h", rest)
                if cited is None or Path(cited.group(0)).name != DEFINED_IN[name]:
                    wrong.append(f"{path.name}: {name} cited to {cited and cited.group(0)}, "
                                 f"defined in {DEFINED_IN[name]}")
    assert not wrong, "\n".join(wrong)


def test_gp_entry_bits_clc56f_does_not_name_say_so():
    source = Path(gpfifo.__file__).read_text(encoding="utf-8")
    for name in set(gpfifo.FIELDS) - CLC56F_GP_ENTRY_FIELDS:
        line = next(line for line in source.splitlines() if line.strip().startswith(f'"{name}":'))
        assert "no field in clc56f.h" in line, f"gpfifo.FIELDS[{name!r}] is no clc56f.h field: {line.strip()}"
    for sentence in re.split(r"(?<=[.;])\s", " ".join(gpfifo.__doc__.split())):
        if "PRIV" in sentence:
            assert "cla06f.h" in sentence, sentence


def test_no_citation_of_open_gpu_docs_field_comments():
    cited = [f"{path.relative_to(REPO)}:{n}" for path in sorted((REPO / "compiler").rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"open-gpu-doc'?s? (field )?comments?", line)]
    assert not cited, f"open-gpu-doc's QMD headers have no field comments: {cited}"


def test_the_build_version_comment_states_the_order_the_shim_asks_in():
    """nv_ctrl.h says which GET_BUILD_VERSION_V2 layout the shim asks with first: the one
    check_driver_version's first rm_control passes (its struct's pinned size)."""
    header = (REPO / "runtime_c" / "nv_ctrl.h").read_text(encoding="utf-8")
    shim = (REPO / "runtime_c" / "nv_shim.c").read_text(encoding="utf-8")
    sizes = {m.group(1): int(m.group(2)) for m in re.finditer(r"_Static_assert\(sizeof\((\w+)\) == (\d+)", header)}
    body = shim.split("static int check_driver_version(", 1)[1].split("\n}\n", 1)[0]
    declared = dict((var, typ) for typ, var in re.findall(r"\b(rt_nv0000_build_version_v2\w*)\s+(\w+);", body))
    asked = [sizes[declared[var]] for var in re.findall(r"rm_control\([^;]*?&(\w+), sizeof \1\)", body)]
    assert len(asked) == 2 and sorted(asked) == [776, 1032], asked
    comment = " ".join(header.split("NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2 (0x13e)", 1)[1].split("*/", 1)[0]
                       .replace("*", " ").split())
    m = re.search(r"asks with the (\d+)-byte layout first", comment)
    assert m, f"nv_ctrl.h does not say which layout the shim asks with first: {comment}"
    assert int(m.group(1)) == asked[0], f"nv_ctrl.h says {m.group(1)} bytes first; nv_shim.c asks with {asked[0]}"
