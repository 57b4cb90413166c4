"""Problem 3's last step: the rivals' finished plans considered beside the solve's own.

A *rival* is a whole problem-3 run under other settings (``SolveOptions.effort.rivals``,
:data:`dansched.pipeline.options.RIVALS`: another victim rule or Stage-1 variant), made by
the caller as a function of the progress callback. Each rival's plan becomes a candidate
row of source ``rival`` and a frontier point (:data:`~.frontier.RIVAL`); a rival plan the
budget admits that is faster than the best so far becomes the solve's plan, its row the
one kept. The rivals' seconds count in the solve's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ...instance import Instance
from ...interrupt import stopping
from ...params import Progress
from .frontier import RIVAL, point_of
from .loop import Problem3Result
from .sources.candidates import CandidateRecord

__all__ = ["RivalRun", "with_rivals"]

RivalRun = Callable[[Progress], Problem3Result]
"""One rival's problem 3, given the progress callback its messages go to."""


def with_rivals(
    inst: Instance, p3: Problem3Result, rivals: Sequence[tuple[str, RivalRun]], say: Progress
) -> Problem3Result:
    """``p3`` with the plans of ``rivals`` (name, run) considered, in order (module
    docstring); their progress is prefixed ``Rival <name>:``, their Stage-3 runs do not
    count in ``p3.runs``. A stop request ends the rivals run so far."""
    if not rivals:
        return p3
    best, seconds = p3, p3.seconds
    for name, run in rivals:
        if stopping():  # stopped early (dansched.interrupt): the rivals run so far
            break

        def said(message: str, name: str = name) -> None:
            say(f"Rival {name}: {message}")

        got = run(said)
        seconds += got.seconds
        ev = got.evaluation
        traffic, makespan = int(ev.extra_traffic or 0), got.stage3.makespan
        row = CandidateRecord("rival", name, traffic, makespan=makespan)
        p3.candidates.append(row)
        p3.points.append(point_of(inst, p3.budget.allowance, got.plan, ev, makespan, f"rival {name}", RIVAL))
        if p3.budget.admits(traffic) and makespan < best.stage3.makespan:
            for r in p3.candidates:
                r.kept = r is row
            best = got
    return replace(p3, plan=best.plan, evaluation=best.evaluation, stage3=best.stage3, seconds=seconds)
