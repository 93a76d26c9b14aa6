"""Where bobc's own files live: the plan language's standard library (specs/), the
host runtime's C sources (runtime_c/) and the documents its messages cite (docs/).

In bobc's own source checkout (including `pip install -e`) they are the checkout's
folders, so an edit there is what the next build uses.  An installed bobc carries
copies inside the package (bobc/_share/, put there by setup.py's build step), so an
installed bobc (`pip install .` in a checkout, or `pip install` of a wheel or sdist
built from one) builds hosts without the repository.

The checkout's folders count only when the package really is a checkout's
compiler/bobc (is_checkout): a folder named specs/ or runtime_c/ two levels above an
installed package (`pip install --target vendor` in a user's project) is the user's,
never bobc's standard library or runtime.

A message that cites a document names it through doc(): `docs/limits.md` in the checkout
(as the README and the documents name each other), the installed copy's path otherwise,
so a user who installed bobc can open what a message cites.  What ends up in a built host
or in text compared across machines (bobc dump, the C hosts' own messages and their
reference twins) cites `docs/NAME.md` as it is, never a path that depends on where bobc is
installed.
"""
from __future__ import annotations

import re
from pathlib import Path

from .errors import BobcError

PACKAGE = Path(__file__).resolve().parent
CHECKOUT = PACKAGE.parents[1]          # compiler/bobc -> the repository root, when it is one
INSTALLED = PACKAGE / "_share"


def is_checkout(root: Path = CHECKOUT, package: Path = PACKAGE) -> bool:
    """Whether `package` is the compiler/bobc of bobc's own source checkout `root`: the package
    sits at root/compiler/bobc and root/pyproject.toml is bobc's (names the project bobc and
    finds its packages in compiler/).  This package's own verdict is decided once per process
    (shared_folder and doc ask it for every library family a plan's extraction meets: thousands
    of reads of pyproject.toml a build; probe s35 buildspeed finding 3)."""
    own = root == CHECKOUT and package == PACKAGE
    if own and _OWN_VERDICT:
        return _OWN_VERDICT[0]
    verdict = _is_checkout(root, package)
    if own:
        _OWN_VERDICT.append(verdict)
    return verdict


_OWN_VERDICT: list[bool] = []        # is_checkout() of this package, once decided


def _is_checkout(root: Path, package: Path) -> bool:
    if package != root / "compiler" / "bobc":
        return False
    try:
        project = (root / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return (re.search(r'(?m)^name\s*=\s*"bobc"\s*$', project) is not None
            and re.search(r'(?m)^where\s*=\s*\["compiler"\]\s*$', project) is not None)


def shared_folder(name: str) -> Path:
    """The folder `name` (specs or runtime_c): bobc's checkout's when bobc runs from its
    checkout, else the installed copy."""
    roots = (CHECKOUT, INSTALLED) if is_checkout() else (INSTALLED,)
    for root in roots:
        folder = root / name
        if folder.is_dir():
            return folder
    raise BobcError(f"bobc's {name}/ folder is missing: looked in {' and '.join(str(r / name) for r in roots)}",
                    hint="reinstall bobc from its source: `pip install .` in a bobc checkout, or `pip install` "
                         "of a bobc wheel or sdist built from one (bobc is not on PyPI)")


def doc(name: str, in_help: bool = False) -> str:
    """How a message cites bobc's document `name` ("limits.md"): `docs/limits.md` when bobc
    runs from its checkout (the messages' words there, unchanged), else the path of the copy
    installed with the package (bobc/_share/docs/limits.md), which a user who installed bobc
    has where the repository's docs/ is not.  `in_help`: for an argparse help text, which is
    %-formatted (a '%' in the installed path is written '%%')."""
    cited = f"docs/{name}" if is_checkout() else str(INSTALLED / "docs" / name)
    return cited.replace("%", "%%") if in_help else cited
