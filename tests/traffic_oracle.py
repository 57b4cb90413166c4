"""The least extra traffic of an instance by exhaustive search, written apart from the code
it checks: a Dijkstra search over every schedule of the nodes and spills, with capacity per
tier and no addresses (a relaxation of docs/rules.md, sections 5-6: every valid plan is one
of its paths with the same traffic, so its optimum is at most the true one, and a lower
bound above it is wrong).

A state is the set of nodes run and the set of live buffers in an open spill. Moves: run
a node whose predecessors have all run (an ALLOC needs room in its tier, an operation needs
its buffers resident, a FREE its buffer resident); SPILL_OUT a resident live buffer (its
traffic: size when a COPY_IN uses it, else twice the size); SPILL_IN a spilled one (needs
room). Two normalisations that never make a schedule costlier: a FREE whose buffer is
resident runs as soon as it is ready (it only gives room back), and an ALLOC runs only when
a successor has every predecessor but ALLOCs done (moving an ALLOC later only frees room).
"""

from __future__ import annotations

import heapq

from dansched.instance import KIND_ALLOC, KIND_FREE, Instance


def least_traffic(inst: Instance, max_states: int = 400_000) -> int | None:
    """The least extra traffic over every schedule (module docstring); None past
    ``max_states`` states or when no schedule exists."""
    L = inst.lists()
    n = inst.n
    kind = list(L.kind)

    preds = [0] * n
    for v in range(n):
        for u in L.pred[v]:
            preds[v] |= 1 << u
    succs = [list(L.succ[v]) for v in range(n)]
    alloc_mask = 0
    for v in range(n):
        if kind[v] == KIND_ALLOC:
            alloc_mask |= 1 << v
    sizes = inst.buf_size.tolist()
    tiers = inst.buf_tier.tolist()
    caps = [int(inst.hw.capacity[t]) for t in inst.hw.tiers]
    cost = [(sizes[b] if bool(inst.buf_backed[b]) else 2 * sizes[b]) for b in range(inst.num_buffers)]
    alloc_of = inst.buf_alloc.tolist()
    free_of = inst.buf_free.tolist()
    full = (1 << n) - 1

    def live(done: int) -> list[int]:
        return [b for b in range(inst.num_buffers) if done >> alloc_of[b] & 1 and not done >> free_of[b] & 1]

    def used(done: int, spilled: int) -> list[int]:
        u = [0] * len(caps)
        for b in live(done):
            if not spilled >> b & 1:
                u[tiers[b]] += sizes[b]
        return u

    def settle(done: int, spilled: int) -> int:
        changed = True
        while changed:
            changed = False
            for b in range(inst.num_buffers):
                f = free_of[b]
                if not done >> f & 1 and preds[f] & ~done == 0 and not spilled >> b & 1 and done >> alloc_of[b] & 1:
                    done |= 1 << f
                    changed = True
        return done

    start = settle(0, 0)
    dist = {(start, 0): 0}
    heap = [(0, start, 0)]
    while heap:
        d, done, spilled = heapq.heappop(heap)
        if dist.get((done, spilled)) != d:
            continue
        if done == full:
            return d
        if len(dist) > max_states:
            return None
        room = used(done, spilled)
        resident = {b for b in live(done) if not spilled >> b & 1}
        moves: list[tuple[int, int, int]] = []
        for v in range(n):
            if done >> v & 1 or preds[v] & ~done:
                continue
            if kind[v] == KIND_ALLOC:
                b = L.node_buf[v]
                if room[tiers[b]] + sizes[b] > caps[tiers[b]]:
                    continue
                if not any(preds[s] & ~done & ~alloc_mask & ~(1 << v) == 0 for s in succs[v]):
                    continue
                moves.append((0, done | 1 << v, spilled))
            elif kind[v] == KIND_FREE:
                continue  # settled, or its buffer is spilled and must come back first
            else:
                if any(spilled >> b & 1 or b not in resident for b in L.bufs[v]):
                    continue
                moves.append((0, done | 1 << v, spilled))
        for b in live(done):
            if spilled >> b & 1:
                if room[tiers[b]] + sizes[b] <= caps[tiers[b]]:
                    moves.append((0, done, spilled & ~(1 << b)))
            else:
                moves.append((cost[b], done, spilled | 1 << b))
        for c, nd, ns in moves:
            nd = settle(nd, ns)
            key = (nd, ns)
            if d + c < dist.get(key, 1 << 60):
                dist[key] = d + c
                heapq.heappush(heap, (d + c, nd, ns))
    return None
