"""``hmcos``: HMCOS-style hierarchical memory-constrained operator scheduling
(Wang et al., 2022, "HMCOS: Hierarchical Memory-Constrained Operator Scheduling"),
followed by the shared best-fit + LRU memory stage (no timing stage).

The idea, as re-implemented here on the operation-level DAG
(:class:`~dansched.application.baselines.common.OpGraph`, just-in-time buffer lifetimes):

1. **Sequences** (:func:`sequences`): an operation whose only successor has it as
   only predecessor is merged with that successor; chains are scheduled whole.
2. **Groups** (:func:`groups`): on the graph of sequences plus a virtual source
   and sink, the dominator tree and the post-dominator tree
   (``networkx.immediate_dominators``, forward and on the reversed graph) give
   the groups: a unit with everything it dominates (single entry) or everything
   it post-dominates (single exit; in these tiled graphs, e.g. all the work that
   feeds one output tile's COPY_OUT and nothing else). Both kinds are convex, so
   each contracts to one vertex of its parent's graph; they are kept as a laminar
   family, smallest first (at most :data:`GROUP_MAX` units), and a group whose
   contraction would still close a cycle with a sibling is dissolved.
3. **Scheduling** (:func:`schedule_items`): inside each group, bottom-up, a
   dynamic programme over ready frontiers: states are sets of scheduled items
   (deduplicated by a Zobrist hash of the set), ranked by (peak so far, live
   memory), a state whose peak exceeds the *budget* is dropped. Up to
   :data:`BEAM_WIDTH` states survive each step (exact when the frontier count stays
   below it), fewer in large groups (:data:`BEAM_WORK`); a large top level runs
   with width 1 (a memory-greedy list schedule), which keeps the official cases fast.
4. **Ungrouping around the peak** (:func:`hmcos_order`): the outermost group that
   holds the operation where the peak occurs (when that operation is in no group:
   the top-level group that runs nearest to it) is dissolved into its parent, and the
   schedule is rebuilt with the current peak as budget; kept when the peak drops,
   repeated for at most :data:`MAX_ROUNDS` rounds (fewer on large graphs:
   :data:`ROUND_WORK`), so the result is a function of the instance; ``time_limit``
   is only a safety stop (reported in ``info`` when it fires).

The memory model counts only L1 and UB buffers (the paper's ``M_max``); the final
order's figures come from the evaluator.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from ...graph import smallest_first_order
from ...instance import Instance
from .common import MethodResult, OpGraph, Stopwatch, full_order, lru_memory_stage, op_graph

__all__ = ["run", "sequences", "groups", "schedule_items", "hmcos_order", "Hierarchy", "BEAM_WIDTH", "BEAM_WORK"]

BEAM_WIDTH = 24  # frontier states kept per step inside a group, at most ...
BEAM_WORK = 40_000  # ... BEAM_WORK / items**2 of them (about steps x frontier x width)
GROUP_MAX = 1500  # regions larger than this are not grouped (they stay in their parent)
MAX_ROUNDS = 48  # ungrouping rounds around the peak ...
ROUND_WORK = 100_000  # ... and at most ROUND_WORK / units of them (work, not time, keeps it deterministic)
_SOURCE, _SINK = -1, -2


def sequences(g: OpGraph) -> list[list[int]]:
    """Maximal chains ``u -> w`` with ``succs(u) == [w]`` and ``preds(w) == [u]``, each a
    list of operation indices in chain order; chains are listed by their head."""

    def merged_with_pred(w: int) -> bool:
        return len(g.preds[w]) == 1 and len(g.succs[g.preds[w][0]]) == 1

    out: list[list[int]] = []
    for v in range(g.m):
        if merged_with_pred(v):
            continue
        chain = [v]
        while len(g.succs[chain[-1]]) == 1 and merged_with_pred(g.succs[chain[-1]][0]):
            chain.append(g.succs[chain[-1]][0])
        out.append(chain)
    return out


def _unit_edges(g: OpGraph, seqs: list[list[int]]) -> tuple[list[list[int]], list[list[int]]]:
    unit_of = [0] * g.m
    for u, chain in enumerate(seqs):
        for i in chain:
            unit_of[i] = u
    succs: list[set[int]] = [set() for _ in seqs]
    for i in range(g.m):
        for j in g.succs[i]:
            if unit_of[i] != unit_of[j]:
                succs[unit_of[i]].add(unit_of[j])
    s = [sorted(x) for x in succs]
    p: list[list[int]] = [[] for _ in seqs]
    for u, ws in enumerate(s):
        for w in ws:
            p[w].append(u)
    return p, s


@dataclass
class Hierarchy:
    """Units (sequences) and groups. Group ``k`` has an entry unit, its member units
    (all levels) and its direct children: units and groups (as ``("u", i)`` /
    ``("g", k)``). ``top`` are the direct children of the whole graph."""

    seqs: list[list[int]]
    preds: list[list[int]]
    succs: list[list[int]]
    entry: list[int] = field(default_factory=list)
    members: list[frozenset[int]] = field(default_factory=list)
    children: list[list[tuple[str, int]]] = field(default_factory=list)
    top: list[tuple[str, int]] = field(default_factory=list)


def _subtrees(idom: dict[int, int], n: int) -> list[frozenset[int]]:
    """Member sets (units only) of the subtrees of a dominator tree with 2 to
    :data:`GROUP_MAX` units, smallest first (ties: lowest root)."""
    kids: dict[int, list[int]] = {}
    for u, d in idom.items():
        if u != d and u >= 0:
            kids.setdefault(d, []).append(u)
    size: dict[int, int] = {}
    post: list[int] = []
    stack = [(r, False) for r in (_SOURCE, _SINK) if r in kids and r not in idom]  # the start node
    while stack:  # post-order without recursion
        x, done = stack.pop()
        if done:
            post.append(x)
            continue
        stack.append((x, True))
        stack.extend((c, False) for c in sorted(kids.get(x, ()), reverse=True))
    for x in post:
        size[x] = (1 if x >= 0 else 0) + sum(size[c] for c in kids.get(x, ()))
    out = []
    for x in post:
        if x >= 0 and 1 < size[x] <= GROUP_MAX:
            members, todo = [], [x]
            while todo:
                y = todo.pop()
                members.append(y)
                todo.extend(kids.get(y, ()))
            out.append((size[x], x, frozenset(members)))
    out.sort(key=lambda t: (t[0], t[1]))
    return [r for _, _, r in out]


def groups(g: OpGraph) -> Hierarchy:
    """Sequences, then groups from the dominator tree (a unit and all it dominates:
    single entry) and the post-dominator tree (a unit and all it post-dominates: single
    exit) of the sequence graph with a virtual source and sink, kept as a laminar
    family, smallest first (see the module docstring)."""
    seqs = sequences(g)
    preds, succs = _unit_edges(g, seqs)
    h = Hierarchy(seqs, preds, succs)
    n = len(seqs)
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    for u, ws in enumerate(succs):
        for w in ws:
            G.add_edge(u, w)
    for u in range(n):
        if not preds[u]:
            G.add_edge(_SOURCE, u)
        if not succs[u]:
            G.add_edge(u, _SINK)
    regions = _subtrees(nx.immediate_dominators(G.reverse(copy=False), _SINK), n)
    regions += _subtrees(nx.immediate_dominators(G, _SOURCE), n)
    regions.sort(key=lambda r: (len(r), min(r)))
    top_of: list[int] = [-1] * n  # outermost accepted group holding each unit
    seen: set[frozenset[int]] = set()
    for r in regions:
        if r in seen:
            continue
        seen.add(r)
        tops: dict[int, int] = {}
        for u in r:
            if top_of[u] >= 0:
                tops[top_of[u]] = tops.get(top_of[u], 0) + 1
        if any(cnt != len(h.members[k]) for k, cnt in tops.items()):
            continue  # overlaps a group without containing it
        k = len(h.entry)
        h.entry.append(min(r))
        h.members.append(r)
        inner = set().union(*(h.members[c] for c in tops)) if tops else set()
        h.children.append(sorted([("g", c) for c in tops] + [("u", u) for u in r if u not in inner]))
        for u in r:
            top_of[u] = k
    h.top = sorted({("g", top_of[u]) if top_of[u] >= 0 else ("u", u) for u in range(n)})
    return h


class _Memory:
    """The just-in-time memory model of a partial schedule: ``live`` maps a started,
    unfinished buffer to its users still to run."""

    __slots__ = ("g",)

    def __init__(self, g: OpGraph) -> None:
        self.g = g

    def effect(self, ops: Sequence[int], live: dict[int, int], mem: int) -> tuple[int, int]:
        """(peak reached, memory after) of running ``ops`` from ``live``/``mem`` (unchanged)."""
        g = self.g
        over: dict[int, int] = {}
        peak = mem
        for i in ops:
            for b, s in g.bufs[i]:
                if b not in over and b not in live:
                    mem += s
                    over[b] = g.users[b]
            if mem > peak:
                peak = mem
            for b, s in g.bufs[i]:
                r = over.get(b, live.get(b, 0)) - 1
                over[b] = r
                if r == 0:
                    mem -= s
        return peak, mem

    def apply(self, ops: Sequence[int], live: dict[int, int]) -> None:
        g = self.g
        for i in ops:
            for b, _ in g.bufs[i]:
                r = live.get(b, g.users[b]) - 1
                if r == 0:
                    live.pop(b, None)
                else:
                    live[b] = r


def _item_graph(
    items: list[tuple[str, int]], unit_item: dict[int, int], h: Hierarchy
) -> tuple[list[list[int]], list[list[int]]]:
    succs: list[set[int]] = [set() for _ in items]
    for u, k in unit_item.items():
        for w in h.succs[u]:
            kw = unit_item.get(w)
            if kw is not None and kw != k:
                succs[k].add(kw)
    s = [sorted(x) for x in succs]
    p: list[list[int]] = [[] for _ in items]
    for k, ws in enumerate(s):
        for w in ws:
            p[w].append(k)
    return p, s


def schedule_items(
    mem: _Memory,
    item_ops: list[list[int]],
    preds: list[list[int]],
    succs: list[list[int]],
    budget: float,
    width: int,
) -> list[int] | None:
    """Order the items (each a fixed operation sequence) by a beam over ready frontiers
    (see the module docstring); states above ``budget`` are dropped (``None`` when none is
    left). Memory starts empty: an item's buffers shared with other groups are counted
    as the model sees them, i.e. relative to this group."""
    n = len(item_ops)
    rng = random.Random(0x5EED)
    zob = [rng.getrandbits(62) for _ in range(n)]
    rank = [min(ops) if ops else 0 for ops in item_ops]  # ties: the item holding the lowest operation id
    start_missing = [len(p) for p in preds]
    ready0 = tuple(k for k in range(n) if start_missing[k] == 0)
    # state: (peak, mem, hash, ready, missing, live, path)
    beam: list[tuple[int, int, int, tuple[int, ...], list[int], dict[int, Any], Any]] = [
        (0, 0, 0, ready0, start_missing, {}, None)
    ]
    for _ in range(n):
        cand: dict[int, tuple] = {}
        for si, (peak, m, hsh, ready, _missing, live, _path) in enumerate(beam):
            for k in ready:
                p2, m2 = mem.effect(item_ops[k], live, m)
                p2 = max(p2, peak)
                if p2 > budget:
                    continue
                key = (p2, m2, si, rank[k], k)
                h2 = hsh ^ zob[k]
                old = cand.get(h2)
                if old is None or key < old:
                    cand[h2] = key
        if not cand:
            return None
        chosen = sorted(cand.values())[:width]
        users: dict[int, int] = {}
        for _, _, si, _, _ in chosen:
            users[si] = users.get(si, 0) + 1
        new_beam: list[tuple[int, int, int, tuple[int, ...], list[int], dict[int, Any], Any]] = []
        for p2, m2, si, _, k in chosen:
            peak, m, hsh, ready, missing, live, path = beam[si]
            users[si] -= 1
            if users[si] > 0:  # the parent's structures are shared: copy them
                missing, live = list(missing), dict(live)
            mem.apply(item_ops[k], live)
            nr = [x for x in ready if x != k]
            for w in succs[k]:
                missing[w] -= 1
                if missing[w] == 0:
                    nr.append(w)
            new_beam.append((p2, m2, hsh ^ zob[k], tuple(sorted(nr)), missing, live, (k, path)))
        beam = new_beam
    best = beam[0]
    out: list[int] = []
    path = best[6]
    while path is not None:
        out.append(path[0])
        path = path[1]
    return out[::-1]


def _acyclic(preds: list[list[int]], succs: list[list[int]]) -> bool:
    return len(smallest_first_order(succs, [len(p) for p in preds])) == len(preds)


class _Scheduler:
    """Bottom-up scheduling of a hierarchy, with a cache of group schedules."""

    def __init__(self, g: OpGraph, h: Hierarchy) -> None:
        self.g, self.h = g, h
        self.mem = _Memory(g)
        self.cache: dict[int, list[int]] = {}
        self.children = [list(c) for c in h.children]
        self.top = list(h.top)

    def unit_members(self, item: tuple[str, int]) -> list[int]:
        kind, i = item
        return [i] if kind == "u" else sorted(self.h.members[i])

    def ops_of(self, item: tuple[str, int], budget: float) -> list[int] | None:
        kind, i = item
        if kind == "u":
            return self.h.seqs[i]
        if i not in self.cache:
            got = self.schedule(self.children[i], budget)
            if got is None:
                return None
            self.cache[i] = got
        return self.cache[i]

    def schedule(self, items: list[tuple[str, int]], budget: float) -> list[int] | None:
        """Schedule ``items`` (a list the scheduler owns: groups whose contraction
        would close a cycle with a sibling are replaced by their children in it)."""
        while True:
            unit_item = {u: k for k, it in enumerate(items) for u in self.unit_members(it)}
            preds, succs = _item_graph(items, unit_item, self.h)
            if _acyclic(preds, succs):
                break
            big = max((it for it in items if it[0] == "g"), key=lambda it: (len(self.h.members[it[1]]), -it[1]))
            items.remove(big)
            items.extend(self.children[big[1]])
            items.sort()
        item_ops = []
        for it in items:
            ops = self.ops_of(it, budget)
            if ops is None:
                return None
            item_ops.append(ops)
        width = max(1, min(BEAM_WIDTH, BEAM_WORK // max(1, len(items)) ** 2))
        order = schedule_items(self.mem, item_ops, preds, succs, budget, width)
        if order is None:
            return None
        return [i for k in order for i in item_ops[k]]

    def dissolve(self, k: int) -> None:
        """Replace the top-level group ``k`` by its children (their schedules stay cached)."""
        self.top.remove(("g", k))
        self.top.extend(self.children[k])
        self.top.sort()


def _profile(g: OpGraph, op_seq: Sequence[int]) -> tuple[int, int]:
    """(peak, position of the first operation where it occurs) of an operation sequence."""
    mem = _Memory(g)
    live: dict[int, int] = {}
    m, best, at = 0, -1, 0
    for pos, i in enumerate(op_seq):
        p, m = mem.effect([i], live, m)
        mem.apply([i], live)
        if p > best:
            best, at = p, pos
    return max(best, 0), at


def _group_near(sch: _Scheduler, seq: list[int], at: int, unit_of: dict[int, int]) -> int | None:
    """The top-level group to ungroup around the peak at position ``at`` of ``seq``: the
    one holding that operation, else the group whose operations run nearest to it
    (later ones first on equal distance: they hold the consumers of what is live)."""
    group_of: dict[int, int] = {}
    for kind, gk in sch.top:
        if kind == "g":
            for u in sch.h.members[gk]:
                group_of[u] = gk
    if not group_of:
        return None
    best: tuple[tuple[int, bool], int] | None = None
    for pos, i in enumerate(seq):
        k = group_of.get(unit_of[i])
        if k is None:
            continue
        key = (abs(pos - at), pos < at)
        if best is None or key < best[0]:
            best = (key, k)
    return best[1] if best else None


def hmcos_order(inst: Instance, time_limit: float = 60.0, g: OpGraph | None = None) -> tuple[list[int], dict]:
    """The HMCOS operation order as a full node order, and what the search did."""
    t0 = time.perf_counter()
    deadline = t0 + max(0.0, time_limit)
    g = g or op_graph(inst)
    h = groups(g)
    sch = _Scheduler(g, h)
    best = sch.schedule(sch.top, float("inf"))
    assert best is not None  # an unbounded budget never drops every state
    peak, at = _profile(g, best)
    first_peak = peak
    rounds = 0
    unit_of = {i: u for u, chain in enumerate(h.seqs) for i in chain}
    max_rounds = min(MAX_ROUNDS, max(4, ROUND_WORK // max(1, len(h.seqs))))
    timed_out = False
    while rounds < max_rounds:
        if time.perf_counter() > deadline:
            timed_out = True  # a safety stop: only then does the result depend on the clock
            break
        k = _group_near(sch, best, at, unit_of)
        if k is None:
            break  # no group left at the top level
        sch.dissolve(k)
        rounds += 1
        got = sch.schedule(sch.top, peak)
        if got is None:
            continue
        p2, at2 = _profile(g, got)
        if p2 < peak or (p2 == peak and got != best):
            best, peak, at = got, p2, at2
    info = {
        "sequences": len(h.seqs),
        "groups": len(h.entry),
        "ungrouped": rounds,
        "model_peak_first": first_peak,
        "model_peak": peak,
        "stopped_by_time_limit": timed_out,
    }
    return full_order(inst, g, best), info


def run(inst: Instance, time_limit: float = 60.0) -> MethodResult:
    """HMCOS order, then best-fit + LRU memory stage."""
    sw = Stopwatch()
    order, info = hmcos_order(inst, time_limit=time_limit)
    sw.lap("order")
    plan, _ = lru_memory_stage(inst, order)
    sw.lap("memory")
    return MethodResult(plan, info | {"stage_seconds": sw.seconds})
