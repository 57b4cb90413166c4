"""What Stage 2 reports, typed: DLR's winning combination (:class:`DlrStats`) and what each
method of the order search did (:class:`OrderSearchStats`: :class:`WaveStats`,
:class:`ExactStats`, :class:`LnsStats`). The report (``dansched.pipeline.report``) reads
these; ``to_dict`` gives the keys of docs/report.md, ``stages.dlr``."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ...reprs import one_line_repr

__all__ = ["WaveStats", "ExactStats", "LnsStats", "OrderSearchStats", "DlrStats"]


@dataclass(frozen=True)
class WaveStats:
    """The wave search's best sweep: its traffic, the sweep's name, the grid (rows, columns,
    reduction depth), the band width, how many sweeps were ranked and replayed by the scan,
    the seconds, and whether the wall-clock safety net cut the replays short."""

    __repr__ = one_line_repr

    traffic: int
    sweep: str
    grid: tuple[int, int, int]
    width: int
    sweeps: int
    replayed: int
    seconds: float = 0.0
    stopped_by_clock: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "traffic": self.traffic,
            "seconds": round(self.seconds, 3),
            "sweep": self.sweep,
            "grid": list(self.grid),
            "width": self.width,
            "sweeps": self.sweeps,
            "replayed": self.replayed,
        }
        if self.stopped_by_clock:
            out["stopped_by_clock"] = True
        return out


@dataclass(frozen=True)
class ExactStats:
    """The exact joint model of the order search: CP-SAT's status, the traffic of its plan,
    its proven bound, the seconds and deterministic time spent; or the ``error`` that kept
    it from running (the model too large, no legal order)."""

    __repr__ = one_line_repr

    status: str = ""
    traffic: int | None = None
    bound: int = 0
    seconds: float = 0.0
    deterministic_time: float | None = None
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        if self.error:
            return {"error": self.error}
        return {
            "status": self.status,
            "traffic": self.traffic,
            "bound": self.bound,
            "seconds": round(self.seconds, 3),
            "deterministic_time": self.deterministic_time,
        }


@dataclass(frozen=True)
class LnsStats:
    """The exact order windows: windows solved, those that improved the plan and those the
    evaluator rejected, CP-SAT's deterministic time in all, the traffic before and after,
    the seconds, which budget stopped them (``stopped``: empty when they ran out of
    windows), or why they did not run (``skipped``)."""

    __repr__ = one_line_repr

    windows: int = 0
    improved: int = 0
    deterministic_time: float = 0.0
    rejected: int = 0
    traffic_before: int | None = None
    traffic: int | None = None
    seconds: float = 0.0
    stopped: str = ""
    skipped: str = ""

    def to_dict(self) -> dict[str, Any]:
        if self.skipped:
            return {"skipped": self.skipped}
        out: dict[str, Any] = {
            "windows": self.windows,
            "improved": self.improved,
            "deterministic_time": round(self.deterministic_time, 3),
            "rejected": self.rejected,
            "traffic_before": self.traffic_before,
            "traffic": self.traffic,
            "seconds": round(self.seconds, 3),
        }
        if self.stopped:
            out["stopped"] = self.stopped
        return out


@dataclass(frozen=True)
class OrderSearchStats:
    """What each method of the order search did (``None``: it did not run)."""

    __repr__ = one_line_repr

    wave: WaveStats | None = None
    exact: ExactStats | None = None
    lns: LnsStats | None = None

    def to_dict(self) -> dict[str, Any]:
        return {name: part.to_dict() for name in ("wave", "exact", "lns") if (part := getattr(self, name)) is not None}


@dataclass(frozen=True)
class DlrStats:
    """Stage 2's plan: the (order, placement, victim rule) combination that made it, each
    order's best traffic, how many combinations were scanned; after the order search, the
    method that found the plan (``found_by``: ``dlr``, ``wave``, ``exact`` or ``lns``),
    whether it is proven optimal, the proven bound where known and what each method did."""

    __repr__ = one_line_repr

    order: str
    placement: str
    victim_rule: str
    order_traffic: dict[str, int] = field(default_factory=dict)
    combinations: int = 0
    found_by: str = "dlr"
    proven_optimal: bool = False
    bound: int | None = None
    order_search: OrderSearchStats | None = None

    @property
    def combination(self) -> str:
        """``order/placement/victim rule``."""
        return f"{self.order}/{self.placement}/{self.victim_rule}"

    def searched(
        self, found_by: str, proven_optimal: bool, bound: int | None, order_search: OrderSearchStats
    ) -> DlrStats:
        """These figures once the order search ran."""
        return replace(self, found_by=found_by, proven_optimal=proven_optimal, bound=bound, order_search=order_search)
