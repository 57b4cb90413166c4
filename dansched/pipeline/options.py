"""What a solve does: :class:`SolveOptions`, validated on construction, and the presets of
``--effort`` (:data:`EFFORTS`), each a function that returns complete options.

>>> effort_options("fast").effort.stage3_runs
1
>>> effort_options("fast", seed=3).seed
3
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from dataclasses import fields as dataclass_fields
from typing import Any, Protocol, TypedDict, Unpack

from ..checks import EXACT_WINDOW, PROBLEM, SEED, TIME_LIMIT, TRAFFIC_SLACK, check_choice, check_type
from ..errors import ArgumentError
from ..params import (
    DEFAULT_TRIALS,
    SLACK_TRIALS,
    BoundParams,
    CpeParams,
    DlrParams,
    EffortParams,
    GapParams,
    MemoryWindowParams,
    MpasParams,
    OrderSearchParams,
    Problem3Params,
    SearchParams,
    Stage3Params,
    TimedParams,
)
from ..reprs import one_line_repr
from ..stages.dlr.stage import VICTIMS
from ..stages.dlr.victim import is_victim_rule
from ..stages.mpas.stage import VARIANTS
from .problem3.search.moves import SEGMENT_MOVES
from .problem3.sources.candidates import SOURCES

SEGMENT_MOVE_NAMES = tuple(m.name for m in SEGMENT_MOVES)  # the moves the gap-hiding walk may try

__all__ = [
    "SolveOptions",
    "OptionFields",
    "PROBLEMS",
    "WINDOW_MODES",
    "EFFORTS",
    "Preset",
    "effort_options",
    "RIVALS",
    "Rival",
    "rival_options",
    "every_run_windows",
]

PROBLEMS = (1, 2, 3)
WINDOW_MODES = ("fixed", "memory")  # --exact-window-mode
FINE_SEGMENT_STEPS = 81  # segment lengths the segment traffic bound tries at --effort max (BoundParams.segment_steps)


@dataclass(frozen=True)
class SolveOptions:
    """What :func:`~dansched.pipeline.run_pipeline` does;
    :class:`~dansched.errors.ArgumentError` (a ``ValueError``, one line) for a value out of
    range (the ranges of :mod:`dansched.checks`: ``seed`` 0 to 2**31 - 1, ``time_limit`` 0
    to 10**6 seconds, ``traffic_slack`` finite, ``exact_window`` 0 to 1024). The defaults are the ``default`` preset's; :func:`effort_options` gives the
    complete options of any preset of :data:`EFFORTS` (``effort_name`` is its name in the
    report, ``custom`` for options assembled by hand).

    >>> SolveOptions(problem=7)
    Traceback (most recent call last):
    ...
    dansched.errors.ArgumentError: SolveOptions.problem must be 1, 2 or 3, got 7
    """

    __repr__ = one_line_repr

    problem: int = 3
    variant: str = "mpas"  # Stage-1 variant: "mpas" (production) or "mpas-paper" (literal Algorithm 1)
    victim: str = "cost"  # Stage-2 victim choice: "cost" (the cost-aware rules, Eqs. 27-31) or "lru"
    effort: EffortParams = field(default_factory=EffortParams)  # how much work Stages 1-3 do
    effort_name: str = "default"  # the preset these options came from (the report's "effort")
    exact_window: int = 0  # CP-SAT window width of Stage 3's fixed-memory windows (0: off)
    time_limit: float = 60.0  # wall-clock safety net, in seconds, of the optional exact parts
    # the whole solve's wall clock, in seconds: past it the solve stops with its best plan so far
    # (dansched.solve reads it: docs/guide.md, Stopping early); None: no limit, the budgets alone decide
    stop_after: float | None = None
    seed: int = 0
    traffic_slack: float = 0.0  # percent of extra traffic problem 3 may trade for makespan
    frontier: bool = False  # also plan the traffic-makespan frontier, up to effort.frontier_slack
    mpas: MpasParams = field(default_factory=MpasParams)
    dlr: DlrParams = field(default_factory=DlrParams)
    cpe: CpeParams = field(default_factory=CpeParams)
    bounds: BoundParams = field(default_factory=BoundParams)  # the report's lower bounds
    # the Stage-2 order search (None: off)
    order_search: OrderSearchParams | None = field(default_factory=OrderSearchParams)
    # the parameter sets of problem 3's time-driven candidate source
    timed_trials: tuple[TimedParams, ...] = DEFAULT_TRIALS + SLACK_TRIALS
    # problem 3's memory-aware CP-SAT windows (the polish, or after every Stage-3 run)
    polish: MemoryWindowParams = field(default_factory=MemoryWindowParams)
    # the makespan search, one SearchParams per round (each ends in a Stage-3 run)
    search: tuple[SearchParams, ...] = (SearchParams(),)
    # problem 3's gap-hiding walk: the frontier's steps above the problem-2 plan's traffic
    gaps: GapParams = field(default_factory=GapParams)

    def __post_init__(self) -> None:
        if not PROBLEM.accepts(self.problem):
            raise ArgumentError(f"SolveOptions.problem must be 1, 2 or 3, got {self.problem!r}")
        check_choice(self.variant, VARIANTS, "SolveOptions.variant")
        check_choice(self.victim, VICTIMS, "SolveOptions.victim")
        if isinstance(self.effort, str):
            raise ArgumentError(
                f"SolveOptions.effort must be an EffortParams; for the preset {self.effort!r} "
                f"use effort_options({self.effort!r}, ...)"
            )
        for name, accepted in (
            ("problem", PROBLEM),
            ("exact_window", EXACT_WINDOW),
            ("time_limit", TIME_LIMIT),
            ("traffic_slack", TRAFFIC_SLACK),
            ("seed", SEED),
        ):  # kept as Python numbers (a numpy one converted)
            object.__setattr__(self, name, accepted.check(getattr(self, name), f"SolveOptions.{name}"))
        if self.stop_after is not None:
            object.__setattr__(self, "stop_after", TIME_LIMIT.check(self.stop_after, "SolveOptions.stop_after"))
        if not isinstance(self.frontier, bool):
            raise ArgumentError(f"SolveOptions.frontier must be True or False, got {self.frontier!r}")
        if self.frontier and self.problem != 3:
            raise ArgumentError(
                f"SolveOptions.frontier plans problem 3's traffic-makespan frontier; it does not apply to "
                f"problem {self.problem}"
            )
        for name, kind in (
            ("effort", EffortParams),
            ("mpas", MpasParams),
            ("dlr", DlrParams),
            ("cpe", CpeParams),
            ("bounds", BoundParams),
            ("polish", MemoryWindowParams),
            ("gaps", GapParams),
        ):
            check_type(getattr(self, name), kind, f"SolveOptions.{name}")
        if not isinstance(self.effort_name, str):
            raise ArgumentError(f"SolveOptions.effort_name must be a name, got {self.effort_name!r}")
        unknown = [s for s in self.effort.sources or () if s not in SOURCES]
        if unknown:
            raise ArgumentError(
                f"SolveOptions.effort.sources: unknown source {unknown[0]!r}; choose from {', '.join(SOURCES)}"
            )
        unknown = [r for r in self.effort.rivals if r not in RIVALS]
        if unknown:
            raise ArgumentError(
                f"SolveOptions.effort.rivals: unknown rival {unknown[0]!r}; choose from {', '.join(RIVALS)}"
            )
        rounds = self.search
        if not isinstance(rounds, tuple) or not all(isinstance(r, SearchParams) for r in rounds):
            raise ArgumentError(f"SolveOptions.search must be a tuple of SearchParams (one per round), got {rounds!r}")
        if len(rounds) >= self.effort.stage3_runs:
            raise ArgumentError(
                f"SolveOptions.effort.stage3_runs ({self.effort.stage3_runs}) must exceed the search rounds "
                f"({len(rounds)}): each round ends in a Stage-3 run and the problem-2 plan needs one"
            )
        trials = self.timed_trials
        if not isinstance(trials, tuple) or not all(isinstance(t, TimedParams) for t in trials):
            raise ArgumentError(f"SolveOptions.timed_trials must be a tuple of TimedParams, got {trials!r}")
        if self.order_search is not None and not isinstance(self.order_search, OrderSearchParams):
            raise ArgumentError(
                f"SolveOptions.order_search must be an OrderSearchParams or None, got {self.order_search!r}"
            )
        unknown = [m for m in self.gaps.moves if m not in SEGMENT_MOVE_NAMES]
        if unknown:
            raise ArgumentError(
                f"SolveOptions.gaps.moves: unknown move {unknown[0]!r}; choose from {', '.join(SEGMENT_MOVE_NAMES)}"
            )
        rules = [(f"search[{i}].victim", r.victim) for i, r in enumerate(rounds)]
        rules += [(f"timed_trials[{i}].victim", t.victim) for i, t in enumerate(self.timed_trials)]
        for what, rule in rules:
            if not is_victim_rule(rule) or "min-reload" in rule:
                raise ArgumentError(
                    f"SolveOptions.{what}: {rule!r} is not a victim rule that reads no look-ahead (e.g. score, lru, ahead-lru)"
                )

    def to_dict(self) -> dict[str, Any]:
        """Every option as JSON-ready data (the nested parameters as objects, tuples as lists)."""
        return asdict(self)

    @property
    def sources(self) -> tuple[str, ...]:
        """The candidate sources problem 3 runs, in the registry's order."""
        chosen = self.effort.sources
        return tuple(SOURCES) if chosen is None else tuple(s for s in SOURCES if s in chosen)

    @property
    def problem3(self) -> Problem3Params:
        """What problem 3 reads (:class:`~dansched.params.Problem3Params`), the one place
        that decides where the memory-aware windows of ``polish`` run: after every full
        Stage-3 run (``polish.after_every_run``, ``--exact-window-mode memory``), else on
        the kept plan after each search round; none with ``polish.windows == 0``."""
        windows = self.polish if self.polish.windows > 0 else None
        every_run = windows is not None and windows.after_every_run
        stage3 = Stage3Params(
            rounds=self.effort.stage3_rounds,
            cpe=self.cpe,
            exact_window=self.exact_window,
            time_limit=self.time_limit,
            seed=self.seed,
            memory_windows=windows if every_run else None,
        )
        return Problem3Params(
            traffic_slack=self.traffic_slack,
            effort=self.effort,
            sources=self.sources,
            stage3=stage3,
            search=self.search,
            polish=None if every_run else windows,
            seed=self.seed,
            frontier=self.frontier,
            mpas=self.mpas,
            dlr=self.dlr,
            variant=self.variant,
            victim=self.victim,
            timed_trials=self.timed_trials,
            gaps=self.gaps,
        )


