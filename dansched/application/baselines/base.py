"""``base``: the "Base / Original" row of the paper's Table 2 — every ratio divides by it.

The instance's own order (node ids ``0..N-1``; when the ids break an edge or a buffer
lifetime, the smallest-id topological order instead, reported in ``info``), no
reordering, then the shared memory stage: online best-fit placement with LRU
eviction (:func:`~dansched.application.baselines.common.lru_memory_stage`). No timing stage.
"""

from __future__ import annotations

from ...instance import Instance
from .common import MethodResult, Stopwatch, input_order, lru_memory_stage

__all__ = ["run"]


def run(inst: Instance, time_limit: float = 60.0) -> MethodResult:
    """Input order, best fit, LRU; ``time_limit`` is unused (nothing to search)."""
    sw = Stopwatch()
    order, as_given = input_order(inst)
    sw.lap("order")
    plan, _ = lru_memory_stage(inst, order)
    sw.lap("memory")
    return MethodResult(plan, {"order": "ids" if as_given else "smallest-id topological", "stage_seconds": sw.seconds})
