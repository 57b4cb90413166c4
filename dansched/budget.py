"""Problem 3's traffic budget: how much extra DDR traffic a plan may carry (docs/rules.md, problem 3).

Problem 3 minimises the makespan without raising extra traffic above the problem-2 plan's,
unless the caller allows a slack of ``PCT`` percent. The allowance is

    allowance = floor(traffic2 * (100 + PCT) / 100)

computed once, in exact rational arithmetic (and capped at the traffic horizon of
docs/rules.md, *Supported ranges*, which no plan passes): the slack is read as the decimal number it
prints as (``0.3`` is 3/10, not the binary double next to it), so no plan is kept on one
path and dropped on another. Every filter of problem 3 asks :meth:`TrafficBudget.admits`.

>>> TrafficBudget.of(25, 16).allowance
29
>>> TrafficBudget.of(1000, 0.3).allowance
1003
>>> TrafficBudget.of(1000, 0).admits(1001)
False
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .hardware import SUPPORTED_LIMIT

__all__ = ["TrafficBudget", "exact_percent"]


def exact_percent(value: int | float | Fraction | str) -> Fraction:
    """``value`` as an exact non-negative rational: an int or a Fraction as it is, a float
    as the shortest decimal that prints as it (``repr``), a string as the decimal it spells.
    ``ValueError`` (one line) for a negative, infinite or non-numeric value."""
    if isinstance(value, bool):
        raise ValueError(f"a traffic slack must be a number, got {value!r}")
    try:
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError
            exact = Fraction(repr(value))
        else:
            exact = Fraction(value)
    except (ValueError, TypeError, ZeroDivisionError):
        raise ValueError(f"a traffic slack must be a finite number >= 0, got {value!r}") from None
    if exact < 0:
        raise ValueError(f"a traffic slack must be a finite number >= 0, got {value!r}")
    return exact


@dataclass(frozen=True)
class TrafficBudget:
    """The one traffic allowance of a problem-3 solve: ``base`` (the problem-2 plan's extra
    traffic) plus ``slack`` percent, rounded down (module docstring)."""

    base: int
    slack: Fraction = Fraction(0)
    allowance: int = field(init=False)

    def __post_init__(self) -> None:
        if isinstance(self.base, bool) or not isinstance(self.base, int) or self.base < 0:
            raise ValueError(f"TrafficBudget.base must be an integer >= 0, got {self.base!r}")
        slack = exact_percent(self.slack)
        object.__setattr__(self, "slack", slack)
        # no plan carries more traffic than the horizon, so a larger allowance admits the same
        # plans; capped there, it stays an int64 for the stages that take it as a limit
        allowance = min(math.floor(self.base * (100 + slack) / 100), max(self.base, SUPPORTED_LIMIT))
        object.__setattr__(self, "allowance", allowance)

    @classmethod
    def of(cls, base: int, slack: int | float | Fraction | str = 0) -> TrafficBudget:
        """The budget of a problem-2 traffic ``base`` and a slack in percent."""
        return cls(int(base), exact_percent(slack))

    def admits(self, traffic: int) -> bool:
        """True when a plan carrying ``traffic`` units of extra traffic is within the budget."""
        return traffic <= self.allowance

    def to_dict(self) -> dict[str, Any]:
        slack: int | float | str = self.slack.numerator if self.slack.denominator == 1 else float(self.slack)
        return {"base": self.base, "slack_percent": slack, "allowance": self.allowance}
