"""Lower bounds on maxV_stay (problem 1, paper Eq. 6).

- :func:`working_set_bound`: an operation runs while all its buffers are live, so
  the peak is at least the largest L1+UB working set of one operation.
- :func:`necessarily_live_bound`: more generally, while operation ``v`` runs,
  every buffer ``b`` with ``ALLOC(b)`` an ancestor of ``v`` and ``FREE(b)`` a
  descendant of ``v`` is live in *every* order (its lifetime must straddle ``v``).
  With the lifetime edges ALLOC -> user -> FREE this holds for each buffer that
  has a user before ``v`` and a user after ``v`` in the DAG order, so it covers
  the working set and adds the buffers a dependency chain keeps alive (long
  skip connections, running accumulators). Computed with ancestor / descendant
  buffer sets as Python-int bitsets (windowed, dropped once read), O((V + E) * B / 64)
  at worst; past a work budget the bitset bounds are skipped.
- :func:`first_free_bound`: for any set ``X`` of L1/UB buffers, look at the first
  moment a buffer ``b`` of ``X`` is freed: every ``x`` in ``X`` whose ALLOC is an
  ancestor of ``FREE(b)`` is allocated and not yet freed, so the peak is at least
  ``f(X) = min over b in X of s(X & A(b))`` (``A(b)``: buffers allocated before
  ``FREE(b)`` in every order). ``X = Bufs(v)`` gives the working set, ``X`` = the
  necessarily-live set of ``v`` gives the bound above. ``f`` is monotone, so
  peeling (drop the ``b`` of smallest ``s(X & A(b))``, keep the best minimum seen)
  finds ``max_X f(X)`` exactly, as for k-cores. On a blocked layer where every
  output accumulates over every input it sees all inputs plus the accumulators.
- :func:`peak_lower_bound`: the largest of them (the first-free bound, which
  dominates the other two), as a :class:`~.bound.Bound`.

None of them sees the L0 single-residency rule, which is what makes the matmul
figures (n + 1 lines of n blocks live) optimal; so on those cases the gap is
real slack in the bound, not in the order.
"""

from __future__ import annotations

import heapq

import numpy as np

from ...checks import check_type
from ...errors import PeakWorkExceeded
from ...graph import MpasGraph, build_mpas_graph
from ...instance import KIND_ALLOC, KIND_FREE, KIND_OP, Instance, require_instance
from ...params import BoundParams
from .bound import Bound

__all__ = ["working_set_bound", "necessarily_live_bound", "first_free_bound", "peak_lower_bound"]


def working_set_bound(inst: Instance) -> Bound:
    """Every operation runs while all its buffers are live, so maxV_stay is at least the
    largest L1+UB working set of a single operation."""
    peak = inst.is_peak_buffer()
    best = 0
    for v in np.flatnonzero(inst.kind == 0).tolist():
        bs = inst.bufs(v)
        best = max(best, int(inst.buf_size[bs][peak[bs]].sum()))
    return Bound(best, "largest L1+UB working set of one operation")


def _allocated_before(g, index: dict[int, int], keep=None, work_bits: int = BoundParams().peak_work_bits):
    """Yield ``(v, low, bits)`` in topological order for each node ``v`` of ``keep``
    (every node when None): the indexed buffers whose ALLOC is ``v`` or an ancestor of
    ``v`` are those with ``index[b] - low`` a set bit of ``bits``.

    The bitsets are *windowed* (shifted down by their lowest index), so a set of a
    few recent buffers costs a few words however many buffers come before it
    (buffers are indexed in ALLOC topological order by the callers), and a node's
    set is dropped once its last successor has read it: memory follows the DAG
    frontier, not V x B. Raises :class:`PeakWorkExceeded` once the bits handled exceed
    ``work_bits`` (dense ancestor sets on a huge graph: the bound is then skipped)."""
    left = [len(s) for s in g.succs]
    sets: dict[int, tuple[int, int]] = {}
    work = 0
    for v in g.topo:
        low, bits = -1, 0
        for u in g.preds[v]:
            lu, bu = sets[u]
            if bu:
                if not bits:
                    low, bits = lu, bu
                elif lu >= low:
                    bits |= bu << (lu - low)
                else:
                    bits = (bits << (low - lu)) | bu
                    low = lu
            left[u] -= 1
            if not left[u]:
                del sets[u]
        if g.kind[v] == KIND_ALLOC and g.node_buf[v] in index:
            i = index[g.node_buf[v]]
            if not bits:
                low, bits = i, 1
            elif i >= low:
                bits |= 1 << (i - low)
            else:
                bits = (bits << (low - i)) | 1
                low = i
        work += bits.bit_length()
        if work > work_bits:
            raise PeakWorkExceeded
        if left[v]:
            sets[v] = (low, bits)
        if keep is None or v in keep:
            yield v, low, bits


