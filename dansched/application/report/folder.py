"""Reports of a plan folder: its Perfetto trace (``dansched trace``) and its HTML page
(``dansched view``).

Both read the folder's plan the way every reader does (:func:`dansched.application.judge.judge_folder`:
a folder half-written by an interrupted run, or mixing two plans, is refused before
anything is drawn), need a plan with timing (problems 2 and 3) and a valid one, and
check every output path before the work. Each is built by the builder beside it
(:func:`~dansched.application.report.trace.trace_text`, :func:`~dansched.application.report.view.page_text`), the
one the outputs registry (:data:`dansched.application.outputs.OUTPUTS`) calls when ``solve`` writes
it. A file written into its plan folder joins the case's group
(:func:`dansched.plan_folder.write_group`), a trace carrying the plan's fingerprint;
elsewhere it is written atomically on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...checks import FREQ_GHZ, check_path
from ...errors import InputError, TraceError
from ...instance import Instance, require_instance
from ...plan import Plan, atomic_write_files, check_output_file
from ...plan_folder import fingerprint_of, folder_group, folder_paths, read_report, write_group
from ...simulate import Evaluation
from ..judge import judge_folder, require_valid
from .plots import plan_picture, plan_png_bytes
from .stats import format_statistics
from .trace import plan_statistics, timed_tasks, trace_text
from .view import page_text
from .waits import busiest_pipe_name, format_waits, pipe_waits

__all__ = ["TraceOutput", "timed_plan", "trace_folder", "view_folder"]

SEE_EVALUATE = "; see dansched evaluate"


def timed_plan(inst: Instance, folder: str | Path) -> tuple[Plan, Evaluation]:
    """The folder's plan and its evaluation, checked (:func:`~dansched.application.judge.judge_folder`),
    with timing (else :class:`TraceError`) and valid (else
    :class:`~dansched.errors.PlanInvalidError`)."""
    plan, ev = judge_folder(inst, folder)
    if plan.offsets is None:
        raise TraceError(
            f"{folder}: {inst.name}_memory.txt is missing; a trace or page needs a layout, and a problem-1 "
            "order has no timing: solve with --problem 2 or 3"
        )
    require_valid(inst, folder, ev, SEE_EVALUATE)
    return plan, ev


@dataclass
class TraceOutput:
    """What :func:`trace_folder` wrote and found: the trace's path, the picture's (or
    None), the plan's evaluation and the lines to show (task statistics, then why the
    busiest pipe idles)."""

    trace: Path
    png: Path | None
    evaluation: Evaluation
    lines: list[str]


def trace_folder(
    inst: Instance,
    folder: str | Path,
    out: str | Path | None = None,
    freq_ghz: float = 1.0,
    png: str | Path | None = None,
    compare: str | Path | None = None,
) -> TraceOutput:
    """Write the trace of the plan in ``folder`` to ``out`` (default: the folder's
    ``<case>_trace.json``, added to its group) and, with ``png``, a Gantt chart and layout
    heatmaps (``compare``: another plan folder drawn left of it, e.g. before CPE)."""
    require_instance(inst, "trace_folder: inst")
    check_path(folder, "trace_folder: folder")
    for name, value in (("out", out), ("png", png), ("compare", compare)):
        check_path(value, f"trace_folder: {name}", optional=True)
    freq_ghz = FREQ_GHZ.check(freq_ghz, "--freq-ghz")
    if compare is not None and png is None:
        raise InputError("--compare is drawn beside --plan in the picture: give --png FILE too")
    folder = Path(folder)
    target = Path(out) if out is not None else folder_paths(folder, inst.name)["trace"]
    for p in (target, png):  # before anything is read or written
        if p is not None:
            check_output_file(p)
    plans = [(Path(f), *timed_plan(inst, f)) for f in ([compare] if compare is not None else []) + [folder]]
    _, plan, ev = plans[-1]
    text = trace_text(inst, plan, ev, str(fingerprint_of(plan)["sha256"]), freq_ghz)
    extra: dict[Path, bytes] = {}
    if png is not None:
        pictures = [plan_picture(inst, p, e, f"{inst.name} ({f.resolve().name})") for f, p, e in plans]
        extra[Path(png)] = plan_png_bytes(pictures)
    _write_beside_group(folder, inst.name, target, "trace", text, extra)
    makespan = int(ev.makespan or 0)
    lines = format_statistics(plan_statistics(timed_tasks(inst, plan, ev), makespan), freq_ghz)
    lines += format_waits(pipe_waits(inst, plan, ev, busiest_pipe_name(inst, ev)))
    return TraceOutput(target, Path(png) if png is not None else None, ev, lines)


def view_folder(inst: Instance, folder: str | Path, out: str | Path | None = None, freq_ghz: float = 1.0) -> Path:
    """Write the HTML page of the plan in ``folder`` (with the figures of its report, when
    there is one) to ``out`` (default: the folder's ``<case>_view.html``); returns the path."""
    require_instance(inst, "view_folder: inst")
    check_path(folder, "view_folder: folder")
    check_path(out, "view_folder: out", optional=True)
    freq_ghz = FREQ_GHZ.check(freq_ghz, "--freq-ghz")
    folder = Path(folder)
    target = Path(out) if out is not None else folder_paths(folder, inst.name)["view"]
    check_output_file(target)
    plan, ev = timed_plan(inst, folder)
    page = page_text(inst, plan, ev, read_report(folder, inst.name), freq_ghz)
    _write_beside_group(folder, inst.name, target, "view", page, {})
    return target


def _write_beside_group(folder: Path, case: str, target: Path, kind: str, text: str, extra: dict[Path, bytes]) -> None:
    """``text`` to ``target``: as the ``kind`` file of ``case``'s group when that is where it
    goes (under the folder's lock, the rest of the group kept), else atomically on its own."""
    if target.resolve() == folder_paths(folder, case)[kind].resolve():
        write_group(folder, case, {kind: text}, folder_group(), extra=extra, replace_group=False)
    else:
        atomic_write_files([(target, text), *extra.items()])
