"""The evaluator's fast path for a full plan (problems 2 and 3) on flat arrays.

:func:`judge_layout` runs, in one compiled pass each, what the readable evaluator
(:func:`dansched.simulate.evaluate_reference`) does for a plan with a layout, and stops
at the first broken rule:

1. the schedule is a permutation of the original and spill nodes;
2. the spill tasks: pipe, cycles and extra traffic of every spill (docs/rules.md, 5.1-5.3;
   paper Eq. 8);
3. the spill edges (docs/rules.md, 5.4), in the reference's order;
4. the residency walk (docs/rules.md, 6): every segment inside its tier, no two resident
   segments overlapping, an operation's buffers resident, spills out of a resident and in
   to an allocated, non-resident buffer, a FREE of a resident buffer; the address-reuse
   edges from the most recent occupant of each address, in the order the walk finds them;
   where each residency segment starts and ends; the physical peak of the peak tiers;
5. the augmented predecessor lists (original, spill and reuse edges; each list sorted, no
   repeats) as CSR arrays, and their topological check against the schedule.

The timing (Eqs. 9-10) is :func:`dansched.kernels.timing.simulate` on the result. What
it returns is a status: :data:`VALID`, or the first rule broken (no message: the
reference, run on an invalid plan, says what and where; :data:`STATUS_KIND` names the
reference's kind of each).

Addresses are compressed to the cells between consecutive segment boundaries of each
tier, as the reference does, so the walk costs memory in segments, not in capacity.
Every figure stays below 2**63 when the caller has checked the horizons
(:func:`dansched.simulate.evaluate`).
"""

from __future__ import annotations

import numpy as np

from .jit import compiled

__all__ = ["judge_layout", "warm", "VALID", "STATUS_KIND"]

# the status of a judged plan: valid, or the first rule it breaks
VALID = 0
UNKNOWN_NODE, DUPLICATE_NODE, MISSING_NODE = 1, 2, 3
CAPACITY, OVERLAP, NOT_RESIDENT, BAD_SPILL, LIFETIME, NOT_TOPOLOGICAL = 4, 5, 6, 7, 8, 9
# the violation kind of the reference evaluator each status stands for
STATUS_KIND: dict[int, str] = {
    UNKNOWN_NODE: "unknown-node",
    DUPLICATE_NODE: "duplicate-node",
    MISSING_NODE: "missing-node",
    CAPACITY: "capacity",
    OVERLAP: "overlap",
    NOT_RESIDENT: "not-resident",
    BAD_SPILL: "bad-spill",
    LIFETIME: "lifetime",
    NOT_TOPOLOGICAL: "not-topological",
}
KIND_OP, KIND_ALLOC = 0, 1  # dansched.instance's node kinds
SMALL = 16  # lists up to this long are sorted by insertion


@compiled
def _positions(order: np.ndarray, total: int) -> tuple[np.ndarray, int]:
    """Each node's position in ``order`` and :data:`VALID`, or the first reason ``order`` is not
    a permutation of ``0..total-1``: a node out of range, one scheduled twice, one left out."""
    pos = np.full(total, -1, dtype=np.int64)
    for i in range(order.shape[0]):
        v = order[i]
        if v < 0 or v >= total:
            return pos, UNKNOWN_NODE
        if pos[v] >= 0:
            return pos, DUPLICATE_NODE
        pos[v] = i
    return pos, (VALID if order.shape[0] == total else MISSING_NODE)


