"""Judging plans read from files: the contest files given one by one, or a plan folder.

- :func:`evaluate_files` (``dansched evaluate``): a problem-1 order (the schedule
  alone) or a full plan (schedule, memory and, when there are spills, the spill list),
  judged as the files are. When the schedule is ``<case>_schedule.txt`` in a folder
  that ``dansched solve`` wrote and the files are no longer the plan its report names
  (edited, or left by an interrupted run), one line says so (``Judgement.differs``).
  What a forgotten or a wrong file explains is said once, in a note beside the
  verdict: spill node ids (``N`` and up) in a schedule judged without its spill list,
  or files that name nodes the instance does not have (with the case the report beside
  them names).
- :func:`evaluate_folder` (``dansched evaluate --plan``): the folder's plan files as
  they are, with the same line when they differ from the report's plan.
- :func:`judge_folder` (``audit``, ``trace``, ``view``, which present the report's
  plan): the folder's plan, checked against its fingerprint first
  (:func:`dansched.plan_folder.check_folder`: a folder half-written by an interrupted
  run, or whose files were edited, is refused, and the line points to ``dansched
  evaluate``), then evaluated. A folder that holds a plan of another case says so.
- :func:`folder_hardware`: the hardware a folder's plan was solved on, which the folder
  readers use (a report without it, written before dansched recorded it: the default
  model, with a warning); :func:`check_hardware` refuses another one.
- :func:`require_valid`: a folder's plan that must be valid (``audit``, ``trace``, ``view``).

The module reads the core alone (the folder's file names and report:
:mod:`dansched.plan_folder`), so every reader of plans, low in the application layer, may use it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..checks import check_path
from ..errors import HardwareError, InputError, PlanFormatError, PlanInvalidError
from ..hardware import Hardware, default_hardware, hardware_from_table, load_hardware
from ..instance import Instance, require_instance
from ..plan import (
    CONTEST_SUFFIXES,
    Plan,
    check_case_name,
    plan_limits,
    read_memory,
    read_plan_dir,
    read_schedule,
    read_spill,
)
from ..plan_folder import check_folder, folder_group, folder_paths, plan_difference, read_report
from ..reprs import one_line_repr
from ..simulate import UNKNOWN_NODE, Evaluation, evaluate

__all__ = [
    "Judgement",
    "evaluate_files",
    "evaluate_folder",
    "judge_folder",
    "spill_hint",
    "folder_hardware",
    "check_hardware",
    "FolderHardware",
    "check_case",
    "require_valid",
]


@dataclass
class Judgement:
    """The evaluator's verdict on a plan read from files, and the notes that explain it
    (each said once: which file was forgotten, whose plan the files are). ``other_case``
    names the case whose plan the files are, when the report beside them names another
    one: then the note says all there is to say about the violations."""

    __repr__ = one_line_repr

    plan: Plan
    evaluation: Evaluation
    notes: list[str] = field(default_factory=list)
    other_case: str | None = None
    differs: str | None = None  # one line: how the files differ from the plan of the report beside them

    @property
    def valid(self) -> bool:
        return self.evaluation.valid

    def to_dict(self) -> dict[str, Any]:
        """The evaluation's :meth:`~dansched.simulate.Evaluation.to_dict`, plus ``notes`` and
        ``differs_from_report`` (the line :attr:`differs`, or null)."""
        return self.evaluation.to_dict() | {"notes": list(self.notes), "differs_from_report": self.differs}


def spill_hint(inst: Instance, with_memory: bool) -> str:
    """Why a schedule may name ids from ``N`` on, and which file to pass."""
    n = inst.n
    if with_memory:
        return f"ids >= {n} are spill nodes: pass --spill {inst.name}_spill.txt"
    return (
        f"ids >= {n} are spill nodes: a problem-1 order has none; to judge a full plan pass "
        f"--memory {inst.name}_memory.txt --spill {inst.name}_spill.txt"
    )


def _case_of(schedule: Path) -> str | None:
    """The case a ``<case>_schedule.txt`` file names (None for another file name)."""
    suffix = CONTEST_SUFFIXES["schedule"]
    name = schedule.name
    return name.removesuffix(suffix) if name.endswith(suffix) and name != suffix else None


def _report_case(folder: Path, case: str) -> str | None:
    """The case ``<case>_report.json`` in ``folder`` is the report of: its ``instance``
    field, else (a report written before it named the case) the file's own case; None
    without a readable report."""
    try:
        report = read_report(folder, case)
    except ValueError:  # not JSON: no case to name
        return None
    if report is None:
        return None
    named = report.get("instance")
    return named if isinstance(named, str) else case


def _unknown_ids(inst: Instance, plan: Plan, ev: Evaluation) -> list[int]:
    """The ids of the schedule's unknown-node violations (those the evaluator listed)."""
    out = []
    for e in ev.errors:
        if e.kind == UNKNOWN_NODE and e.position is not None and e.position < len(plan.order):
            out.append(int(plan.order[e.position]))
    return out


