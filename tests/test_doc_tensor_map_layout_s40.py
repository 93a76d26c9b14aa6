"""docs/tensor-maps.md's layout table is bobc.nvidia.tensor_map's FIELDS, bit for bit (probe s40
docs9).

The table's bit ranges (with the i-indexed rows evaluated for each i the code declares) and its
DATA_TYPE codes are read from the page and compared with the encoder's one table (FIELDS,
DATA_TYPES: which tests/nvidia/test_tensor_map.py holds to the 1059 descriptors the CUDA driver
wrote), so the page a reader decodes a descriptor by cannot drift from what bobc writes."""
from __future__ import annotations

import re
from pathlib import Path

from bobc.nvidia import tensor_map

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "tensor-maps.md").read_text(encoding="utf-8")


def _rows() -> dict[str, tuple[str, str]]:
    start = DOC.index("| field | bits | value |")
    rows = {}
    for line in DOC[start:].splitlines()[2:]:
        if not line.startswith("| "):
            break
        field, bits, value = (cell.strip() for cell in line.strip().strip("|").split(" | ", 2))
        rows[field] = (bits, value)
    return rows


def _bits(text: str, i: int | None) -> tuple[int, int]:
    parts = [part.strip() for part in text.split(":")]
    # the page writes products by juxtaposition: 32i, 8(i-1)
    values = [eval(re.sub(r"(\d)([i(])", r"\1*\2", part), {"__builtins__": {}}, {} if i is None else {"i": i})
              for part in parts]
    return (values[0], values[-1])


def test_every_field_has_the_bits_the_encoder_writes():
    rows = _rows()
    named = set()
    for field, (bits, _) in rows.items():
        if field.endswith("(i)"):
            stem = field[:-3]
            # each i the encoder declares, but one the page gives a row of its own (BOX_MINUS_ONE(0))
            indices = sorted(int(name[len(stem) + 1:-1]) for name in tensor_map.FIELDS
                             if name.startswith(stem + "(") and name not in rows)
            assert indices, field
            for i in indices:
                assert _bits(bits, i) == tensor_map.FIELDS[f"{stem}({i})"], (field, i)
                named.add(f"{stem}({i})")
        else:
            assert _bits(bits, None) == tensor_map.FIELDS[field], field
            named.add(field)
    assert named == set(tensor_map.FIELDS), set(tensor_map.FIELDS) ^ named


def test_the_data_type_codes_are_the_encoders():
    said = dict((name, int(code)) for name, code in re.findall(r"(\w+) (\d+)", _rows()["DATA_TYPE"][1]))
    plain = {name: code for name, (code, _, tf32) in tensor_map.DATA_TYPES.items() if not tf32}
    assert said == plain
