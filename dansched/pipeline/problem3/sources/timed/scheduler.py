"""The time-driven list scheduler with memory: the main loop that ties the parts together.

Each step takes the released task that can start earliest over all pipes (list
scheduling, ties to the criticality h(v) of Eq. 20; :mod:`.window`), makes room for
its missing buffers at simulated time (time-aware best fit, Eq. 24; :mod:`.placement`),
evicts when the frontier operation finds no room (cost-aware Belady windows, Eqs.
25-31; :mod:`.eviction`), and appends the nodes to the plan with the time the engines
would run them (Eqs. 9-10; :mod:`.emission`, :mod:`.engines`).

- Only the frontier operation may evict (and, with ``lookahead_evict``, a load making
  room for its own buffer from buffers needed after it). A task ahead of the frontier
  takes free room only, and only while its tier stays at most ``fill`` full with the
  next ``reserve_ops`` operations' buffers kept free; otherwise it is blocked until
  room is freed or it becomes the frontier.
- A spilled buffer needed within ``window`` operations is reloaded ahead of its use, as
  a task of the spill-in pipe.
- FREEs are emitted as soon as their prerequisites are.
"""

from __future__ import annotations

from collections.abc import Sequence

from .....errors import TimedFailed
from .....instance import KIND_ALLOC, KIND_FREE, Instance
from .....params import TimedParams
from .....plan import Plan
from .....rooms import choose_room
from .....stages.dlr.victim import INF, VictimFacts, victim_rule
from .emission import Buffers, Emission
from .engines import Engines
from .eviction import chosen_window, victim_windows
from .placement import Tier, has_prefetch_room, reserved_room
from .reference import NextUse, Operations, task_priority
from .window import Prerequisites, ReleaseWindow, TaskQueues, reload_task

__all__ = ["TimedScheduler", "timed_schedule"]

DEFAULT_PARAMS = TimedParams()


def timed_schedule(
    inst: Instance, reference: Sequence[int], params: TimedParams = DEFAULT_PARAMS, traffic_limit: int | None = None
) -> Plan:
    """Build a whole Stage-2 plan (order with spill nodes, offsets, spill list) by list
    scheduling with memory at simulated time. ``reference``: a topological order of the
    instance (spill ids ignored) that ranks operations for the window and the reuse
    distances. Raises :class:`TimedFailed` when it cannot place a buffer or would exceed
    ``traffic_limit`` (extra traffic), ValueError when ``reference`` misses a node."""
    return TimedScheduler(inst, reference, params, traffic_limit).run()


