"""Stage 2 for problem 3: a time-driven list scheduler with memory.

Stages 1-2 fix order, victims and addresses without looking at time; Stage 3 may only
reorder inside that frozen memory skeleton. :func:`timed_schedule` instead builds the
whole Stage-2 plan (order with spill nodes, offsets, spill list) while it simulates the
engines exactly as the shared cycle simulator times the plan (paper Eqs. 9-10):

- :mod:`.engines` -- the engine clock: per-pipe free time, node end times, the start rule;
- :mod:`.placement` -- a tier's resident segments, the address-reuse waits (intervals,
  not one entry per address), the time-aware best fit (Eq. 24);
- :mod:`.eviction` -- the victim window: cost-aware Belady cost ``traffic / (d + 1)``
  (Eqs. 27-31), tolerance and horizon, the earliest SPILL_OUT first;
- :mod:`.emission` -- ALLOC / SPILL_OUT / SPILL_IN / FREE / operation nodes with their
  timing, offsets, the spill list, the extra traffic;
- :mod:`.reference` -- the reference order, next uses (Eq. 26), priorities (Eq. 20);
- :mod:`.window` -- prerequisites, the release window past the frontier, the per-pipe queues;
- :mod:`.scheduler` -- the main list-scheduling loop composing them;
- its parameters: :class:`~dansched.params.TimedParams` and the trials problem 3 runs.

The result is an ordinary :class:`~dansched.plan.Plan`, to be judged by
:func:`dansched.simulate.evaluate` like every other. A run costs O(V log V) plus the
eviction scans (O(residents^2) per eviction); its memory grows with the graph and the
spills, not with the tiers' capacities.
"""

from .scheduler import timed_schedule

__all__ = ["timed_schedule"]
