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

>>> from dansched.instance import load_instance  # doctest: +SKIP
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from ..checks import check_type
from ..errors import PlanInvalidError
from ..hardware import spill_traffic
from ..instance import KIND_ALLOC, KIND_FREE, KIND_OP, Instance, require_instance
from ..kernels import evaluate as fast
from ..kernels import timing
from ..kernels.csr import csr_of_lists, int64_array, lists_of, transposed
from ..plan import Plan

__all__ = [
    "UNKNOWN_NODE",
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
    "max_v_stay",
    "spill_node_ids",
    "spill_of_node",
    "spill_traffic",
    "MAX_REPORTED",
]

MAX_REPORTED = 20
UNKNOWN_NODE = "unknown-node"  # the violation kind of a schedule entry the instance has no node for
SPILL_OUT_OP, SPILL_IN_OP = "SPILL_OUT", "SPILL_IN"
INT64_ROOM = 2**63  # the fast path's figures (int64) must stay below this


@dataclass(frozen=True)
class Violation:
    """One broken rule: a short machine-readable ``kind``, a message naming the
    nodes/buffers, and the schedule position where it was found (if any)."""

    kind: str
    message: str
    position: int | None = None

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


def _edge_array(edges: Sequence[tuple[int, int]]) -> np.ndarray:
    return np.array(edges, dtype=np.int64).reshape(len(edges), 2)


def _exact_array(values: Sequence[int]) -> np.ndarray:
    """``values`` as int64, or as Python integers (dtype object) when one passes 64 bits: a
    plan you bring may spill so much that its cycles do (docs/rules.md, Supported ranges)."""
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        return np.array(values, dtype=object)


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
    """The metrics of a full plan (problems 2 and 3), typed: :meth:`Evaluation.metrics`."""

    extra_traffic: int
    spill_count: int
    makespan: int
    physical_peak: int


@dataclass(frozen=True)
class Timing:
    """The timing of a full plan judged with its detail: the augmented DAG, every node's
    start and end, and the makespan (:meth:`Evaluation.timing`)."""

    graph: AugmentedGraph
    start: list[int]
    end: list[int]
    makespan: int


@dataclass
class Evaluation:
    """What the evaluator found: validity, violations, metrics and per-node timing."""

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

    @property
    def error_count(self) -> int:
        return sum(self.error_counts.values())

    def timing(self) -> Timing | None:
        """The plan's :class:`Timing`; None for a problem-1 order, plan files that name unknown
        or duplicate nodes, or an evaluation whose detail was dropped (:meth:`drop_detail`)."""
        if self.graph is None or self.start is None or self.end is None or self.makespan is None:
            return None
        return Timing(self.graph, self.start, self.end, self.makespan)

    def metrics(self) -> LayoutMetrics:
        """The metrics of a full plan (:class:`LayoutMetrics`); raises ``ValueError`` for an
        evaluation without them (a problem-1 order, plan files that name unknown or
        duplicate nodes)."""
        t, c, m, p = self.extra_traffic, self.spill_count, self.makespan, self.physical_peak
        if t is None or c is None or m is None or p is None:
            raise ValueError("no layout metrics: a problem-1 order or plan files that do not name every node once")
        return LayoutMetrics(t, c, m, p)

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
                physical_peak=self.physical_peak,
                extra_traffic=self.extra_traffic,
                spill_count=self.spill_count,
                makespan=self.makespan,
            )
        return out


class _Errors:
    def __init__(self) -> None:
        self.shown: list[Violation] = []
        self.counts: Counter[str] = Counter()

    def add(self, kind: str, message: str, position: int | None = None) -> None:
        self.counts[kind] += 1
        if len(self.shown) < MAX_REPORTED:
            self.shown.append(Violation(kind, message, position))

    def __bool__(self) -> bool:
        return bool(self.counts)


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


def _node_name(inst: Instance, v: int, spill_buf: Sequence[int] = ()) -> str:
    if v < inst.n:
        if inst.kind[v] == KIND_OP:
            return f"node {v} ({inst.op[v]})"
        return f"node {v} ({inst.op[v]} buffer {int(inst.buf_id[inst.node_buf[v]])})"
    k, is_out = spill_of_node(inst.n, v)
    what = SPILL_OUT_OP if is_out else SPILL_IN_OP
    b = spill_buf[k] if k < len(spill_buf) else -1
    return f"node {v} ({what} buffer {int(inst.buf_id[b]) if b >= 0 else '?'})"


