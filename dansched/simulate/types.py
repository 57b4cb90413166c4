"""The evaluator's types (docs/rules.md, sections 3-8): a broken rule (:class:`Violation`), the
augmented DAG (:class:`AugmentedGraph`), a residency segment (:class:`Segment`) and the
residency walk's record of them (:class:`Residency`), the timing (:class:`Timing`), the
metrics (:class:`LayoutMetrics`) and the verdict (:class:`Evaluation`); the numbering of
spill nodes (:func:`spill_node_ids`, :func:`spill_of_node`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from ..checks import check_type
from ..instance import KIND_OP, Instance
from ..kernels.csr import lists_of, transposed
from ..reprs import one_line_repr

__all__ = [
    "UNKNOWN_NODE",
    "CAUSES",
    "Violation",
    "AugmentedGraph",
    "Segment",
    "Residency",
    "LayoutMetrics",
    "Timing",
    "Evaluation",
    "TIMING_BREAKERS",
    "INVALID_FIGURES",
    "spill_node_ids",
    "spill_of_node",
    "memory_event_ids",
]

UNKNOWN_NODE = "unknown-node"  # the violation kind of a schedule entry the instance has no node for

# the cause each kind of violation belongs to, in the order they explain one another: an order
# that breaks an edge or misses a node leaves buffers not resident where they are used, and a
# buffer where it should not be overlaps another; so the order's violations come first
CAUSES: dict[str, tuple[str, ...]] = {
    "order": (UNKNOWN_NODE, "duplicate-node", "missing-node", "not-topological"),
    "residency": ("lifetime", "not-resident", "bad-spill", "l0-single-residency"),
    "addresses": ("bad-offset", "capacity", "overlap"),
}
_CAUSE_RANK = {kind: rank for rank, kinds in enumerate(CAUSES.values()) for kind in kinds}


@dataclass(frozen=True)
class Violation:
    """One broken rule: a short machine-readable ``kind``, a message naming the
    nodes/buffers, and the schedule position where it was found (if any). Violations are
    listed cause first (:attr:`cause_key`: the order, then residency, then addresses; by
    position within each)."""

    kind: str
    message: str
    position: int | None = None

    @property
    def cause(self) -> str:
        """The cause the kind belongs to (:data:`CAUSES`): ``order``, ``residency`` or ``addresses``."""
        return next((c for c, kinds in CAUSES.items() if self.kind in kinds), "other")

    @property
    def cause_key(self) -> tuple[int, bool, int]:
        """Where the violation is listed: its cause's rank, then its position (none last)."""
        return (_CAUSE_RANK.get(self.kind, len(CAUSES)), self.position is None, self.position or 0)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "position": self.position}