@compiled
def _spill_tasks(
    pipe: np.ndarray,
    cycles: np.ndarray,
    spill_buf: np.ndarray,
    buf_size: np.ndarray,
    buf_backed: np.ndarray,
    out_pipe: int,
    in_pipe: int,
    alpha: int,
    beta: int,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Pipe and cycles of every node, the spill nodes appended (SPILL_OUT, SPILL_IN per spill;
    ``alpha + beta * Size``, a backed buffer's SPILL_OUT 0), and the spills' extra traffic
    (``Size`` backed, ``2 * Size`` otherwise)."""
    n, k = pipe.shape[0], spill_buf.shape[0]
    apipe = np.empty(n + 2 * k, dtype=np.int64)
    acycles = np.empty(n + 2 * k, dtype=np.int64)
    for v in range(n):
        apipe[v], acycles[v] = pipe[v], cycles[v]
    traffic = 0
    for k0 in range(k):
        b = spill_buf[k0]
        c = alpha + beta * buf_size[b]
        apipe[n + 2 * k0] = out_pipe
        apipe[n + 2 * k0 + 1] = in_pipe
        acycles[n + 2 * k0] = 0 if buf_backed[b] else c
        acycles[n + 2 * k0 + 1] = c
        traffic += buf_size[b] if buf_backed[b] else 2 * buf_size[b]
    return apipe, acycles, traffic


@compiled
def _spill_edges(
    n: int,
    spill_buf: np.ndarray,
    pos: np.ndarray,
    users_ptr: np.ndarray,
    users_idx: np.ndarray,
    buf_alloc: np.ndarray,
    buf_free: np.ndarray,
) -> np.ndarray:
    """The edges each spill adds, in spill order (docs/rules.md, 5.4): ALLOC -> SPILL_OUT ->
    SPILL_IN -> FREE, then each user of the buffer and each node of its earlier spills, before
    the SPILL_OUT when the schedule runs it earlier, after the SPILL_IN otherwise."""
    k = spill_buf.shape[0]
    nb = buf_alloc.shape[0]
    earlier = np.zeros(k, dtype=np.int64)  # earlier spills of the same buffer
    count = np.zeros(nb + 1, dtype=np.int64)
    total = 0
    for k0 in range(k):
        b = spill_buf[k0]
        earlier[k0] = count[b + 1]
        count[b + 1] += 1
        total += 3 + users_ptr[b + 1] - users_ptr[b] + 2 * earlier[k0]
    first = _prefix_sums(count)  # the spills of buffer b, in spill order: same[first[b]:first[b + 1]]
    same = np.empty(k, dtype=np.int64)
    for k0 in range(k):
        same[first[spill_buf[k0]] + earlier[k0]] = k0
    edges = np.empty((total, 2), dtype=np.int64)
    e = 0
    for k0 in range(k):
        b = spill_buf[k0]
        out_id, in_id = n + 2 * k0, n + 2 * k0 + 1
        edges[e, 0], edges[e, 1] = buf_alloc[b], out_id
        edges[e + 1, 0], edges[e + 1, 1] = out_id, in_id
        edges[e + 2, 0], edges[e + 2, 1] = in_id, buf_free[b]
        e += 3
        m = users_ptr[b + 1] - users_ptr[b]
        for j in range(m + 2 * earlier[k0]):
            if j < m:
                u = users_idx[users_ptr[b] + j]
            else:
                u = n + 2 * same[first[b] + (j - m) // 2] + (j - m) % 2
            if pos[u] < pos[out_id]:
                edges[e, 0], edges[e, 1] = u, out_id
            else:
                edges[e, 0], edges[e, 1] = in_id, u
            e += 1
    return edges


@compiled
def _fits(off: int, size: int, cap: int) -> bool:
    """``[off, off + size)`` lies inside ``[0, cap)`` (written so that nothing overflows)."""
    return off >= 0 and off <= cap - size


@compiled
def _boundaries(
    offset: np.ndarray,
    spill_buf: np.ndarray,
    spill_off: np.ndarray,
    buf_size: np.ndarray,
    buf_tier: np.ndarray,
    caps: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Every tier's segment boundaries (0, the capacity, both ends of each segment that fits),
    ascending without repeats: tier ``t``'s are ``bound[ptr[t]:ptr[t + 1]]``."""
    tiers, nb, k = caps.shape[0], offset.shape[0], spill_buf.shape[0]
    count = np.full(tiers + 1, 0, dtype=np.int64)
    for t in range(tiers):
        count[t + 1] = 2
    for j in range(nb + k):
        b = j if j < nb else spill_buf[j - nb]
        off = offset[j] if j < nb else spill_off[j - nb]
        if _fits(off, buf_size[b], caps[buf_tier[b]]):
            count[buf_tier[b] + 1] += 2
    ptr = _prefix_sums(count)
    points = np.empty(ptr[tiers], dtype=np.int64)
    fill = ptr.copy()
    for t in range(tiers):
        points[fill[t]], points[fill[t] + 1] = 0, caps[t]
        fill[t] += 2
    for j in range(nb + k):
        b = j if j < nb else spill_buf[j - nb]
        off = offset[j] if j < nb else spill_off[j - nb]
        t = buf_tier[b]
        if _fits(off, buf_size[b], caps[t]):
            points[fill[t]], points[fill[t] + 1] = off, off + buf_size[b]
            fill[t] += 2
    bound = np.empty(ptr[tiers], dtype=np.int64)
    out = np.zeros(tiers + 1, dtype=np.int64)
    m = 0
    for t in range(tiers):
        _sort(points, ptr[t], ptr[t + 1])
        for j in range(ptr[t], ptr[t + 1]):
            if j == ptr[t] or points[j] != points[j - 1]:
                bound[m] = points[j]
                m += 1
        out[t + 1] = m
    return bound[:m].copy(), out


@compiled
def _prefix_sums(count: np.ndarray) -> np.ndarray:
    """Running totals of ``count`` (``np.cumsum``, as a loop: it compiles faster)."""
    out = np.empty(count.shape[0], dtype=np.int64)
    total = 0
    for i in range(count.shape[0]):
        total += count[i]
        out[i] = total
    return out


@compiled
def _grown(a: np.ndarray, need: int) -> np.ndarray:
    """``a``, or a copy with room for at least ``need`` rows (of two columns)."""
    if need <= a.shape[0]:
        return a
    b = np.empty((max(need, 2 * a.shape[0]), 2), dtype=np.int64)
    for i in range(a.shape[0]):
        b[i, 0], b[i, 1] = a[i, 0], a[i, 1]
    return b


@compiled
def _sort(a: np.ndarray, lo: int, hi: int) -> None:
    """Sort ``a[lo:hi]`` in place: insertion sort for short runs, else a bottom-up merge sort
    through a scratch array (plain loops: ``ndarray.sort`` costs seconds of compile time)."""
    size = hi - lo
    if size <= SMALL:
        for i in range(lo + 1, hi):
            x = a[i]
            j = i - 1
            while j >= lo and a[j] > x:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = x
        return
    src = a[lo:hi].copy()
    dst = np.empty(size, dtype=np.int64)
    width = 1
    while width < size:
        for left in range(0, size, 2 * width):
            mid, right = min(left + width, size), min(left + 2 * width, size)
            i, j = left, mid
            for k in range(left, right):
                if i < mid and (j >= right or src[i] <= src[j]):
                    dst[k] = src[i]
                    i += 1
                else:
                    dst[k] = src[j]
                    j += 1
        src, dst = dst, src
        width *= 2
    for k in range(size):
        a[lo + k] = src[k]


@compiled
def _bisect(a: np.ndarray, lo: int, hi: int, x: int) -> int:
    """The first index ``i`` of the ascending ``a[lo:hi]`` with ``a[i] >= x`` (``hi`` if none)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@compiled
def _residency(
    n: int,
    order: np.ndarray,
    kind: np.ndarray,
    node_buf: np.ndarray,
    bufs_ptr: np.ndarray,
    bufs_idx: np.ndarray,
    buf_size: np.ndarray,
    buf_tier: np.ndarray,
    caps: np.ndarray,
    peak_tier: np.ndarray,
    offset: np.ndarray,
    spill_buf: np.ndarray,
    spill_off: np.ndarray,
) -> tuple[int, np.ndarray, np.ndarray, int]:
    """The residency walk (see the module docstring): (status, reuse edges, segments, physical
    peak); each segment is the schedule positions of its starting and its ending event, in
    the order the segments end."""
    nb = offset.shape[0]
    bound, bptr = _boundaries(offset, spill_buf, spill_off, buf_size, buf_tier, caps)
    cells = bound.shape[0]  # tier t's cells are bound's indices bptr[t] .. bptr[t + 1] - 2
    owner = np.full(cells, -1, dtype=np.int64)
    last_end = np.full(cells, -1, dtype=np.int64)
    resident = np.zeros(nb, dtype=np.bool_)
    started = np.zeros(nb, dtype=np.bool_)
    at = np.zeros(nb, dtype=np.int64)  # a resident buffer's first cell
    upto = np.zeros(nb, dtype=np.int64)  # and one past its last
    opened = np.zeros(nb, dtype=np.int64)  # the position of a resident buffer's starting event
    segments = np.empty((nb + spill_buf.shape[0], 2), dtype=np.int64)
    nseg = 0
    reuse = np.empty((64, 2), dtype=np.int64)
    nreuse = 0
    seen = np.empty(cells, dtype=np.int64)
    units = 0
    peak = 0
    status = VALID
    for i in range(order.shape[0]):
        v = order[i]
        if v < n and kind[v] == KIND_OP:
            for j in range(bufs_ptr[v], bufs_ptr[v + 1]):
                if not resident[bufs_idx[j]]:
                    status = NOT_RESIDENT
            if status != VALID:
                break
            continue
        if v >= n:
            k0 = (v - n) // 2
            b = spill_buf[k0]
            starts = (v - n) % 2 == 1
            if resident[b] == starts or (starts and not started[b]):
                status = BAD_SPILL
                break
            off = spill_off[k0]
        else:
            b = node_buf[v]
            starts = kind[v] == KIND_ALLOC
            if not starts and not resident[b]:
                status = LIFETIME
                break
            started[b] = started[b] or starts
            off = offset[b]
        t, s = buf_tier[b], buf_size[b]
        if not starts:  # FREE or SPILL_OUT: the segment ends, its cells remember this event
            for c in range(at[b], upto[b]):
                owner[c] = -1
                last_end[c] = v
            segments[nseg, 0], segments[nseg, 1] = opened[b], i
            nseg += 1
            resident[b] = False
            units -= s * peak_tier[t]
            continue
        if not _fits(off, s, caps[t]):
            status = CAPACITY
            break
        lo = _bisect(bound, bptr[t], bptr[t + 1], off)
        hi = _bisect(bound, bptr[t], bptr[t + 1], off + s)
        m = 0
        for c in range(lo, hi):
            if owner[c] >= 0:
                status = OVERLAP
            owner[c] = b
            e = last_end[c]
            if e >= 0 and (m == 0 or seen[m - 1] != e):
                seen[m] = e
                m += 1
        if status != VALID:
            break
        _sort(seen, 0, m)
        reuse = _grown(reuse, nreuse + m)
        for j in range(m):
            if j == 0 or seen[j] != seen[j - 1]:
                reuse[nreuse, 0], reuse[nreuse, 1] = seen[j], v
                nreuse += 1
        resident[b] = True
        at[b], upto[b], opened[b] = lo, hi, i
        units += s * peak_tier[t]
        peak = max(peak, units)
    return status, reuse[:nreuse].copy(), segments[:nseg].copy(), peak


@compiled
def _add_sources(idx: np.ndarray, fill: np.ndarray, edges: np.ndarray) -> None:
    """Append the source of each edge to its target's list (``fill``: each list's next free slot)."""
    for e in range(edges.shape[0]):
        w = edges[e, 1]
        idx[fill[w]] = edges[e, 0]
        fill[w] += 1


@compiled
def _augmented_preds(
    total: int, pred_ptr: np.ndarray, pred_idx: np.ndarray, spill_edges: np.ndarray, reuse_edges: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """CSR predecessor lists of the augmented graph: each node's original predecessors and the
    sources of its spill and reuse edges, ascending, without repeats."""
    n = pred_ptr.shape[0] - 1
    count = np.zeros(total + 1, dtype=np.int64)
    for v in range(n):
        count[v + 1] = pred_ptr[v + 1] - pred_ptr[v]
    for e in range(spill_edges.shape[0]):
        count[spill_edges[e, 1] + 1] += 1
    for e in range(reuse_edges.shape[0]):
        count[reuse_edges[e, 1] + 1] += 1
    ptr = _prefix_sums(count)
    idx = np.empty(ptr[total], dtype=np.int64)
    fill = ptr.copy()
    for v in range(n):
        for j in range(pred_ptr[v], pred_ptr[v + 1]):
            idx[fill[v]] = pred_idx[j]
            fill[v] += 1
    _add_sources(idx, fill, spill_edges)
    _add_sources(idx, fill, reuse_edges)
    out_ptr = np.zeros(total + 1, dtype=np.int64)
    m = 0
    for v in range(total):
        lo, hi = ptr[v], ptr[v + 1]
        ascending = True
        for j in range(lo + 1, hi):
            if idx[j] <= idx[j - 1]:
                ascending = False
                break
        if not ascending:
            _sort(idx, lo, hi)
        for j in range(lo, hi):
            if j == lo or idx[j] != idx[j - 1]:
                idx[m] = idx[j]
                m += 1
        out_ptr[v + 1] = m
    return out_ptr, idx[:m].copy()


@compiled
def _is_topological(pos: np.ndarray, ptr: np.ndarray, idx: np.ndarray) -> bool:
    """Every edge ``u -> w`` of the CSR lists points forward: ``pos[u] <= pos[w]``."""
    for w in range(ptr.shape[0] - 1):
        for j in range(ptr[w], ptr[w + 1]):
            if pos[idx[j]] > pos[w]:
                return False
    return True


@compiled
def judge_layout(
    order: np.ndarray,
    kind: np.ndarray,
    pipe: np.ndarray,
    cycles: np.ndarray,
    node_buf: np.ndarray,
    bufs_ptr: np.ndarray,
    bufs_idx: np.ndarray,
    pred_ptr: np.ndarray,
    pred_idx: np.ndarray,
    users_ptr: np.ndarray,
    users_idx: np.ndarray,
    buf_size: np.ndarray,
    buf_tier: np.ndarray,
    buf_alloc: np.ndarray,
    buf_free: np.ndarray,
    buf_backed: np.ndarray,
    caps: np.ndarray,
    peak_tier: np.ndarray,
    spill_pipes: np.ndarray,
    spill_cost: np.ndarray,
    offset: np.ndarray,
    spill_buf: np.ndarray,
    spill_off: np.ndarray,
) -> tuple[int, np.ndarray, np.ndarray, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Judge a plan given as arrays (see the module docstring).

    The instance: node ``kind``, ``pipe`` (-1: none), ``cycles``, ``node_buf``; CSR lists of
    each operation's buffers, each node's predecessors and each buffer's users; buffer
    ``size``, ``tier``, ``alloc`` and ``free`` nodes, ``backed`` (0/1). The hardware: tier
    capacities ``caps``, ``peak_tier`` (0/1), ``spill_pipes`` (SPILL_OUT's, SPILL_IN's) and
    ``spill_cost`` (fixed cycles, cycles per unit). The plan: ``order`` (spill ids
    included), every buffer's ``offset``, each spill's buffer and new offset.

    Returns (status, pipe, cycles, extra traffic, spill edges, reuse edges, residency
    segments, predecessor pointers, predecessor indices, physical peak); edges are ``(E, 2)``
    arrays of ``(source, target)``, segments ``(S, 2)`` arrays of the positions of their
    starting and ending events, in the order they end. Past the status :data:`VALID` the
    rest is partial."""
    n, k = kind.shape[0], spill_buf.shape[0]
    total = n + 2 * k
    none = np.empty((0, 2), dtype=np.int64)
    empty = np.empty(0, dtype=np.int64)
    apipe, acycles, traffic = _spill_tasks(
        pipe, cycles, spill_buf, buf_size, buf_backed, spill_pipes[0], spill_pipes[1], spill_cost[0], spill_cost[1]
    )
    pos, status = _positions(order, total)
    if status != VALID:
        return status, apipe, acycles, traffic, none, none, none, empty, empty, 0
    spill_edges = _spill_edges(n, spill_buf, pos, users_ptr, users_idx, buf_alloc, buf_free)
    status, reuse_edges, segments, peak = _residency(
        n, order, kind, node_buf, bufs_ptr, bufs_idx, buf_size, buf_tier, caps, peak_tier, offset, spill_buf, spill_off
    )
    if status != VALID:
        return status, apipe, acycles, traffic, spill_edges, reuse_edges, segments, empty, empty, peak
    ptr, idx = _augmented_preds(total, pred_ptr, pred_idx, spill_edges, reuse_edges)
    if not _is_topological(pos, ptr, idx):
        return NOT_TOPOLOGICAL, apipe, acycles, traffic, spill_edges, reuse_edges, segments, ptr, idx, peak
    return VALID, apipe, acycles, traffic, spill_edges, reuse_edges, segments, ptr, idx, peak


def warm() -> None:
    """Compile (or load from the cache) this module's kernels: one buffer, ALLOC, a user, a
    spill and the FREE, on one tier."""
    i64 = np.int64

    def a(*xs: int) -> np.ndarray:
        return np.array(xs, dtype=i64)

    judge_layout(
        a(0, 1, 3, 4, 2),  # ALLOC, user, SPILL_OUT, SPILL_IN, FREE
        a(1, 0, 2),
        a(-1, 0, -1),
        a(0, 1, 0),
        a(0, -1, 0),
        a(0, 0, 1, 1),
        a(0),
        a(0, 0, 1, 2),
        a(0, 1),
        a(0, 1),
        a(1),
        a(4),
        a(0),
        a(0),
        a(2),
        a(0),
        a(8),
        a(1),
        a(0, 0),
        a(1, 1),
        a(0),
        a(0),
        a(4),
    )
