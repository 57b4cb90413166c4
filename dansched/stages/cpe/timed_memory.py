"""Problem 3, Stage 2: a time-driven list scheduler with memory (issue 14, items 2-4).

Stages 1-2 fix order, victims and addresses without looking at time; CPE may only
reorder inside that frozen memory skeleton. :func:`timed_schedule` instead builds the
whole plan (order with spill nodes, offsets, spill list) while it simulates the
engines, exactly as the shared cycle simulator will time it (SPEC section 5:
``start(v) = max(end of v's augmented predecessors, end of the previous node on v's
pipe)``; paper Eqs. 9-10):

- **List scheduling** (paper Eq. 20 criticality): on every pipe, the ready task
  with the longest tail to the end (bottom level) goes first; over all pipes the
  task that can start earliest is emitted next, so an engine idles only when nothing
  it could run is ready. Tasks come from a window of ``window`` operations past the
  *frontier* (the first operation of a reference order not yet emitted, normally the
  Stage-2 order, whose memory behaviour is known to be good).
- **Memory at simulated time.** An operation's missing buffers are allocated (ALLOC,
  or SPILL_IN of a spilled buffer) right before it, on the free addresses whose last
  occupant ends earliest relative to when the data is needed (time-aware best fit,
  Eq. 24 with the address-reuse wait as first key), so the address-reuse edge does
  not make the load wait. FREEs are emitted as soon as they are allowed.
- **Prefetch room** (item 2): a task ahead of the frontier (a COPY_IN, a MOVE, the
  reload of a spilled buffer) may only take *free* room, and only while its tier stays
  at most ``fill`` full; the rest is headroom for the frontier. Only the frontier
  operation may evict.
- **Victims with time in mind** (item 3): the frontier evicts the contiguous window of
  resident buffers of least cost ``traffic / (reuse distance + 1)`` (the cost-aware
  Belady rule of Eqs. 27-31, reuse distance in operations of the reference order);
  windows within ``victim_tolerance`` of that cost compete on the time their
  SPILL_OUT may start (the end of the victims' last use so far), earliest first.
  Traffic per SPEC: ``Size`` for a buffer used by a COPY_IN, else ``2*Size``.

The result is an ordinary :class:`~dansched.plan.Plan`; :func:`timed_plans` judges
each one with :func:`dansched.simulate.evaluate` and keeps those within the traffic
allowance. Runs in O(V log V) plus the eviction scans (O(residents^2) per eviction).
"""

from __future__ import annotations

import bisect
import heapq
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...errors import PlacementFailed, TimedFailed
from ...instance import KIND_ALLOC, KIND_FREE, KIND_OP, Instance
from ...models.traffic import traffic_lower_bound
from ...plan import Plan, plan_from_indices
from ...simulate import Evaluation, evaluate
from ..dlr.reorder import tighten_lifetimes
from ..dlr.stage import dlr_plan

__all__ = [
    "TimedParams",
    "TimedFailed",
    "timed_schedule",
    "timed_plans",
    "trials_for",
    "traffic_allowance",
    "replaced_plan",
    "DEFAULT_TRIALS",
    "SLACK_TRIALS",
    "bottom_levels",
]

MAX_TIER_CAPACITY = 1 << 22
PRIORITIES = ("tail", "rank")  # per-address reuse times are kept in an array per tier


@dataclass(frozen=True)
class TimedParams:
    """Knobs of :func:`timed_schedule` (deterministic defaults).

    ``window``: operations past the frontier that may run ahead (0: the reference order
    for operations, loads still early); ``fill``: a task ahead of the frontier may
    allocate only while its tier stays at most this fraction full (prefetch room for the
    frontier); ``victim_tolerance``: eviction windows whose cost is within this factor
    of the cheapest compete on the time their SPILL_OUT can start."""

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