@dataclass(eq=False)
class AugmentedGraph:
    """The instance plus spill nodes, with spill and address-reuse edges (docs/rules.md, sections 5.4 and 6.2).

    Node ids ``0..N-1`` are the instance's; spill ``k`` (0-based here) adds
    ``N+2k`` (SPILL_OUT) and ``N+2k+1`` (SPILL_IN).

    The fields are int64 arrays (what the kernels read); the Python-list views (``pipe``,
    ``cycles``, ``preds``, ``spill_edges``, ``reuse_edges``, ``memory_events``) are built on
    first use and kept, so a caller that reads only metrics and times never pays for them.
    Treat both as read-only."""

    __repr__ = one_line_repr

    n_orig: int
    pipe_array: np.ndarray  # -1 for cache nodes
    cycles_array: np.ndarray
    pred_ptr: np.ndarray  # CSR: node v's predecessors are pred_idx[pred_ptr[v]:pred_ptr[v + 1]]
    pred_idx: np.ndarray  # original + spill + reuse edges; each list ascending, no repeats
    spill_edge_array: np.ndarray  # (E, 2): source, target; in the order the rules add them
    reuse_edge_array: np.ndarray  # (E, 2), in the order the residency walk finds them
    memory_event_array: np.ndarray  # ALLOC, FREE, SPILL_OUT, SPILL_IN ids, ascending
    spill_buf: list[int]  # buffer index of each spill

    @property
    def n(self) -> int:
        return len(self.pipe_array)

    @cached_property
    def pipe(self) -> list[int]:
        return self.pipe_array.tolist()  # type: ignore[no-any-return]

    @cached_property
    def cycles(self) -> list[int]:
        return self.cycles_array.tolist()  # type: ignore[no-any-return]

    @cached_property
    def preds(self) -> list[list[int]]:
        return lists_of(self.pred_ptr, self.pred_idx)

    @cached_property
    def spill_edges(self) -> list[tuple[int, int]]:
        return _edge_list(self.spill_edge_array)

    @cached_property
    def reuse_edges(self) -> list[tuple[int, int]]:
        return _edge_list(self.reuse_edge_array)

    @cached_property
    def memory_events(self) -> frozenset[int]:
        return frozenset(self.memory_event_array.tolist())

    @cached_property
    def succ_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR successor lists (each ascending): the reversed graph, for the kernels."""
        return transposed(self.pred_ptr, self.pred_idx)

    def succs(self) -> list[list[int]]:
        """Each node's successors, ascending (a new list each call)."""
        return lists_of(*self.succ_csr)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AugmentedGraph):
            return NotImplemented
        arrays = ("pipe_array", "cycles_array", "pred_ptr", "pred_idx", "spill_edge_array", "reuse_edge_array")
        return (
            self.n_orig == other.n_orig
            and self.spill_buf == other.spill_buf
            and all(np.array_equal(getattr(self, a), getattr(other, a)) for a in arrays)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


def _edge_list(edges: np.ndarray) -> list[tuple[int, int]]:
    """``(E, 2)`` edges as a list of ``(source, target)`` tuples."""
    return list(zip(edges[:, 0].tolist(), edges[:, 1].tolist()))


@dataclass(frozen=True)
class Segment:
    """One residency segment (docs/rules.md, residency): buffer ``buf`` (index) of tier
    ``tier`` at ``[offset, offset + size)``, from the event at schedule position ``start``
    (node ``start_node``: its ALLOC or a SPILL_IN) to the one at ``end`` (``end_node``: a
    SPILL_OUT or its FREE). ``spill`` is the 0-based index of the spill whose SPILL_IN
    starts it, ``-1`` for the ALLOC segment. The one segment type of dansched: the
    evaluator's residency walk (:meth:`Evaluation.segments`), Stage 2's scan and the
    problem-3 search all speak it."""

    buf: int
    tier: int
    size: int
    offset: int
    start: int
    end: int
    start_node: int
    end_node: int
    spill: int

    def meets(self, lo: int, hi: int) -> bool:
        """Resident at some position from ``lo`` to ``hi`` (both included)."""
        return self.start <= hi and lo <= self.end

    def shares_addresses(self, other: Segment) -> bool:
        """Same tier, address ranges that meet."""
        return (
            self.tier == other.tier
            and self.offset < other.offset + other.size
            and other.offset < self.offset + self.size
        )

    def at(self, offset: int) -> Segment:
        """This segment at another offset."""
        return replace(self, offset=offset)


@dataclass(frozen=True)
class Residency:
    """The residency segments of a judged plan as the evaluator's walk met them: the
    schedule positions where each segment starts and ends (in the order the segments
    ended), with what the walk read (the order, each buffer's ALLOC offset, the spill
    list as buffer indices and NewOffsets, and the instance's buffer tiers and sizes).
    :meth:`segments` turns them into :class:`Segment` rows, in the order their starting
    events run."""

    __repr__ = one_line_repr

    order: Sequence[int]
    starts: list[int]
    ends: list[int]
    offset: Sequence[int]
    spill_buf: Sequence[int]
    spill_off: Sequence[int]
    tiers: Sequence[int]
    sizes: Sequence[int]
    n: int
    node_buf: Sequence[int]

    def segments(self) -> list[Segment]:
        order, n = self.order, self.n
        rows = sorted(zip(self.starts, self.ends))
        out: list[Segment] = []
        for i, j in rows:
            v = order[i]
            if v < n:
                b, k, off = self.node_buf[v], -1, self.offset[self.node_buf[v]]
            else:
                k = spill_of_node(n, v)[0]
                b, off = self.spill_buf[k], self.spill_off[k]
            out.append(Segment(b, self.tiers[b], self.sizes[b], off, i, j, v, order[j], k))
        return out


class LayoutMetrics(NamedTuple):
    """The metrics of a full plan (problems 2 and 3), typed: :attr:`Evaluation.metrics`."""

    extra_traffic: int
    spill_count: int
    makespan: int
    physical_peak: int
    max_v_stay: int


@dataclass(frozen=True)
class Timing:
    """The timing of a full plan judged with its detail: the augmented DAG, every node's
    start and end, and the makespan (:attr:`Evaluation.timing`)."""

    __repr__ = one_line_repr

    graph: AugmentedGraph
    start: list[int]
    end: list[int]
    makespan: int


# the violations after which a plan has no timing (docs/rules.md, section 7): a schedule that is
# not a permutation of the plan's nodes, or an order that runs a node before one it depends on
TIMING_BREAKERS = frozenset({UNKNOWN_NODE, "duplicate-node", "missing-node", "not-topological"})

INVALID_FIGURES = "(invalid plan)"  # the label of the figures of an invalid plan, wherever they are shown


@dataclass
class Evaluation:
    """What the evaluator found: validity, violations, metrics and per-node timing.

    The figures of an invalid plan are those its files still define, and no more: the
    makespan (and every node's start and end) only when the plan has a timing
    (:attr:`timing_defined`), ``max_v_stay`` only when the schedule is a permutation, the
    physical peak only when the residency walk could run, the traffic and spill count only
    when every spill names a buffer; None otherwise. A figure of an invalid plan is not the
    figure of a plan that may run: show it with :data:`INVALID_FIGURES` (:attr:`figures_label`)."""

    problem: int
    valid: bool
    errors: list[Violation]
    error_counts: dict[str, int]
    max_v_stay: int | None
    physical_peak: int | None = None
    extra_traffic: int | None = None
    spill_count: int | None = None
    makespan: int | None = None
    start: list[int] | None = None
    end: list[int] | None = None
    graph: AugmentedGraph | None = field(default=None, repr=False)
    residency: Residency | None = field(default=None, repr=False)
    _segments: list[Segment] | None = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        """One line with the verdict and the key figures (never the per-node arrays)."""
        return f"Evaluation(problem {self.problem}, {self.figures_text})"

    @property
    def figures_text(self) -> str:
        """The verdict and the key figures as text: ``valid, max_v_stay=10, ...``."""
        verdict = "valid" if self.valid else f"invalid, {self.error_count} violation(s)"
        figures: list[tuple[str, int | None]] = [("max_v_stay", self.max_v_stay)]
        if self.problem != 1:
            figures += [
                ("extra_traffic", self.extra_traffic),
                ("spill_count", self.spill_count),
                ("makespan", self.makespan),
                ("physical_peak", self.physical_peak),
            ]
        return ", ".join([verdict, *(f"{k}={v}" for k, v in figures)])

    @property
    def error_count(self) -> int:
        return sum(self.error_counts.values())

    @property
    def timing_defined(self) -> bool:
        """Whether the plan has a timing: a full plan whose schedule is a permutation of its
        nodes (spill nodes included), with a layout the residency walk can read, that runs
        every node after those it depends on (the augmented DAG's edges, docs/rules.md,
        section 7). A problem-1 order has none; nor has a plan with a violation of
        :data:`TIMING_BREAKERS` or plan files that name an unknown buffer or leave one without
        an offset. Where it is False, ``makespan`` (and each node's start and end) is None."""
        return self.problem != 1 and self.makespan is not None

    @property
    def figures_label(self) -> str:
        """What to print beside the plan's figures: ``""`` for a valid plan,
        :data:`INVALID_FIGURES` for an invalid one."""
        return "" if self.valid else INVALID_FIGURES

    @property
    def timing(self) -> Timing | None:
        """The plan's :class:`Timing`; None for a problem-1 order, a plan without a timing
        (:attr:`timing_defined`), or an evaluation whose detail was dropped (:meth:`drop_detail`)."""
        if self.graph is None or self.start is None or self.end is None or self.makespan is None:
            return None
        return Timing(self.graph, self.start, self.end, self.makespan)

    @property
    def metrics(self) -> LayoutMetrics:
        """The metrics of a full plan (:class:`LayoutMetrics`); raises ``ValueError`` for an
        evaluation without every one of them (a problem-1 order, a plan without a timing)."""
        t, c, m, p, v = self.extra_traffic, self.spill_count, self.makespan, self.physical_peak, self.max_v_stay
        if t is None or c is None or m is None or p is None or v is None:
            raise ValueError("no layout metrics: a problem-1 order or a plan without a timing (timing_defined)")
        return LayoutMetrics(t, c, m, p, v)

    def segments(self) -> list[Segment]:
        """Every residency segment of a full plan judged with its detail, in the order their
        starting events run (computed once); raises ``ValueError`` without that detail."""
        if self._segments is None:
            if self.residency is None:
                raise ValueError("no residency: a problem-1 order or an evaluation whose detail was dropped")
            self._segments = self.residency.segments()
        return self._segments

    def first_violation(self, default: str = "unknown violation") -> str:
        """The message of the first violation found (``default`` when none is recorded):
        the one place every "first: ..." error line takes it from."""
        check_type(default, str, "Evaluation.first_violation: default")
        return self.errors[0].message if self.errors else default

    def drop_detail(self) -> None:
        """Forget the per-node timing and the augmented graph, keeping the verdict and the
        metrics (what a report needs): on a million-node plan they are most of its memory."""
        self.start = self.end = self.graph = None
        self.residency = self._segments = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "valid": self.valid,
            "problem": self.problem,
            "error_count": self.error_count,
            "error_counts": dict(sorted(self.error_counts.items())),
            "errors": [e.to_dict() for e in self.errors],
            "max_v_stay": self.max_v_stay,
        }
        if self.problem != 1:
            out.update(
                timing_defined=self.timing_defined,
                physical_peak=self.physical_peak,
                extra_traffic=self.extra_traffic,
                spill_count=self.spill_count,
                makespan=self.makespan,
            )
        return out


