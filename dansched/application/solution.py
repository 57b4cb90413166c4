"""The public ``solve``: the pipeline's plan with everything ``dansched solve`` writes.

:func:`dansched.pipeline.run_pipeline` is the engine (MPAS -> DLR -> CPE, judged between
stages). :func:`solve` runs it and adds what a plan folder holds beside the contest
files: the report's lower bounds (the fast ones of :func:`dansched.application.audit.audit_plan`)
and the plan's fingerprint (:func:`dansched.plan_folder.plan_fingerprint`). The
returned :class:`Solution` writes the whole group in one call, optionally with the
other outputs of :data:`dansched.application.outputs.OUTPUTS` (the Perfetto trace, the HTML page)::

    solution = solve(inst, SolveOptions(problem=3))
    solution.write("plans", outputs=("trace", "view"))   # the paths written

Given ``out``, :func:`solve` checks that folder before the work (a wrong ``--out``
does not cost a solve) and writes it after. This module reads the pipeline's report
only through :func:`report_dict`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..checks import FREQ_GHZ, check_integer, check_names, check_path, check_progress, check_type
from ..errors import ArgumentError, OutputError
from ..instance import Instance, load_instance
from ..interrupt import Stop, anytime
from ..params import Progress
from ..pipeline import SolveOptions, SolveResult, run_pipeline
from ..pipeline.memory import collection_paused, out_of_memory
from ..pipeline.problem3.frontier import FrontierPoint
from ..plan import Plan, check_writable_folder
from ..plan_folder import FolderWrite, Members, check_group_targets, fingerprint_of, folder_group, write_unit
from ..simulate import Evaluation, judged
from .audit import AuditRow, audit_plan, rows_report
from .outputs import OutputInput, check_outputs, check_targets, chosen
from .summary import SolveSummary, summary_of

__all__ = ["Solution", "solve", "report_dict", "frontier_folder", "check_destinations", "REPORT_BOUNDS_SECONDS"]

REPORT_BOUNDS_SECONDS = 10.0  # at most this much of --time-limit goes to the report's traffic cover bound


def report_dict(result: SolveResult) -> dict[str, Any]:
    """The pipeline's report as JSON-ready data (the one place this module reads it)."""
    return result.report.to_dict()


POINT_PREFIX = "traffic-"  # a frontier point's folder: traffic-<T>


def frontier_folder(folder: str | Path, case: str, point: FrontierPoint | None = None) -> Path:
    """Where the frontier's plan folders go: ``FOLDER/<case>_frontier``, and in it
    ``traffic-<T>`` for the point carrying ``T`` extra traffic."""
    base = Path(folder) / f"{case}_frontier"
    return base if point is None else base / f"{POINT_PREFIX}{point.traffic}"


def _points(folder: str | Path, case: str) -> Members:
    """The frontier's point folders of ``case`` in ``folder``: members of the unit a solve writes."""
    return Members(frontier_folder(folder, case), POINT_PREFIX)


def check_destinations(
    folder: str | Path, case: str, outputs: Iterable[str] = (), frontier: bool = False, inst: Instance | None = None
) -> None:
    """Before the work, every destination of the unit a solve writes into ``folder``
    (:meth:`Solution.write`): the folder's group (:func:`dansched.application.outputs.check_targets`,
    the ``outputs`` asked for among it) and, with ``frontier``, the folder of its points;
    and every point folder an earlier run left there, which the write replaces or clears.
    Raises :class:`~dansched.errors.OutputError` (one line; bad input, exit status 2)."""
    wanted = chosen(outputs)
    check_targets(folder, case, wanted, inst)
    base = frontier_folder(folder, case)
    if frontier:
        check_writable_folder(base)
        taken = [p for p in sorted(base.iterdir()) if p.name.startswith(POINT_PREFIX)] if base.is_dir() else []
        for p in taken:
            if not p.is_dir():
                raise OutputError(f"{p}: is not a folder, where the frontier's plan folders go: remove it")
    for p in _points(folder, case).present():
        check_group_targets(p, case, folder_group(), [o.kind for o in wanted])


