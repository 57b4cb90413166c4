"""The Python list scheduler and forward-backward pass that the compiled ones replaced
(dansched/stages/cpe/list_schedule.py before the kernels): the oracle of tests/test_kernels.py.
Kept as it was, with Python's heapq and lists; only ``simulate_timing`` became the Python
reference simulator.

:func:`list_schedule_by_rule` is the oracle of the active mode: the rule of both modes
stated plainly, each step a scan of every released node (quadratic, no heaps)."""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from dansched.simulate import simulate_timing_reference as simulate_timing
from dansched.stages.cpe.skeleton import Skeleton


def list_schedule_arrays(
    order_preds: Sequence[Sequence[int]],
    order_succs: Sequence[Sequence[int]],
    tpreds: Sequence[Sequence[int]],
    pipe: Sequence[int],
    cycles: Sequence[int],
    priority: Sequence[int],
    tie: Sequence[int],
) -> list[int]:
    """:func:`list_schedule` on plain arrays (so it can run on a reversed graph too). A node's
    ready time is the latest end of its timing predecessors, known when its last order
    predecessor is emitted (every timing predecessor is an order predecessor)."""
    n = len(pipe)
    osucc = order_succs
    indeg = [len(p) for p in order_preds]
    end = [0] * n
    order: list[int] = []
    append = order.append
    pipes = sorted({p for p in pipe if p >= 0})
    pipe_free = {p: 0 for p in pipes}
    waiting: dict[int, list[tuple[int, int, int, int]]] = {p: [] for p in pipes}
    available: dict[int, list[tuple[int, int, int]]] = {p: [] for p in pipes}
    free_nodes: list[int] = []
    push, pop = heapq.heappush, heapq.heappop

    def ready(v: int) -> int:
        rt = 0
        for u in tpreds[v]:
            e = end[u]
            if e > rt:
                rt = e
        return rt

    def emit(v: int, start: int) -> None:
        end[v] = start + cycles[v]
        append(v)
        for w in osucc[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                p = pipe[w]
                if p < 0:
                    free_nodes.append(w)
                else:
                    push(waiting[p], (ready(w), -priority[w], tie[w], w))

    for v in range(n):
        if indeg[v] == 0:
            if pipe[v] < 0:
                free_nodes.append(v)
            else:
                push(waiting[pipe[v]], (ready(v), -priority[v], tie[v], v))
    while len(order) < n:
        while free_nodes:
            v = free_nodes.pop()
            emit(v, ready(v))
        best = None
        for p in pipes:
            w, a = waiting[p], available[p]
            free = pipe_free[p]
            while w and w[0][0] <= free:
                _, negp, t, v = pop(w)
                push(a, (negp, t, v))
            if a:
                key = (free, a[0][0], a[0][1], p)
            elif w:
                key = (w[0][0], w[0][1], w[0][2], p)
            else:
                continue
            if best is None or key < best:
                best = key
        if best is None:
            if len(order) < n and not free_nodes:
                raise RuntimeError("list_schedule: the skeleton's order constraints are cyclic")
            continue
        start, _, _, p = best
        if available[p]:
            v = pop(available[p])[2]
        else:
            v = pop(waiting[p])[3]
        emit(v, start)
        pipe_free[p] = end[v]
    return order


def list_schedule_by_rule(
    order_preds: Sequence[Sequence[int]],
    order_succs: Sequence[Sequence[int]],
    tpreds: Sequence[Sequence[int]],
    pipe: Sequence[int],
    cycles: Sequence[int],
    priority: Sequence[int],
    tie: Sequence[int],
    active: Sequence[int] = (),
) -> list[int]:
    """The list scheduler's rule, step by step. Nodes without a pipe are emitted as soon as
    they are released, the last released first. Otherwise each pipe's earliest node is the
    released node of least (start, -priority, tie, id), where a node starts at the later of
    the pipe's free time and its ready time (its timing predecessors' latest end); the pipe of
    least (time, -priority, tie, pipe index) of its earliest node goes next, the time being
    that node's start on a non-delay pipe and its finish on an active one. A non-delay
    pipe emits that node. An active pipe emits, among its released nodes that start before
    that node would finish (that node alone when none does), the one of least
    (-priority, tie, id), at its own start."""
    n = len(pipe)
    left = [len(p) for p in order_preds]
    end = [0] * n
    free: dict[int, int] = {}
    released: dict[int, list[int]] = {}
    stack: list[int] = []
    order: list[int] = []

    def ready(v: int) -> int:
        return max((end[u] for u in tpreds[v]), default=0)

    def release(v: int) -> None:
        if pipe[v] < 0:
            stack.append(v)
        else:
            released.setdefault(pipe[v], []).append(v)

    def emit(v: int, start: int) -> None:
        end[v] = start + cycles[v]
        order.append(v)
        for w in order_succs[v]:
            left[w] -= 1
            if left[w] == 0:
                release(w)

    for v in range(n):
        if left[v] == 0:
            release(v)
    while len(order) < n:
        if stack:
            v = stack.pop()
            emit(v, ready(v))
            continue
        chosen: tuple[tuple[int, int, int, int], int, int] | None = None
        for q in sorted(released):
            if not released[q]:
                continue
            f = free.get(q, 0)
            e = min(released[q], key=lambda v: (max(f, ready(v)), -priority[v], tie[v], v))
            s = max(f, ready(e))
            key = (s + cycles[e] if q in active else s, -priority[e], tie[e], q)
            if chosen is None or key < chosen[0]:
                chosen = (key, q, e)
        if chosen is None:
            raise RuntimeError("list_schedule: the skeleton's order constraints are cyclic")
        _, q, v = chosen
        f = free.get(q, 0)
        s = max(f, ready(v))
        if q in active:
            finish = s + cycles[v]
            conflict = [u for u in released[q] if max(f, ready(u)) < finish] or [v]
            v = min(conflict, key=lambda u: (-priority[u], tie[u], u))
            s = max(f, ready(v))
        released[q].remove(v)
        emit(v, s)
        free[q] = end[v]
    return order


def forward_backward(skel: Skeleton, order: Sequence[int], passes: int = 4) -> tuple[list[int], int, int]:
    """Forward-backward improvement (justification, as in project scheduling): schedule
    the reversed skeleton from the end with priority to nodes that finish late, which
    right-justifies every node; then schedule forward again with priority to nodes whose
    right-justified start is early. Each pass keeps the best order seen.
    Returns (order, makespan, passes run)."""
    g = skel.timing
    n = g.n
    osucc = skel.order_succs()
    tsucc = g.succs()
    best = list(order)
    start, end, best_m = simulate_timing(best, g.preds, g.pipe, g.cycles)
    cur_end = end
    cur_pos = {v: i for i, v in enumerate(best)}
    runs = 0
    for _ in range(passes):
        runs += 1
        rev = list_schedule_arrays(
            osucc,
            skel.order_preds,
            tsucc,
            g.pipe,
            g.cycles,
            [cur_end[v] for v in range(n)],
            [-cur_pos[v] for v in range(n)],
        )
        _, rev_end, total = simulate_timing(rev, tsucc, g.pipe, g.cycles)
        late_start = [total - rev_end[v] for v in range(n)]
        rpos = {v: i for i, v in enumerate(rev)}
        fwd = list_schedule_arrays(
            skel.order_preds,
            osucc,
            g.preds,
            g.pipe,
            g.cycles,
            [-late_start[v] for v in range(n)],
            [-rpos[v] for v in range(n)],
        )
        s2, e2, m2 = simulate_timing(fwd, g.preds, g.pipe, g.cycles)
        cur_end, cur_pos = e2, {v: i for i, v in enumerate(fwd)}
        if m2 < best_m:
            best, best_m = fwd, m2
        else:
            break
    return best, best_m, runs
