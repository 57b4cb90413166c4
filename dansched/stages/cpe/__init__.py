"""Stage 3, CPE (critical path enhancement, paper Algorithm 3): a shorter makespan
that never changes memory behaviour.

- :mod:`.stage` -- the Stage-3 loop: CPE alternated with the timing-aware Stage-2
  rounds (resequence, relayout, late-segment moves), then exact windows;
- :mod:`.refine` -- :func:`cpe_refine`: list scheduling and local refinement;
- :mod:`.skeleton` -- the memory skeleton R(sigma2, G2) (Eq. 14) and the critical chain;
- :mod:`.list_schedule` -- non-delay list scheduling inside a skeleton;
- :mod:`.resequence`, :mod:`.relayout` -- the timing-aware Stage-2 rounds;
- :mod:`.window_driver` -- the one driver that slides exact CP-SAT windows along the critical chain;
- :mod:`.exact_window` -- the fixed-memory windows (``--exact-window``);
- :mod:`.memory_windows` -- the memory-aware windows (``--exact-window-mode memory``);
- :mod:`.screen` -- the screen of a problem-3 candidate: one list-scheduling pass;
- :mod:`.address_times` -- when each address range of a tier was last released.
"""

from .refine import CPEResult, cpe_refine
from .skeleton import critical_chain

__all__ = ["CPEResult", "cpe_refine", "critical_chain"]
