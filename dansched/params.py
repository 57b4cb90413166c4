"""Tuning parameters as data: one frozen dataclass per stage, validated on construction.

Each field is a deterministic budget or threshold (a count of nodes, evaluations or
scan steps, never a clock); the defaults are the values dansched is measured with
(``benchmarks/results/``). :class:`dansched.pipeline.SolveOptions` nests one of each,
and every stage function takes its own as ``params=``; tests and callers pass
parameters instead of patching module globals.

>>> MpasParams(restart_work=1000).restart_work
1000
>>> DlrParams(max_alternatives=-1)
Traceback (most recent call last):
...
ValueError: DlrParams.max_alternatives must be an integer >= 0, got -1
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

__all__ = ["MpasParams", "DlrParams", "CpeParams", "PortfolioParams", "BoundParams"]


def _check_int(obj: Any, name: str, low: int) -> None:
    value = getattr(obj, name)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{type(obj).__name__}.{name} must be an integer >= {low}, got {value!r}")


def _check_number(obj: Any, name: str, low: float) -> None:
    value = getattr(obj, name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= low:
        raise ValueError(f"{type(obj).__name__}.{name} must be a number >= {low}, got {value!r}")


def _check_all_ints(obj: Any, low: int = 0, skip: tuple[str, ...] = ()) -> None:
    for f in fields(obj):
        if f.name not in skip:
            _check_int(obj, f.name, low)


@dataclass(frozen=True)
class MpasParams:
    """Stage 1 (MPAS) budgets."""

    ls_evaluations: int = 8000  # profile evaluations per local-search run
    ls_max_ops: int = 6000  # larger graphs skip the local search (an evaluation is O(V))
    restart_work: int = 60_000  # restarts * nodes allowed; larger graphs compact the input order instead

    def __post_init__(self) -> None:
        _check_all_ints(self)


@dataclass(frozen=True)
class DlrParams:
    """Stage 2 (DLR) budgets and thresholds."""

    packing_rounds: int = 6  # re-scans with a smaller virtual capacity when packing overflows
    serial_wave_widths: tuple[int, ...] = (1, 2, 3, 4)  # the reuse-serial<w> candidate orders
    spill_plan_max_nodes: int = 20_000  # the exact spill plan (MIP + CP-SAT packing) is for small and medium graphs
    spill_plan_node_limit: int = (
        5000  # HiGHS branch-and-bound nodes per tier: the deterministic budget of the spill plan
    )
    spill_plan_time_limit: int = (
        300  # seconds per tier, a safety net only: the node limit binds first, so plans do not depend on load
    )
    max_tie_evaluations: int = 4  # plans judged for the makespan tie-break
    max_alternatives: int = 6  # Stage-2 plans offered to Stage 3 under --traffic-slack
    second_order_within: float = 2.0  # the runner-up order gets every placement only within 2x the best probe traffic
    reuse_search_max_nodes: int = 40_000  # beyond: only the plain reuse order, within a scan budget
    reuse_scans_per_node: int = 10  # measured: ~3 scan steps per node on matmul, 80-250 on fa/conv/random

    def __post_init__(self) -> None:
        _check_all_ints(self, skip=("serial_wave_widths", "second_order_within"))
        _check_int(self, "packing_rounds", 1)
        _check_number(self, "second_order_within", 1.0)
        widths = self.serial_wave_widths
        if not isinstance(widths, tuple) or not all(
            isinstance(w, int) and not isinstance(w, bool) and w >= 1 for w in widths
        ):
            raise ValueError(f"DlrParams.serial_wave_widths must be a tuple of integers >= 1, got {widths!r}")


@dataclass(frozen=True)
class CpeParams:
    """Stage 3 budgets: how many timing-aware Stage-2 rounds alternate with CPE."""

    medium_graph_nodes: int = 10_000  # from here on at most ``medium_rounds`` rounds ...
    large_graph_nodes: int = 200_000  # ... and from here on one round of late-segment moves only
    small_rounds: int = 6  # rounds below ``medium_graph_nodes``
    medium_rounds: int = 3
    large_rounds: int = 1

    def __post_init__(self) -> None:
        _check_all_ints(self)
        if self.medium_graph_nodes > self.large_graph_nodes:
            raise ValueError(
                "CpeParams.medium_graph_nodes must not exceed large_graph_nodes, "
                f"got {self.medium_graph_nodes} > {self.large_graph_nodes}"
            )

    def max_rounds(self, n: int) -> int:
        """Rounds allowed on a graph of ``n`` nodes."""
        if n < self.medium_graph_nodes:
            return self.small_rounds
        return self.large_rounds if n >= self.large_graph_nodes else self.medium_rounds


@dataclass(frozen=True)
class PortfolioParams:
    """Problem 3's other Stage-2 producers (``dansched.pipeline.stage2_portfolio``): DLR
    with the recency-aware victim rule for each window in ``recency_windows`` (positions;
    measured: window 32 takes FlashAttention_Case0 from 31,224 to 31,101 cycles at equal
    traffic, window 16 Conv_Case0 to 421,574 at 1.28x traffic), on graphs of up to
    ``max_nodes`` nodes; under ``--traffic-slack`` also the LRU rule and the Algorithm-1
    order, up to ``slack_max_nodes`` nodes."""

    recency_windows: tuple[int, ...] = (16, 32)
    max_nodes: int = 20_000
    slack_max_nodes: int = 100_000

    def __post_init__(self) -> None:
        _check_all_ints(self, skip=("recency_windows",))
        w = self.recency_windows
        if not isinstance(w, tuple) or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in w):
            raise ValueError(f"PortfolioParams.recency_windows must be a tuple of integers >= 1, got {w!r}")


@dataclass(frozen=True)
class BoundParams:
    """Sizes up to which the lower bounds run their exact or costly parts."""

    peak_work_bits: int = 2_000_000_000  # bits of ancestor sets handled before the first-free bound is skipped
    exact_peak_max_nodes: int = 80  # the exact min-peak DP (``bound``/``audit``) up to this many nodes
    joint_max_nodes: int = 80  # the joint order + layout + spill model: O(N^2 + B*N) variables
    max_rectangles: int = 400_000  # the fixed-order placement model gives up beyond this many rectangles
    placement_max_nodes: int = 10_000  # larger graphs keep the cover bound alone: within the default budget the
    # placement model found no bound above the cover there (Matmul_Case1, 30,976 nodes: ~15 s for status UNKNOWN)
    # members of the first-free sets A(b) handled before that bound falls back to the working
    # set: ff_members_base + ff_members_per_node * V (the official graphs need at most 12 per
    # node; a chain needs V / 6 per node, so deep graphs stop here instead of growing as V^2)
    ff_members_base: int = 100_000
    ff_members_per_node: int = 64
    # the contracted block-order relaxation (models/peak_contracted.py): blocks per window,
    # CP-SAT deterministic time per window and in all (milliseconds), its wall-clock safety
    # net (seconds), the bits of reachability sets handled before it is skipped, and the
    # blocks of one tier it handles (a window is built and evaluated in Python per block)
    contracted_window: int = 32
    contracted_window_ms: int = 1000
    contracted_total_ms: int = 4000
    contracted_time_limit: int = 30
    contracted_work_bits: int = 500_000_000
    contracted_max_blocks: int = 20_000  # blocks of one tier beyond which the relaxation is skipped

    def __post_init__(self) -> None:
        _check_all_ints(self)
        _check_int(self, "contracted_window", 1)

    def first_free_members(self, n: int) -> int:
        """The first-free bound's member budget on a graph of ``n`` nodes."""
        return self.ff_members_base + self.ff_members_per_node * n