class TimedScheduler:
    """One run of :func:`timed_schedule`: the parts it composes (``em``, the emission
    with its engine clock ``em.engines`` and tiers ``em.tiers``; ``ops`` and
    ``next_use``, the reference order; ``prereq``, ``window`` and ``queues``, what may
    run next) and the rules that decide what to emit next. :meth:`run` once."""

    def __init__(self, inst: Instance, reference: Sequence[int], params: TimedParams, limit: int | None) -> None:
        hw = inst.hw
        self.inst, self.p = inst, params
        self.victim = victim_rule(params.victim)
        self.lists = inst.lists()
        self.ops = Operations.of(inst, reference)
        self.bufs = Buffers.of(inst)
        in_pipe = hw.pipe_index(hw.spill_in_pipe)
        engines = Engines(self.lists.pred, inst.n, len(hw.pipes))
        tiers = [Tier(hw.capacity[t]) for t in hw.tiers]
        self.em = Emission(engines, tiers, self.bufs, (hw.pipe_index(hw.spill_out_pipe), in_pipe), limit)
        self.next_use = NextUse(inst, self.ops, self.em.emitted)
        self.priority = task_priority(inst, self.ops.rank, params.priority)
        self.prereq = Prerequisites(inst, self.ops, self.bufs.alloc_node)
        self.window = ReleaseWindow.of(inst, self.ops.ops, params, in_pipe)
        self.queues = TaskQueues(len(hw.pipes))
        self.reload_queued = [False] * inst.num_buffers

    # ------------------------------------------------------------------ main loop
    def run(self) -> Plan:
        """Emit every node: the FREEs free from the start, then one released task at a
        time until every operation is emitted; the plan, or :class:`TimedFailed`."""
        L = self.lists
        for v in range(self.inst.n):  # FREEs with nothing to wait for
            if L.kind[v] == KIND_FREE and self.prereq.count[v] == 0 and not self.em.emitted[v]:
                self._emit_free(v)
        self._advance_window()
        total_ops = len(self.ops.ops)
        emitted_ops = 0
        while emitted_ops < total_ops:
            got = self.queues.next(self.em.engines.pipe_free)
            if got is None:
                raise TimedFailed("no task can run (blocked on memory with no frontier task)")
            p, entry = got
            ready, task = entry[0], entry[3]
            if task < 0:
                if not self._issue_reload(-task - 1):
                    self.queues.block(p, entry)
                continue
            if not self._issue_op(task, ready, forced=self.ops.index[task] == self.window.frontier):
                self.queues.block(p, entry)
                continue
            self.queues.released.discard(task)
            emitted_ops += 1
            old = self.window.frontier
            self._advance_window()
            if self.window.frontier != old and self.window.frontier < total_ops:
                self.queues.unblock(self.ops.ops[self.window.frontier])
        return self.em.plan(self.inst)

    # ------------------------------------------------------------------ issuing
    def _issue_op(self, v: int, ready: int, forced: bool) -> bool:
        """Emit operation ``v``, released at ``ready``, with the ALLOCs and SPILL_INs it
        needs first; ``False`` (nothing emitted) when a task ahead of the frontier finds
        no room."""
        L, em = self.lists, self.em
        bufs = self.ops.bufs[v]
        where, allocated = em.res.where, em.res.allocated
        resident = [b for b in bufs if where[b] is not None]
        missing = [b for b in bufs if where[b] is None]
        missing += [b for b in self.ops.pred_allocs[v] if not allocated[b]]
        want = max(ready, em.engines.pipe_free[L.pipe[v]])
        if missing:
            placed = self._place(missing, resident, want, forced, load=L.pipe[v] == em.in_pipe)
            if placed is None:
                return False
            for b, off in placed:
                if allocated[b]:
                    em.spill_in(b, off)
                else:
                    em.alloc(b, off)
        em.operation(v, L.pipe[v], L.cycles[v], bufs)
        self._done(v)
        return True

    def _place(
        self, missing: list[int], keep: list[int], want: int, forced: bool, load: bool
    ) -> list[tuple[int, int]] | None:
        """Offsets for the ``missing`` buffers (largest first), none of them or of ``keep``
        evicted. The frontier evicts when needed; a load ahead of it may (with
        ``lookahead_evict``) evict for its single buffer; other tasks get ``None``."""
        placed: list[tuple[int, int]] = []
        by_tier: dict[int, list[tuple[int, int]]] = {}
        pinned = set(missing) | set(keep)
        size, tier_of = self.bufs.size, self.bufs.tier
        for b in sorted(missing, key=lambda b: (-size[b], b)):
            t = tier_of[b]
            extra = by_tier.setdefault(t, [])
            off = self._choose_offset(t, size[b], want, forced, pinned, extra)
            if off is None:
                if forced:
                    off = self._evict_for(t, size[b], pinned, extra)
                elif load and self.p.lookahead_evict and not extra and len(missing) == 1:
                    off = self._evict_for(t, size[b], pinned, extra, horizon=self.next_use(b))
                if off is None:
                    return None
            extra.append((off, size[b]))
            placed.append((b, off))
        return placed

    def _issue_reload(self, b: int) -> bool:
        """SPILL_IN of spilled ``b`` ahead of its use; ``False`` when there is no room."""
        self.reload_queued[b] = False
        em = self.em
        if b not in em.res.pending_in:
            return True  # reloaded meanwhile by its operation
        t, size = self.bufs.tier[b], self.bufs.size[b]
        want = max(em.engines.pipe_free[em.in_pipe], em.spill_out_end(b))
        off = self._choose_offset(t, size, want, False, {b})
        if off is None and self.p.lookahead_evict:
            off = self._evict_for(t, size, {b}, [], horizon=self.next_use(b))
        if off is None:
            self.reload_queued[b] = True
            return False
        em.spill_in(b, off)
        return True

    def _emit_free(self, f: int) -> None:
        """Emit FREE ``f`` (with the ALLOC of a buffer no operation used), then what it releases."""
        b = self.lists.node_buf[f]
        if not self.em.res.allocated[b]:  # a buffer no operation uses
            t, size = self.bufs.tier[b], self.bufs.size[b]
            off = self._choose_offset(t, size, 0, True, {b})
            if off is None:
                off = self._evict_for(t, size, {b}, [])
            assert off is not None, "eviction without a horizon finds room or fails"
            self.em.alloc(b, off)
        self.em.free(f, b)
        self._done(f)
        self.queues.unblock_all()

    # ------------------------------------------------------------------ memory
    def _choose_offset(
        self, t: int, size: int, want: int, forced: bool, pinned: set[int], extra: Sequence[tuple[int, int]] = ()
    ) -> int | None:
        """The room ``p.room`` prefers in tier ``t`` (:mod:`dansched.rooms`; least late for
        ``want`` by default: a time-aware best fit, Eq. 24); ahead of the frontier
        (``forced`` false) only while the tier keeps its prefetch room."""
        tier = self.em.tiers[t]
        if not forced:
            upcoming = self.window.upcoming(self.p.reserve_ops, self.em.emitted)
            res = self.em.res
            reserve = reserved_room(upcoming, self.ops.bufs, self.bufs.tier, self.bufs.size, res.where, t, pinned)
            if not has_prefetch_room(tier, size, extra, reserve, self.p.fill):
                return None
        return choose_room(tier.free_ranges(extra), size, self.p.room, tier.wait, want)

    def _evict_for(
        self, t: int, size: int, pinned: set[int], extra: Sequence[tuple[int, int]], horizon: int | None = None
    ) -> int | None:
        """Spill the chosen victim window (:mod:`.eviction`) that frees ``size`` units in
        tier ``t``; returns its start address. With ``horizon`` (a load making its own
        room) ``None`` when no window qualifies; otherwise :class:`TimedFailed`."""
        k = self.window.frontier - 1  # distances from the operation before the frontier: never 0
        facts = self._victim_facts()
        windows = victim_windows(
            self.em.tiers[t],
            size,
            pinned,
            extra,
            next_use=self.next_use,
            frontier=self.window.frontier,
            n_ops=len(self.ops.ops),
            cost=lambda b: self.victim.cost(b, facts, k),
            use_end=self.em.res.use_end,
            horizon=horizon,
        )
        if not windows:
            if horizon is not None:
                return None
            raise TimedFailed(f"no room for {size} units in {self.inst.hw.tiers[t]} even after evicting")
        chosen = chosen_window(windows, self.p.victim_tolerance, self.p.victim_horizon)
        where = self.em.res.where

        def at(b: int) -> int:
            w = where[b]
            return -1 if w is None else w

        for b in sorted(chosen.victims, key=at):
            self.em.spill_out(b)
            # a released operation that needs b again may want it reloaded ahead of time
            if self.next_use(b) <= self.window.frontier + self.p.window:
                self._queue_reload(b)
        return chosen.start

    def _victim_facts(self) -> VictimFacts:
        """What the victim rule reads now: next uses (Eq. 26, operations of the reference
        order), the end time of each buffer's last use so far (the order of its uses), sizes,
        the traffic and cycles of one spill, and the buffers whose last use has not ended by
        the time the spill-out pipe is free (a write-out would wait for that operation)."""
        n_ops = len(self.ops.ops)
        em, bufs = self.em, self.bufs
        use_end = em.res.use_end
        free_at = em.engines.pipe_free[em.out_pipe]

        def next_need(b: int) -> float:
            nxt = self.next_use(b)
            return INF if nxt >= n_ops else nxt

        held: list[frozenset[int]] = []  # built on the first question, once per eviction

        def running(_k: int) -> frozenset[int]:
            if not held:
                held.append(frozenset(b for b, w in enumerate(em.res.where) if w is not None and use_end[b] > free_at))
            return held[0]

        return VictimFacts(next_need, use_end, bufs.size, bufs.traffic, bufs.round_trip_cycles, running=running)

    # ------------------------------------------------------------------ release
    def _done(self, v: int) -> None:
        """Count ``v`` as emitted for its dependents: release operations, emit FREEs."""
        frees = []
        kind = self.lists.kind
        for w in self.prereq.done(v):
            if kind[w] == KIND_FREE:
                frees.append(w)
            else:
                self._release(w)
        for f in frees:
            self._emit_free(f)

    def _release(self, v: int) -> None:
        """Queue operation ``v`` if its prerequisites are emitted and it lies in the
        window, ready when its non-ALLOC predecessors have ended (it emits its ALLOCs)."""
        q, L = self.queues, self.lists
        if self.prereq.count[v] or self.em.emitted[v] or v in q.released:
            return
        if not self.window.contains(self.ops.index[v]):
            return
        end = self.em.engines.end
        ready = 0
        for u in L.pred[v]:
            if L.kind[u] != KIND_ALLOC and end[u] > ready:
                ready = end[u]
        q.released.add(v)
        q.push(L.pipe[v], (ready, -self.priority[v], self.ops.rank[v], v))

    def _queue_reload(self, b: int) -> None:
        """Queue the reload of spilled ``b`` on the spill-in pipe, ranked by its next user."""
        if self.reload_queued[b]:
            return
        self.reload_queued[b] = True
        nxt = self.next_use(b)
        user = self.ops.ops[nxt] if nxt < len(self.ops.ops) else None
        prio = (self.priority[user] if user is not None else 0) + self.bufs.transfer_cycles[b]
        rank = self.ops.rank[user] if user is not None else 0
        self.queues.push(self.em.in_pipe, (self.em.spill_out_end(b), -prio, rank, reload_task(b)))

    def _advance_window(self) -> None:
        """Move the frontier: release the operations that entered their window, queue
        the reloads of spilled buffers that operations inside the load window need."""
        entered, reloads = self.window.advance(self.em.emitted)
        for v in entered:
            self._release(v)
        pending = self.em.res.pending_in
        for v in reloads:
            for b in self.ops.bufs[v]:
                if b in pending:
                    self._queue_reload(b)
