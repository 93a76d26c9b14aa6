"""The schedule: submissions name real launches, launches are first submitted in order, semaphores unshared."""
from __future__ import annotations

from ..errors import shown_plan_text
from ..plan.model import Plan, place
from .findings import SHOWN_ITEMS, Finding, shown_items


def check_schedule(plan: Plan) -> list[Finding]:
    program = plan.program
    out: list[Finding] = []
    count = len(program.launches)
    if program.launch_count != count:
        out.append(Finding("plan", f"the plan declares {program.launch_count} launches but lists {count}",
                           place(program, "launch_count")))
    if program.submission_count != len(program.submissions):
        out.append(Finding("plan", f"the plan declares {program.submission_count} submissions but lists "
                                   f"{len(program.submissions)}", place(program, "submission_count")))
    submitted: set[int] = set()
    expected = 0
    semaphores: dict[int, int] = {}
    for s, submission in enumerate(program.submissions):
        name = f"submission {s} ({shown_plan_text(submission.identity)})"
        if not submission.launches:
            out.append(Finding("plan", f"{name} submits no launches", submission.at))
        for launch in submission.launches:
            if not 0 <= launch < count:
                out.append(Finding("missing-launch", f"{name} references launch {launch}; the plan has {count} "
                                                     f"launches (0..{count - 1})", submission.at))
                continue
            if launch not in submitted:
                if launch != expected:
                    out.append(Finding("order", f"{name} first submits launch {launch} "
                                                f"({program.launches[launch].identity}) before launch {expected} "
                                                f"({program.launches[expected].identity}) was ever submitted",
                                       submission.at))
                submitted.add(launch)
                while expected in submitted:
                    expected += 1
        if submission.semaphore_offset in semaphores:
            out.append(Finding("semaphore", f"{name} releases the semaphore at +{submission.semaphore_offset:#x}, "
                                            f"already submission {semaphores[submission.semaphore_offset]}'s",
                                   submission.at))
        else:
            semaphores[submission.semaphore_offset] = s
    missing = [i for i in range(count) if i not in submitted]
    if missing:
        out.append(Finding("unsubmitted", "launches never submitted: " + shown_items(
            [f"{i} ({program.launches[i].identity})" for i in missing])
            + (f" ({len(missing):,} launches)" if len(missing) > SHOWN_ITEMS else ""), place(program, "submissions")))
    return out
