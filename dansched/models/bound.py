"""A lower bound with its provenance, as every report prints it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Bound", "gap"]


@dataclass(frozen=True)
class Bound:
    """``value`` is a proven lower bound; ``optimal`` only when a plan of that value is known."""

    value: int
    method: str
    optimal: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"value": int(self.value), "method": self.method, "optimal": bool(self.optimal)}


def gap(value: int | None, bound: int) -> float | None:
    """Relative optimality gap ``(value - bound) / value`` (0 when both are 0)."""
    if value is None:
        return None
    if value <= 0:
        return 0.0
    return round((value - bound) / value, 6)