@dataclass
class Solution:
    """A solved instance: the plan, the evaluator's verdict, the report of
    ``<case>_report.json`` and the files of its plan folder.

    ``result`` is the pipeline's :class:`~dansched.pipeline.SolveResult`; ``bounds`` the
    report's lower bounds, one :class:`~dansched.application.audit.AuditRow` per bound (``None`` when
    :func:`solve` was asked not to compute them; the report keeps each metric's tightest,
    :func:`~dansched.application.audit.rows_report`);
    ``written`` the paths the last :meth:`write` wrote, ``point_folders`` the plan folder of
    each frontier point it wrote;
    ``seconds`` what :func:`solve` took."""

    instance: Instance
    options: SolveOptions
    result: SolveResult
    bounds: list[AuditRow] | None = None
    written: list[Path] = field(default_factory=list)
    point_folders: list[Path] = field(default_factory=list)
    seconds: float = 0.0

    def __repr__(self) -> str:
        """One line: the case, the problem and the plan's verdict and key figures (never the
        plan's entries, the options or the report)."""
        return f"Solution({self.instance.name}, problem {self.options.problem}, {self.evaluation.figures_text})"

    @property
    def plan(self) -> Plan:
        return self.result.plan

    @property
    def evaluation(self) -> Evaluation:
        return self.result.evaluation

    @property
    def stopped(self) -> Stop | None:
        """What stopped the solve early (Ctrl-C, ``options.stop_after``), in which step and
        when; None when its budgets ran out as planned (docs/guide.md, *Stopping early*)."""
        return self.result.report.stopped

    @property
    def stage1(self) -> Plan | None:
        """The Stage-1 order as a problem-1 plan (None when no L0-legal order exists)."""
        return self.result.stage1

    @property
    def fingerprint(self) -> dict[str, object]:
        """sha256 of each contest file and one over them (see :mod:`dansched.plan_folder`)."""
        return fingerprint_of(self.plan)

    @property
    def report(self) -> dict[str, Any]:
        """What ``<case>_report.json`` holds: the case, the pipeline's report, the hardware
        and the options of the solve, ``bounds`` and ``fingerprint``."""
        hw = self.instance.hw
        report = {"instance": self.instance.name} | report_dict(self.result)
        report["hardware"] = hw.to_dict() | ({"file": hw.source.to_dict()} if hw.source is not None else {})
        report["options"] = self.options.to_dict()
        if self.bounds is not None:
            report["bounds"] = rows_report(self.bounds)
        report["fingerprint"] = self.fingerprint
        return report

    def files(self, outputs: Iterable[str] = (), freq_ghz: float = 1.0) -> dict[str, str]:
        """The group's texts by kind: the contest files and the report, and the other
        outputs named in ``outputs`` (kinds of :data:`dansched.application.outputs.OUTPUTS`: ``trace``,
        ``view``); one that needs timing needs a plan with a layout (problems 2, 3)."""
        wanted = chosen(outputs)
        freq_ghz = FREQ_GHZ.check(freq_ghz, "Solution.files: freq_ghz")
        check_outputs(wanted, self.options.problem, freq_ghz)
        given = OutputInput(self.instance, self.plan, self.evaluation, self.report, freq_ghz)
        texts = {o.kind: o.build(given) for o in wanted}
        return {k: t for k, t in texts.items() if t is not None}

    def write(self, folder: str | Path, outputs: Iterable[str] = (), freq_ghz: float = 1.0) -> list[Path]:
        """Write the plan folder's group for this case with the ``outputs`` asked for (see
        :meth:`files`) and, when the solve planned the frontier (``options.frontier``),
        each point's plan as its own plan folder (:func:`frontier_folder`, its report
        :meth:`point_report`, every plan judged again): one unit
        (:func:`dansched.plan_folder.write_unit`: under one lock, staged whole, then swapped
        in together; the point folders an earlier run left that this one lacks lose the
        case's files). Returns the paths written, the folder's own last."""
        check_path(folder, "Solution.write: folder")
        folders = [FolderWrite(Path(folder), self.files(outputs, freq_ghz))]
        for k, point in enumerate(self.frontier if self.writes_frontier else []):
            ev = judged(self.instance, point.plan, f"frontier point at traffic {point.traffic}")
            given = OutputInput(self.instance, point.plan, ev, self.point_report(k, ev), freq_ghz)
            texts = {o.kind: o.build(given) for o in chosen(outputs)}
            files = {kind: t for kind, t in texts.items() if t is not None}
            folders.append(FolderWrite(frontier_folder(folder, self.instance.name, point), files))
        self.written = write_unit(self.instance.name, folders, folder_group(), _points(folder, self.instance.name))
        self.point_folders = [f.directory for f in folders[1:]]
        return self.written

    @property
    def writes_frontier(self) -> bool:
        """Whether :meth:`write` writes the frontier's point folders (``solve --frontier``)."""
        return self.options.frontier and self.options.problem == 3

    @property
    def frontier(self) -> list[FrontierPoint]:
        """Problem 3's traffic-makespan frontier, lightest first: each point's plan, the
        allowance it was planned at, its figures (the report's ``frontier`` gives its floor
        and gap)."""
        return self.result.frontier

    def point_report(self, k: int, ev: Evaluation | None = None) -> dict[str, Any]:
        """The report of frontier point ``k``'s plan folder (``k``: its index in
        :attr:`frontier`, from 0): the solve's report with that plan's figures, budget and
        fingerprint, ``frontier_point`` its index, and no ``bounds`` (their gaps are the
        solve's plan's). ``ev``: that plan's evaluation (None: judged here)."""
        last = len(self.frontier) - 1
        if last < 0:
            raise ArgumentError("Solution.point_report: this solve has no frontier (problem 3 plans one)")
        k = check_integer(k, f"Solution.point_report: k (a point of the frontier, 0 to {last})", 0, last)
        point = self.frontier[k]
        if ev is None:
            ev = judged(self.instance, point.plan, f"frontier point at traffic {point.traffic}")
        check_type(ev, Evaluation, "Solution.point_report: ev", "the evaluation of the point's plan, or None")
        report = dict(self.report)
        report.pop("bounds", None)
        for key in ("max_v_stay", "physical_peak", "extra_traffic", "spill_count", "makespan"):
            report[key] = int(getattr(ev, key) or 0)
        budget = dict(report["traffic_budget"])
        budget["allowance"] = point.allowance
        base = budget["base"]
        budget["slack_percent"] = round(100 * (point.allowance - base) / base, 6) if base else 0
        report["traffic_budget"] = budget
        report["frontier_point"] = k
        report["fingerprint"] = fingerprint_of(point.plan)
        return report

    def summary(self) -> SolveSummary:
        """The typed result (:class:`~dansched.application.summary.SolveSummary`): the case, the problem,
        the status (optimal, feasible, invalid), the final figures, the floor under the
        objective and the gap, the seconds; for problem 3 the traffic budget and, when asked
        for, the frontier (its rows, each point's plan folder, every allowance tried, how the
        gap-hiding walk ended); what stopped the solve early, if anything; the files
        written. ``summary().to_dict()`` is the JSON of ``dansched solve --json``."""
        report = self.result.report
        asked = self.options.frontier and self.options.problem == 3
        return summary_of(
            self.instance.name,
            self.options.problem,
            self.evaluation,
            self.bounds,
            self.seconds,
            budget=report.budget,
            effort=report.effort,
            frontier=tuple(report.frontier) if asked else (),
            frontier_folders=tuple(str(f) for f in self.point_folders),
            allowances=tuple(report.allowances),
            candidates=tuple(report.candidates),
            files=tuple(str(p) for p in self.written),
            walk=report.walk,
            stopped=self.stopped,
        )