def _judgement(
    inst: Instance, plan: Plan, ev: Evaluation, schedule: Path, spill_given: bool, memory_given: bool
) -> Judgement:
    """The verdict with what explains its unknown-node violations, once: a plan of another
    case (the report beside the files names it), else a forgotten spill list (every
    unknown id is at or past ``N``); else the violations say it themselves."""
    count = ev.error_counts.get(UNKNOWN_NODE, 0)
    if ev.valid or not count:
        return Judgement(plan, ev)
    ids = _unknown_ids(inst, plan, ev)
    case = _case_of(schedule)
    other = _report_case(schedule.parent, case) if case is not None else None
    if other is not None and other != inst.name:
        note = (
            f"{count} schedule entries name nodes {inst.name} does not have (it has {inst.n:,}): "
            f"these files are a plan of {other} (the report beside them, {case}_report.json, names it)"
        )
        return Judgement(plan, ev, [note], other_case=other)
    if not spill_given and ids and min(ids) >= inst.n:
        return Judgement(plan, ev, [spill_hint(inst, memory_given)])
    return Judgement(plan, ev)


def evaluate_files(
    inst: Instance, schedule: str | Path, memory: str | Path | None = None, spill: str | Path | None = None
) -> Judgement:
    """The evaluator's verdict on the plan in these files (no ``memory``: a problem-1
    order; no ``spill``: no spills), with the notes that explain it. The files are read
    as streams, bounded by what a plan of ``inst`` can hold (:func:`~dansched.plan.plan_limits`).
    Parse errors and a file longer than a plan of ``inst`` can be raise
    :class:`~dansched.errors.PlanFormatError` (bad input); an invalid plan is a verdict, and
    files in a solve's folder that are not the plan its report names are judged as they are,
    with the line that says so (:attr:`Judgement.differs`)."""
    require_instance(inst, "evaluate_files: inst")
    check_path(schedule, "evaluate_files: schedule")
    check_path(memory, "evaluate_files: memory", optional=True)
    check_path(spill, "evaluate_files: spill", optional=True)
    if spill is not None and memory is None:
        raise InputError("--spill needs --memory (a spill list only makes sense with a layout)")
    schedule = Path(schedule)
    differs = _differs(schedule.parent, inst.name) if schedule.name == f"{inst.name}_schedule.txt" else None
    most = plan_limits(inst)  # read as streams, bounded by what a plan of inst can hold
    order = read_schedule(schedule, most.schedule)
    plan = Plan(order=order)
    if memory is not None:
        spills = read_spill(spill, most.spill) if spill else ()
        plan = Plan(order=order, offsets=read_memory(memory, most.memory), spills=spills)
    verdict = _judgement(inst, plan, evaluate(inst, plan), schedule, spill is not None, memory is not None)
    verdict.differs = differs
    return verdict


def _differs(folder: Path, case: str) -> str | None:
    """The one line a verdict carries when the plan files of ``case`` in ``folder`` are not
    the plan its report names (:func:`~dansched.plan_folder.plan_difference`); None when
    they are, or there is no report."""
    found = plan_difference(folder, case, folder_group())
    if found is None:
        return None
    return f"{folder}: {found}: the files are judged as they are now, not as the plan dansched solve wrote"


def _other_cases(folder: Path, case: str) -> list[str]:
    """The cases whose plans ``folder`` holds, other than ``case``: those its reports name
    (or, without a report, its schedules)."""
    found: list[str] = []
    if not folder.is_dir():
        return found
    for p in sorted(folder.glob("*_schedule.txt")):
        c = _case_of(p)
        if c is None or c == case:
            continue
        named = _report_case(folder, c) or c
        if named not in found:
            found.append(named)
    return found


def check_case(folder: str | Path, case: str) -> None:
    """Raise :class:`~dansched.errors.PlanFormatError` (one line) when ``folder`` holds no
    plan of ``case``; the line names the cases it does hold a plan of."""
    d = Path(folder)
    if folder_paths(d, case)["schedule"].is_file():
        return
    if not d.is_dir():
        raise PlanFormatError(f"{d}: no such folder")
    others = _other_cases(d, case)
    if others:
        held = ", ".join(others)
        raise PlanFormatError(
            f"{d}: holds a plan of {held}, not of {case} (no {case}_schedule.txt): give "
            f"{'that' if len(others) == 1 else 'its'} instance, or a folder with a plan of {case}"
        )
    raise PlanFormatError(f"{d}: no plan of {case} ({case}_schedule.txt: no such file)")


@dataclass(frozen=True)
class FolderHardware:
    """The hardware to read a folder's plan on, and a warning when the folder's report does
    not record one (a report written before dansched recorded it)."""

    __repr__ = one_line_repr

    hardware: Hardware
    warning: str | None = None
    origin: str = "the default model"  # where the hardware came from, in words


def _recorded(folder: Path, case: str) -> tuple[dict[str, Any] | None, Hardware | None]:
    """The folder's report (None without one) and the hardware it records (None when it
    records none)."""
    report = read_report(folder, case)
    if report is None or not isinstance(report.get("hardware"), dict):
        return report, None
    table = {k: v for k, v in report["hardware"].items() if k != "file"}
    try:
        return report, hardware_from_table(table)
    except HardwareError as exc:
        where = folder_paths(folder, case)["report"]
        raise HardwareError(f"{where}: the hardware it records is not usable: {exc}") from None


