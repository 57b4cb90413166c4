"""Stage 2, DLR (dynamic layout and reuse, paper Algorithm 2): addresses per tier and
the spills that make the Stage-1 order fit, for the least extra DDR traffic.

- :mod:`.stage` -- :func:`dlr_plan`: candidate orders x placements x victim rules, judged;
- :mod:`.scan` -- the linear scan: best-fit placement and victim choice at each node;
- :mod:`.victim` -- the victim rules (Eqs. 27-31) and their registry;
- :mod:`.freelist` -- best-fit free lists (Eq. 24);
- :mod:`.reorder`, :mod:`.reuse` -- lifetime tightening and the reuse-aware order;
- :mod:`.packing`, :mod:`.spillplan` -- lifetime packing and the exact spill plan.
"""

from .stage import DlrResult, dlr_plan

__all__ = ["DlrResult", "dlr_plan"]
