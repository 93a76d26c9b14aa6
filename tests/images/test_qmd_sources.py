"""Each QMD layout cites the open-gpu-doc header of the compute class that reads it.

NVIDIA names a class's QMD header after the class number (cl<class>qmd.h: clc7c0qmd.h for
AMPERE_COMPUTE_B 0xC7C0, clcbc0qmd.h for HOPPER_COMPUTE_A 0xCBC0).  A header of another class
may hold a section of the same name with other bits: clc6c0qmd.h (AMPERE_COMPUTE_A, GA100) has a
V03_00 without the OCCUPANCY_* fields and with a narrower HW_ONLY_DEPENDENCE_COUNTER (probe
s33 qmdaudit, finding 4).  So the headers a layout's `source` names are those of the classes
of the targets using that layout, and no other."""
from __future__ import annotations

import re

from bobc.nvidia import qmd
from bobc.targets import TARGETS


def test_a_layout_cites_the_qmd_header_of_the_classes_that_read_it():
    for name, layout in qmd.LAYOUTS.items():
        readers = {f"cl{t.compute_class:04x}qmd.h" for t in TARGETS.values() if t.qmd_layout == name}
        cited = set(re.findall(r"cl[0-9a-f]{4}qmd\.h", layout.source))
        assert cited, f"QMD {name}'s source names no class header: {layout.source!r}"
        assert cited <= readers, (f"QMD {name}'s source cites {sorted(cited - readers)}, the header of a class "
                                  f"no target reads {name} with ({sorted(readers)})")
