"""Judging plans read from files: the contest files given one by one, or a plan folder.

- :func:`evaluate_files` (``dansched evaluate``): a problem-1 order (the schedule
  alone) or a full plan (schedule, memory and, when there are spills, the spill list).
  When the schedule is ``<case>_schedule.txt`` in a folder that ``dansched solve``
  wrote, the folder is checked against its fingerprint first. A violation that a
  forgotten file explains says so in its own line: spill node ids (``N`` and up) in a
  schedule judged without its spill list.
- :func:`judge_folder` (``audit``, ``trace``, ``view``): the folder's plan, checked
  against its fingerprint first (:func:`dansched.plan_folder.check_folder`: a folder
  half-written by an interrupted run, or mixing two plans, is refused), then evaluated.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .errors import InputError
from .instance import Instance
from .plan import Plan, read_memory, read_plan_dir, read_schedule, read_spill
from .plan_folder import check_folder
from .simulate import Evaluation, evaluate

__all__ = ["evaluate_files", "judge_folder", "spill_hint"]


def spill_hint(inst: Instance, with_memory: bool) -> str:
    """Why a schedule may name ids from ``N`` on, and which file to pass."""
    n = inst.n
    if with_memory:
        return f"ids >= {n} are spill nodes: pass --spill {inst.name}_spill.txt"
    return (
        f"ids >= {n} are spill nodes: a problem-1 order has none; to judge a full plan pass "
        f"--memory {inst.name}_memory.txt --spill {inst.name}_spill.txt"
    )


def _with_spill_hint(inst: Instance, plan: Plan, ev: Evaluation, hint: str) -> Evaluation:
    """``ev`` with ``hint`` added to each unknown-node violation that names a spill id."""
    errors = []
    for e in ev.errors:
        if e.kind == "unknown-node" and e.position is not None:
            v = plan.order[e.position]
            if isinstance(v, int) and v >= inst.n:
                e = replace(e, message=f"{e.message}; {hint}")
        errors.append(e)
    return replace(ev, errors=errors)


def evaluate_files(
    inst: Instance, schedule: str | Path, memory: str | Path | None = None, spill: str | Path | None = None
) -> Evaluation:
    """The evaluator's verdict on the plan in these files (no ``memory``: a problem-1
    order; no ``spill``: no spills). Parse errors and a mixed plan folder raise
    :class:`~dansched.errors.PlanFormatError` (bad input); an invalid plan is a verdict."""
    if spill is not None and memory is None:
        raise InputError("--spill needs --memory (a spill list only makes sense with a layout)")
    schedule = Path(schedule)
    if schedule.name == f"{inst.name}_schedule.txt":
        check_folder(schedule.parent, inst.name)
    order = read_schedule(schedule)
    plan = Plan(order=order)
    if memory is not None:
        plan = Plan(order=order, offsets=read_memory(memory), spills=read_spill(spill) if spill else ())
    ev = evaluate(inst, plan)
    if spill is None and not ev.valid:
        ev = _with_spill_hint(inst, plan, ev, spill_hint(inst, memory is not None))
    return ev


def judge_folder(inst: Instance, folder: str | Path) -> tuple[Plan, Evaluation]:
    """The plan of ``inst`` in ``folder`` and its evaluation, after the folder's fingerprint
    check (:class:`~dansched.errors.MixedPlanError` when it fails)."""
    check_folder(folder, inst.name)
    plan = read_plan_dir(folder, inst.name)
    return plan, evaluate(inst, plan)
