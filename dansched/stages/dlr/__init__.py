"""Stage 2, DLR (dynamic layout and reuse, paper Algorithm 2): addresses per tier and
the spills that make the Stage-1 order fit, for the least extra DDR traffic.

- :mod:`.stage` -- :func:`.stage.dlr_plan`: candidate orders x placements x victim rules, judged;
- :mod:`.scan` -- the linear scan: best-fit placement and victim choice at each node;
- :mod:`.placements` -- the registry of placements (best fit, window eviction, packing, spill plan);
- :mod:`.victim` -- the victim rules (Eqs. 25-31) behind one interface, and their registries;
- :mod:`.freelist` -- best-fit free lists (Eq. 24);
- :mod:`.reorder`, :mod:`.reuse` -- lifetime tightening and the reuse-aware order;
- :mod:`.packing`, :mod:`.spillplan` -- lifetime packing and the exact spill plan;

Nothing is imported here, so that the light modules (:mod:`.victim`, whose registry gives
the command line its ``--victim`` choices) load without the solvers: import
each from its module.
"""
