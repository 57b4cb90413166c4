"""The DAN-Scheduler rows and ablations (paper Tables 2, 4, 5), all through
:func:`dansched.pipeline.run_pipeline`:

- ``dan``: the full pipeline, MPAS -> DLR -> CPE (problem 3), its rivals' finished plans
  considered on a small graph (``EffortParams.rivals``);
- ``dan-no-cpe``: without Stage 3 (the problem-2 plan; paper Table 5);
- ``lru``: the full pipeline with the LRU victim rule in Stage 2 (paper Table 4);
- ``mpas-paper``: the full pipeline with the literal Algorithm-1 Stage 1 (the rival
  ``algorithm-1``, :data:`dansched.pipeline.options.RIVALS`);
- ``dan-memory-windows``: the full pipeline plus Stage 3's memory-aware exact
  windows (``--exact-window 64 --exact-window-mode memory``; the rival ``memory-windows``);
- ``dan-no-time-driven``: the full pipeline without problem 3's time-driven candidate sources
  (``time-driven`` and ``dlr-on-time-driven``, :mod:`dansched.pipeline.problem3.sources.candidates`);
- ``dan-no-other-rules``: the full pipeline without problem 3's other-victim-rule and
  Algorithm-1-order candidate sources (``victim-rules``, ``algorithm-1-order``).

Every row but ``dan`` runs no rival of its own: it measures its part alone.
``info["stage_seconds"]`` holds each stage's seconds from the pipeline report
(Figure 11); ``info["stages"]`` its figures after each stage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import TypedDict, Unpack

from ...instance import Instance
from ...params import EffortParams
from ...pipeline import SolveOptions, effort_options, run_pipeline
from ...pipeline.options import rival_options
from ...pipeline.problem3.sources.candidates import SOURCES
from .common import MethodResult

__all__ = [
    "Ablation",
    "dan_method",
    "rival_method",
    "dan",
    "dan_no_cpe",
    "lru",
    "mpas_paper",
    "dan_memory_windows",
    "dan_no_time_driven",
    "dan_no_other_rules",
]

ALONE = EffortParams(rivals=())  # an ablation row measures its part alone: no rival of its own


class Ablation(TypedDict, total=False):
    """What a row of the DAN family sets beside the default effort: fields of
    :class:`~dansched.pipeline.SolveOptions`, and ``exact_window_mode``."""

    problem: int
    variant: str
    victim: str
    effort: EffortParams
    exact_window: int
    exact_window_mode: str


def _run(inst: Instance, opts: SolveOptions) -> MethodResult:
    """The pipeline's plan with each stage's seconds and figures."""
    res = run_pipeline(inst, opts)
    stages = res.report.to_dict().get("stages", {})
    seconds = {name: fig.get("seconds") for name, fig in stages.items()}
    figures = {name: {k: v for k, v in fig.items() if k != "seconds"} for name, fig in stages.items()}
    return MethodResult(res.plan, {"stage_seconds": seconds, "stages": figures})


def dan_method(inst: Instance, time_limit: float = 60.0, **ablation: Unpack[Ablation]) -> MethodResult:
    """The pipeline (:func:`~dansched.pipeline.run_pipeline`) with the default effort's options, ``time_limit`` and the
    ``ablation``'s fields."""
    return _run(inst, effort_options("default", time_limit=time_limit, **ablation))


def rival_method(name: str) -> Callable[..., MethodResult]:
    """The row of rival ``name`` (:data:`dansched.pipeline.options.RIVALS`): the default
    solve turned into that variant, as ``dan`` runs it (no rival of its own)."""

    def run(inst: Instance, time_limit: float = 60.0) -> MethodResult:
        return _run(inst, rival_options(effort_options("default", time_limit=time_limit, problem=3), name))

    return run


dan = partial(dan_method, problem=3)
dan_no_cpe = partial(dan_method, problem=2, effort=ALONE)
lru = partial(dan_method, problem=3, victim="lru", effort=ALONE)
mpas_paper = rival_method("algorithm-1")
dan_memory_windows = rival_method("memory-windows")


def _without(*sources: str) -> EffortParams:
    """The default effort without the named candidate sources (and no rival)."""
    return replace(ALONE, sources=tuple(s for s in SOURCES if s not in sources))


dan_no_time_driven = partial(dan_method, problem=3, effort=_without("time-driven", "dlr-on-time-driven"))
dan_no_other_rules = partial(dan_method, problem=3, effort=_without("victim-rules", "algorithm-1-order"))
