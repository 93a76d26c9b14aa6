"""Write a Coppelius token stream from any file (docs/formats.md, "Token stream"):

    python examples/coppelius/write_stream.py TEXT -o STREAM
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from coppelius_model.stream import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
