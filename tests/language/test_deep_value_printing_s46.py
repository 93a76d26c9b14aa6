"""`bobc eval` of a structure nested through a field that is not its constructor's last (a tree
grown leftwards, a snoc list) prints in text linear in its size (probe s46 plantexts2).
docs/language.md says a list's tail, the last field, "continues at its parent's indentation, so a
list of n cells prints n cells' worth of text"; every other field was indented one level deeper
than its constructor, so a chain of n such nodes printed 2 (1 + 2 + ... + n) spaces: a 20,000-node
chain (within every limit: a nat-eliminate may build 65,536 nodes) printed 800 MB and took 2.4 GB
of memory, a 65,536-node one ~9 GB.  Now indentation stops at 32 levels; a line deeper than that
is written at 32 levels with its level before it (`[level 40] inner = Chain.Wrap`).

The expected text is derived by hand: the value is Wrap(Wrap(...Wrap(Leaf, 0)..., n-2), n-1), so
its lines are the root `Chain.Wrap`, then for each Wrap node, at level L (the root's fields at 1):
`inner = ...` and, after everything inside it, `tag = ...`: 2 n + 1 lines."""
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
N = 5000

PLAN = f"""module Chain
family Chain : Type 0
constructor Leaf
constructor Wrap
field unrestricted inner : (family Chain)
field unrestricted tag : Nat
end-family
def result : (family Chain) = (nat-eliminate (lambda unrestricted k : Nat . (family Chain))
  (constructor Chain Leaf)
  (lambda unrestricted k : Nat . (lambda unrestricted below : (family Chain) . (constructor Chain Wrap below k)))
  {N})
"""


def _expected(n: int, cap: int = 32) -> list[str]:
    def pad(level):
        return "  " * level if level <= cap else "  " * cap + f"[level {level}] "
    # the node at depth d (root d = 0) has tag n-1-d; its fields are at level d + 1
    lines = ["Chain.Wrap"]
    for d in range(1, n + 1):            # the inner fields, going down
        lines.append(f"{pad(d)}inner = Chain.{'Wrap' if d < n else 'Leaf'}")
    for d in range(n - 1, -1, -1):       # the tags, coming back up
        lines.append(f"{pad(d + 1)}tag = {n - 1 - d}")
    return lines


def test_a_chain_through_a_first_field_prints_linear_text_s46(tmp_path):
    (tmp_path / "Chain.bob").write_text(PLAN, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "bobc", "eval", "Chain.bob", "result"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(REPOSITORY / "compiler"), "PATH": "/usr/bin:/bin",
                               "BOBC_CACHE_DIR": "off"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.rstrip("\n").split("\n")
    assert len(lines) == 2 * N + 1
    assert len(done.stdout) < 100 * (2 * N + 1)
    assert lines == _expected(N)
    assert lines[3] == "      inner = Chain.Wrap"                      # level 3: 6 spaces, as before
    assert lines[40] == "  " * 32 + "[level 40] inner = Chain.Wrap"