def max_v_stay(inst: Instance, order: Sequence[int] | np.ndarray) -> int:
    """Peak of ``V_stay`` over prefixes of ``order`` (docs/rules.md, section 4; paper Eq. 6): +Size at
    each ALLOC and -Size at each FREE of a buffer in a peak tier (L1, UB). Spill ids are ignored."""
    peak_buf = inst.is_peak_buffer()
    delta = np.zeros(inst.n, dtype=np.int64)
    for kind, sign in ((KIND_ALLOC, 1), (KIND_FREE, -1)):
        nodes = np.flatnonzero(inst.kind == kind)
        bufs = inst.node_buf[nodes]
        delta[nodes] = sign * inst.buf_size[bufs] * peak_buf[bufs]
    o = np.asarray(order, dtype=np.int64)
    o = o[(o >= 0) & (o < inst.n)]
    if len(o) == 0:
        return 0
    return int(max(0, np.cumsum(delta[o]).max()))


def simulate_timing(
    order: Sequence[int], preds: Sequence[Sequence[int]], pipe: Sequence[int], cycles: Sequence[int]
) -> tuple[list[int], list[int], int]:
    """The cycle simulator (docs/rules.md, section 7; paper Eqs. 9-10): walk ``order``;
    ``start(v) = max(end of v's predecessors, end of the previous node on v's pipe)``,
    ``end(v) = start(v) + cycles(v)``. Nodes with pipe -1 take no pipe.
    Returns per-node start and end (indexed by node id) and the makespan.

    Runs the compiled simulator (:func:`simulate_timing_arrays`) on the lists made arrays;
    ids outside ``0..len(pipe)-1`` or figures that could pass 64 bits take the Python loop
    (:func:`simulate_timing_reference`), which computes with exact integers."""
    arrays = _timing_arrays(order, preds, pipe, cycles)
    if arrays is None:
        return simulate_timing_reference(order, preds, pipe, cycles)
    start, end, makespan = simulate_timing_arrays(*arrays)
    return start.tolist(), end.tolist(), makespan


