"""Work budgets that keep deep graphs (chains, ladders, long diamonds) linear (issue 17).

On a chain every buffer is allocated before every later buffer is freed, so any
per-node set of ancestors, or any per-buffer list of what was allocated before
it, grows with the depth and the total grows with its square. Each place that
builds such sets caps its work by a budget *in items handled*, proportional to
the graph's size and never measured on the clock, so the same graph always
takes the same path; past the budget it falls back to a cheaper, still valid
answer and says so.

>>> DepthParams().first_free_members(1000)
164000
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DepthParams", "DEFAULT_DEPTH"]


@dataclass(frozen=True)
class DepthParams:
    """``ff_members_base + ff_members_per_node * V``: the members of the first-free sets
    ``A(b)`` (:func:`dansched.models.peak.first_free_bound`) handled before that bound
    falls back to the working set. The official graphs need at most 12 per node; a
    chain needs V / 6 per node."""

    ff_members_base: int = 100_000
    ff_members_per_node: int = 64

    def __post_init__(self) -> None:
        for name in ("ff_members_base", "ff_members_per_node"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"DepthParams.{name} must be a non-negative integer, got {value!r}")

    def first_free_members(self, n: int) -> int:
        return self.ff_members_base + self.ff_members_per_node * n


DEFAULT_DEPTH = DepthParams()
