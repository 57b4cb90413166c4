"""The evaluator's entry points: :func:`evaluate` (the fast path, the readable reference for
every plan it does not accept), :func:`evaluate_reference`, :func:`evaluate_fast` and
:func:`judged` (a stage's plan, which must be valid).
"""

from __future__ import annotations

from ..checks import check_type
from ..errors import PlanInvalidError
from ..instance import Instance, require_instance
from ..plan import Plan
from . import work
from .fast import fast_evaluation
from .reference import evaluate_layout, evaluate_order
from .types import Evaluation

__all__ = ["evaluate", "evaluate_reference", "evaluate_fast", "judged"]


def judged(inst: Instance, plan: Plan, stage: str, ev: Evaluation | None = None) -> Evaluation:
    """The evaluator's verdict on a plan a stage produced (``ev`` when the stage already has
    it); an invalid plan raises :class:`~dansched.errors.PlanInvalidError` naming the stage."""
    ev = ev if ev is not None else evaluate(inst, plan)
    if not ev.valid:
        raise PlanInvalidError(
            f"{stage} produced a plan the evaluator rejects ({ev.error_count} violation(s)); first: {ev.first_violation()}"
        )
    return ev


def evaluate(inst: Instance, plan: Plan) -> Evaluation:
    """Judge ``plan`` against ``inst`` (docs/rules.md, sections 3-8); see the module docstring.
    :class:`~dansched.errors.ArgumentError` when ``inst`` is not an :class:`Instance` or
    ``plan`` not a :class:`~dansched.plan.Plan`. A full plan takes the compiled fast path;
    a plan it does not accept, the reference."""
    _check_arguments(inst, plan, "evaluate")
    work.add(len(plan.order) + len(plan.spills))
    if plan.offsets is None:
        return evaluate_order(inst, plan.order)
    ev = fast_evaluation(inst, plan)
    return ev if ev is not None and ev.valid else evaluate_layout(inst, plan)


def _check_arguments(inst: Instance, plan: Plan, caller: str) -> None:
    require_instance(inst, f"{caller}: inst")
    check_type(plan, Plan, f"{caller}: plan", "read_plan_dir(folder, case) reads one, Plan(order=...) makes one")


def evaluate_reference(inst: Instance, plan: Plan) -> Evaluation:
    """The readable evaluator: every rule checked in plain Python with exact integers, every
    violation collected with its message and position. :func:`evaluate` gives the same
    verdict and figures (the property tests check it) and runs this on every plan its fast
    path does not accept, so the messages are always this function's."""
    _check_arguments(inst, plan, "evaluate_reference")
    if plan.offsets is None:
        return evaluate_order(inst, plan.order)
    return evaluate_layout(inst, plan)


def evaluate_fast(inst: Instance, plan: Plan) -> Evaluation | None:
    """The fast path alone, on a full plan: the :class:`Evaluation` of a plan it accepts (the
    same as :func:`evaluate_reference`'s); for a plan it rejects, an invalid one that names
    only the first broken rule's kind (count 1, no message, no figures); None when only the
    reference can judge the plan (files that are not well formed, figures that could pass
    64 bits)."""
    _check_arguments(inst, plan, "evaluate_fast")
    if plan.offsets is None:
        raise ValueError("evaluate_fast judges full plans (order, offsets, spills), not problem-1 orders")
    return fast_evaluation(inst, plan)