def solve(
    inst: Instance | str | os.PathLike[str],
    options: SolveOptions | None = None,
    progress: Progress | None = None,
    *,
    bounds: bool = True,
    out: str | Path | None = None,
    outputs: Iterable[str] = (),
    freq_ghz: float = 1.0,
) -> Solution:
    """Solve ``inst`` (:func:`dansched.pipeline.run_pipeline`) and return a :class:`Solution`.

    ``inst``: an :class:`~dansched.instance.Instance`, or the path of an instance file (read
    by :func:`~dansched.instance.load_instance` on the default hardware; for other hardware
    pass ``load_instance(path, load_hardware(toml))``).

    ``options``: what the solve does (:class:`~dansched.pipeline.SolveOptions`; None: the
    defaults, ``SolveOptions()``, problem 3 at the default effort).
    ``bounds``: also compute the report's lower bounds (the fast ones; a few seconds at
    most). ``out``: check every destination of that folder's unit before the work
    (:func:`check_destinations`), then write it (:meth:`Solution.write`) with the
    ``outputs`` asked for (kinds of :data:`dansched.application.outputs.OUTPUTS`: ``trace``, ``view``;
    with ``options.frontier``, each frontier point's plan folder too).
    ``progress(message)`` is called as each step starts. The pipeline runs in an
    :func:`~dansched.interrupt.anytime` section: past ``options.stop_after`` seconds, at the
    first Ctrl-C under the command line's policy or on
    :func:`~dansched.interrupt.request_stop`, it stops with its best valid plan, which is
    then reported (``Solution.stopped``, the report's ``stopped``) with the linear-time
    bounds and written whole. Raises
    :class:`~dansched.errors.PlanInvalidError` when no valid plan exists,
    :class:`~dansched.errors.OutputError` when ``out`` cannot be written (found before the
    work; :class:`~dansched.errors.WriteFailed` when the write failed after it, the
    folder keeping its earlier plan),
    :class:`~dansched.errors.ArgumentError` for an argument of the wrong type or out of
    range (all checked before the work), :class:`~dansched.errors.OutOfMemory` when the
    solve runs out of memory."""
    started = time.perf_counter()
    if isinstance(inst, (str, os.PathLike)):
        inst = load_instance(check_path(inst, "solve: inst"))
    check_type(inst, (Instance, str, os.PathLike), "solve: inst", "GraphBuilder().build(name) builds an instance")
    options = SolveOptions() if options is None else options
    check_type(options, SolveOptions, "solve: options", "SolveOptions(problem=3, ...) makes them")
    check_type(bounds, bool, "solve: bounds", "True or False")
    check_progress(progress, "solve: progress")
    freq_ghz = FREQ_GHZ.check(freq_ghz, "solve: freq_ghz")
    check_path(out, "solve: out", optional=True)
    say = progress or (lambda _msg: None)
    outputs = check_names(outputs, "solve: outputs")
    wanted = chosen(outputs)  # the kinds are known ones, even when nothing is written
    if out is not None:
        check_outputs(wanted, options.problem, freq_ghz)
        check_destinations(out, inst.name, outputs, options.frontier and options.problem == 3, inst)
    # one line saying what the graph needs, not the allocation's traceback; no cyclic collection meanwhile
    with out_of_memory(inst), collection_paused():
        # the search may be asked to stop early with its best plan (Ctrl-C, options.stop_after)
        with anytime(options.stop_after) as section:
            result = run_pipeline(inst, options, progress=section.tracking(say))
        result.report.stopped = section.stop
        solution = Solution(inst, options, result)
        if bounds:
            say("Report: lower bounds (peak, traffic cover, makespan floors)")
            limit = min(REPORT_BOUNDS_SECONDS, options.time_limit)
            params = options.bounds if section.stop is None else options.bounds.linear()  # stopped: the quick ones
            solution.bounds = audit_plan(
                inst, result.plan, result.evaluation, time_limit=limit, cpsat=False, params=params
            )
        if out is not None:
            points = f" and the frontier's {len(solution.frontier)} plan folders" if solution.writes_frontier else ""
            say(f"Writing the plan folder {out}{points}")
            solution.write(out, outputs, freq_ghz)
        solution.seconds = time.perf_counter() - started
    return solution
