"""What a solve does: :class:`SolveOptions`, validated on construction."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..budget import exact_percent
from ..params import (
    DEFAULT_TRIALS,
    EFFORTS,
    SLACK_TRIALS,
    BoundParams,
    CpeParams,
    DlrParams,
    EffortParams,
    MemoryWindowParams,
    MpasParams,
    OrderSearchParams,
    SearchParams,
    TimedParams,
)
from ..stages.dlr.stage import VICTIMS
from ..stages.mpas.stage import VARIANTS

__all__ = ["SolveOptions", "PROBLEMS", "WINDOW_MODES"]

PROBLEMS = (1, 2, 3)
WINDOW_MODES = ("fixed", "memory")  # --exact-window-mode


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class SolveOptions:
    """What :func:`~dansched.pipeline.solve` does; ``ValueError`` (one line) for a value out
    of range. ``effort`` is a preset name of :data:`~dansched.params.EFFORTS` (``fast``,
    ``default``, ``max``) or an :class:`~dansched.params.EffortParams`.

    >>> SolveOptions(problem=7)
    Traceback (most recent call last):
    ...
    ValueError: SolveOptions.problem must be 1, 2 or 3, got 7
    >>> SolveOptions(effort="fast").effort_params.stage3_runs
    1
    """

    problem: int = 3
    variant: str = "mpas"  # Stage-1 variant: "mpas" (production) or "mpas-paper" (literal Algorithm 1)
    victim: str = "cost"  # Stage-2 victim rule: "cost" (Eqs. 27-31) or "lru"
    effort: str | EffortParams = "default"  # how much work (dansched.params.EFFORTS)
    exact_window: int = 0  # CP-SAT window width for Stage 3 (0: off)
    exact_window_mode: str = "fixed"  # "fixed": memory events keep their order; "memory": they may move too
    time_limit: float = 60.0  # wall-clock safety net, in seconds, of the optional exact parts
    seed: int = 0
    traffic_slack: float = 0.0  # percent of extra traffic problem 3 may trade for makespan
    mpas: MpasParams = field(default_factory=MpasParams)
    dlr: DlrParams = field(default_factory=DlrParams)
    cpe: CpeParams = field(default_factory=CpeParams)
    bounds: BoundParams = field(default_factory=BoundParams)
    # the Stage-2 order search (None: off)
    order_search: OrderSearchParams | None = field(default_factory=OrderSearchParams)
    # the parameter sets of problem 3's time-driven candidate source
    timed_trials: tuple[TimedParams, ...] = DEFAULT_TRIALS + SLACK_TRIALS
    # the memory-aware exact windows (--exact-window-mode memory)
    memory_windows: MemoryWindowParams = field(default_factory=MemoryWindowParams)
    # the makespan search's moves and operator selection (its rounds and work: the effort)
    search: SearchParams = field(default_factory=SearchParams)

    def __post_init__(self) -> None:
        if isinstance(self.problem, bool) or self.problem not in PROBLEMS:
            raise ValueError(f"SolveOptions.problem must be 1, 2 or 3, got {self.problem!r}")
        if self.variant not in VARIANTS:
            raise ValueError(f"SolveOptions.variant must be one of {', '.join(VARIANTS)}, got {self.variant!r}")
        if self.victim not in VICTIMS:
            raise ValueError(f"SolveOptions.victim must be one of {', '.join(VICTIMS)}, got {self.victim!r}")
        if not isinstance(self.effort, EffortParams) and self.effort not in EFFORTS:
            raise ValueError(
                f"SolveOptions.effort must be one of {', '.join(EFFORTS)} or an EffortParams, got {self.effort!r}"
            )
        if not _is_int(self.exact_window) or self.exact_window < 0:
            raise ValueError(f"SolveOptions.exact_window must be an integer >= 0, got {self.exact_window!r}")
        value = self.time_limit
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 <= value < float("inf")):
            raise ValueError(f"SolveOptions.time_limit must be a finite number >= 0, got {value!r}")
        try:
            exact_percent(self.traffic_slack)
        except ValueError:
            raise ValueError(
                f"SolveOptions.traffic_slack must be a finite number >= 0, got {self.traffic_slack!r}"
            ) from None
        if not _is_int(self.seed):
            raise ValueError(f"SolveOptions.seed must be an integer, got {self.seed!r}")
        for name, kind in (
            ("mpas", MpasParams),
            ("dlr", DlrParams),
            ("cpe", CpeParams),
            ("bounds", BoundParams),
            ("memory_windows", MemoryWindowParams),
            ("search", SearchParams),
        ):
            if not isinstance(getattr(self, name), kind):
                raise ValueError(f"SolveOptions.{name} must be a {kind.__name__}, got {getattr(self, name)!r}")
        if self.exact_window_mode not in WINDOW_MODES:
            raise ValueError(
                f"SolveOptions.exact_window_mode must be one of {', '.join(WINDOW_MODES)}, got {self.exact_window_mode!r}"
            )
        trials = self.timed_trials
        if not isinstance(trials, tuple) or not all(isinstance(t, TimedParams) for t in trials):
            raise ValueError(f"SolveOptions.timed_trials must be a tuple of TimedParams, got {trials!r}")
        if self.order_search is not None and not isinstance(self.order_search, OrderSearchParams):
            raise ValueError(
                f"SolveOptions.order_search must be an OrderSearchParams or None, got {self.order_search!r}"
            )

    @property
    def effort_params(self) -> EffortParams:
        """The budgets of ``effort``."""
        return self.effort if isinstance(self.effort, EffortParams) else EFFORTS[self.effort]

    @property
    def effort_name(self) -> str:
        """``effort``'s preset name, or ``custom`` for an :class:`~dansched.params.EffortParams`."""
        return "custom" if isinstance(self.effort, EffortParams) else self.effort
