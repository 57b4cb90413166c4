"""The methods of the comparison (paper Tables 2, 4 and 5), one module each,
all behind one interface: ``run(inst, time_limit) -> MethodResult(plan, info)``
(:class:`~dansched.application.baselines.common.Method`). Every plan is judged by the shared
evaluator (:func:`dansched.simulate.evaluate`) in :mod:`dansched.application.bench`.

External baselines (no timing stage; their memory stage is best fit + LRU unless
the method is about memory):

- ``base``: the instance's own order (:mod:`.base`) — every ratio divides by it;
- ``hmcos``: HMCOS-style hierarchical scheduling for peak (:mod:`.hmcos`);
- ``magis``: MAGIS-style reverse post-order with swaps at the peak (:mod:`.magis`);
- ``cosma``: COSMA-style fixed-order joint allocation/replacement, CP-SAT (:mod:`.cosma`);
- ``gbs``: greedy-by-size offsets over known lifetimes instead of DLR (:mod:`.gbs`).

DAN-Scheduler and its ablations (:mod:`.dan`): ``lru`` (Table 4), ``mpas-paper``
(literal Stage 1), ``dan-no-cpe`` (Table 5), ``dan`` (full pipeline),
``dan-memory-windows`` (``dan`` plus the memory-aware exact windows of Stage 3),
``dan-no-time-driven`` (``dan`` without problem 3's time-driven candidate sources),
``dan-no-other-rules`` (``dan`` without its other-victim-rule and Algorithm-1-order sources).

EDA (Pao et al., 2025), the paper's fourth external baseline, is left out: we found
no public description precise enough to re-implement it.
"""

from __future__ import annotations

from . import base, cosma, dan, gbs, hmcos, magis
from .common import Method, MethodResult

__all__ = ["METHODS", "EXTERNAL", "DAN_FAMILY", "Method", "MethodResult", "run_method"]

METHODS: dict[str, Method] = {
    "base": base.run,
    "hmcos": hmcos.run,
    "magis": magis.run,
    "cosma": cosma.run,
    "gbs": gbs.run,
    "lru": dan.lru,
    "mpas-paper": dan.mpas_paper,
    "dan-no-cpe": dan.dan_no_cpe,
    "dan-memory-windows": dan.dan_memory_windows,
    "dan-no-time-driven": dan.dan_no_time_driven,
    "dan-no-other-rules": dan.dan_no_other_rules,
    "dan": dan.dan,
}
EXTERNAL = ("base", "hmcos", "magis", "cosma", "gbs")  # "delta vs best external" compares dan with these
DAN_FAMILY = (
    "lru",
    "mpas-paper",
    "dan-no-cpe",
    "dan-memory-windows",
    "dan-no-time-driven",
    "dan-no-other-rules",
    "dan",
)


def run_method(name: str, inst, time_limit: float = 60.0) -> MethodResult:
    """Run the method registered as ``name`` (``KeyError`` for an unknown name)."""
    return METHODS[name](inst, time_limit)
