"""The public ``solve``: the pipeline's plan with everything ``dansched solve`` writes.

:func:`dansched.pipeline.run_pipeline` is the engine (MPAS -> DLR -> CPE, judged between
stages). :func:`solve` runs it and adds what a plan folder holds beside the contest
files: the report's lower bounds (the fast ones of :func:`dansched.audit.audit_plan`)
and the plan's fingerprint (:func:`dansched.plan_folder.plan_fingerprint`). The
returned :class:`Solution` writes the whole group in one call, optionally with the
Perfetto trace and the HTML page::

    solution = solve(inst, SolveOptions(problem=3))
    solution.write("plans", trace=True, html=True)   # the paths written

Given ``out``, :func:`solve` checks that folder before the work (a wrong ``--out``
does not cost a solve) and writes it after. This module reads the pipeline's report
only through :func:`report_dict`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .audit import audit_plan, rows_report
from .errors import TraceError
from .instance import Instance
from .pipeline import SolveOptions, SolveResult, run_pipeline
from .plan import Plan, plan_texts
from .plan_folder import check_group_targets, plan_fingerprint, write_group
from .report.trace import build_trace, trace_json_text
from .report.view import build_view_data, check_view_range, view_html
from .simulate import Evaluation

__all__ = ["Solution", "solve", "report_dict", "REPORT_BOUNDS_SECONDS"]

Progress = Callable[[str], None]
REPORT_BOUNDS_SECONDS = 10.0  # at most this much of --time-limit goes to the report's traffic cover bound


def report_dict(result: SolveResult) -> dict[str, Any]:
    """The pipeline's report as JSON-ready data (the one place this module reads it)."""
    return result.report.to_dict()


def _needs_timing(what: str, plan: Plan) -> None:
    if plan.offsets is None:
        raise TraceError(f"{what} needs timing: solve problem 2 or 3 (a problem-1 order has no layout)")


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
        """What ``<case>_report.json`` holds: the pipeline's report, ``bounds`` and
        ``fingerprint``."""
        report = report_dict(self.result)
        if self.bounds is not None:
            report["bounds"] = self.bounds
        report["fingerprint"] = self.fingerprint
        return report

    def files(self, trace: bool = False, html: bool = False, freq_ghz: float = 1.0) -> dict[str, str]:
        """The group's texts by kind (``schedule``, ``memory``, ``spill``, ``trace``,
        ``view``, ``report``); a trace or page needs a plan with timing (problems 2, 3)."""
        if trace:
            _needs_timing("a trace", self.plan)
        if html:
            _needs_timing("the page", self.plan)
        files: dict[str, str] = dict(plan_texts(self.plan))
        report = self.report
        if trace:
            trace_obj = build_trace(self.instance, self.plan, self.evaluation, freq_ghz)
            trace_obj.setdefault("otherData", {})["plan_fingerprint"] = report["fingerprint"]["sha256"]
            files["trace"] = trace_json_text(trace_obj)
        if html:
            files["view"] = view_html(build_view_data(self.instance, self.plan, self.evaluation, report, freq_ghz))
        files["report"] = json.dumps(report, indent=2) + "\n"
        return files

    def write(self, folder: str | Path, trace: bool = False, html: bool = False, freq_ghz: float = 1.0) -> list[Path]:
        """Write the plan folder's group for this case (:func:`dansched.plan_folder.write_group`:
        under a lock, stale files of the case removed, nothing half-written) and return
        the paths written, in the order they were renamed into place."""
        self.written = write_group(folder, self.instance.name, self.files(trace, html, freq_ghz))
        return self.written

    def summary(self) -> dict[str, Any]:
        """One JSON-ready object for scripts: the case, the problem, the final figures and
        the files written."""
        ev = self.evaluation
        out: dict[str, Any] = {"instance": self.instance.name, "problem": self.options.problem, "valid": ev.valid}
        for key in ("max_v_stay", "physical_peak", "extra_traffic", "spill_count", "makespan"):
            value = getattr(ev, key)
            if value is not None:
                out[key] = int(value)
        out["files"] = [str(p) for p in self.written]
        return out


def solve(
    inst: Instance,
    options: SolveOptions = SolveOptions(),
    progress: Progress | None = None,
    *,
    bounds: bool = True,
    out: str | Path | None = None,
    trace: bool = False,
    html: bool = False,
    freq_ghz: float = 1.0,
) -> Solution:
    """Solve ``inst`` (:func:`dansched.pipeline.run_pipeline`) and return a :class:`Solution`.

    ``bounds``: also compute the report's lower bounds (the fast ones; a few seconds at
    most). ``out``: check that folder can take the group before the work, then write it
    (``trace``/``html`` add the trace and the page). ``progress(message)`` is called as
    each step starts. Raises :class:`~dansched.errors.PlanInvalidError` when no valid
    plan exists, :class:`~dansched.errors.OutputError` when ``out`` cannot be written."""
    say = progress or (lambda _msg: None)
    if out is not None:
        if options.problem == 1 and (trace or html):
            raise TraceError(f"{'a trace' if trace else 'the page'} needs timing: solve problem 2 or 3")
        kinds = ("schedule", "memory", "spill", "report") + (("trace",) if trace else ()) + (("view",) if html else ())
        check_group_targets(out, inst.name, kinds)
        if (trace or html) and not freq_ghz > 0:
            raise TraceError(f"the clock must be positive, got {freq_ghz} GHz")
        if html:  # figures the page cannot hold: refused before the solve
            check_view_range(inst)
    result = run_pipeline(inst, options, progress=say)
    solution = Solution(inst, options, result)
    if bounds:
        say("Report: lower bounds (peak, traffic cover, makespan floors)")
        limit = min(REPORT_BOUNDS_SECONDS, options.time_limit)
        rows = audit_plan(inst, result.plan, result.evaluation, time_limit=limit, cpsat=False, params=options.bounds)
        solution.bounds = rows_report(rows)
    if out is not None:
        say(f"Writing the plan folder {out}")
        solution.write(out, trace=trace, html=html, freq_ghz=freq_ghz)
    return solution
