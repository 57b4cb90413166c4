"""Stage 1, MPAS (memory-pressure-aware scheduling, paper Algorithm 1): an order of
the graph that keeps the upper-tier residency (L1 + UB) low.

- :mod:`.stage` -- :func:`mpas_order`: the restarts, the local search and the variants;
- :mod:`.greedy` -- the operation-level memory-pressure greedy (variant ``mpas-greedy``);
- :mod:`.paper` -- the literal Algorithm 1 (variant ``mpas-paper``);
- :mod:`.improve` -- local improvement of an order (Eq. 12's objective);
- :mod:`.l0` -- can the live L0 buffers still be closed (single residency);
- :mod:`.policy`, :mod:`.units` -- greedy priorities and the units it schedules.
"""

from .stage import VARIANTS, MpasResult, mpas_order

__all__ = ["VARIANTS", "MpasResult", "mpas_order"]
