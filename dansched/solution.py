"""The public ``solve``: the pipeline's plan with everything ``dansched solve`` writes.

:func:`dansched.pipeline.run_pipeline` is the engine (MPAS -> DLR -> CPE, judged between
stages). :func:`solve` runs it and adds what a plan folder holds beside the contest
files: the report's lower bounds (the fast ones of :func:`dansched.audit.audit_plan`)
and the plan's fingerprint (:func:`dansched.plan_folder.plan_fingerprint`). The
returned :class:`Solution` writes the whole group in one call, optionally with the
other outputs of :data:`dansched.outputs.OUTPUTS` (the Perfetto trace, the HTML page)::

    solution = solve(inst, SolveOptions(problem=3))
    solution.write("plans", outputs=("trace", "view"))   # the paths written

Given ``out``, :func:`solve` checks that folder before the work (a wrong ``--out``
does not cost a solve) and writes it after. This module reads the pipeline's report
only through :func:`report_dict`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .audit import audit_plan, rows_report
from .checks import FREQ_GHZ, check_path, check_type
from .errors import ArgumentError
from .instance import Instance, require_instance
from .outputs import OutputInput, check_outputs, check_targets, chosen, group
from .pipeline import SolveOptions, SolveResult, run_pipeline
from .pipeline.memory import collection_paused, out_of_memory
from .plan import Plan, plan_texts
from .plan_folder import plan_fingerprint, write_group
from .simulate import Evaluation

__all__ = ["Solution", "solve", "report_dict", "REPORT_BOUNDS_SECONDS"]

Progress = Callable[[str], None]
BUDGET_FROM = "the problem-2 plan's extra traffic (base) plus slack_percent of it, rounded down"
REPORT_BOUNDS_SECONDS = 10.0  # at most this much of --time-limit goes to the report's traffic cover bound


def report_dict(result: SolveResult) -> dict[str, Any]:
    """The pipeline's report as JSON-ready data (the one place this module reads it)."""
    return result.report.to_dict()


@dataclass
class Solution:
    """A solved instance: the plan, the evaluator's verdict, the report of
    ``<case>_report.json`` and the files of its plan folder.

    ``result`` is the pipeline's :class:`~dansched.pipeline.SolveResult`; ``bounds`` the
    report's lower bounds (``None`` when :func:`solve` was asked not to compute them);
    ``written`` the paths the last :meth:`write` wrote."""

    instance: Instance
    options: SolveOptions
    result: SolveResult
    bounds: dict[str, Any] | None = None
    written: list[Path] = field(default_factory=list)

    @property
    def plan(self) -> Plan:
        return self.result.plan

    @property
    def evaluation(self) -> Evaluation:
        return self.result.evaluation

    @property
    def stage1(self) -> Plan | None:
        """The Stage-1 order as a problem-1 plan (None when no L0-legal order exists)."""
        return self.result.stage1

    @property
    def fingerprint(self) -> dict[str, object]:
        """sha256 of each contest file and one over them (see :mod:`dansched.plan_folder`)."""
        return plan_fingerprint({k: t.encode() for k, t in plan_texts(self.plan).items()})

    @property
    def report(self) -> dict[str, Any]:
        """What ``<case>_report.json`` holds: the case, the pipeline's report, the hardware
        and the options of the solve, ``bounds`` and ``fingerprint``."""
        hw = self.instance.hw
        report = {"instance": self.instance.name} | report_dict(self.result)
        report["hardware"] = hw.to_dict() | ({"file": hw.source.to_dict()} if hw.source is not None else {})
        report["options"] = self.options.to_dict()
        if self.bounds is not None:
            report["bounds"] = self.bounds
        report["fingerprint"] = self.fingerprint
        return report

    def files(self, outputs: Iterable[str] = (), freq_ghz: float = 1.0) -> dict[str, str]:
        """The group's texts by kind: the contest files and the report, and the other
        outputs named in ``outputs`` (kinds of :data:`dansched.outputs.OUTPUTS`: ``trace``,
        ``view``); one that needs timing needs a plan with a layout (problems 2, 3)."""
        wanted = chosen(outputs)
        freq_ghz = FREQ_GHZ.check(freq_ghz, "Solution.files: freq_ghz")
        check_outputs(wanted, self.options.problem, freq_ghz)
        given = OutputInput(self.instance, self.plan, self.evaluation, self.report, freq_ghz)
        texts = {o.kind: o.build(given) for o in wanted}
        return {k: t for k, t in texts.items() if t is not None}

    def write(self, folder: str | Path, outputs: Iterable[str] = (), freq_ghz: float = 1.0) -> list[Path]:
        """Write the plan folder's group for this case (:func:`dansched.plan_folder.write_group`:
        under a lock, stale files of the case removed, nothing half-written) with the
        ``outputs`` asked for (see :meth:`files`) and return the paths written, in the
        order they were renamed into place."""
        check_path(folder, "Solution.write: folder")
        self.written = write_group(folder, self.instance.name, self.files(outputs, freq_ghz), group())
        return self.written

    def summary(self) -> dict[str, Any]:
        """One JSON-ready object for scripts: the case, the problem, the final figures, for
        problem 3 the traffic budget and where it came from (``base``: the problem-2 plan's
        extra traffic, plus ``slack_percent``), and the files written."""
        ev = self.evaluation
        out: dict[str, Any] = {"instance": self.instance.name, "problem": self.options.problem, "valid": ev.valid}
        for key in ("max_v_stay", "physical_peak", "extra_traffic", "spill_count", "makespan"):
            value = getattr(ev, key)
            if value is not None:
                out[key] = int(value)
        budget = report_dict(self.result).get("traffic_budget")
        if budget is not None:
            out["traffic_budget"] = budget | {"from": BUDGET_FROM}
        out["files"] = [str(p) for p in self.written]
        return out


