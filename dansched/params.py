"""Tuning parameters as data: one frozen dataclass per stage, validated on construction.

Each field is a deterministic budget or threshold (a count of nodes, evaluations or
scan steps, never a clock); the defaults are the values dansched is measured with
(``benchmarks/results/``). :class:`dansched.pipeline.SolveOptions` nests one of each,
and every stage function takes its own as ``params=``; tests and callers pass
parameters instead of patching module globals.

>>> MpasParams(restart_work=1000).restart_work
1000
>>> DlrParams(packing_rounds=0)
Traceback (most recent call last):
...
ValueError: DlrParams.packing_rounds must be an integer >= 1, got 0
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

__all__ = ["MpasParams", "DlrParams", "CpeParams", "EffortParams", "EFFORTS", "SOURCE_NAMES", "BoundParams"]


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
    second_order_within: float = 2.0  # the runner-up order gets every placement only within 2x the best probe traffic
    reuse_search_max_nodes: int = 40_000  # beyond: only the plain reuse order, within a scan budget
    reuse_scans_per_node: int = 10  # measured: ~3 scan steps per node on matmul, 80-250 on fa/conv/random
    # a placement stops as soon as its plan's traffic passes this (the exact spill plan before
    # packing, a scan at the spill that passes it): a caller that can only use plans within a
    # budget, e.g. problem 3's candidate sources; None: no limit
    traffic_limit: int | None = None

    def __post_init__(self) -> None:
        _check_all_ints(self, skip=("serial_wave_widths", "second_order_within", "traffic_limit"))
        if self.traffic_limit is not None:
            _check_int(self, "traffic_limit", 0)
        _check_int(self, "packing_rounds", 1)
        _check_number(self, "second_order_within", 1.0)
        widths = self.serial_wave_widths
        if not isinstance(widths, tuple) or not all(
            isinstance(w, int) and not isinstance(w, bool) and w >= 1 for w in widths
        ):
            raise ValueError(f"DlrParams.serial_wave_widths must be a tuple of integers >= 1, got {widths!r}")


@dataclass(frozen=True)
class CpeParams:
    """Stage 3 (CPE, paper Algorithm 3) budgets: the window of the local moves (Eq. 35) and how
    many timing evaluations they may spend, as node-visits (``local_work``: one evaluation
    visits every node once) capped at ``local_evaluations``; the number of timing-aware rounds
    comes from the effort (:class:`EffortParams`)."""

    width: int = 8  # W of Eq. 35
    local_work: int = 4_000_000  # node-visits of the local moves' timing evaluations
    local_evaluations: int = 2000  # at most this many evaluations

    def __post_init__(self) -> None:
        _check_all_ints(self)

    def evaluations(self, n: int) -> int:
        """Local-move evaluations on a plan of ``n`` nodes: the same work per node at every size."""
        return min(self.local_evaluations, self.local_work // max(1, n))


SOURCE_NAMES = ("dlr", "victim-rules", "algorithm-1-order", "reserved-room", "time-driven", "dlr-on-time-driven")


@dataclass(frozen=True)
class EffortParams:
    """How much work a solve does, as deterministic budgets counted in candidates, Stage-3
    runs and rounds (never a clock, never a switch on the graph's size: work that scales
    with the graph is a budget per node). Problem 3 collects Stage-2 candidates from
    ``sources`` (each a name of ``dansched.stages.candidates.SOURCES``), screens every one
    within the traffic budget (the problem-2 plan first) with one list-scheduling pass and
    runs the full Stage 3 on ``stage3_runs`` of them: the problem-2 plan and the best
    screened others.

    - ``dlr_variants``: DLR's other (order, placement, victim rule) combinations offered;
    - ``victim_rules``: the rules of the ``victim-rules`` source, DLR run once with each;
    - ``stage3_rounds``: timing-aware Stage-2 rounds alternated with CPE in each Stage-3 run;
    - ``stage1_search``: Stage 1's restarts and local search (``False``: the input order
      made lazy, eager and L0-legal in linear time, when it is legal; else one restart);
    - ``stage2_search``: DLR's search over orders and the order search (``False``: DLR's
      placements on the Stage-1 order, lifetimes tightened);
    - ``search_iterations`` and ``search_work``: rounds of the makespan search over complete
      plans (``dansched.stages.search``), each continuing from the previous round's best
      plan and ending in a full Stage-3 run of its own; round ``r`` runs at most
      ``search_iterations[r]`` iterations and ``search_work[r]`` node-visits (an iteration
      visits the plan's nodes a few times: the same work per node at every size).
      ``stage3_runs`` counts those runs too.

    :data:`EFFORTS` names the presets of ``--effort``; ``fast`` is the paper's faster
    compile mode, MPAS, DLR and CPE once."""

    sources: tuple[str, ...] = SOURCE_NAMES
    dlr_variants: int = 6
    victim_rules: tuple[str, ...] = ("recency-16", "recency-32", "lru")
    stage3_runs: int = 4
    stage3_rounds: int = 6
    stage1_search: bool = True
    stage2_search: bool = True
    search_iterations: tuple[int, ...] = (200,)
    search_work: tuple[int, ...] = (600_000,)

    def __post_init__(self) -> None:
        _check_all_ints(
            self, skip=("sources", "victim_rules", "stage1_search", "stage2_search", "search_iterations", "search_work")
        )
        _check_int(self, "stage3_runs", 1)
        for name in ("search_iterations", "search_work"):
            its = getattr(self, name)
            if not isinstance(its, tuple) or not all(
                isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in its
            ):
                raise ValueError(f"EffortParams.{name} must be a tuple of integers >= 1, got {its!r}")
        its = self.search_iterations
        if len(self.search_work) != len(its):
            raise ValueError(
                f"EffortParams.search_work must give one budget per search round ({len(its)}), got {self.search_work!r}"
            )
        if len(its) >= self.stage3_runs:
            raise ValueError(
                f"EffortParams.stage3_runs ({self.stage3_runs}) must exceed the search rounds ({len(its)}): "
                "each round ends in a Stage-3 run and the problem-2 plan needs one"
            )
        for name in ("sources", "victim_rules"):
            value = getattr(self, name)
            if not isinstance(value, tuple) or not all(isinstance(x, str) for x in value):
                raise ValueError(f"EffortParams.{name} must be a tuple of names, got {value!r}")
        unknown = [x for x in self.sources if x not in SOURCE_NAMES]
        if unknown:
            raise ValueError(
                f"EffortParams.sources: unknown source {unknown[0]!r}; choose from {', '.join(SOURCE_NAMES)}"
            )
        for name in ("stage1_search", "stage2_search"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"EffortParams.{name} must be True or False, got {getattr(self, name)!r}")


EFFORTS: dict[str, EffortParams] = {
    "fast": EffortParams(
        sources=("dlr",),
        dlr_variants=0,
        stage3_runs=1,
        stage3_rounds=2,
        stage1_search=False,
        stage2_search=False,
        search_iterations=(),
        search_work=(),
    ),
    "default": EffortParams(),
    # the default's work, then a longer search from its best plan: never slower than the default
    "max": EffortParams(stage3_runs=5, search_iterations=(200, 1000), search_work=(600_000, 3_000_000)),
}


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