class OptionFields(TypedDict, total=False):
    """The keyword arguments of :func:`effort_options` and the presets: fields of
    :class:`SolveOptions`, each with its type (those a preset sets, ``effort``, ``search``,
    ``bounds`` and ``polish``, replace the preset's)."""

    problem: int
    variant: str
    victim: str
    effort: EffortParams
    effort_name: str
    exact_window: int
    time_limit: float
    stop_after: float | None
    seed: int
    traffic_slack: float
    frontier: bool
    mpas: MpasParams
    dlr: DlrParams
    cpe: CpeParams
    bounds: BoundParams
    order_search: OrderSearchParams | None
    timed_trials: tuple[TimedParams, ...]
    polish: MemoryWindowParams
    search: tuple[SearchParams, ...]
    gaps: GapParams


def every_run_windows(width: int, time_limit: float) -> MemoryWindowParams:
    """The memory-aware windows of ``--exact-window-mode memory``: windows of ``width``
    operation nodes after every full Stage-3 run, half a window per second of
    ``time_limit`` (the limit their wall-clock safety net)."""
    return MemoryWindowParams(
        max(1, int(0.5 * time_limit)), width, after_every_run=True, wall_seconds=max(time_limit, 1e-3)
    )


RIVAL_WINDOW_WIDTH = 64  # operation nodes per memory-aware window of the memory-windows rival


