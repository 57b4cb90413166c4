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
dansched.errors.ArgumentError: DlrParams.packing_rounds must be an integer from 1 to 2**63 - 1, got 0

A value out of range raises :class:`~dansched.errors.ArgumentError` (a ``ValueError``),
with the ranges of :mod:`dansched.checks`: integers fit int64, numbers are finite, seconds
are at most :data:`dansched.checks.SECONDS`'s bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

from .checks import SECONDS, TIME_LIMIT, TRAFFIC_SLACK, check_choice, check_integer, check_number, check_type
from .errors import ArgumentError
from .reprs import one_line_repr
from .rooms import ROOM_RULES

__all__ = [
    "SlowRunParams",
    "MpasParams",
    "LocalSearchParams",
    "DlrParams",
    "CpeParams",
    "FEED_SCOPES",
    "EffortParams",
    "BoundParams",
    "ProductParams",
    "PeakBoundParams",
    "TrafficParams",
    "CoverBudget",
    "WaveParams",
    "LnsParams",
    "OrderSearchParams",
    "TimedParams",
    "TIMED_PRIORITIES",
    "DEFAULT_TRIALS",
    "SLACK_TRIALS",
    "MemoryWindowParams",
    "SearchParams",
    "Stage3Params",
    "Problem3Params",
    "ProgressParams",
    "Progress",
]


def _what(obj: Any, name: str) -> str:
    return f"{type(obj).__name__}.{name}"


def _checked(obj: Any, name: str, value: Any) -> None:
    """Keep the checked ``value`` of field ``name`` (a numpy number as a Python one)."""
    object.__setattr__(obj, name, value)


def _check_int(obj: Any, name: str, low: int) -> None:
    """An integer of at least ``low`` that fits the solvers' int64 (:mod:`dansched.checks`)."""
    _checked(obj, name, check_integer(getattr(obj, name), _what(obj, name), low))


def _check_number(obj: Any, name: str, low: float) -> None:
    _checked(obj, name, check_number(getattr(obj, name), _what(obj, name), low))


def _check_positive(obj: Any, name: str) -> None:
    _checked(obj, name, check_number(getattr(obj, name), _what(obj, name), 0.0, low_open=True))


def _check_seconds(obj: Any, name: str) -> None:
    """A wall-clock safety net in seconds: :data:`dansched.checks.SECONDS`."""
    _checked(obj, name, SECONDS.check(getattr(obj, name), _what(obj, name)))


def _check_int_tuple(obj: Any, name: str, low: int, nonempty: bool = False) -> None:
    """A tuple of integers of at least ``low`` (each fits int64), non-empty when ``nonempty``."""
    value = getattr(obj, name)
    if not isinstance(value, tuple) or (nonempty and not value):
        need = "a non-empty tuple" if nonempty else "a tuple"
        raise ArgumentError(f"{_what(obj, name)} must be {need} of integers >= {low}, got {value!r}")
    _checked(obj, name, tuple(check_integer(x, f"{_what(obj, name)}[{i}]", low) for i, x in enumerate(value)))


def _check_type(obj: Any, name: str, kind: type) -> None:
    check_type(getattr(obj, name), kind, _what(obj, name))


def _check_all_ints(obj: Any, low: int = 0, skip: tuple[str, ...] = ()) -> None:
    for f in fields(obj):
        if f.name not in skip:
            _check_int(obj, f.name, low)


@dataclass(frozen=True)
class LocalSearchParams:
    """The moves of Stage 1's local search (``dansched.stages.mpas.improve``): ``blocks``:
    lengths of the blocks moved; ``jumps``: distances from the peak position tried;
    ``max_drag``: longest window a pull/push move reorders; ``group_reach``: operations this
    far past (before) a peak are tried as pulled (pushed) groups, to the first
    ``group_jumps`` jumps; ``gather_tail``: operations after a last closer tried as the end
    of its group; ``max_gather``: longest window a gather move reorders; ``gather_groups``:
    groups a gather move may pull; ``stall``: evaluations without a better peak after which
    the search stops."""

    __repr__ = one_line_repr

    blocks: tuple[int, ...] = (1, 2, 3, 4)
    jumps: tuple[int, ...] = (0, 1, 2, 3, 4, 6, 8, 12, 16, 32)
    max_drag: int = 48
    group_reach: int = 24
    group_jumps: int = 4
    gather_tail: int = 8
    max_gather: int = 160
    gather_groups: int = 8
    stall: int = 3000

    def __post_init__(self) -> None:
        _check_all_ints(self, skip=("blocks", "jumps"))
        _check_int_tuple(self, "blocks", 1, nonempty=True)
        _check_int_tuple(self, "jumps", 0, nonempty=True)


