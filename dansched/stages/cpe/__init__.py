"""Stage 3, CPE (critical path enhancement, paper Algorithm 3): a shorter makespan
that never changes memory behaviour (the refinement set R(sigma2, G2) of Eq. 14).

- :mod:`.refine` -- :func:`cpe_refine`: list scheduling and local refinement (Eqs. 32-36);
- :mod:`.skeleton` -- the memory skeleton R(sigma2, G2) (Eq. 14) and the critical chain (Eq. 34);
- :mod:`.list_schedule` -- non-delay list scheduling inside a skeleton;
- :mod:`dansched.models.windows.driver` -- the one driver that slides exact CP-SAT windows along the critical chain;
- :mod:`.exact_window` -- the fixed-memory exact windows (``--exact-window``).

What may move memory (the timing-aware rounds, the memory-aware windows, the makespan
search) is problem 3's: :mod:`dansched.pipeline.problem3`.
"""

from .refine import CPEResult, cpe_refine
from .skeleton import critical_chain

__all__ = ["CPEResult", "cpe_refine", "critical_chain"]
