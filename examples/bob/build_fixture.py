#!/usr/bin/env python3
"""Build Bob's input record from a text corpus (docs/formats.md, "Input record").

    python examples/bob/build_fixture.py examples/bob/corpus.txt \\
        --prompts-file examples/bob/prompts.txt -o record.bin

target(b) is the byte that most often follows b in the corpus (ties to the
smallest byte; a byte never followed by anything targets itself); each of the
three prompts contributes its last byte.  corpus.txt is a short story written
for this example; prompts.txt ends its prompts in 'w', 't' and ' ', the
prompt bytes of the PyTorch reference case.  The tool itself is
bob_model/fixture.py (beside this file).
"""
import sys
from pathlib import Path

try:
    import bobc  # noqa: F401
except ImportError:                      # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "compiler"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bob_model.fixture import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