def _timing_arrays(
    order: Sequence[int], preds: Sequence[Sequence[int]], pipe: Sequence[int], cycles: Sequence[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The simulator's arguments as int64 arrays; None when the compiled simulator cannot take
    them (an id out of range, no list or figures for some node, a total that could pass 64 bits)."""
    n = len(pipe)
    try:
        o, p, c = int64_array(order), int64_array(pipe), int64_array(cycles)
        ptr, idx = csr_of_lists(preds)
    except OverflowError:
        return None
    if len(c) != n or len(ptr) != n + 1 or not (_ids_within(o, n) and _ids_within(idx, n)):
        return None
    if n and (int(c.min()) < 0 or int(c.max()) * max(n, len(o)) >= INT64_ROOM):
        return None
    return o, ptr, idx, p, c


def simulate_timing_arrays(
    order: np.ndarray, pred_ptr: np.ndarray, pred_idx: np.ndarray, pipe: np.ndarray, cycles: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`simulate_timing` on int64 arrays (CSR predecessor lists): per-node start and end
    arrays and the makespan. The caller keeps every id in range and every figure in int64."""
    start, end, makespan = timing.simulate(order, pred_ptr, pred_idx, pipe, cycles)
    return start, end, int(makespan)


def _ids_within(ids: np.ndarray, n: int) -> bool:
    return not ids.size or (int(ids.min()) >= 0 and int(ids.max()) < n)


def simulate_timing_reference(
    order: Sequence[int], preds: Sequence[Sequence[int]], pipe: Sequence[int], cycles: Sequence[int]
) -> tuple[list[int], list[int], int]:
    """:func:`simulate_timing` as a plain Python loop, with exact integers: the reference
    the compiled simulator is tested against."""
    n = len(pipe)
    start = [0] * n
    end = [0] * n
    pipe_free: dict[int, int] = {}
    makespan = 0
    for v in order:
        t = 0
        for u in preds[v]:
            e = end[u]
            if e > t:
                t = e
        p = pipe[v]
        if p >= 0:
            f = pipe_free.get(p, 0)
            if f > t:
                t = f
            fin = t + cycles[v]
            pipe_free[p] = fin
        else:
            fin = t + cycles[v]
        start[v] = t
        end[v] = fin
        if fin > makespan:
            makespan = fin
    return start, end, makespan


def _check_permutation(
    inst: Instance, order: Sequence[int], total: int, errs: _Errors, spill_buf: Sequence[int]
) -> list[int] | None:
    pos = [-1] * total
    for i, v in enumerate(order):
        if not isinstance(v, (int, np.integer)) or not 0 <= v < total:
            errs.add(UNKNOWN_NODE, f"schedule names node {v}, which does not exist (valid ids 0..{total - 1})", i)
            continue
        if pos[v] >= 0:
            errs.add(
                "duplicate-node", f"{_node_name(inst, v, spill_buf)} is scheduled twice (positions {pos[v]} and {i})", i
            )
            continue
        pos[v] = i
    for v in range(total):
        if pos[v] < 0:
            errs.add("missing-node", f"{_node_name(inst, v, spill_buf)} is not in the schedule")
    return None if errs else pos


def _check_original_edges(inst: Instance, pos: list[int], errs: _Errors) -> None:
    e = inst.edges
    if len(e) == 0:
        return
    p = np.asarray(pos, dtype=np.int64)
    bad = np.flatnonzero(p[e[:, 0]] > p[e[:, 1]])
    for i in bad.tolist():
        u, w = int(e[i, 0]), int(e[i, 1])
        errs.add("not-topological", f"edge {u} -> {w}: {_node_name(inst, w)} runs before {_node_name(inst, u)}", pos[w])


def _evaluate_order(inst: Instance, order: Sequence[int]) -> Evaluation:
    """Problem 1: a permutation of the instance's nodes, topological, lifetimes in
    order, and at most one live buffer at a time in each single-residency tier."""
    errs = _Errors()
    pos = _check_permutation(inst, order, inst.n, errs, ())
    if pos is None:
        return Evaluation(1, False, errs.shown, dict(errs.counts), None)
    _check_original_edges(inst, pos, errs)
    L = inst.lists()
    alloc_pos = [pos[a] for a in inst.buf_alloc.tolist()]
    free_pos = [pos[f] for f in inst.buf_free.tolist()]
    for b in range(inst.num_buffers):
        if alloc_pos[b] > free_pos[b]:
            errs.add("lifetime", f"buffer {int(inst.buf_id[b])}: FREE runs before its ALLOC", free_pos[b])
        for u in L.users[b]:
            if not alloc_pos[b] < pos[u] < free_pos[b]:
                errs.add(
                    "not-resident",
                    f"{_node_name(inst, u)} uses buffer {int(inst.buf_id[b])} outside its lifetime",
                    pos[u],
                )
    single = {inst.hw.tier_index(t) for t in inst.hw.single_residency_tiers}
    # every live buffer of each single-residency tier (insertion-ordered), not just the
    # latest: after a violation the earlier buffer is still live when the later one is freed
    live: dict[int, dict[int, None]] = {t: {} for t in single}
    tiers = inst.buf_tier.tolist()
    for i, v in enumerate(order):
        k = L.kind[v]
        if k == KIND_OP:
            continue
        b = L.node_buf[v]
        t = tiers[b]
        if t not in single:
            continue
        if k == KIND_ALLOC:
            if live[t]:
                other = next(iter(live[t]))
                errs.add(
                    "l0-single-residency",
                    f"buffer {int(inst.buf_id[b])} is allocated in {inst.hw.tiers[t]} while buffer "
                    f"{int(inst.buf_id[other])} is still live there",
                    i,
                )
            live[t][b] = None
        else:
            live[t].pop(b, None)
    return Evaluation(1, not errs, errs.shown, dict(errs.counts), max_v_stay(inst, order))


def judged(inst: Instance, plan: Plan, stage: str, ev: Evaluation | None = None) -> Evaluation:
    """The evaluator's verdict on a plan a stage produced (``ev`` when the stage already has
    it); an invalid plan raises :class:`~dansched.errors.PlanInvalidError` naming the stage."""
    ev = ev if ev is not None else evaluate(inst, plan)
    if not ev.valid:
        raise PlanInvalidError(
            f"{stage} produced a plan the evaluator rejects ({ev.error_count} violation(s)); first: {ev.first_violation()}"
        )
    return ev


def evaluate(inst: Instance, plan: Plan) -> Evaluation:
    """Judge ``plan`` against ``inst`` (docs/rules.md, sections 3-8); see the module docstring.
    :class:`~dansched.errors.ArgumentError` when ``inst`` is not an :class:`Instance` or
    ``plan`` not a :class:`~dansched.plan.Plan`. A full plan takes the compiled fast path;
    a plan it does not accept, the reference."""
    _check_arguments(inst, plan, "evaluate")
    if plan.offsets is None:
        return _evaluate_order(inst, plan.order)
    ev = evaluate_fast(inst, plan)
    return ev if ev is not None and ev.valid else _evaluate_layout(inst, plan)


def _check_arguments(inst: Instance, plan: Plan, caller: str) -> None:
    require_instance(inst, f"{caller}: inst")
    check_type(plan, Plan, f"{caller}: plan", "read_plan_dir(folder, case) reads one, Plan(order=...) makes one")


def evaluate_reference(inst: Instance, plan: Plan) -> Evaluation:
    """The readable evaluator: every rule checked in plain Python with exact integers, every
    violation collected with its message and position. :func:`evaluate` gives the same
    verdict and figures (the property tests check it) and runs this on every plan its fast
    path does not accept, so the messages are always this function's."""
    _check_arguments(inst, plan, "evaluate_reference")
    if plan.offsets is None:
        return _evaluate_order(inst, plan.order)
    return _evaluate_layout(inst, plan)


def _int_rows(values: Sequence[Any], width: int) -> np.ndarray | None:
    """``values`` (ints, or ``width``-tuples of ints) as an int64 array; None when one is not
    an integer of 64 bits or a row has another width (the reference then says what is wrong)."""
    if not len(values):
        return np.zeros((0, width) if width > 1 else 0, dtype=np.int64)
    try:
        a = np.array(values)
    except (ValueError, OverflowError):
        return None
    if a.dtype.kind != "i" or a.shape[1:] != ((width,) if width > 1 else ()):
        return None
    return np.ascontiguousarray(a, dtype=np.int64)


def _buffer_indices(inst: Instance, bids: np.ndarray) -> np.ndarray | None:
    """The buffer index of each ``BufId`` value; None when one names no buffer."""
    ids = inst.buf_id
    if not len(ids):
        return None if len(bids) else np.zeros(0, dtype=np.int64)
    at = np.searchsorted(ids, bids)
    found = (at < len(ids)) & (ids[np.minimum(at, len(ids) - 1)] == bids)
    return at.astype(np.int64) if bool(found.all()) else None


def _plan_arrays(inst: Instance, plan: Plan) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The plan as the fast path reads it: the order, every buffer's offset (by buffer index),
    each spill's buffer index and new offset. None when the files are not well formed (an
    entry that is not an integer, an unknown buffer, a buffer with no or two offsets)."""
    order = _int_rows(plan.order, 1)
    offsets = _int_rows(plan.offsets or (), 2)
    spills = _int_rows(plan.spills, 2)
    if order is None or offsets is None or spills is None:
        return None
    given = _buffer_indices(inst, offsets[:, 0])
    spill_buf = _buffer_indices(inst, spills[:, 0])
    if given is None or spill_buf is None or len(given) != inst.num_buffers:
        return None
    if not bool((np.bincount(given, minlength=inst.num_buffers) == 1).all()):
        return None
    offset = np.zeros(inst.num_buffers, dtype=np.int64)
    offset[given] = offsets[:, 1]
    return order, offset, spill_buf, np.ascontiguousarray(spills[:, 1])


def _fits_int64(inst: Instance, spill_buf: np.ndarray) -> bool:
    """The plan's time and traffic stay below 2**63, so int64 holds every figure: a bound with
    every spill costed at the largest spilled buffer (exact Python integers)."""
    if not len(spill_buf):
        return True
    hw, size = inst.hw, int(inst.buf_size[spill_buf].max())
    time_bound = int(inst.cycles.sum()) + len(spill_buf) * 2 * hw.spill_cycles(size)
    return max(time_bound, len(spill_buf) * 2 * size) < INT64_ROOM


def _memory_event_ids(inst: Instance, spills: int) -> np.ndarray:
    """ALLOC, FREE, SPILL_OUT and SPILL_IN ids, ascending."""
    cache = np.flatnonzero(inst.kind != KIND_OP).astype(np.int64)
    return np.concatenate((cache, np.arange(inst.n, inst.n + 2 * spills, dtype=np.int64)))


def evaluate_fast(inst: Instance, plan: Plan) -> Evaluation | None:
    """The fast path alone, on a full plan: the :class:`Evaluation` of a plan it accepts (the
    same as :func:`evaluate_reference`'s); for a plan it rejects, an invalid one that names
    only the first broken rule's kind (count 1, no message, no figures); None when only the
    reference can judge the plan (files that are not well formed, figures that could pass
    64 bits)."""
    _check_arguments(inst, plan, "evaluate_fast")
    if plan.offsets is None:
        raise ValueError("evaluate_fast judges full plans (order, offsets, spills), not problem-1 orders")
    arrays = _plan_arrays(inst, plan)
    if arrays is None or not _fits_int64(inst, arrays[2]):
        return None
    order, offset, spill_buf, spill_off = arrays
    hw = inst.hw
    i64 = np.int64
    status, pipe, cycles, traffic, spill_edges, reuse_edges, segments, ptr, idx, peak = fast.judge_layout(
        order,
        inst.kind.astype(i64),
        inst.pipe.astype(i64),
        int64_array(inst.cycles),
        int64_array(inst.node_buf),
        int64_array(inst.bufs_ptr),
        int64_array(inst.bufs_idx),
        int64_array(inst.pred_ptr),
        int64_array(inst.pred_idx),
        int64_array(inst.users_ptr),
        int64_array(inst.users_idx),
        int64_array(inst.buf_size),
        int64_array(inst.buf_tier),
        int64_array(inst.buf_alloc),
        int64_array(inst.buf_free),
        inst.buf_backed.astype(i64),
        np.array([hw.capacity[t] for t in hw.tiers], dtype=i64),
        np.array([t in hw.peak_tiers for t in hw.tiers], dtype=i64),
        np.array([hw.pipe_index(hw.spill_out_pipe), hw.pipe_index(hw.spill_in_pipe)], dtype=i64),
        np.array([hw.spill_fixed_cycles, hw.spill_cycles_per_unit], dtype=i64),
        offset,
        spill_buf,
        spill_off,
    )
    if status != fast.VALID:
        return Evaluation(2, False, [], {fast.STATUS_KIND[status]: 1}, None)
    start, end, makespan = simulate_timing_arrays(order, ptr, idx, pipe, cycles)
    k = len(spill_buf)
    spills = spill_buf.tolist()
    graph = AugmentedGraph(inst.n, pipe, cycles, ptr, idx, spill_edges, reuse_edges, _memory_event_ids(inst, k), spills)
    residency = Residency(
        list(plan.order),
        segments[:, 0].tolist(),
        segments[:, 1].tolist(),
        offset.tolist(),
        spills,
        spill_off.tolist(),
        inst.buf_tier.tolist(),
        inst.buf_size.tolist(),
        inst.n,
        inst.lists().node_buf,
    )
    return Evaluation(
        problem=2,
        valid=True,
        errors=[],
        error_counts={},
        max_v_stay=max_v_stay(inst, order),
        physical_peak=int(peak),
        extra_traffic=int(traffic),
        spill_count=k,
        makespan=makespan,
        start=start.tolist(),
        end=end.tolist(),
        graph=graph,
        residency=residency,
    )


def _distinct_set(cells: np.ndarray) -> list[int]:
    """The distinct non-negative values of ``cells``, ascending (``np.unique`` of them).
    Cells hold segment owners and ends, which come in runs of equal values, so the value
    at each run start is read instead of sorting every cell."""
    if not cells.size:
        return []
    change = np.flatnonzero(cells[1:] != cells[:-1])
    if not change.size:
        v = int(cells[0])
        return [v] if v >= 0 else []
    firsts = cells[np.concatenate(([0], change + 1))].tolist()
    return sorted({v for v in firsts if v >= 0})


def _read_layout(inst: Instance, plan: Plan, errs: _Errors) -> tuple[list[int], list[int], list[int]]:
    """The spill list as buffer indices (-1 for an unknown buffer) with its NewOffsets, and
    every buffer's offset (0 where the memory file gives none); problems go to ``errs``."""
    spill_buf: list[int] = []
    spill_off: list[int] = []
    for k, (bid, off) in enumerate(plan.spills, start=1):
        try:
            spill_buf.append(inst.buffer_index(bid))
        except KeyError:
            errs.add("bad-spill", f"spill {k} names buffer {bid}, which does not exist")
            spill_buf.append(-1)
        spill_off.append(int(off))
    given: list[int | None] = [None] * inst.num_buffers
    for bid, off in plan.offsets or ():
        try:
            b = inst.buffer_index(bid)
        except KeyError:
            errs.add("bad-offset", f"memory file gives an offset to buffer {bid}, which does not exist")
            continue
        if given[b] is not None:
            errs.add("bad-offset", f"memory file gives buffer {bid} more than one offset")
        given[b] = int(off)
    for b, got in enumerate(given):
        if got is None:
            errs.add("bad-offset", f"buffer {int(inst.buf_id[b])} has no offset in the memory file")
    return spill_buf, spill_off, [0 if got is None else got for got in given]


def _spill_tasks(inst: Instance, spill_buf: Sequence[int]) -> tuple[list[int], list[int], int]:
    """Pipe and cycles of every node, the spill nodes appended (SPILL_OUT, SPILL_IN per
    spill; paper Eq. 8), and the extra traffic of the spills (docs/rules.md, section 5.3)."""
    hw = inst.hw
    L = inst.lists()
    sizes = inst.buf_size.tolist()
    pipe = L.pipe + [hw.pipe_index(hw.spill_out_pipe), hw.pipe_index(hw.spill_in_pipe)] * len(spill_buf)
    cycles = list(L.cycles)
    traffic = 0
    for b in spill_buf:
        c = hw.spill_cycles(sizes[b])
        backed = bool(inst.buf_backed[b])
        cycles += [0 if backed else c, c]
        traffic += spill_traffic(sizes[b], backed)
    return pipe, cycles, traffic


def _spill_edges(inst: Instance, spill_buf: Sequence[int], pos: Sequence[int]) -> list[tuple[int, int]]:
    """The edges each spill adds (docs/rules.md, section 5.4): ALLOC -> SPILL_OUT -> SPILL_IN -> FREE,
    and each user (or earlier spill node) of the buffer before the SPILL_OUT or after the SPILL_IN."""
    n = inst.n
    users = inst.lists().users
    spill_edges: list[tuple[int, int]] = []
    earlier_spills: dict[int, list[int]] = {}
    for k0, b in enumerate(spill_buf):
        out_id, in_id = spill_node_ids(n, k0)
        spill_edges += [(int(inst.buf_alloc[b]), out_id), (out_id, in_id), (in_id, int(inst.buf_free[b]))]
        for u in users[b] + earlier_spills.get(b, []):
            spill_edges.append((u, out_id) if pos[u] < pos[out_id] else (in_id, u))
        earlier_spills.setdefault(b, []).extend((out_id, in_id))
    return spill_edges


class _Residency:
    """The residency walk of a layout plan: segments, capacity, overlap and the
    address-reuse edges (docs/rules.md, section 6), and the physical peak of the peak tiers.

    Addresses are compressed to the cells between consecutive segment boundaries of each
    tier (every segment starts and ends on a boundary, so a cell is never split): the
    walk costs memory in the number of segments, not in the tier's capacity."""

    def __init__(
        self, inst: Instance, offset: Sequence[int], spill_buf: Sequence[int], spill_off: Sequence[int], errs: _Errors
    ) -> None:
        hw = inst.hw
        self.inst, self.errs, self.L = inst, errs, inst.lists()
        self.offset, self.spill_buf, self.spill_off = offset, spill_buf, spill_off
        self.sizes = inst.buf_size.tolist()
        self.tiers = inst.buf_tier.tolist()
        self.caps = caps = [hw.capacity[t] for t in hw.tiers]
        points: list[set[int]] = [{0, c} for c in caps]
        for b, off in list(enumerate(offset)) + list(zip(spill_buf, spill_off)):
            t = self.tiers[b]
            if 0 <= off and off + self.sizes[b] <= caps[t]:
                points[t].update((off, off + self.sizes[b]))
        self.cell = [{x: j for j, x in enumerate(sorted(ps))} for ps in points]  # boundary -> cell index
        self.owner = [np.full(len(c) - 1, -1, dtype=np.int64) for c in self.cell]
        self.last_end = [np.full(len(c) - 1, -1, dtype=np.int64) for c in self.cell]
        self.resident_at: list[int | None] = [None] * inst.num_buffers  # current offset, None when not resident
        self.opened_at = [0] * inst.num_buffers  # schedule position of each resident buffer's starting event
        self.seg_starts: list[int] = []  # the segments met so far: positions of their start and end events
        self.seg_ends: list[int] = []
        self.started = [False] * inst.num_buffers
        self.peak_tiers = {hw.tier_index(t) for t in hw.peak_tiers}
        self.reuse_edges: list[tuple[int, int]] = []
        self.resident_units = 0
        self.physical_peak = 0

    def start_segment(self, b: int, off: int, event: int, i: int) -> None:
        t, s = self.tiers[b], self.sizes[b]
        inst, cap = self.inst, self.caps[t]
        self.opened_at[b] = i
        if off < 0 or off + s > cap:
            self.errs.add(
                "capacity",
                f"buffer {int(inst.buf_id[b])} at [{off}, {off + s}) lies outside {inst.hw.tiers[t]} (capacity {cap})",
                i,
            )
            self.resident_at[b] = off
            return
        lo, hi = self.cell[t][off], self.cell[t][off + s]
        seg = self.owner[t][lo:hi]
        clash = _distinct_set(seg)
        for c in clash:
            self.errs.add(
                "overlap",
                f"buffer {int(inst.buf_id[b])} at [{off}, {off + s}) in {inst.hw.tiers[t]} overlaps resident buffer "
                f"{int(inst.buf_id[c])} at [{self.resident_at[c]}, {self.resident_at[c] + self.sizes[c]})",
                i,
            )
        seg[seg < 0] = b
        prev = self.last_end[t][lo:hi]
        for e in _distinct_set(prev):
            self.reuse_edges.append((e, event))
        self.resident_at[b] = off
        if t in self.peak_tiers:
            self.resident_units += s
            self.physical_peak = max(self.physical_peak, self.resident_units)

    def end_segment(self, b: int, event: int, i: int) -> None:
        off, t, s = self.resident_at[b], self.tiers[b], self.sizes[b]
        self.resident_at[b] = None
        self.seg_starts.append(self.opened_at[b])
        self.seg_ends.append(i)
        assert off is not None
        if off < 0 or off + s > self.caps[t]:
            return
        lo, hi = self.cell[t][off], self.cell[t][off + s]
        seg = self.owner[t][lo:hi]
        seg[seg == b] = -1
        self.last_end[t][lo:hi] = event
        if t in self.peak_tiers:
            self.resident_units -= s

    def _cache_node(self, v: int, i: int) -> None:
        """An ALLOC starts its buffer's first segment; a FREE ends the current one."""
        b = self.L.node_buf[v]
        if self.L.kind[v] == KIND_ALLOC:
            self.started[b] = True
            self.start_segment(b, self.offset[b], v, i)
        elif self.resident_at[b] is None:
            self.errs.add("lifetime", f"{_node_name(self.inst, v)} frees a buffer that is not resident", i)
        else:
            self.end_segment(b, v, i)

    def _spill_node(self, v: int, i: int) -> None:
        inst, n, spill_buf = self.inst, self.inst.n, self.spill_buf
        k0, is_out = spill_of_node(n, v)
        b = spill_buf[k0]
        if is_out:
            if self.resident_at[b] is None:
                self.errs.add(
                    "bad-spill", f"{_node_name(inst, v, spill_buf)} spills out a buffer that is not resident", i
                )
            else:
                self.end_segment(b, v, i)
        elif self.resident_at[b] is not None or not self.started[b]:
            self.errs.add(
                "bad-spill",
                f"{_node_name(inst, v, spill_buf)} spills in a buffer that is "
                + ("already resident" if self.resident_at[b] is not None else "not yet allocated"),
                i,
            )
        else:
            self.start_segment(b, self.spill_off[k0], v, i)

    def walk(self, order: Sequence[int]) -> None:
        """Run every event of ``order`` (a permutation of the original and spill nodes); an
        operation needs all its buffers resident."""
        inst, n, kind, bufs, resident_at = self.inst, self.inst.n, self.L.kind, self.L.bufs, self.resident_at
        for i, v in enumerate(order):
            if v >= n:
                self._spill_node(v, i)
            elif kind[v] == KIND_OP:
                for b in bufs[v]:
                    if resident_at[b] is None:
                        self.errs.add(
                            "not-resident",
                            f"{_node_name(inst, v)} uses buffer {int(inst.buf_id[b])}, which is not resident",
                            i,
                        )
            else:
                self._cache_node(v, i)


def _check_topological(
    inst: Instance,
    order: Sequence[int],
    pos: Sequence[int],
    preds: Sequence[Sequence[int]],
    spill_buf: Sequence[int],
    errs: _Errors,
) -> None:
    """Every augmented edge must point forward in ``order``."""
    for w in order:
        pw = pos[w]
        for u in preds[w]:
            if pos[u] > pw:
                errs.add(
                    "not-topological",
                    f"edge {u} -> {w}: {_node_name(inst, w, spill_buf)} runs before {_node_name(inst, u, spill_buf)}",
                    pw,
                )


def _evaluate_layout(inst: Instance, plan: Plan) -> Evaluation:
    """A full plan: files well formed, residency legal, the augmented DAG (spill and reuse
    edges) respected by the order; then the cycle simulator's timing."""
    n = inst.n
    errs = _Errors()
    spill_buf, spill_off, offset = _read_layout(inst, plan, errs)
    total = n + 2 * len(spill_buf)
    pos = _check_permutation(inst, plan.order, total, errs, spill_buf)
    if errs or pos is None:
        return Evaluation(2, False, errs.shown, dict(errs.counts), None)
    L = inst.lists()
    order = list(plan.order)
    pipe, cycles, traffic = _spill_tasks(inst, spill_buf)
    spill_edges = _spill_edges(inst, spill_buf, pos)
    walk = _Residency(inst, offset, spill_buf, spill_off, errs)
    walk.walk(order)
    preds: list[list[int]] = [list(ps) for ps in L.pred] + [[] for _ in range(2 * len(spill_buf))]
    for u, w in spill_edges + walk.reuse_edges:
        preds[w].append(u)
    preds = [sorted(set(ps)) if len(ps) > 1 else ps for ps in preds]
    _check_topological(inst, order, pos, preds, spill_buf, errs)
    ptr, idx = csr_of_lists(preds)
    graph = AugmentedGraph(
        n,
        np.array(pipe, dtype=np.int64),
        _exact_array(cycles),
        ptr,
        idx,
        _edge_array(spill_edges),
        _edge_array(walk.reuse_edges),
        _memory_event_ids(inst, len(spill_buf)),
        spill_buf,
    )
    start, end, makespan = simulate_timing_reference(order, preds, pipe, cycles)
    residency = Residency(
        order, walk.seg_starts, walk.seg_ends, offset, spill_buf, spill_off, walk.tiers, walk.sizes, n, L.node_buf
    )
    return Evaluation(
        problem=2,
        valid=not errs,
        errors=errs.shown,
        error_counts=dict(errs.counts),
        max_v_stay=max_v_stay(inst, order),
        physical_peak=walk.physical_peak,
        extra_traffic=traffic,
        spill_count=len(spill_buf),
        makespan=makespan,
        start=start,
        end=end,
        graph=graph,
        residency=residency,
    )