@dataclass(frozen=True)
class Rival:
    """A variant of the solve whose finished plan problem 3 also considers
    (``EffortParams.rivals``): ``options`` turns the solve's options into the variant's, and
    ``shares_stage2`` says whether the variant's Stages 1 and 2 are the solve's own (then only
    its problem 3 runs again)."""

    options: Callable[[SolveOptions], SolveOptions]
    shares_stage2: bool


def _memory_windows(o: SolveOptions) -> SolveOptions:
    """The memory-aware windows after every Stage-3 run (``--exact-window 64
    --exact-window-mode memory``; the ``dan-memory-windows`` row of the benchmarks)."""
    return replace(o, exact_window=RIVAL_WINDOW_WIDTH, polish=every_run_windows(RIVAL_WINDOW_WIDTH, o.time_limit))


def _algorithm1(o: SolveOptions) -> SolveOptions:
    """The literal Algorithm 1 as Stage 1 (``--variant mpas-paper``; the ``mpas-paper`` row)."""
    return replace(o, variant="mpas-paper")


RIVALS: dict[str, Rival] = {  # by name, in the order they run
    "memory-windows": Rival(_memory_windows, shares_stage2=True),
    "algorithm-1": Rival(_algorithm1, shares_stage2=False),
}


def rival_options(opts: SolveOptions, name: str) -> SolveOptions:
    """The options of rival ``name`` of a solve with ``opts``: its variant, running no rival
    itself."""
    rival = RIVALS[name].options(opts)
    return replace(rival, effort=replace(rival.effort, rivals=()))


