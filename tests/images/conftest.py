"""Makes the hand-built Bob plan (synthetic_bob.py) importable by the image and certifier tests."""
import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
