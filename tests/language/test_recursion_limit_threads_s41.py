"""The recursion limit the evaluator raises is the caller's again once the last evaluation in flight
ends, on whichever thread (docs/language.md "Python API"; probe s41 leftovers6).

Python's limit is the process's: sys.setrecursionlimit moves every thread's budget, and a thread left
deeper than a lowered limit ends the interpreter ("Fatal Python error: Cannot recover from stack
overflow", exit 134).  Session 40 put each evaluation's found limit back when it returned (fa6bd4d7,
reverted in eaddbcb): seed 003's pair, two threads each loading and evaluating a plan, had one
thread's evaluation end while the other's was 5,000 frames deep, and the whole pytest run aborted.
Without any restoring, load_program left 20,000 for the rest of the process.

The scenario runs in a child interpreter, so an abort is an exit status here, not the end of this
run.  Expected values: the caller's own limit (1,500, set by the child before anything) after both
evaluations; the deep one's depth past that limit (counted from the frames, by the child); the two
values from arithmetic (sum of 0 .. n-1 plus the code's length)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from tests.conftest import REPO

# The plan both child scripts evaluate: `deep` recurses N frames deep (sum of a list 0 .. N-1), `shallow`
# does not; its Plan value is encoded by an intrinsic the child registers.
PLAN = """module Plan

family Plan : Type 0
constructor PlanValue
field unrestricted launches : Nat
end-family

family List : Type 0
constructor ListEmpty
constructor ListCons
field unrestricted head : Nat
field unrestricted tail : (family List)
end-family

def code : Bytes = (compiler-native-encode (family Plan) (constructor Plan PlanValue 7))
def upTo = (lambda unrestricted n : Nat .
  (nat-eliminate (lambda unrestricted k : Nat . (family List))
    (constructor List ListEmpty)
    (lambda unrestricted k : Nat . (lambda unrestricted rest : (family List) .
       (constructor List ListCons k rest)))
    n))
def sum = (lambda unrestricted xs : (family List) .
  (eliminate List (lambda unrestricted c : (family List) . Nat) xs
    (branch ListEmpty . (bytes-length code))
    (branch ListCons h t induction . (nat-add induction h))))
def deep : Nat = (sum (upTo {n}))
def shallow : Nat = (bytes-length code)
"""


def write_plan(path, n):
    path.write_text(PLAN.format(n=n))
    return str(path)


CHILD = textwrap.dedent('''
    import sys, threading
    from bobc.language import Intrinsics, VBytes, load_program
    from bobc.targets import SM86

    CALLERS = 1500
    sys.setrecursionlimit(CALLERS)

    shallow_in, deep_in, shallow_done = threading.Event(), threading.Event(), threading.Event()
    said = {}

    def depth():
        frame, count = sys._getframe(), 0
        while frame is not None:
            frame, count = frame.f_back, count + 1
        return count

    def shallow_encoder(value, context):        # the shallow evaluation waits, started, for the deep one
        shallow_in.set()
        assert deep_in.wait(60)
        return VBytes(b"x" * 3)

    def deep_encoder(value, context):           # at the bottom of the deep one: waits for the other to end
        said["depth"] = depth()
        deep_in.set()
        assert shallow_done.wait(60)
        said["limit while deep"] = sys.getrecursionlimit()
        return VBytes(b"x" * 3)

    def evaluate(encoder, name):
        intrinsics = Intrinsics()
        intrinsics.register("Plan", encoder)
        said[name] = load_program(sys.argv[1], intrinsics=intrinsics, target=SM86).value(name).value

    def shallow():
        evaluate(shallow_encoder, "shallow")
        shallow_done.set()

    first = threading.Thread(target=shallow)    # starts first: it found the caller's limit
    first.start()
    assert shallow_in.wait(60)
    second = threading.Thread(target=evaluate, args=(deep_encoder, "deep"))
    second.start()
    first.join(60)
    second.join(60)
    print(said["shallow"], said["deep"], said["depth"], said["limit while deep"], sys.getrecursionlimit(), flush=True)
''')


def test_two_evaluations_on_two_threads_one_ending_while_the_other_is_deep(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "compiler"), str(REPO)])}
    done = subprocess.run([sys.executable, "-c", CHILD, write_plan(tmp_path / "Plan.bob", 1000)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr       # 134: the interpreter aborted
    shallow, deep, depth, limit_while_deep, limit_after = map(int, done.stdout.split())
    assert (shallow, deep) == (3, 3 + 1000 * 999 // 2)
    assert depth > 1500                 # the deep thread was past the caller's limit when the other ended
    assert limit_while_deep > depth     # ... and the limit stayed above it
    assert limit_after == 1500          # the caller's, once both ended


def test_an_evaluation_leaves_the_callers_limit_on_its_own_thread(tmp_path):
    """One thread, one evaluation: the limit found (1,234) is the limit after, as cli.main leaves a
    command's caller's (docs/language.md); before, load_program left 20,000 for the process."""
    script = textwrap.dedent('''
        import sys
        from bobc.language import load_program
        from bobc.targets import SM86
        open(sys.argv[1], "w").write("module Plan\\n\\ndef two : Nat = (nat-add 1 1)\\n")
        sys.setrecursionlimit(1234)
        program = load_program(sys.argv[1], target=SM86)
        print(program.value("two").value, sys.getrecursionlimit())
    ''')
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "Plan.bob")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "1234"]


# -- mutants6: what docs/language.md states that the two tests above let pass -- "none lowers it" (a
# caller's limit above 20,000 is kept while it evaluates), "the cyclic garbage collector is paused
# while the language evaluates" and is the caller's again after (on or off as found), and the big-stack
# thread's stack size is the process's default again after a deep evaluation (mutants of
# _evaluation_starts / _evaluation_ends / _run_deep_uncollected that passed).

SETTINGS_CHILD = textwrap.dedent('''
    import gc, sys, threading
    from bobc.language import Intrinsics, VBytes, load_program
    from bobc.targets import SM86

    seen = []

    def encoder(value, context):
        seen.append((sys.getrecursionlimit(), gc.isenabled(), threading.current_thread().name))
        return VBytes(b"xyz")

    def evaluate(name):
        intrinsics = Intrinsics()
        intrinsics.register("Plan", encoder)
        return load_program(sys.argv[1], intrinsics=intrinsics, target=SM86).value(name).value

    sys.setrecursionlimit(30000)
    gc.enable()
    print("shallow", evaluate("shallow"), *seen[-1][:2], sys.getrecursionlimit(), gc.isenabled())
    gc.disable()
    print("off", evaluate("shallow"), gc.isenabled())
    gc.enable()
    sys.setrecursionlimit(1500)
    size = threading.stack_size()
    print("deep", evaluate("deep"), seen[-1][2], sys.getrecursionlimit(), threading.stack_size() == size)
''')


def test_the_callers_settings_are_kept_while_evaluating_and_after(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    done = subprocess.run([sys.executable, "-c", SETTINGS_CHILD, write_plan(tmp_path / "Plan.bob", 30000)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line.split() for line in done.stdout.splitlines()]
    # 30,000 above the evaluator's 20,000: not lowered; the collector paused inside, back on after
    assert lines[0] == ["shallow", "3", "30000", "False", "30000", "True"]
    assert lines[1] == ["off", "3", "False"]          # a caller's paused collector is left paused
    # 3 + 0 + 1 + ... + 29999, on the big-stack thread; the caller's limit and thread stack size after
    assert lines[2] == ["deep", str(3 + 30000 * 29999 // 2), "bobc-deep-evaluation", "1500", "True"]
