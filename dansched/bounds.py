"""Lower bounds for every metric dansched reports, gathered in one place for
``dansched bound`` and the ``bounds`` section of ``solve``'s report."""

from __future__ import annotations

from typing import Any

from .instance import Instance
from .models.bound import Bound, gap
from .models.makespan import makespan_lower_bound
from .models.peak import working_set_bound
from .simulate import Evaluation

__all__ = ["instance_bounds", "plan_bounds", "bounds_report"]


def instance_bounds(inst: Instance) -> dict[str, Bound]:
    """Bounds that hold for every valid plan of the instance."""
    return {
        "max_v_stay": working_set_bound(inst),
        "makespan": makespan_lower_bound(inst),
    }


def plan_bounds(inst: Instance, ev: Evaluation, order) -> dict[str, Bound]:
    """Bounds for the plan's metrics: the instance's, and for makespan also the one that
    holds for plans with this plan's memory behaviour (whichever is larger)."""
    out = instance_bounds(inst)
    if ev.graph is not None:
        own = makespan_lower_bound(inst, ev.graph, order)
        if own.value > out["makespan"].value:
            out["makespan"] = own
    return out


def bounds_report(bounds: dict[str, Bound], figures: dict[str, Any]) -> dict[str, Any]:
    """``{metric: {value, method, optimal, gap}}``; ``optimal`` when the plan's figure meets the bound."""
    out = {}
    for key, b in bounds.items():
        value = figures.get(key)
        d = b.to_dict()
        d["optimal"] = bool(b.optimal or (value is not None and value == b.value))
        d["gap"] = gap(value, b.value)
        out[key] = d
    return out