def _preset(
    name: str,
    effort: EffortParams,
    search: tuple[SearchParams, ...],
    polish_windows: int,
    bounds: BoundParams,
    exact_window_mode: str,
    given: OptionFields,
) -> SolveOptions:
    """The options of preset ``name`` with the fields ``given`` (:class:`OptionFields`)
    set. The memory-aware windows follow from the preset, ``exact_window``,
    ``exact_window_mode`` and ``time_limit``: with ``exact_window_mode="memory"`` and a
    window width, half a window per second of ``time_limit`` after every Stage-3 run (the
    limit their safety net); else ``polish_windows`` windows on the kept plan (ten times the
    limit their safety net)."""
    check_choice(exact_window_mode, WINDOW_MODES, "exact_window_mode")
    base = SolveOptions(**given)  # validates the fields given
    limit, width = float(base.time_limit), base.exact_window
    if exact_window_mode == "memory" and width > 0:
        polish = every_run_windows(width, limit)
    else:
        polish = MemoryWindowParams(polish_windows, wall_seconds=max(10 * limit, 1e-3))
    preset: OptionFields = {
        "effort": effort,
        "effort_name": name,
        "search": search,
        "bounds": bounds,
        "polish": polish,
    }
    return SolveOptions(**(preset | given))


def fast(exact_window_mode: str = "fixed", **fields: Unpack[OptionFields]) -> SolveOptions:
    """The paper's faster compile mode: MPAS, DLR and CPE once (the paper's placements, the
    wave search; CPE without its loads-fed-by-need list schedule, which costs time and does
    not pay on its own: ``benchmarks/results/bench_feed.md``), five polish windows, no
    makespan search, the linear-time report bounds, a short gap-hiding walk (with a traffic
    slack or the frontier)."""
    effort = EffortParams(
        sources=("dlr",),
        dlr_variants=0,
        stage3_runs=1,
        stage3_work=0,
        start_work=0,
        stage3_rounds=2,
        stage1_restarts=False,
        stage2_variants=False,
        rivals=(),
    )
    fields = {"cpe": CpeParams(feed_by_need=()), "gaps": GapParams(gaps=10, tries=1, work=1_500_000), **fields}
    return _preset("fast", effort, (), 5, BoundParams().linear(), exact_window_mode, fields)


def default(exact_window_mode: str = "fixed", **fields: Unpack[OptionFields]) -> SolveOptions:
    """Every candidate source, four Stage-3 runs, one makespan-search round, 30 polish
    windows, the report's bounds with their costly parts."""
    return _preset("default", EffortParams(), (SearchParams(),), 30, BoundParams(), exact_window_mode, fields)


def max_effort(exact_window_mode: str = "fixed", **fields: Unpack[OptionFields]) -> SolveOptions:
    """The default's work (the same finalists, its search round and polish), then a second,
    longer round from its best plan and a second polish: never slower than the default; the
    rivals on graphs up to 1,000 nodes (the default: 100); a gap-hiding walk four times the
    default's."""
    search = (SearchParams(), SearchParams(1000, 3_000_000, window_budget=40.0))
    bounds = BoundParams(segment_steps=FINE_SEGMENT_STEPS)  # the fine sweep of the segment traffic bound
    effort = EffortParams(stage3_runs=5, rival_work=2_000)  # the rivals up to 1,000 nodes
    fields = {"gaps": GapParams(tries=3, work=32_000_000), **fields}
    return _preset("max", effort, search, 30, bounds, exact_window_mode, fields)


class Preset(Protocol):
    """A preset of ``--effort``: complete options from ``exact_window_mode`` and the fields given."""

    def __call__(self, exact_window_mode: str = "fixed", **fields: Unpack[OptionFields]) -> SolveOptions: ...


EFFORTS: dict[str, Preset] = {"fast": fast, "default": default, "max": max_effort}


def effort_options(
    preset: str = "default", *, exact_window_mode: str = "fixed", **fields: Unpack[OptionFields]
) -> SolveOptions:
    """The complete options of the effort ``preset`` (a name of :data:`EFFORTS`), with
    ``fields`` set (:class:`OptionFields`: keyword arguments of :class:`SolveOptions`) and
    ``exact_window_mode`` (``fixed`` or ``memory``)."""
    check_choice(preset, EFFORTS, "effort")
    known = {f.name for f in dataclass_fields(SolveOptions)}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise ArgumentError(f"effort_options: {unknown[0]!r} is not a field of SolveOptions")
    return EFFORTS[preset](exact_window_mode, **fields)