@dataclass(frozen=True)
class MpasParams:
    """Stage 1 (MPAS) budgets."""

    __repr__ = one_line_repr

    ls_evaluations: int = 8000  # profile evaluations per local-search run
    ls_max_ops: int = 6000  # larger graphs skip the local search (an evaluation is O(V))
    restart_work: int = 60_000  # restarts * nodes allowed; larger graphs compact the input order instead
    moves: LocalSearchParams = LocalSearchParams()  # the local search's move shapes
    # the exact search for an L0-legal order when every greedy pass gets stuck (models/l0_order.py):
    # its deterministic budget per model, and the wall-clock safety net. The random family with its
    # ids shuffled (800 operations, 642 events) needs about 2 deterministic seconds
    l0_search_deterministic_time: float = 60.0
    l0_search_seconds: float = 600.0

    def __post_init__(self) -> None:
        _check_all_ints(self, skip=("moves", "l0_search_deterministic_time", "l0_search_seconds"))
        _check_positive(self, "l0_search_deterministic_time")
        _check_seconds(self, "l0_search_seconds")
        _check_type(self, "moves", LocalSearchParams)


@dataclass(frozen=True)
class DlrParams:
    """Stage 2 (DLR) budgets and thresholds."""

    __repr__ = one_line_repr

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
    reuse_orders_max_nodes: int = 40_000  # beyond: only the plain reuse order, within a scan budget
    reuse_scans_per_node: int = 10  # measured: ~3 scan steps per node on matmul, 80-250 on fa/conv/random
    reuse_scan_allowance: int = (
        1000  # nodes' worth of scan steps a budgeted reuse order may spend before its first node
    )
    reuse_lookahead: int = 6  # the best ready tasks of the reuse-aware order that get the partner lookahead
    # a placement stops as soon as its plan's traffic passes this (the exact spill plan before
    # packing, a scan at the spill that passes it): a caller that can only use plans within a
    # budget, e.g. problem 3's candidate sources; None: no limit
    traffic_limit: int | None = None

    def __post_init__(self) -> None:
        _check_all_ints(self, skip=("serial_wave_widths", "second_order_within", "traffic_limit"))
        if self.traffic_limit is not None:
            _check_int(self, "traffic_limit", 0)
        _check_int(self, "packing_rounds", 1)
        _check_int(self, "max_tie_evaluations", 1)  # the tie-break judges at least the best plan
        _check_seconds(self, "spill_plan_time_limit")
        _check_number(self, "second_order_within", 1.0)
        _check_int_tuple(self, "serial_wave_widths", 1)


# the pipes CPE's "loads fed by need" list schedule runs in the active mode on: the
# data-movement pipes (the hardware's roles.dma) or every pipe
FEED_SCOPES = ("dma", "all")


