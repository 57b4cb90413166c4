"""Stage 2, DLR (dynamic layout and reuse, paper Algorithm 2): addresses per tier and
the spills that make the Stage-1 order fit, for the least extra DDR traffic.

- :mod:`.stage` -- :func:`dlr_plan`: candidate orders x placements x victim rules, judged;
- :mod:`.scan` -- the linear scan: best-fit placement and victim choice at each node;
- :mod:`.victim` -- the victim rules (Eqs. 27-31) and their registry;
- :mod:`.freelist` -- best-fit free lists (Eq. 24);
- :mod:`.reorder`, :mod:`.reuse` -- lifetime tightening and the reuse-aware order;
- :mod:`.packing`, :mod:`.spillplan` -- lifetime packing and the exact spill plan;
- :mod:`.timed` -- the time-driven scheduler (problem 3): a whole plan at simulated time.

The package imports none of them, so that a light part (:mod:`.timed`) does not load
the solvers the exact spill plan needs: import each from its module.
"""
