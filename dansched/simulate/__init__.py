"""The shared evaluator and cycle simulator (docs/rules.md, sections 3-8).

:func:`evaluate` is the one judge of plans in dansched: our stages, the baselines
and plans users bring all go through it. For a problem-1 order it checks the
permutation, the topological order, buffer lifetimes and the L0
single-residency rule, and computes ``maxV_stay``. For a plan with a layout it
builds the augmented DAG (spill nodes and edges, address-reuse edges from the
most recent occupant of each address), checks residency (capacity, overlap,
buffers resident when used, topological order of the augmented graph) and runs
the cycle simulator (:func:`simulate_timing`).

Two implementations judge a full plan. The fast path (:mod:`dansched.kernels.evaluate`,
compiled) runs every check on flat arrays and stops at the first broken rule; a plan it
accepts gets its :class:`Evaluation` from its arrays. Any other plan (one it rejects, or
whose files name unknown or duplicate buffers, or whose figures could pass 64 bits) is
judged by :func:`evaluate_reference`, the readable evaluator, which collects every
violation (the first :data:`MAX_REPORTED` with positions), not just a boolean. The
property tests (tests/test_kernels.py) check that both agree.

The package: :mod:`.types` (what the evaluator speaks: the augmented DAG, segments, the
evaluation), :mod:`.cycles` (the cycle simulator), :mod:`.reference` (the readable
evaluator), :mod:`.fast` (the fast path) and :mod:`.evaluator` (the entry points); every
public name is importable from ``dansched.simulate``.

>>> from dansched.instance import load_instance  # doctest: +SKIP
"""

from __future__ import annotations

from .cycles import simulate_timing, simulate_timing_arrays, simulate_timing_reference
from .evaluator import evaluate, evaluate_fast, evaluate_reference, judged
from .reference import MAX_REPORTED, max_v_stay
from .types import (
    INVALID_FIGURES,
    TIMING_BREAKERS,
    UNKNOWN_NODE,
    AugmentedGraph,
    Evaluation,
    LayoutMetrics,
    Residency,
    Segment,
    Timing,
    Violation,
    spill_node_ids,
    spill_of_node,
)

__all__ = [
    "UNKNOWN_NODE",
    "TIMING_BREAKERS",
    "INVALID_FIGURES",
    "Violation",
    "Segment",
    "Residency",
    "Evaluation",
    "AugmentedGraph",
    "Timing",
    "LayoutMetrics",
    "evaluate",
    "evaluate_reference",
    "evaluate_fast",
    "judged",
    "simulate_timing",
    "simulate_timing_arrays",
    "simulate_timing_reference",
    "max_v_stay",
    "spill_node_ids",
    "spill_of_node",
    "MAX_REPORTED",
]