def _indices(low: int, bits: int) -> list[int]:
    """``low + j`` for each set bit ``j`` of ``bits``, ascending (linear in the bit length:
    the int's bytes are unpacked by numpy, not peeled one bit at a time)."""
    if not bits:
        return []
    raw = np.frombuffer(bits.to_bytes((bits.bit_length() + 7) // 8, "little"), dtype=np.uint8)
    return (np.flatnonzero(np.unpackbits(raw, bitorder="little")) + low).tolist()


def _topo_index(g, bufs: list[int]) -> dict[int, int]:
    """Index the buffers ``bufs`` by the topological position of their ALLOC (keeps the
    windowed bitsets of :func:`_allocated_before` short)."""
    pos = [0] * g.n
    for i, v in enumerate(g.topo):
        pos[v] = i
    return {b: i for i, b in enumerate(sorted(bufs, key=lambda b: (pos[g.buf_alloc[b]], b)))}


def necessarily_live_bound(inst: Instance, g=None) -> Bound:
    """max over operations ``v`` of the L1+UB bytes of buffers whose lifetime must
    contain ``v`` in every order (see the module docstring); ``g`` is the instance's
    :class:`~dansched.graph.MpasGraph` when the caller has it."""
    if g is None:
        g = build_mpas_graph(inst, check_l0=False)  # the bound holds without the L0 rule
    peak = inst.is_peak_buffer().tolist()
    sizes = inst.buf_size.tolist()
    index: dict[int, int] = {}
    for b in range(inst.num_buffers):
        if peak[b]:
            index[b] = len(index)
    wsz = [0] * len(index)
    for b, i in index.items():
        wsz[i] = sizes[b]
    n = g.n
    # peak buffers whose ALLOC is an ancestor (or the node itself)
    before = {v: bits << max(low, 0) for v, low, bits in _allocated_before(g, index)}
    after = [0] * n  # peak buffers whose FREE is a descendant (or the node itself)
    for v in reversed(g.topo):
        bits = 0
        for w in g.succs[v]:
            bits |= after[w]
        if g.kind[v] == KIND_FREE and g.node_buf[v] in index:
            bits |= 1 << index[g.node_buf[v]]
        after[v] = bits
    best = 0
    seen: set[int] = set()
    for v in range(n):
        if g.kind[v] != KIND_OP:
            continue
        bits = before[v] & after[v]
        if bits in seen:
            continue
        seen.add(bits)
        w = sum(wsz[j] for j in _indices(0, bits))
        if w > best:
            best = w
    return Bound(best, "buffers every order keeps live around one operation (DAG ancestors/descendants)")


def first_free_bound(inst: Instance, g=None, params: BoundParams = BoundParams()) -> Bound:
    """``max_X min_{b in X} s(X & A(b))`` by peeling (see the module docstring). Raises
    :class:`PeakWorkExceeded` once the sets ``A(b)`` hold more members than
    ``params.first_free_members(V)`` (deep graphs, where they grow as V^2) or their bits
    exceed ``params.peak_work_bits``."""
    if g is None:
        g = build_mpas_graph(inst, check_l0=False)  # the bound holds without the L0 rule
    peak = inst.is_peak_buffer().tolist()
    sizes = inst.buf_size.tolist()
    index = _topo_index(g, [b for b in range(inst.num_buffers) if peak[b]])
    bufs = sorted(index, key=index.__getitem__)
    k = len(bufs)
    w = [sizes[b] for b in bufs]
    members: list[list[int]] = [[] for _ in range(k)]  # A(b) as indices
    holders: list[list[int]] = [[] for _ in range(k)]  # x -> the b with x in A(b)
    value = [0] * k
    free_of = {g.buf_free[b]: index[b] for b in bufs}
    budget = params.first_free_members(g.n)
    for _v, _low, bits in _allocated_before(g, index, keep=free_of, work_bits=params.peak_work_bits):
        budget -= bits.bit_count()  # a cheap counting pass first
        if budget < 0:
            raise PeakWorkExceeded(f"first-free sets exceed {params.first_free_members(g.n):,} members")
    for v, low, bits in _allocated_before(g, index, keep=free_of, work_bits=params.peak_work_bits):
        i = free_of[v]
        idx = members[i] = _indices(low, bits)
        value[i] = sum(w[j] for j in idx)
        for j in idx:
            holders[j].append(i)
    heap = [(value[i], i) for i in range(k)]
    heapq.heapify(heap)
    alive = [True] * k
    best = 0
    while heap:
        val, i = heapq.heappop(heap)
        if not alive[i] or val != value[i]:
            continue
        best = max(best, val)
        alive[i] = False
        for h in holders[i]:
            if alive[h]:
                value[h] -= w[i]
                heapq.heappush(heap, (value[h], h))
    return Bound(best, "first-free peeling: max over buffer sets X of min over b in X of what X keeps live at FREE(b)")


def peak_lower_bound(inst: Instance, g=None, params: BoundParams | None = None) -> Bound:
    """The best bound of this module. :func:`first_free_bound` is never below the
    other two (their sets are among the ``X`` it considers), so it is the one
    computed; the working set names the method when they tie. ``params.peak_work_bits``
    bounds the work of the first-free bound."""
    require_instance(inst, "peak_lower_bound: inst")
    params = BoundParams() if params is None else check_type(params, BoundParams, "peak_lower_bound: params")
    if g is not None:
        check_type(g, MpasGraph, "peak_lower_bound: g", "build_mpas_graph(inst) makes it, or None")
    ws = working_set_bound(inst)
    try:
        ff = first_free_bound(inst, g, params)
    except PeakWorkExceeded:
        return Bound(ws.value, ws.method + " (first-free bound skipped: ancestor sets too large)")
    return ff if ff.value > ws.value else ws
