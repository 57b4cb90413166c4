"""The readable evaluator (docs/rules.md, sections 3-8): every rule checked in plain Python
with exact integers, every violation collected with its message and position (the first
:data:`MAX_REPORTED`). :func:`evaluate_order` judges a problem-1 order, :func:`evaluate_layout`
a full plan: files well formed, the residency walk (segments, capacity, overlap, the
address-reuse edges, the physical peak), the augmented DAG and the cycle simulator.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from ..errors import ArgumentError
from ..hardware import spill_traffic
from ..instance import KIND_ALLOC, KIND_FREE, KIND_OP, Instance
from ..kernels.csr import csr_of_lists
from ..plan import Plan
from .cycles import simulate_timing_reference
from .types import (
    TIMING_BREAKERS,
    UNKNOWN_NODE,
    AugmentedGraph,
    Evaluation,
    Residency,
    Violation,
    memory_event_ids,
    spill_node_ids,
    spill_of_node,
)

__all__ = ["MAX_REPORTED", "evaluate_order", "evaluate_layout", "max_v_stay"]

MAX_REPORTED = 20

SPILL_OUT_OP, SPILL_IN_OP = "SPILL_OUT", "SPILL_IN"


class _Errors:
    """Every violation counted by kind; the first :data:`MAX_REPORTED` of each cause kept
    (:data:`~dansched.simulate.types.CAUSES`), and :attr:`shown`, the first
    :data:`MAX_REPORTED` of them cause first: the order's, then residency's, then the
    addresses' (by position within each), whatever order the checks found them in."""

    def __init__(self) -> None:
        self.kept: list[Violation] = []
        self.counts: Counter[str] = Counter()
        self._per_cause: Counter[str] = Counter()

    def add(self, kind: str, message: str, position: int | None = None) -> None:
        self.counts[kind] += 1
        v = Violation(kind, message, position)
        if self._per_cause[v.cause] < MAX_REPORTED:
            self._per_cause[v.cause] += 1
            self.kept.append(v)

    @property
    def shown(self) -> list[Violation]:
        return sorted(self.kept, key=lambda v: v.cause_key)[:MAX_REPORTED]

    def __bool__(self) -> bool:
        return bool(self.counts)


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


def _check_permutation(
    inst: Instance, order: Sequence[int], total: int, errs: _Errors, spill_buf: Sequence[int]
) -> list[int] | None:
    """Each node's position in ``order``; None (the violations in ``errs``) when ``order`` is
    not a permutation of the ``total`` nodes."""
    before = sum(errs.counts.values())
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
    return None if sum(errs.counts.values()) > before else pos


def _check_original_edges(inst: Instance, pos: list[int], errs: _Errors) -> None:
    e = inst.edges
    if len(e) == 0:
        return
    p = np.asarray(pos, dtype=np.int64)
    bad = np.flatnonzero(p[e[:, 0]] > p[e[:, 1]])
    for i in bad.tolist():
        u, w = int(e[i, 0]), int(e[i, 1])
        errs.add("not-topological", f"edge {u} -> {w}: {_node_name(inst, w)} runs before {_node_name(inst, u)}", pos[w])


def evaluate_order(inst: Instance, order: Sequence[int]) -> Evaluation:
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


def _edge_array(edges: Sequence[tuple[int, int]]) -> np.ndarray:
    return np.array(edges, dtype=np.int64).reshape(len(edges), 2)


