"""Run many `bobc run --reference` cases in one process (the plan loaded once).

    python reference_driver.py PLAN CASES.json   -> one JSON verdict per line

A case is {"dir", "op", "input", "checkpoint" (or null), "checkpoint_out",
"predictions", "result"}, paths relative to "dir".  The verdict is the exit
code `bobc run` would give (run.py's own steps after loading the plan), or
"traceback: ..." for anything that is not a BobcError, or "hang" when one
case takes longer than its alarm.  tests/fuzz/ compares these with the C host's.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import traceback


# a hang guard per case, in wall-clock seconds: a case that trains runs the reference model, a few
# seconds on a loaded 2-core machine; a case past this is a hang (its verdict says so)
CASE_ALARM_S = 60


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def main(plan: str, cases_file: str) -> int:
    from bobc.commands.run import load_plan
    from bobc.errors import BobcError
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "bob"))
    from bob_model.model import BobConfig
    from bobc.reference.runner import OutputPaths
    from bob_model.runner import invoke_files

    config = BobConfig.from_plan(load_plan(plan))
    signal.signal(signal.SIGALRM, _alarm)
    with open(cases_file, encoding="utf-8") as handle:
        cases = json.load(handle)
    for case in cases:
        os.chdir(case["dir"])
        signal.alarm(CASE_ALARM_S)
        try:
            outputs = OutputPaths(case["checkpoint_out"], case["predictions"], case["result"])
            invoke_files(config, case["op"], case["input"], case["checkpoint"], outputs)
            verdict = 0
        except BobcError as error:
            verdict = error.exit_code
        except Hang:
            verdict = "hang"
        except Exception:               # noqa: BLE001 - any other exception is the finding
            verdict = "traceback: " + traceback.format_exc().strip().splitlines()[-1]
        finally:
            signal.alarm(0)
        print(json.dumps(verdict), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
