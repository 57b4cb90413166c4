"""A lower bound with its provenance, as every report prints it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...reprs import one_line_repr

__all__ = ["Bound", "gap"]


@dataclass(frozen=True)
class Bound:
    """``value`` is a proven lower bound; ``optimal`` only when a plan of that value is known;
    ``stopped_by_clock`` when a solver's wall-clock safety net stopped it (the value may
    then depend on the machine's load, and reports say so)."""

    __repr__ = one_line_repr

    value: int
    method: str
    optimal: bool = False
    stopped_by_clock: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = {"value": int(self.value), "method": self.method, "optimal": bool(self.optimal)}
        if self.stopped_by_clock:
            out["stopped_by_clock"] = True
        return out


def gap(value: int | None, bound: int) -> float | None:
    """Relative optimality gap ``(value - bound) / value`` (0 when both are 0)."""
    if value is None:
        return None
    if value <= 0:
        return 0.0
    return round((value - bound) / value, 6)