def _exact_array(values: Sequence[int]) -> np.ndarray:
    """``values`` as int64, or as Python integers (dtype object) when one passes 64 bits: a
    plan you bring may spill so much that its cycles do (docs/rules.md, Supported ranges)."""
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        return np.array(values, dtype=object)


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
        except ArgumentError:
            errs.add("bad-spill", f"spill {k} names buffer {bid}, which does not exist")
            spill_buf.append(-1)
        spill_off.append(int(off))
    given: list[int | None] = [None] * inst.num_buffers
    for bid, off in plan.offsets or ():
        try:
            b = inst.buffer_index(bid)
        except ArgumentError:
            errs.add("bad-offset", f"memory file gives an offset to buffer {bid}, which does not exist")
            continue
        if given[b] is not None:
            errs.add("bad-offset", f"memory file gives buffer {bid} more than one offset")
        given[b] = int(off)
    for b, got in enumerate(given):
        if got is None:
            errs.add("bad-offset", f"buffer {int(inst.buf_id[b])} has no offset in the memory file")
    return spill_buf, spill_off, [0 if got is None else got for got in given]


def _spills_traffic(inst: Instance, spill_buf: Sequence[int]) -> int:
    """The extra traffic of the spills (docs/rules.md, section 5.3): defined by the spill
    list alone, once every spill names a buffer (``spill_buf`` has no -1)."""
    sizes = inst.buf_size.tolist()
    return sum(spill_traffic(sizes[b], bool(inst.buf_backed[b])) for b in spill_buf)


def _spill_tasks(inst: Instance, spill_buf: Sequence[int]) -> tuple[list[int], list[int], int]:
    """Pipe and cycles of every node, the spill nodes appended (SPILL_OUT, SPILL_IN per
    spill; paper Eq. 8), and the extra traffic of the spills (:func:`_spills_traffic`)."""
    hw = inst.hw
    L = inst.lists()
    sizes = inst.buf_size.tolist()
    pipe = L.pipe + [hw.pipe_index(hw.spill_out_pipe), hw.pipe_index(hw.spill_in_pipe)] * len(spill_buf)
    cycles = list(L.cycles)
    for b in spill_buf:
        c = hw.spill_cycles(sizes[b])
        cycles += [0 if inst.buf_backed[b] else c, c]
    return pipe, cycles, _spills_traffic(inst, spill_buf)


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


class _ResidencyWalk:
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


def _malformed(inst: Instance, plan: Plan, spill_buf: Sequence[int], permutation: bool, errs: _Errors) -> Evaluation:
    """The verdict on plan files the residency walk cannot read (a schedule that is not a
    permutation, an unknown buffer, a buffer without an offset): no timing, no physical
    peak; ``max_v_stay`` when the schedule is a permutation, the traffic and spill count
    when every spill names a buffer (the figures the files still define)."""
    known = all(b >= 0 for b in spill_buf)
    return Evaluation(
        2,
        False,
        errs.shown,
        dict(errs.counts),
        max_v_stay(inst, plan.order) if permutation else None,
        extra_traffic=_spills_traffic(inst, spill_buf) if known else None,
        spill_count=len(spill_buf) if known else None,
    )


def evaluate_layout(inst: Instance, plan: Plan) -> Evaluation:
    """A full plan: files well formed, residency legal, the augmented DAG (spill and reuse
    edges) respected by the order; then the cycle simulator's timing, when the order
    respects every edge (else the plan has none: :attr:`Evaluation.timing_defined`)."""
    n = inst.n
    errs = _Errors()
    spill_buf, spill_off, offset = _read_layout(inst, plan, errs)
    total = n + 2 * len(spill_buf)
    pos = _check_permutation(inst, plan.order, total, errs, spill_buf)
    if errs or pos is None:
        return _malformed(inst, plan, spill_buf, pos is not None, errs)
    L = inst.lists()
    order = list(plan.order)
    pipe, cycles, traffic = _spill_tasks(inst, spill_buf)
    spill_edges = _spill_edges(inst, spill_buf, pos)
    walk = _ResidencyWalk(inst, offset, spill_buf, spill_off, errs)
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
        memory_event_ids(inst, len(spill_buf)),
        spill_buf,
    )
    start: list[int] | None = None
    end: list[int] | None = None
    makespan: int | None = None
    if not TIMING_BREAKERS & errs.counts.keys():  # an order that breaks an edge has no timing
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