@dataclass(frozen=True)
class TimedProducerParams:
    """When the pipeline runs the time-driven producer: up to ``max_nodes`` nodes (above,
    its extra Stage 3 took Matmul_Case1's full pipeline from 53 s to 97 s for 0.1 %) or,
    when ``--traffic-slack`` allows more traffic, up to ``slack_max_nodes`` (there its
    eviction-ahead trials pay: Matmul_Case1 at slack 20, 1,012,136 -> 978,679 cycles), and
    only for plans whose makespan before CPE is within ``promising`` times the best one
    after Stage 3 (CPE rarely gains more)."""

    max_nodes: int = 20_000
    slack_max_nodes: int = 100_000
    promising: float = 1.25

    def __post_init__(self) -> None:
        for name in ("max_nodes", "slack_max_nodes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"TimedProducerParams.{name} must be an integer >= 0, got {value!r}")
        if not (isinstance(self.promising, (int, float)) and self.promising >= 1.0):
            raise ValueError(f"TimedProducerParams.promising must be a number >= 1, got {self.promising!r}")


def trials_for(
    inst: Instance, slack: float, max_nodes: int = TimedProducerParams().max_nodes
) -> tuple[TimedParams, ...]:
    """The parameter sets :func:`timed_plans` tries: the defaults, plus eviction ahead of
    the frontier when ``slack`` (percent) allows more traffic; none above ``max_nodes``."""
    if inst.n > max_nodes:
        return ()
    return DEFAULT_TRIALS + (SLACK_TRIALS if slack > 0 else ())


def bottom_levels(inst: Instance) -> list[int]:
    """Longest path (in cycles, own cycles included) from each node to a sink of the
    instance graph: the criticality h(v) of paper Eq. 20."""
    L = inst.lists()
    indeg = [len(p) for p in L.pred]
    stack = [v for v in range(inst.n) if indeg[v] == 0]
    topo: list[int] = []
    while stack:
        v = stack.pop()
        topo.append(v)
        for w in L.succ[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                stack.append(w)
    tail = [0] * inst.n
    for v in reversed(topo):
        best = 0
        for w in L.succ[v]:
            if tail[w] > best:
                best = tail[w]
        tail[v] = best + L.cycles[v]
    return tail


class _Tier:
    """Resident segments of one tier (sorted by offset) and, per address, the end time of
    the event that ended its most recent occupant (the address-reuse wait)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.offs: list[int] = []  # sorted offsets of resident segments
        self.seg: dict[int, tuple[int, int]] = {}  # offset -> (size, buffer)
        self.used = 0
        self.last_end = np.zeros(cap, dtype=np.int64)

    def gaps(self, extra: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
        """Free address ranges [lo, hi), ``extra`` (offset, size) counted as occupied."""
        segs = [(o, self.seg[o][0]) for o in self.offs]
        if extra:
            segs = sorted(segs + list(extra))
        out = []
        at = 0
        for o, s in segs:
            if o > at:
                out.append((at, o))
            at = max(at, o + s)
        if at < self.cap:
            out.append((at, self.cap))
        return out

    def wait(self, off: int, size: int) -> int:
        return int(self.last_end[off : off + size].max())

    def add(self, off: int, size: int, b: int) -> None:
        bisect.insort(self.offs, off)
        self.seg[off] = (size, b)
        self.used += size

    def remove(self, off: int, end_time: int) -> None:
        size, _ = self.seg.pop(off)
        self.offs.pop(bisect.bisect_left(self.offs, off))
        self.used -= size
        self.last_end[off : off + size] = end_time

    def overlapping(self, lo: int, hi: int) -> list[int]:
        """Offsets of resident segments meeting [lo, hi)."""
        i = bisect.bisect_left(self.offs, lo)
        if i > 0:
            o = self.offs[i - 1]
            if o + self.seg[o][0] > lo:
                i -= 1
        out = []
        while i < len(self.offs) and self.offs[i] < hi:
            out.append(self.offs[i])
            i += 1
        return out


def timed_schedule(
    inst: Instance, reference: Sequence[int], params: TimedParams = TimedParams(), traffic_limit: int | None = None
) -> Plan:
    """Build a plan by list scheduling with memory at simulated time (see the module
    docstring). ``reference``: a topological order of the instance (spill ids ignored)
    that ranks operations for the window and the reuse distances. Raises
    :class:`TimedFailed` when it cannot place a buffer or would exceed ``traffic_limit``."""
    return _TimedScheduler(inst, reference, params, traffic_limit).run()


class _TimedScheduler:
    def __init__(self, inst: Instance, reference: Sequence[int], params: TimedParams, traffic_limit: int | None):
        hw = inst.hw
        self.inst, self.p, self.limit = inst, params, traffic_limit
        L = inst.lists()
        self.L = L
        n = self.n = inst.n
        caps = [hw.capacity[t] for t in hw.tiers]
        if max(caps) > MAX_TIER_CAPACITY:
            raise TimedFailed(f"a tier holds more than {MAX_TIER_CAPACITY} units")
        self.tiers = [_Tier(c) for c in caps]
        self.size = inst.buf_size.tolist()
        self.tier = inst.buf_tier.tolist()
        self.backed = inst.buf_backed.tolist()
        self.alloc_node = inst.buf_alloc.tolist()
        self.free_node = inst.buf_free.tolist()
        self.out_pipe = hw.pipe_index(hw.spill_out_pipe)
        self.in_pipe = hw.pipe_index(hw.spill_in_pipe)
        self.spill_cyc = [hw.spill_cycles(s) for s in self.size]
        rank = [0] * n
        seen = 0
        for v in reference:
            if 0 <= v < n:
                rank[v] = seen
                seen += 1
        if seen != n:
            raise ValueError("timed_schedule needs a reference order of every node of the instance")
        self.rank = rank
        kind = L.kind
        self.ops = sorted((v for v in range(n) if kind[v] == KIND_OP), key=rank.__getitem__)
        self.op_index = {v: i for i, v in enumerate(self.ops)}
        self.tail = bottom_levels(inst) if params.priority == "tail" else [n - r for r in rank]
        nb = inst.num_buffers
        self.user_idx = [sorted(self.op_index[u] for u in set(L.users[b])) for b in range(nb)]
        self.user_ptr = [0] * nb
        self.op_bufs = [sorted(set(L.bufs[v])) if kind[v] == KIND_OP else [] for v in range(n)]
        # ALLOCs an operation must follow besides its own buffers' (edges ALLOC -> op)
        self.pred_allocs = [
            sorted({L.node_buf[u] for u in L.pred[v] if kind[u] == KIND_ALLOC} - set(self.op_bufs[v]))
            if kind[v] == KIND_OP
            else []
            for v in range(n)
        ]
        # prerequisites: an operation waits for its non-ALLOC predecessors and for the
        # predecessors of the ALLOCs it needs; a FREE for its predecessors and its users
        dependents: list[list[int]] = [[] for _ in range(n)]
        count = [0] * n
        for v in range(n):
            k = kind[v]
            if k == KIND_ALLOC:
                continue
            reqs: set[int] = set()
            if k == KIND_OP:
                allocs = {u for u in L.pred[v] if kind[u] == KIND_ALLOC}
                allocs.update(self.alloc_node[b] for b in self.op_bufs[v])
                reqs.update(u for u in L.pred[v] if kind[u] != KIND_ALLOC)
                for a in allocs:
                    reqs.update(L.pred[a])
            else:
                b = L.node_buf[v]
                reqs.update(u for u in L.pred[v] if kind[u] != KIND_ALLOC)
                reqs.update(L.users[b])
                reqs.update(L.pred[self.alloc_node[b]])
            reqs.discard(v)
            count[v] = len(reqs)
            for u in reqs:
                dependents[u].append(v)
        self.dependents, self.count = dependents, count
        # state
        self.end: list[int] = [0] * n
        self.emitted = [False] * n
        self.order: list[int] = []
        self.pipe_free = [0] * len(hw.pipes)
        self.offset = [-1] * nb
        self.where: list[int | None] = [None] * nb  # current offset when resident
        self.allocated = [False] * nb
        self.use_end = [0] * nb  # max end of b's ALLOC, users and spill nodes so far
        self.in_end = [0] * nb  # max end of b's SPILL_INs
        self.spill_buf: list[int] = []
        self.spill_off: list[int] = []
        self.pending_in: dict[int, int] = {}  # buffer -> spill index awaiting its SPILL_IN
        self.traffic = 0
        self.frontier = 0  # index into self.ops
        # loads (operations on the spill-in pipe, DDR -> core) and reloads look ``window``
        # operations ahead, the bottleneck pipe's operations ``compute_window``, the
        # other engines' (which feed it) ``feed_window``
        load_pipe = self.in_pipe
        busy = [0] * len(hw.pipes)
        for v in self.ops:
            busy[L.pipe[v]] += L.cycles[v]
        bottleneck = max(range(len(busy)), key=lambda p: (busy[p], -p))
        self.op_class = [0 if L.pipe[v] == load_pipe else 1 if L.pipe[v] == bottleneck else 2 for v in self.ops]
        self.class_window = (params.window, params.compute_window, params.feed_window)
        self.ptr = [-1, -1, -1]
        self.reload_ptr = -1
        self.ready_time = [0] * n
        npipes = len(hw.pipes)
        self.waiting: list[list[tuple]] = [[] for _ in range(npipes)]
        self.available: list[list[tuple]] = [[] for _ in range(npipes)]
        self.blocked: list[tuple[int, tuple]] = []  # (pipe, entry) waiting for room
        self.in_heap: set[int] = set()  # tasks in a heap or blocked
        self.reload_queued = [False] * nb

    # ---------------------------------------------------------------- emission
    def _emit(self, v: int, extra: int, pipe: int, cyc: int) -> int:
        t = extra
        end = self.end
        if v < self.n:
            for u in self.L.pred[v]:
                if end[u] > t:
                    t = end[u]
        if pipe >= 0:
            if self.pipe_free[pipe] > t:
                t = self.pipe_free[pipe]
            self.pipe_free[pipe] = t + cyc
        if v >= len(end):
            end.extend([0] * (v + 1 - len(end)))
        end[v] = t + cyc
        self.order.append(v)
        return t + cyc

    def _emit_alloc(self, b: int, off: int) -> None:
        t = self.tier[b]
        tier = self.tiers[t]
        wait = tier.wait(off, self.size[b])
        a = self.alloc_node[b]
        e = self._emit(a, wait, -1, 0)
        self.emitted[a] = True
        tier.add(off, self.size[b], b)
        self.offset[b] = off
        self.where[b] = off
        self.allocated[b] = True
        self.use_end[b] = max(self.use_end[b], e)

    def _emit_spill_out(self, b: int) -> None:
        k = len(self.spill_buf)
        self.spill_buf.append(b)
        self.spill_off.append(-1)
        cost = self.size[b] if self.backed[b] else 2 * self.size[b]
        self.traffic += cost
        if self.limit is not None and self.traffic > self.limit:
            raise TimedFailed(f"traffic {self.traffic} over the allowance {self.limit}")
        cyc = 0 if self.backed[b] else self.spill_cyc[b]
        e = self._emit(self.n + 2 * k, self.use_end[b], self.out_pipe, cyc)
        self.use_end[b] = max(self.use_end[b], e)
        self.tiers[self.tier[b]].remove(self.where[b], e)
        self.where[b] = None
        self.pending_in[b] = k
        # a released operation that needs b again may want it reloaded ahead of time
        if self._next_use_index(b) <= self.frontier + self.p.window:
            self._queue_reload(b)

    def _emit_spill_in(self, b: int, off: int) -> None:
        k = self.pending_in.pop(b)
        tier = self.tiers[self.tier[b]]
        wait = tier.wait(off, self.size[b])
        out_end = self.end[self.n + 2 * k]
        e = self._emit(self.n + 2 * k + 1, max(wait, out_end), self.in_pipe, self.spill_cyc[b])
        self.spill_off[k] = off
        tier.add(off, self.size[b], b)
        self.where[b] = off
        self.in_end[b] = max(self.in_end[b], e)
        self.use_end[b] = max(self.use_end[b], e)

    def _emit_free(self, f: int) -> None:
        b = self.L.node_buf[f]
        if not self.allocated[b]:  # a buffer no operation uses
            off = self._choose_offset(self.tier[b], self.size[b], 0, forced=True, pinned={b})
            if off is None:
                off = self._evict_for(self.tier[b], self.size[b], {b}, [])
            self._emit_alloc(b, off)
        e = self._emit(f, self.in_end[b], -1, 0)
        self.emitted[f] = True
        self.tiers[self.tier[b]].remove(self.where[b], e)
        self.where[b] = None
        self._done(f)
        self._unblock()

    def _done(self, v: int) -> None:
        """Count ``v`` as emitted for its dependents: release operations, emit FREEs."""
        frees = []
        for w in self.dependents[v]:
            self.count[w] -= 1
            if self.count[w] == 0:
                if self.L.kind[w] == KIND_FREE:
                    frees.append(w)
                else:
                    self._maybe_release(w)
        for f in frees:
            self._emit_free(f)

    # ---------------------------------------------------------------- the window
    def _maybe_release(self, v: int) -> None:
        if self.count[v] or self.emitted[v] or v in self.in_heap or not self._in_window(self.op_index[v]):
            return
        t = 0
        for u in self.L.pred[v]:
            if self.L.kind[u] != KIND_ALLOC and self.end[u] > t:
                t = self.end[u]
        self.ready_time[v] = t
        p = self.L.pipe[v]
        self.in_heap.add(v)
        heapq.heappush(self.waiting[p], (t, -self.tail[v], self.rank[v], v))

    def _queue_reload(self, b: int) -> None:
        if self.reload_queued[b]:
            return
        self.reload_queued[b] = True
        k = self.pending_in[b]
        t = self.end[self.n + 2 * k]
        nxt = self._next_use_index(b)
        user = self.ops[nxt] if nxt < len(self.ops) else None
        prio = (self.tail[user] if user is not None else 0) + self.spill_cyc[b]
        heapq.heappush(self.waiting[self.in_pipe], (t, -prio, self.rank[user] if user is not None else 0, -(b + 1)))

    def _advance_window(self) -> None:
        ops = self.ops
        while self.frontier < len(ops) and self.emitted[ops[self.frontier]]:
            self.frontier += 1
        for c in (0, 1, 2):
            hi = min(len(ops) - 1, self.frontier + self.class_window[c])
            while self.ptr[c] < hi:
                self.ptr[c] += 1
                if self.op_class[self.ptr[c]] == c:
                    self._maybe_release(ops[self.ptr[c]])
        hi = min(len(ops) - 1, self.frontier + self.p.window)
        while self.reload_ptr < hi:  # spilled buffers needed within the load window: reload ahead
            self.reload_ptr += 1
            v = ops[self.reload_ptr]
            if not self.emitted[v]:
                for b in self.op_bufs[v]:
                    if b in self.pending_in:
                        self._queue_reload(b)

    def _in_window(self, i: int) -> bool:
        return i < len(self.ops) and i <= self.frontier + self.class_window[self.op_class[i]]

    def _next_use_index(self, b: int) -> int:
        """Index (in reference order of operations) of b's next operation not yet emitted."""
        idx = self.user_idx[b]
        i = self.user_ptr[b]
        ops, emitted = self.ops, self.emitted
        while i < len(idx) and emitted[ops[idx[i]]]:
            i += 1
        self.user_ptr[b] = i
        return idx[i] if i < len(idx) else len(ops)

    # ---------------------------------------------------------------- placement
    def _choose_offset(
        self, t: int, size: int, want: int, forced: bool, pinned: set[int], extra: Sequence[tuple[int, int]] = ()
    ) -> int | None:
        """Time-aware best fit: free addresses whose reuse wait ends by ``want`` first,
        then the smallest hole (Eq. 24), then the lowest address. Ahead of the frontier
        (``forced`` false) the tier must stay at most ``fill`` full."""
        tier = self.tiers[t]
        if (
            not forced
            and tier.used + sum(s for _, s in extra) + size + self._reserve(t, pinned) > self.p.fill * tier.cap
        ):
            return None
        best = None
        for lo, hi in tier.gaps(extra):
            if hi - lo < size:
                continue
            for a in (lo, hi - size) if hi - lo > size else (lo,):
                key = (max(0, tier.wait(a, size) - want), hi - lo, a)
                if best is None or key < best:
                    best = key
        return None if best is None else best[2]

    def _reserve(self, t: int, pinned: set[int]) -> int:
        """Room in tier ``t`` that the next ``reserve_ops`` operations of the reference
        order still need (their buffers not resident, ``pinned`` ones aside): prefetch
        ahead of them must leave it free."""
        need = 0
        seen: set[int] = set()
        i, k = self.frontier, 0
        ops, emitted = self.ops, self.emitted
        while i < len(ops) and k < self.p.reserve_ops:
            v = ops[i]
            i += 1
            if emitted[v]:
                continue
            k += 1
            for b in self.op_bufs[v]:
                if self.tier[b] == t and self.where[b] is None and b not in pinned and b not in seen:
                    seen.add(b)
                    need += self.size[b]
        return need

    def _evict_for(
        self, t: int, size: int, pinned: set[int], extra: Sequence[tuple[int, int]], horizon: int | None = None
    ) -> int | None:
        """Spill the cheapest contiguous window of resident buffers that frees ``size``
        units (cost-aware Belady, ties and near-ties by the earliest SPILL_OUT start);
        returns the window's start address. With ``horizon`` (a load ahead of the frontier
        making its own room) only buffers next used past ``horizon`` may go, the one
        free first wins, and ``None`` says there is none."""
        tier = self.tiers[t]
        starts = {0}
        for o in tier.offs:
            s = tier.seg[o][0]
            starts.update((o, o + s, o + s - size))
        for o, s in extra:
            starts.update((o + s, o + s - size))
        extra_ranges = list(extra)
        cands = []
        for a in sorted(starts):
            if a < 0 or a + size > tier.cap:
                continue
            if any(o < a + size and a < o + s for o, s in extra_ranges):
                continue
            victims = [tier.seg[o][1] for o in tier.overlapping(a, a + size)]
            if any(b in pinned for b in victims):
                continue
            cost = 0.0
            ok = True
            ready = 0
            near = len(self.ops)  # the soonest next use among the victims, in operations from the frontier
            for b in victims:
                nxt = self._next_use_index(b)
                if nxt >= len(self.ops) or (horizon is not None and nxt <= horizon):
                    ok = False  # dead (waiting for its FREE: never worth spilling) or needed soon
                    break
                traffic = self.size[b] if self.backed[b] else 2 * self.size[b]
                cost += traffic / (nxt - self.frontier + 1)
                ready = max(ready, self.use_end[b])
                near = min(near, nxt - self.frontier)
            if ok:
                cands.append((cost, ready, a, victims, near))
        if not cands:
            if horizon is not None:
                return None
            raise TimedFailed(f"no room for {size} units in {self.inst.hw.tiers[t]} even after evicting")
        best_cost = min(c[0] for c in cands)
        bar = best_cost * (1 + self.p.victim_tolerance) + 1e-12
        h = self.p.victim_horizon
        pool = [c for c in cands if c[0] <= bar or (h and c[4] >= h)]  # far-reused windows all qualify
        cost, ready, a, victims, _ = min(pool, key=lambda c: (c[1], c[0], c[2]))
        for b in sorted(victims, key=lambda b: self.where[b]):
            self._emit_spill_out(b)
        return a

    def _unblock(self) -> None:
        if self.blocked:
            for p, entry in self.blocked:
                heapq.heappush(self.waiting[p], entry)
            self.blocked.clear()

    # ---------------------------------------------------------------- issuing
    def _issue_op(self, v: int, forced: bool) -> bool:
        bufs = self.op_bufs[v]
        pinned_res = [b for b in bufs if self.where[b] is not None]
        missing = [b for b in bufs if self.where[b] is None]
        missing += [b for b in self.pred_allocs[v] if not self.allocated[b]]
        want = max(self.ready_time[v], self.pipe_free[self.L.pipe[v]])
        if missing:
            # buffers already resident must not be evicted for this operation
            plan = self._place_keep(missing, pinned_res, want, forced, load=self.L.pipe[v] == self.in_pipe)
            if plan is None:
                return False
            for b, off in plan:
                if self.allocated[b]:
                    self._emit_spill_in(b, off)
                else:
                    self._emit_alloc(b, off)
        extra = 0
        for b in bufs:
            if self.in_end[b] > extra:
                extra = self.in_end[b]
        e = self._emit(v, extra, self.L.pipe[v], self.L.cycles[v])
        self.emitted[v] = True
        for b in bufs:
            if e > self.use_end[b]:
                self.use_end[b] = e
        self._done(v)
        return True

    def _place_keep(self, missing: list[int], keep: list[int], want: int, forced: bool, load: bool = False):
        plan: list[tuple[int, int]] = []
        by_tier: dict[int, list[tuple[int, int]]] = {}
        pinned = set(missing) | set(keep)
        for b in sorted(missing, key=lambda b: (-self.size[b], b)):
            t = self.tier[b]
            extra = by_tier.setdefault(t, [])
            off = self._choose_offset(t, self.size[b], want, forced, pinned, extra)
            if off is None:
                if not forced:
                    if not (load and self.p.lookahead_evict and not extra and len(missing) == 1):
                        return None
                    off = self._evict_for(t, self.size[b], pinned, extra, horizon=self._horizon(b))
                    if off is None:
                        return None
                else:
                    off = self._evict_for(t, self.size[b], pinned, extra)
            extra.append((off, self.size[b]))
            plan.append((b, off))
        return plan

    def _horizon(self, b: int) -> int:
        """A load ahead of the frontier may only evict buffers needed after its own
        buffer ``b`` is (Belady-consistent: the frontier would evict them first)."""
        return self._next_use_index(b)

    def _issue_reload(self, b: int) -> bool:
        self.reload_queued[b] = False
        if b not in self.pending_in:
            return True  # reloaded meanwhile by its operation
        t = self.tier[b]
        want = max(self.pipe_free[self.in_pipe], self.end[self.n + 2 * self.pending_in[b]])
        off = self._choose_offset(t, self.size[b], want, False, {b})
        if off is None and self.p.lookahead_evict:
            off = self._evict_for(t, self.size[b], {b}, [], horizon=self._horizon(b))
        if off is None:
            self.reload_queued[b] = True
            return False
        self._emit_spill_in(b, off)
        return True

    # ---------------------------------------------------------------- main loop
    def run(self) -> Plan:
        n = self.n
        for v in range(n):  # FREEs with nothing to wait for
            if self.L.kind[v] == KIND_FREE and self.count[v] == 0 and not self.emitted[v]:
                self._emit_free(v)
        self._advance_window()
        npipes = len(self.pipe_free)
        total_ops = len(self.ops)
        emitted_ops = 0
        while emitted_ops < total_ops:
            best = None
            for p in range(npipes):
                w, a = self.waiting[p], self.available[p]
                while w and w[0][0] <= self.pipe_free[p]:
                    entry = heapq.heappop(w)
                    heapq.heappush(a, (entry[1], entry[2], entry[3], entry[0]))
                if a:
                    key = (self.pipe_free[p], a[0][0], a[0][1], p)
                elif w:
                    key = (w[0][0], w[0][1], w[0][2], p)
                else:
                    continue
                if best is None or key < best:
                    best = key
            if best is None:
                raise TimedFailed("no task can run (blocked on memory with no frontier task)")
            p = best[3]
            if self.available[p]:
                negp, rk, task, rt = heapq.heappop(self.available[p])
            else:
                rt, negp, rk, task = heapq.heappop(self.waiting[p])
            entry = (rt, negp, rk, task)
            if task < 0:
                if not self._issue_reload(-task - 1):
                    self.blocked.append((p, entry))
                continue
            v = task
            forced = self.op_index[v] == self.frontier
            if not self._issue_op(v, forced):
                self.blocked.append((p, entry))
                continue
            self.in_heap.discard(v)
            emitted_ops += 1
            old = self.frontier
            self._advance_window()
            if self.frontier != old and self.frontier < total_ops:
                f = self.ops[self.frontier]
                for i, (q, ent) in enumerate(self.blocked):
                    if ent[3] == f:
                        heapq.heappush(self.waiting[q], ent)
                        self.blocked.pop(i)
                        break
        if len(self.order) != n + 2 * len(self.spill_buf):
            raise TimedFailed("not every node was emitted")
        return plan_from_indices(self.inst, self.order, self.offset, list(zip(self.spill_buf, self.spill_off)))


def timed_plans(
    inst: Instance,
    reference: Sequence[int],
    traffic_limit: int,
    trials: Sequence[TimedParams] = DEFAULT_TRIALS,
) -> tuple[list[tuple[Plan, Evaluation, str]], list[dict], tuple[Plan, Evaluation, str] | None]:
    """Run :func:`timed_schedule` for each parameter set. Returns the plans the evaluator
    accepts with traffic within ``traffic_limit``, fastest first (ties: trial order); one
    record per trial, ``{producer, traffic, makespan}`` or ``{producer, failed}``; and the
    fastest valid plan whatever its traffic (its order is worth DLR's placement, see
    :func:`replaced_plan`), or ``None``. Trials run without the limit so that the
    fastest order is known even when its own spills cost too much."""
    out = []
    attempts: list[dict] = []
    fastest = None
    for i, params in enumerate(trials):
        try:
            plan = timed_schedule(inst, reference, params)
        except TimedFailed as exc:
            attempts.append({"producer": params.name, "failed": str(exc)})
            continue
        ev = evaluate(inst, plan)
        if not ev.valid:  # a bug, never a result: the tests catch it
            attempts.append({"producer": params.name, "failed": f"invalid plan: {ev.errors[0].message}"})
            continue
        attempts.append({"producer": params.name, "traffic": ev.extra_traffic, "makespan": ev.makespan})
        if fastest is None or ev.makespan < fastest[1].makespan:
            fastest = (plan, ev, params.name)
        if ev.extra_traffic <= traffic_limit:
            out.append((ev.makespan, i, plan, ev, params.name))
        else:
            ev.drop_detail()
    out.sort(key=lambda x: (x[0], x[1]))
    return [(plan, ev, name) for _, _, plan, ev, name in out], attempts, fastest


def replaced_plan(
    inst: Instance, plan: Plan, traffic_limit: int, name: str, cover_time_limit: float = 10.0
) -> tuple[Plan, Evaluation, str] | None:
    """Stage 2's placement and victim rules (DLR without order search) on the order of a
    time-driven ``plan`` (spill nodes dropped): the order keeps the producer's engine
    overlap, DLR's exact spill plan keeps the traffic low. ``None`` when it cannot place
    or exceeds ``traffic_limit``; also, without running DLR, when the capacity-cover bound
    of that order (lifetimes tightened as DLR does) already exceeds it: no placement of
    the order can then be within the limit, so the answer is the same, only sooner."""
    order = [v for v in plan.order if v < inst.n]
    if traffic_lower_bound(inst, tighten_lifetimes(inst, order), time_limit=cover_time_limit).value > traffic_limit:
        return None
    try:
        got = dlr_plan(inst, order, search=False)
    except (PlacementFailed, ValueError):
        return None
    ev = got.evaluation
    if not ev.valid or ev.extra_traffic > traffic_limit:
        return None
    return got.plan, ev, f"dlr-on-{name}"


def traffic_allowance(traffic: int, slack: float) -> int:
    """Problem-2 traffic times (1 + slack/100), rounded down: what problem 3 may spend."""
    return int(traffic * (100 + slack) // 100) if slack == int(slack) else int(traffic * (1 + slack / 100))


def timed_candidates(
    inst: Instance, plan2: Plan, traffic2: int, slack: float, params: TimedProducerParams = TimedProducerParams()
) -> tuple[list[tuple[Plan, Evaluation, str]], dict]:
    """The time-driven producer on the Stage-2 order ``plan2`` (traffic ``traffic2``),
    within the allowance :func:`traffic_allowance`: its fastest plan (before CPE) and
    DLR's placement on that plan's order (``dlr-on-...``), as (plan, evaluation, name)
    for Stage 3. The info lists {producer, traffic, makespan} of every plan made
    (makespan before CPE; ``failed`` when a trial could not finish) and the allowance;
    the caller sets ``winner`` when one of them ends fastest after Stage 3."""
    t0 = time.perf_counter()
    limit = traffic_allowance(traffic2, slack)
    reference = [v for v in plan2.order if v < inst.n]
    plans, tried, fastest = timed_plans(
        inst, reference, limit, trials_for(inst, slack, params.slack_max_nodes if slack > 0 else params.max_nodes)
    )
    out = plans[:1]
    if fastest is not None:
        replaced = replaced_plan(inst, fastest[0], limit, fastest[2])  # the fastest order, DLR's spills
        if replaced is not None:
            tried.append(
                {"producer": replaced[2], "traffic": replaced[1].extra_traffic, "makespan": replaced[1].makespan}
            )
            out.append(replaced)
    info = {"allowance": limit, "tried": tried, "winner": None, "seconds": round(time.perf_counter() - t0, 3)}
    return out, info