def solve(
    inst: Instance,
    options: SolveOptions = SolveOptions(),
    progress: Progress | None = None,
    *,
    bounds: bool = True,
    out: str | Path | None = None,
    outputs: Iterable[str] = (),
    freq_ghz: float = 1.0,
) -> Solution:
    """Solve ``inst`` (:func:`dansched.pipeline.run_pipeline`) and return a :class:`Solution`.

    ``bounds``: also compute the report's lower bounds (the fast ones; a few seconds at
    most). ``out``: check that folder can take the group before the work, then write it
    with the ``outputs`` asked for (kinds of :data:`dansched.outputs.OUTPUTS`: ``trace``,
    ``view``; each checked before the work too). ``progress(message)`` is called as each
    step starts. Raises :class:`~dansched.errors.PlanInvalidError` when no valid plan
    exists, :class:`~dansched.errors.OutputError` when ``out`` cannot be written,
    :class:`~dansched.errors.ArgumentError` for an argument of the wrong type or out of
    range (all checked before the work), :class:`~dansched.errors.OutOfMemory` when the
    solve runs out of memory."""
    require_instance(inst, "solve: inst")
    check_type(options, SolveOptions, "solve: options", "SolveOptions(problem=3, ...) makes them")
    if progress is not None and not callable(progress):
        raise ArgumentError(f"solve: progress must be a function of one message, or None, got {progress!r}")
    freq_ghz = FREQ_GHZ.check(freq_ghz, "solve: freq_ghz")
    check_path(out, "solve: out", optional=True)
    say = progress or (lambda _msg: None)
    outputs = tuple(outputs)
    if out is not None:
        wanted = chosen(outputs)
        check_outputs(wanted, options.problem, freq_ghz)
        check_targets(out, inst.name, wanted, inst)
    # one line saying what the graph needs, not the allocation's traceback; no cyclic collection meanwhile
    with out_of_memory(inst), collection_paused():
        result = run_pipeline(inst, options, progress=say)
        solution = Solution(inst, options, result)
        if bounds:
            say("Report: lower bounds (peak, traffic cover, makespan floors)")
            limit = min(REPORT_BOUNDS_SECONDS, options.time_limit)
            rows = audit_plan(
                inst, result.plan, result.evaluation, time_limit=limit, cpsat=False, params=options.bounds
            )
            solution.bounds = rows_report(rows)
        if out is not None:
            say(f"Writing the plan folder {out}")
            solution.write(out, outputs, freq_ghz)
    return solution
