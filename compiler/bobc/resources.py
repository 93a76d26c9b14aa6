"""Where bobc's own files live: the plan language's standard library (specs/) and the
host runtime's C sources (runtime_c/).

In a source checkout (including `pip install -e`) they are the checkout's own
folders, so an edit there is what the next build uses.  An installed bobc
carries copies inside the package (bobc/_share/, put there by setup.py's
build step), so `pip install bobc` builds hosts without the repository.
"""
from __future__ import annotations

from pathlib import Path

from .errors import BobcError

PACKAGE = Path(__file__).resolve().parent
CHECKOUT = PACKAGE.parents[1]          # compiler/bobc -> the repository root
INSTALLED = PACKAGE / "_share"


def shared_folder(name: str) -> Path:
    """The folder `name` (specs or runtime_c): the checkout's, else the installed copy."""
    for root in (CHECKOUT, INSTALLED):
        folder = root / name
        if folder.is_dir():
            return folder
    raise BobcError(f"bobc's {name}/ folder is missing: looked in {CHECKOUT} and {INSTALLED}",
                    hint="reinstall bobc (pip install bobc), or run it from a source checkout")