@dataclass(frozen=True)
class CpeParams:
    """Stage 3 (CPE, paper Algorithm 3) budgets: the window of the local moves (Eq. 35) and how
    many timing evaluations they may spend, as node-visits (``local_work``: one evaluation
    visits every node once) capped at ``local_evaluations``; ``feed_by_need``: the pipe scopes
    (names of :data:`FEED_SCOPES`) of the "loads fed by need" list schedules, one more
    candidate each (``()``: none); the number of timing-aware rounds comes from the effort
    (:class:`EffortParams`)."""

    __repr__ = one_line_repr

    width: int = 8  # W of Eq. 35
    local_work: int = 4_000_000  # node-visits of the local moves' timing evaluations
    local_evaluations: int = 2000  # at most this many evaluations
    feed_by_need: tuple[str, ...] = ("dma",)

    def __post_init__(self) -> None:
        _check_all_ints(self, skip=("feed_by_need",))
        scopes = self.feed_by_need
        if (
            not isinstance(scopes, tuple)
            or any(x not in FEED_SCOPES for x in scopes)
            or len(set(scopes)) != len(scopes)
        ):
            raise ArgumentError(
                f"CpeParams.feed_by_need must be a tuple of distinct names of {', '.join(FEED_SCOPES)}, got {scopes!r}"
            )

    def evaluations(self, n: int) -> int:
        """Local-move evaluations on a plan of ``n`` nodes: the same work per node at every size."""
        return min(self.local_evaluations, self.local_work // max(1, n))


@dataclass(frozen=True)
class EffortParams:
    """How much work problem 3 (and Stages 1-2 before it) does, as deterministic budgets
    counted in candidates, Stage-3 runs and rounds (never a clock, never a switch on the
    graph's size: work that scales with the graph is a budget per node). Problem 3 collects
    Stage-2 candidates from ``sources``, screens every one within the traffic budget (the
    problem-2 plan first) with one list-scheduling pass and runs the full Stage 3 on
    ``stage3_runs`` of them: the problem-2 plan and the best screened others.

    - ``sources``: the names of the candidate sources to run, in the registry's order
      (``dansched.pipeline.problem3.sources.candidates.SOURCES``); ``None``: every registered one;
    - ``dlr_variants``: DLR's other (order, placement, victim rule) combinations offered;
    - ``victim_rules``: the rules of the ``victim-rules`` source, DLR run once with each;
    - ``stage3_runs``: full Stage-3 runs in all, the one that ends each makespan-search
      round included (``SolveOptions.search``);
    - ``stage3_work``: node-visits for more finalists: on a graph of ``n`` nodes, up to
      ``stage3_work // n`` candidates get the full Stage 3 when that is more than
      ``stage3_runs`` allows (every candidate of a small graph; the same work per node at
      every size);
    - ``start_work`` and ``max_starts``: node-visits for more starts of the makespan
      search: on a graph of ``n`` nodes it runs, each round with its polish, from each of
      the ``start_work // n`` fastest Stage-3 results (at least the fastest, at most
      ``max_starts``: a start's CP-SAT windows cost the same at every size);
    - ``stage3_rounds``: timing-aware Stage-2 rounds alternated with CPE in each Stage-3 run;
    - ``stage1_restarts``: Stage 1's restarts and local search (``False``: the input order
      made lazy, eager and L0-legal in linear time, when it is legal; else one restart);
    - ``stage2_variants``: DLR's variants (its other orders and placements) and the order
      search's exact and window methods (``False``: the paper's placements, best fit with greedy or window eviction, on the
      Stage-1 order with lifetimes tightened, then the wave search on blocked reductions
      alone: a grid kernel's traffic is decided by its tile order);
    - ``reservation_steps``: the most rooms the ``reservation`` source keeps aside per tier
      (and ``reservation_parts``: its first room also for the first quarter, half... of the
      order, the traffic between no room and one in that many steps)
      (``dansched.pipeline.problem3.sources.reservation``), one more at each step of a sweep;
    - ``saturation``: a sweep stops at a plan whose makespan is within this share of its
      busiest pipe's load (more rooms would only add to that load), and no allowance above
      the problem-2 plan's searches a plan that close to its floor;
    - ``level_runs``: full Stage-3 runs at each allowance above the problem-2 plan's, on the
      candidates it newly admits whose screen is at most ``level_margin`` above the plan kept
      below (the full Stage 3 often ends well under a screen), and ``level_search``: the fraction of each makespan-search
      round (and of its polish) that allowance's search gets;
    - ``frontier_slack``: the largest allowance (percent over the problem-2 plan's traffic)
      the traffic-makespan frontier plans at when asked for (``SolveOptions.frontier``);
    - ``rivals`` and ``rival_work``: the variants of the solve (``dansched.pipeline.options.RIVALS``)
      whose finished plans problem 3 also considers, each run in full on a graph of ``n``
      nodes when ``n * len(rivals) <= rival_work`` (node-visits): then the solve is never
      beaten by one of them at no more traffic. A rival is a whole solve of its own (the
      memory-windows one the costliest): on matmul_s2 (592 nodes) the two made the default
      solve 7.7 s -> 57 s, so the default runs them up to 100 nodes and ``max`` up to 1,000.

    The presets of ``--effort`` are functions that return complete options
    (``dansched.pipeline.options.EFFORTS``)."""

    __repr__ = one_line_repr

    sources: tuple[str, ...] | None = None
    dlr_variants: int = 6
    victim_rules: tuple[str, ...] = ("recency-16", "recency-32", "lru")
    stage3_runs: int = 4
    stage3_work: int = 20_000
    start_work: int = 5_000
    max_starts: int = 2
    stage3_rounds: int = 6
    stage1_restarts: bool = True
    stage2_variants: bool = True
    reservation_steps: int = 3
    reservation_parts: int = 4
    saturation: float = 0.01
    level_runs: int = 2
    level_margin: float = 0.1
    level_search: float = 0.1
    frontier_slack: float = 100.0
    rivals: tuple[str, ...] = ("memory-windows", "algorithm-1")
    rival_work: int = 200

    def __post_init__(self) -> None:
        _check_all_ints(
            self,
            skip=(
                "sources",
                "victim_rules",
                "rivals",
                "stage1_restarts",
                "stage2_variants",
                "saturation",
                "level_search",
                "level_margin",
                "frontier_slack",
            ),
        )
        _check_number(self, "saturation", 0.0)
        _check_number(self, "level_margin", 0.0)
        _checked(self, "level_search", check_number(self.level_search, _what(self, "level_search"), 0.0, 1.0))
        _checked(self, "frontier_slack", TRAFFIC_SLACK.check(self.frontier_slack, _what(self, "frontier_slack")))
        _check_int(self, "stage3_runs", 1)
        _check_int(self, "max_starts", 1)
        _check_int(self, "reservation_parts", 1)
        for name in ("sources", "victim_rules", "rivals"):
            value = getattr(self, name)
            if name == "sources" and value is None:
                continue
            if not isinstance(value, tuple) or not all(isinstance(x, str) for x in value):
                raise ArgumentError(f"EffortParams.{name} must be a tuple of names, got {value!r}")
        for name in ("stage1_restarts", "stage2_variants"):
            if not isinstance(getattr(self, name), bool):
                raise ArgumentError(f"EffortParams.{name} must be True or False, got {getattr(self, name)!r}")


@dataclass(frozen=True)
class ProductParams:
    """The product grids of the peak and traffic bounds (``dansched.models.bounds.peak_product``,
    ``dansched.models.bounds.traffic_grid``): ``max_seeds`` line groups tried as the seed of a
    grid (heaviest first); ``max_feeds`` the scan pairs (a carrier and a user of it, over the
    operations scanned: ``dansched.models.bounds.grid``) past which a cell tier is given up
    (a deterministic work cap)."""

    __repr__ = one_line_repr

    max_seeds: int = 64
    max_feeds: int = 20_000_000

    def __post_init__(self) -> None:
        _check_all_ints(self, low=1)


@dataclass(frozen=True)
class PeakBoundParams:
    """The maxV_stay bounds (``dansched.models.bounds.peak_bounds``): when the exact DP runs
    (``exact_max_nodes``) and its state cap (``exact_max_states``); ``product``: the
    product-pattern search caps (``None``: that bound is not computed)."""

    __repr__ = one_line_repr

    exact_max_nodes: int = 80
    exact_max_states: int = 200_000
    product: ProductParams | None = ProductParams()

    def __post_init__(self) -> None:
        _check_int(self, "exact_max_nodes", 0)
        _check_int(self, "exact_max_states", 1)
        if self.product is not None:
            _check_type(self, "product", ProductParams)


@dataclass(frozen=True)
class TrafficParams:
    """The all-orders traffic bound (``dansched.models.bounds.traffic_global``): ``max_bits`` bits
    of DAG bitsets handled before falling back to working sets."""

    __repr__ = one_line_repr

    max_bits: int = 3_000_000_000

    def __post_init__(self) -> None:
        _check_int(self, "max_bits", 1)


@dataclass(frozen=True)
class CoverBudget:
    """Deterministic budgets of the HiGHS cover models (``dansched.models.bounds.traffic``), and the
    wall-clock safety net.

    ``mip_max_nonzeros``: a tier's integer program is solved only when its cover matrix has
    at most that many nonzeros (the root of a larger one can take minutes); larger tiers get
    the LP relaxation, up to ``lp_max_nonzeros`` (beyond, HiGHS is not run and the
    per-position bound stands). ``node_limit``: branch-and-bound nodes per tier.
    ``lp_iteration_limit``: simplex iterations per LP. ``exact_max_cost``: HiGHS computes
    in doubles, so a tier whose gaps cost more than this in all gets the exact
    per-position bound instead. ``safety_seconds``: wall clock per HiGHS call, a safety net
    only: when it fires the bound says so (``stopped_by_clock``)."""

    __repr__ = one_line_repr

    mip_max_nonzeros: int = 1_000_000
    lp_max_nonzeros: int = 5_000_000
    node_limit: int = 5000
    lp_iteration_limit: int = 200_000
    exact_max_cost: int = 2**30
    safety_seconds: float = 300.0

    def __post_init__(self) -> None:
        _check_all_ints(self, skip=("safety_seconds",))
        _check_positive(self, "safety_seconds")
        _check_seconds(self, "safety_seconds")


@dataclass(frozen=True)
class BoundParams:
    """Sizes up to which the lower bounds run their exact or costly parts, and the budgets
    of each bound: ``peak`` (the maxV_stay bounds), ``traffic_global`` (the all-orders
    traffic bound), ``cover`` (the fixed-order traffic cover of ``bound`` and ``audit``)
    and ``report_cover`` (the same in ``solve``'s report: the integer program only on
    tiers of at most 150,000 nonzeros, every official case but FlashAttention_Case1's UB,
    whose root alone takes about 15 s; the LP relaxation above)."""

    __repr__ = one_line_repr

    peak: PeakBoundParams = PeakBoundParams()
    traffic_global: TrafficParams = TrafficParams()
    cover: CoverBudget = CoverBudget()
    report_cover: CoverBudget = CoverBudget(mip_max_nonzeros=150_000)

    peak_work_bits: int = 2_000_000_000  # bits of ancestor sets handled before the first-free bound is skipped
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
    # the product-grid segment traffic bound (models/traffic_segments.py): how many segment lengths R
    # it tries, from S / 2 to 3 S (S: the tiles one moment holds); each costs about 0.1-0.2 s on a
    # 16 x 16 x 16 grid. The coarse sweep (21: every S / 8) at fast and default, the fine one
    # (81: every S / 32) at max; the bound is jagged in R (Matmul_Case1: 149,504 at R = 48, 150,016 at 52)
    segment_steps: int = 21
    # the makespan floors' heads and tails that respect the pipes (models/heads.py): the most
    # ancestors (descendants) of one pipe a node's head (tail) is computed from, past which it
    # keeps the longest path; the official instances need at most 302, a plan's augmented DAG
    # far more (its reuse edges): 256 costs about 1.2 s on Matmul_Case1's plan (31,000 nodes)
    head_set_limit: int = 256

    def __post_init__(self) -> None:
        _check_all_ints(self, skip=("peak", "traffic_global", "cover", "report_cover"))
        _check_int(self, "contracted_window", 1)
        _check_int(self, "segment_steps", 1)
        _check_seconds(self, "contracted_time_limit")
        _check_type(self, "peak", PeakBoundParams)
        _check_type(self, "traffic_global", TrafficParams)
        _check_type(self, "cover", CoverBudget)
        _check_type(self, "report_cover", CoverBudget)

    def first_free_members(self, n: int) -> int:
        """The first-free bound's member budget on a graph of ``n`` nodes."""
        return self.ff_members_base + self.ff_members_per_node * n

    def linear(self) -> BoundParams:
        """These budgets without the costly parts: no product-pattern search, no contracted
        relaxation (CP-SAT), no exact DP, no HiGHS model of the report's cover (its
        per-position bound stands), the segment bound's coarsest sweep (three segment
        lengths) and heads and tails from at most 64 ancestors per pipe (Matmul_Case1's plan:
        0.1 s instead of 1.2 s): what ``--effort fast`` reports."""
        return replace(
            self,
            peak=replace(self.peak, product=None, exact_max_nodes=0),
            report_cover=replace(self.report_cover, mip_max_nonzeros=0, lp_max_nonzeros=0),
            contracted_total_ms=0,
            segment_steps=min(self.segment_steps, 3),
            head_set_limit=min(self.head_set_limit, 64),
        )


@dataclass(frozen=True)
class WaveParams:
    """The wave search (``dansched.stages.dlr.wave_search``): ``max_band``: largest band height
    tried; ``replay``: sweeps (best by their source count) replayed by the scan; ``keep``: of
    those, the best placed by DLR in full; ``max_key_ops``: graphs with more key operations
    are skipped, and graphs of more than ``max_nodes`` nodes are not even inspected (the
    scans of a sweep each cost about one DLR scan).

    >>> WaveParams(max_band=1.5)
    Traceback (most recent call last):
    ...
    dansched.errors.ArgumentError: WaveParams.max_band must be an integer from 1 to 2**63 - 1, got 1.5
    """

    __repr__ = one_line_repr

    max_band: int = 4
    replay: int = 4
    keep: int = 1
    max_key_ops: int = 50_000
    max_nodes: int = 200_000

    def __post_init__(self) -> None:
        _check_all_ints(self, low=1)


@dataclass(frozen=True)
class LnsParams:
    """The exact order windows of the Stage-2 order search (``dansched.stages.dlr.window_lns``):
    ``window``: positions per window; ``max_shift``: how far a node may move inside it;
    ``window_deterministic_time`` and ``total_deterministic_time``: CP-SAT's deterministic
    budgets per window and in all; ``max_windows``: windows solved at most;
    ``max_passes``: passes over the plan; ``max_nodes``: larger graphs are skipped."""

    __repr__ = one_line_repr

    window: int = 32
    max_shift: int = 10
    window_deterministic_time: float = 1.0
    total_deterministic_time: float = 20.0
    max_windows: int = 80
    max_passes: int = 3
    max_nodes: int = 20_000

    def __post_init__(self) -> None:
        for name, low in (("window", 2), ("max_shift", 1), ("max_windows", 0), ("max_passes", 1), ("max_nodes", 0)):
            _check_int(self, name, low)
        _check_positive(self, "window_deterministic_time")
        _check_positive(self, "total_deterministic_time")


@dataclass(frozen=True)
class OrderSearchParams:
    """The Stage-2 order search (``dansched.stages.dlr.order_search``): ``exact``, ``wave``,
    ``lns`` switch its methods; ``exact_max_nodes``: largest graph the joint model is solved
    on (at most the model's own limit, ``BoundParams.joint_max_nodes``);
    ``exact_deterministic_time``: CP-SAT's deterministic budget for it (measured: 3 s is
    about 25 wall seconds on a 79-node graph, 20 s about 170); ``wave_params`` and
    ``lns_params``: their budgets."""

    __repr__ = one_line_repr

    exact: bool = True
    exact_max_nodes: int = BoundParams().joint_max_nodes
    exact_deterministic_time: float = 3.0
    wave: bool = True
    wave_params: WaveParams = WaveParams()
    lns: bool = True
    lns_params: LnsParams = LnsParams()

    def __post_init__(self) -> None:
        for name in ("exact", "wave", "lns"):
            _check_type(self, name, bool)
        _check_int(self, "exact_max_nodes", 0)
        if self.exact_max_nodes > BoundParams().joint_max_nodes:
            raise ArgumentError(
                f"OrderSearchParams.exact_max_nodes must be at most {BoundParams().joint_max_nodes}, "
                f"got {self.exact_max_nodes}"
            )
        _check_positive(self, "exact_deterministic_time")
        _check_type(self, "wave_params", WaveParams)
        _check_type(self, "lns_params", LnsParams)


TIMED_PRIORITIES = ("tail", "rank")  # h(v) of Eq. 20, or the reference order's rank


@dataclass(frozen=True)
class TimedParams:
    """The time-driven Stage-2 scheduler (``dansched.pipeline.problem3.sources.timed.timed_schedule``).

    - ``window``: operations of the reference order past the frontier whose loads (tasks
      on the spill-in pipe) and reloads may be released; ``compute_window``: the same
      for the busiest pipe's operations; ``feed_window``: for the other pipes' (0: such
      tasks wait for the frontier);
    - ``fill``: a task ahead of the frontier may allocate only while its tier stays at
      most this fraction full (prefetch room for the frontier); ``reserve_ops``: that
      room also leaves free what the next ``reserve_ops`` operations still need;
    - ``victim_tolerance``: eviction windows whose cost (Eqs. 27-31) is within this
      factor of the cheapest compete on the time their SPILL_OUT can start;
      ``victim_horizon``: when positive, windows whose victims are all next used at
      least this many operations past the frontier compete too;
    - ``priority``: ``"tail"`` ranks ready tasks of one pipe by the criticality h(v) of
      Eq. 20, ``"rank"`` by the reference order;
    - ``lookahead_evict``: a load ahead of the frontier may evict buffers needed after
      its own (otherwise only the frontier operation evicts);
    - ``room``: the room rule a placed or reloaded buffer's address follows
      (``dansched.rooms.ROOM_RULES``; release times in cycles, ``want`` the time the
      buffer is wanted);
    - ``victim``: the victim rule that prices each victim of an eviction window
      (``dansched.stages.dlr.victim``, one that reads no look-ahead, so not ``min-reload``;
      ``ahead-<rule>``: victims whose last use has not ended when the write-out pipe is
      free cost more)."""

    __repr__ = one_line_repr

    window: int = 64
    compute_window: int = 4
    feed_window: int = 4
    fill: float = 1.0
    victim_tolerance: float = 0.0
    priority: str = "tail"
    reserve_ops: int = 2
    lookahead_evict: bool = False
    victim_horizon: int = 0
    room: str = "least-late"
    victim: str = "score"

    def __post_init__(self) -> None:
        if not isinstance(self.victim, str):
            raise ArgumentError(f"TimedParams.victim must be a victim rule's name, got {self.victim!r}")
        check_choice(self.room, tuple(ROOM_RULES), "TimedParams.room")
        check_choice(self.priority, TIMED_PRIORITIES, "TimedParams.priority")
        for name in ("window", "compute_window", "feed_window", "reserve_ops", "victim_horizon"):
            _check_int(self, name, 0)
        _check_number(self, "victim_tolerance", 0.0)
        _check_type(self, "lookahead_evict", bool)
        _checked(self, "fill", check_number(self.fill, "TimedParams.fill", 0.0, 1.0, low_open=True))

    @property
    def name(self) -> str:
        return (
            f"timed(w={self.window},cw={self.compute_window},fw={self.feed_window},fill={self.fill:g},reserve={self.reserve_ops},"
            f"tol={self.victim_tolerance:g},{self.priority}"
            + (f",horizon={self.victim_horizon}" if self.victim_horizon else "")
            + (",evict-ahead" if self.lookahead_evict else "")
            + (f",{self.room}" if self.room != "least-late" else "")
            + (f",{self.victim}" if self.victim != "score" else "")
            + ")"
        )


DEFAULT_TRIALS: tuple[TimedParams, ...] = (
    TimedParams(window=16, compute_window=8, feed_window=4, reserve_ops=2, victim_tolerance=0.3, priority="rank"),
    TimedParams(window=32, compute_window=2, feed_window=8, reserve_ops=1),
    TimedParams(window=8, compute_window=2, feed_window=2, reserve_ops=1, victim_tolerance=1.0),
)
SLACK_TRIALS: tuple[TimedParams, ...] = (  # victims among all far-reused buffers, loads evicting ahead
    TimedParams(
        window=16,
        compute_window=8,
        feed_window=4,
        reserve_ops=2,
        victim_tolerance=0.3,
        priority="rank",
        victim_horizon=64,
    ),
    TimedParams(
        window=32,
        compute_window=8,
        feed_window=8,
        reserve_ops=2,
        victim_tolerance=0.3,
        priority="rank",
        lookahead_evict=True,
    ),
    # evict ahead of need: victims still in use when the write-out pipe is free cost more
    TimedParams(window=32, compute_window=2, feed_window=8, reserve_ops=1, victim="ahead-score"),
)


@dataclass(frozen=True)
class MemoryWindowParams:
    """Problem 3's memory-aware CP-SAT windows (``dansched.pipeline.problem3.stage3.polish``), the one
    place they are set: ``windows`` windows (0: none) of ``width`` operation nodes along the
    critical chain, CP-SAT's ``deterministic_time`` per window, on the kept plan at the end
    (``after_every_run=False``, the polish) or after every full Stage-3 run
    (``--exact-window-mode memory``), and ``wall_seconds``, the wall-clock safety net of a
    whole slide (the window count, not the clock, decides how far it goes). A window costs
    about one wall second on official graphs (CP-SAT plus one evaluator run)."""

    __repr__ = one_line_repr

    windows: int = 30
    width: int = 64
    deterministic_time: float = 0.5
    after_every_run: bool = False
    wall_seconds: float = 600.0

    def __post_init__(self) -> None:
        _check_int(self, "windows", 0)
        _check_int(self, "width", 1)
        _check_positive(self, "deterministic_time")
        _check_type(self, "after_every_run", bool)
        _check_positive(self, "wall_seconds")
        _check_seconds(self, "wall_seconds")

    def share(self, fraction: float) -> MemoryWindowParams:
        """These windows, ``fraction`` (0 to 1) of them (rounded up)."""
        return replace(self, windows=math.ceil(self.windows * fraction))


@dataclass(frozen=True)
class SearchParams:
    """One round of the makespan search over complete plans (``dansched.pipeline.problem3.search``):
    at most ``iterations`` iterations and ``work`` node-visits (one iteration visits every
    node of the plan a few times, so the same work per node at every size), the ``choices``
    best addresses a move picks from, the roulette wheel's scores (new best, better,
    accepted, rejected) and decay; the window moves' ``window_width`` operation nodes, their
    CP-SAT deterministic time per window (``window_time``) and in all (``window_budget``,
    seconds of deterministic time: past it, only the other moves run), and the new spills a
    joint window may offer (``window_spills``), and the victim rule that ranks the buffers
    the segment moves evict (``victim``: a rule of ``dansched.stages.dlr.victim`` that reads
    no look-ahead, so not ``min-reload``; ``ahead-lru``: the least recently used of those no
    running operation holds). ``SolveOptions.search`` holds one per round;
    each round continues from the best plan so far and ends with the polish
    (``SolveOptions.polish``)."""

    __repr__ = one_line_repr

    iterations: int = 200
    work: int = 600_000
    choices: int = 3
    scores: tuple[float, float, float, float] = (25.0, 5.0, 1.0, 0.0)
    decay: float = 0.8
    window_width: int = 24
    window_time: float = 0.5
    window_budget: float = 10.0
    window_spills: int = 8
    victim: str = "ahead-lru"

    def __post_init__(self) -> None:
        if not isinstance(self.victim, str):
            raise ArgumentError(f"SearchParams.victim must be a victim rule's name, got {self.victim!r}")
        for name in ("iterations", "work", "window_spills"):
            _check_int(self, name, 0)
        _check_int(self, "choices", 1)
        _check_int(self, "window_width", 1)
        _check_positive(self, "window_time")
        _check_number(self, "window_budget", 0.0)
        sc = self.scores
        if not isinstance(sc, tuple) or len(sc) != 4:
            raise ArgumentError(f"SearchParams.scores must be four numbers >= 0, got {sc!r}")
        _checked(self, "scores", tuple(check_number(x, f"SearchParams.scores[{i}]", 0.0) for i, x in enumerate(sc)))
        # decay 0 lets a rejected move's score 0 zero every operator's weight (the wheel then
        # has no probabilities left): the weights must keep some of their past
        _checked(self, "decay", check_number(self.decay, "SearchParams.decay", 0.0, 1.0, low_open=True))

    def budget(self, nodes: int) -> int:
        """Iterations on a plan of ``nodes`` nodes (spill nodes included)."""
        return min(self.iterations, self.work // max(1, nodes))

    def share(self, fraction: float) -> SearchParams:
        """This round with ``fraction`` (0 to 1) of its iterations, work and CP-SAT window
        budget (rounded up: a share is never nothing)."""
        return replace(
            self,
            iterations=math.ceil(self.iterations * fraction),
            work=math.ceil(self.work * fraction),
            window_budget=self.window_budget * fraction,
        )


@dataclass(frozen=True)
class GapParams:
    """The gap-hiding walk (``dansched.pipeline.problem3.search.gaps``): each step looks at the
    nodes behind the busiest pipe's ``gaps`` largest idle gaps, ``depth`` tasks back, tries
    each of ``moves`` (segment moves of the search, by name) on each ``tries`` times, and
    takes the one that hides the most busiest-pipe time per unit of extra traffic; in all at
    most ``work`` node-visits (one per node of the plan per try: the same work per node at
    every size). ``work == 0``: no walk."""

    gaps: int = 20
    depth: int = 4
    tries: int = 2
    moves: tuple[str, ...] = ("hoist reload", "delay eviction", "swap victim", "add room", "readdress")
    work: int = 8_000_000

    def __post_init__(self) -> None:
        _check_all_ints(self, skip=("moves",))
        for name in ("gaps", "depth", "tries"):
            _check_int(self, name, 1)
        if not isinstance(self.moves, tuple) or not all(isinstance(m, str) for m in self.moves):
            raise ArgumentError(f"GapParams.moves must be a tuple of move names, got {self.moves!r}")


@dataclass(frozen=True, kw_only=True)
class Stage3Params:
    """One full Stage-3 run of problem 3 (``dansched.pipeline.problem3.stage3.run``): at most
    ``rounds`` timing-aware rounds alternated with CPE (``cpe``: its parameters), then the
    fixed exact windows of width ``exact_window`` (0: none; ``time_limit`` their wall-clock
    safety net, ``seed`` CP-SAT's) and, when ``memory_windows`` is given, the memory-aware
    CP-SAT windows on its result (``--exact-window-mode memory``)."""

    __repr__ = one_line_repr

    rounds: int = 6
    cpe: CpeParams = CpeParams()
    exact_window: int = 0
    time_limit: float = 60.0
    seed: int = 0
    memory_windows: MemoryWindowParams | None = None

    def __post_init__(self) -> None:
        _check_all_ints(self, skip=("cpe", "time_limit", "memory_windows"))
        _check_type(self, "cpe", CpeParams)
        TIME_LIMIT.check(self.time_limit, "Stage3Params.time_limit")
        if self.memory_windows is not None:
            _check_type(self, "memory_windows", MemoryWindowParams)


@dataclass(frozen=True, kw_only=True)
class Problem3Params:
    """What problem 3 reads (``dansched.pipeline.problem3.loop``), gathered once from the
    solve's options (``SolveOptions.problem3``, which decides the memory-aware windows' mode
    there and nowhere else): the traffic slack (percent) of its one budget, the effort's
    budgets, the candidate sources to run (registry order), each full Stage-3 run
    (``stage3``, its memory-aware windows included when they run after every run), the
    makespan search's rounds, the polish of the kept plan after each round (``polish``:
    ``None`` when there is none, or the windows run after every Stage-3 run instead), the
    seed, whether to plan the traffic-makespan frontier up to ``effort.frontier_slack``
    (``frontier``), and what the sources read: the Stage-1 and Stage-2 parameters, the
    Stage-1 variant and victim choice of the solve, the time-driven scheduler's trials."""

    __repr__ = one_line_repr

    traffic_slack: float
    effort: EffortParams
    sources: tuple[str, ...]
    stage3: Stage3Params
    search: tuple[SearchParams, ...] = ()
    polish: MemoryWindowParams | None = None
    seed: int = 0
    frontier: bool = False
    mpas: MpasParams = MpasParams()
    dlr: DlrParams = DlrParams()
    variant: str = "mpas"
    victim: str = "cost"
    timed_trials: tuple[TimedParams, ...] = ()
    gaps: GapParams = GapParams()

    def __post_init__(self) -> None:
        for name, kind in (
            ("effort", EffortParams),
            ("stage3", Stage3Params),
            ("mpas", MpasParams),
            ("dlr", DlrParams),
            ("gaps", GapParams),
        ):
            _check_type(self, name, kind)
        if self.polish is not None:
            _check_type(self, "polish", MemoryWindowParams)
        check_number(self.traffic_slack, "Problem3Params.traffic_slack", 0.0)
        check_integer(self.seed, "Problem3Params.seed", 0)
        if not isinstance(self.frontier, bool):
            raise ArgumentError(f"Problem3Params.frontier must be True or False, got {self.frontier!r}")

    def share(self, fraction: float) -> Problem3Params:
        """These parameters with ``fraction`` (0 to 1) of each search round and of the polish
        (:meth:`SearchParams.share`, :meth:`MemoryWindowParams.share`)."""
        polish = None if self.polish is None else self.polish.share(fraction)
        return replace(self, search=tuple(r.share(fraction) for r in self.search), polish=polish)


Progress = Callable[[str], None]
"""The callback a long call reports each step to, ``progress(message)`` as the step starts
(:mod:`dansched.application.report.progress` shows it; :class:`ProgressParams` says how)."""


@dataclass(frozen=True)
class SlowRunParams:
    """When ``solve`` warns of a slow run (docs/guide.md, *Slow runs*): past ``factor``
    times the usual work units per node of its effort (:mod:`dansched.simulate.work`).
    ``usual_default`` sits above the shipped instances' on the default hardware (conv_s2
    7,000 per node, matmul_s2 5,200); ``usual_fast`` and ``usual_max`` are estimated from it."""

    __repr__ = one_line_repr

    factor: float = 3.0
    usual_fast: int = 1_000
    usual_default: int = 8_000
    usual_max: int = 16_000

    def __post_init__(self) -> None:
        _check_positive(self, "factor")
        for name in ("usual_fast", "usual_default", "usual_max"):
            _check_positive(self, name)

    def usual(self, effort: str) -> int | None:
        """The usual work units per node at ``effort`` (None for another name)."""
        return {"fast": self.usual_fast, "default": self.usual_default, "max": self.usual_max}.get(effort)


@dataclass(frozen=True)
class ProgressParams:
    """How progress is shown: the interval of the plain heartbeat lines (not a terminal)
    and how often the live line is redrawn (a terminal)."""

    __repr__ = one_line_repr

    heartbeat_seconds: float = 5.0
    refresh_per_second: float = 4.0

    def __post_init__(self) -> None:
        _check_positive(self, "heartbeat_seconds")
        TIME_LIMIT.check(self.heartbeat_seconds, "ProgressParams.heartbeat_seconds")  # a timed wait
        _check_positive(self, "refresh_per_second")
