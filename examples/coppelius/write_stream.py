"""Write a Coppelius token stream from any file (docs/formats.md, "Token stream"):

    python examples/coppelius/write_stream.py TEXT -o STREAM
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    import bobc  # noqa: F401
except ImportError:                      # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "compiler"))

from coppelius_model.stream import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main(prog="write_stream.py"))