def spill_node_ids(n: int, index: int) -> tuple[int, int]:
    """Node ids of the spill at ``index`` (0-based, in spill-file order) of an instance of
    ``n`` nodes: spill ``k = index + 1`` is SPILL_OUT ``N+2(k-1)`` and SPILL_IN ``N+2(k-1)+1``
    (docs/rules.md, section 5.1). The one home of this rule, with :func:`spill_of_node`.

    >>> spill_node_ids(10, 0), spill_node_ids(10, 1)
    ((10, 11), (12, 13))
    """
    return n + 2 * index, n + 2 * index + 1


def spill_of_node(n: int, v: int) -> tuple[int, bool]:
    """The spill a spill node ``v >= n`` belongs to: its 0-based index and whether ``v`` is
    its SPILL_OUT (else its SPILL_IN); the inverse of :func:`spill_node_ids`.

    >>> spill_of_node(10, 12), spill_of_node(10, 13)
    ((1, True), (1, False))
    """
    return (v - n) // 2, (v - n) % 2 == 0


def memory_event_ids(inst: Instance, spills: int) -> np.ndarray:
    """ALLOC, FREE, SPILL_OUT and SPILL_IN ids, ascending."""
    cache = np.flatnonzero(inst.kind != KIND_OP).astype(np.int64)
    return np.concatenate((cache, np.arange(inst.n, inst.n + 2 * spills, dtype=np.int64)))
