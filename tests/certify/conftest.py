"""The certifier tests use the hand-built Bob plan of tests/images/synthetic_bob.py."""
import sys
from pathlib import Path

IMAGES = str(Path(__file__).resolve().parents[1] / "images")
if IMAGES not in sys.path:
    sys.path.insert(0, IMAGES)
