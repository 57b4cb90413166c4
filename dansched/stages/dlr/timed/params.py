"""Knobs of the time-driven Stage-2 scheduler and the parameter sets problem 3 tries."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TimedParams", "DEFAULT_TRIALS", "SLACK_TRIALS", "PRIORITIES"]

PRIORITIES = ("tail", "rank")  # h(v) of Eq. 20, or the reference order's rank


@dataclass(frozen=True)
class TimedParams:
    """Knobs of :func:`~dansched.stages.dlr.timed.timed_schedule` (deterministic defaults).

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
      its own (otherwise only the frontier operation evicts)."""

    window: int = 64
    compute_window: int = 4
    feed_window: int = 4
    fill: float = 1.0
    victim_tolerance: float = 0.0
    priority: str = "tail"
    reserve_ops: int = 2
    lookahead_evict: bool = False
    victim_horizon: int = 0

    def __post_init__(self) -> None:
        if self.priority not in PRIORITIES:
            raise ValueError(f"TimedParams.priority must be one of {PRIORITIES}, got {self.priority!r}")
        if not isinstance(self.window, int) or self.window < 0:
            raise ValueError(f"TimedParams.window must be a non-negative integer, got {self.window!r}")
        if not 0.0 < self.fill <= 1.0:
            raise ValueError(f"TimedParams.fill must lie in (0, 1], got {self.fill!r}")
        if not isinstance(self.compute_window, int) or self.compute_window < 0:
            raise ValueError(f"TimedParams.compute_window must be a non-negative integer, got {self.compute_window!r}")
        if not isinstance(self.victim_horizon, int) or self.victim_horizon < 0:
            raise ValueError(f"TimedParams.victim_horizon must be a non-negative integer, got {self.victim_horizon!r}")
        if not isinstance(self.feed_window, int) or self.feed_window < 0:
            raise ValueError(f"TimedParams.feed_window must be a non-negative integer, got {self.feed_window!r}")
        if not isinstance(self.reserve_ops, int) or self.reserve_ops < 0:
            raise ValueError(f"TimedParams.reserve_ops must be a non-negative integer, got {self.reserve_ops!r}")
        if not self.victim_tolerance >= 0.0:
            raise ValueError(f"TimedParams.victim_tolerance must be >= 0, got {self.victim_tolerance!r}")

    @property
    def name(self) -> str:
        return (
            f"timed(w={self.window},cw={self.compute_window},fw={self.feed_window},fill={self.fill:g},reserve={self.reserve_ops},"
            f"tol={self.victim_tolerance:g},{self.priority}"
            + (f",horizon={self.victim_horizon}" if self.victim_horizon else "")
            + (",evict-ahead" if self.lookahead_evict else "")
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
)