def _difference(a: Hardware, b: Hardware) -> tuple[str, Any, Any]:
    """The first key two models disagree on (``section.key``) and its two values."""

    def flat(hw: Hardware) -> dict[str, Any]:
        return {f"{s}.{k}": v for s, table in hw.to_dict().items() for k, v in table.items()}

    fa, fb = flat(a), flat(b)
    for key in list(fa) + [k for k in fb if k not in fa]:
        if fa.get(key) != fb.get(key):
            return key, fa.get(key, "none"), fb.get(key, "none")
    return "tiers", list(fa), list(fb)  # the same keys and values: the tiers in another order


def check_hardware(folder: str | Path, case: str, hw: Hardware, what: str = "the instance's hardware") -> None:
    """Raise :class:`~dansched.errors.HardwareError` (one line) when the hardware the
    folder's report records is not ``hw`` (``what`` names where ``hw`` came from)."""
    d = Path(folder)
    _, recorded = _recorded(d, case)
    if recorded is not None and recorded != hw:
        key, there, here = _difference(recorded, hw)
        raise HardwareError(
            f"{d}: its plan of {case} was solved on other hardware than {what} ({key} is {there} in "
            f"{case}_report.json, {here} in {what}): leave out --hw to use the folder's, or solve again"
        )


def folder_hardware(folder: str | Path, case: str, hw_path: str | Path | None = None) -> FolderHardware:
    """The hardware to read ``case``'s plan in ``folder`` on: the one its report records,
    or (``hw_path`` given) that file's model, refused when the report records another
    (:func:`check_hardware`). A folder without a report (plan files written by hand) uses
    ``hw_path`` or the default model; a report that records no hardware the same, with a
    warning. The folder must hold a plan of ``case`` (:func:`check_case`)."""
    d = Path(check_path(folder, "folder_hardware: folder"))
    check_case_name(case, "folder_hardware: case")
    check_path(hw_path, "folder_hardware: hw_path", optional=True)
    check_case(d, case)
    if hw_path is not None:
        hw = load_hardware(hw_path)
        check_hardware(d, case, hw, f"--hw {hw_path}")
        return FolderHardware(hw, origin=f"--hw {hw_path}")
    report, recorded = _recorded(d, case)
    if recorded is not None:
        return FolderHardware(recorded, origin=f"{folder_paths(d, case)['report'].name} in the plan folder")
    if report is None:
        return FolderHardware(default_hardware(), origin="the default model, as the folder has no report")
    return FolderHardware(
        default_hardware(),
        f"{folder_paths(d, case)['report']} records no hardware (written by an older dansched): "
        "using the default model; give --hw if the plan was solved on another",
        origin="the default model, as the folder's report records none",
    )


def judge_folder(inst: Instance, folder: str | Path) -> tuple[Plan, Evaluation]:
    """The plan of ``inst`` in ``folder`` and its evaluation, after the checks: the folder
    holds a plan of this case (:func:`check_case`), on this hardware
    (:func:`check_hardware`) and consistent with its fingerprint
    (:class:`~dansched.errors.MixedPlanError` when not)."""
    require_instance(inst, "judge_folder: inst")
    check_path(folder, "judge_folder: folder")
    check_case(folder, inst.name)
    check_hardware(folder, inst.name, inst.hw)
    check_folder(folder, inst.name, folder_group())
    plan = read_plan_dir(folder, inst.name, plan_limits(inst))
    return plan, evaluate(inst, plan)


def evaluate_folder(inst: Instance, folder: str | Path) -> Judgement:
    """The verdict on the plan files of ``inst`` in ``folder`` as they are, with its notes
    (``dansched evaluate --plan``): the folder must hold a plan of this case
    (:func:`check_case`), on this hardware (:func:`check_hardware`); files that are not
    the plan its report names are judged all the same, with the line that says so
    (:attr:`Judgement.differs`)."""
    require_instance(inst, "evaluate_folder: inst")
    check_path(folder, "evaluate_folder: folder")
    check_case(folder, inst.name)
    check_hardware(folder, inst.name, inst.hw)
    differs = _differs(Path(folder), inst.name)
    plan = read_plan_dir(folder, inst.name, plan_limits(inst))
    verdict = _judgement(inst, plan, evaluate(inst, plan), folder_paths(folder, inst.name)["schedule"], True, True)
    verdict.differs = differs
    return verdict


def require_valid(inst: Instance, folder: str | Path, ev: Evaluation, then: str = "") -> None:
    """Raise :class:`PlanInvalidError` (exit status 1) naming the first violation when the
    plan read from ``folder`` is invalid; ``then`` is appended (e.g. what to run next)."""
    if not ev.valid:
        raise PlanInvalidError(
            f"{inst.name}: the plan in {folder} is invalid ({ev.error_count} violation(s); "
            f"first: {ev.first_violation('')}){then}"
        )
