"""What every method of the comparison shares.

- :class:`MethodResult` and the :class:`Method` protocol: a method is a function
  ``run(inst, time_limit) -> MethodResult(plan, info)``; the bench judges the plan
  with :func:`dansched.simulate.evaluate` and reports ``info`` beside it.
- :func:`input_order`: the instance's own (node id) order, or the smallest-id
  topological order when the ids break an edge or a buffer lifetime.
- :func:`lru_memory_stage`: the memory stage of the external baselines (paper
  Section 6.1 re-evaluates every method "under the same target tier model"): the
  Stage-2 linear scan with online best-fit placement and the LRU victim rule, on a
  fixed order (no reordering, no timing stage).
- :class:`OpGraph`: the operation-level DAG (cache nodes contracted away) and the
  just-in-time memory model the scheduling baselines optimise: a buffer of a peak
  tier (L1, UB) becomes live at its first user and dies after its last one, which
  is what :func:`~dansched.stages.dlr.reorder.tighten_lifetimes` makes of an operation
  order (lazy ALLOC, eager FREE).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...graph import lifetime_graph, smallest_first_order
from ...instance import KIND_OP, Instance
from ...plan import Plan, plan_from_indices
from ...stages.dlr.reorder import is_topological, tighten_lifetimes
from ...stages.dlr.scan import ScanResult, linear_scan

__all__ = [
    "MethodResult",
    "Method",
    "input_order",
    "lru_memory_stage",
    "scan_plan",
    "OpGraph",
    "op_graph",
    "full_order",
    "Stopwatch",
]


@dataclass
class MethodResult:
    """A method's plan (judged later by the evaluator) and what it wants reported.

    ``info`` holds plain JSON values; ``info["stage_seconds"]`` (name -> seconds), when
    present, feeds the per-stage compile-time table."""

    plan: Plan
    info: dict[str, Any] = field(default_factory=dict)


class Method(Protocol):
    """``run(inst, time_limit) -> MethodResult``; ``time_limit`` bounds the optional
    search (CP-SAT, beam rounds) of the method in seconds."""

    def __call__(self, inst: Instance, time_limit: float) -> MethodResult: ...


class Stopwatch:
    """Seconds per named stage, in the order they ran."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = round(self.seconds.get(name, 0.0) + now - self._t, 3)
        self._t = now


def input_order(inst: Instance) -> tuple[list[int], bool]:
    """The node id order when it respects every edge and buffer lifetime (``True``),
    else Kahn's algorithm over the lifetime graph taking the smallest ready id (``False``)."""
    ids = list(range(inst.n))
    if is_topological(inst, ids):
        return ids, True
    preds, succs = lifetime_graph(inst)
    return smallest_first_order(succs, [len(p) for p in preds]), False


def scan_plan(inst: Instance, res: ScanResult) -> Plan:
    """The plan a finished scan describes (offsets and spills by buffer index)."""
    return plan_from_indices(inst, res.sequence, res.offsets, res.spills())


def lru_memory_stage(inst: Instance, order: Sequence[int], planned=None) -> tuple[Plan, ScanResult]:
    """Best-fit placement with LRU eviction along ``order`` (Algorithm 2's scan with the
    paper's Table-4 LRU rule; L0 tiers by eager flush, as in every scan). ``planned``:
    spills decided in advance (position -> buffers spilled right after it)."""
    res = linear_scan(inst, order, rule="lru", mode="bestfit", evict="greedy", planned=planned)
    return scan_plan(inst, res), res


@dataclass
class OpGraph:
    """Operations of an instance as a DAG (edges through cache nodes contracted) with
    the peak-tier buffers each one touches.

    ``ops``: operation node ids (ascending); operations are indexed ``0..m-1`` in that
    order. ``bufs[i]``: ``(buffer, size)`` of the distinct L1/UB buffers of operation
    ``i``; ``users[b]``: how many operations use buffer ``b``."""

    ops: list[int]
    preds: list[list[int]]
    succs: list[list[int]]
    bufs: list[list[tuple[int, int]]]
    users: list[int]

    @property
    def m(self) -> int:
        return len(self.ops)


def op_graph(inst: Instance) -> OpGraph:
    """Contract the cache nodes of the lifetime graph (instance edges plus ALLOC ->
    user -> FREE): operation ``u`` precedes operation ``w`` when a path of cache nodes
    links them."""
    L = inst.lists()
    _, succ = lifetime_graph(inst)
    ops = [v for v in range(inst.n) if L.kind[v] == KIND_OP]
    index = {v: i for i, v in enumerate(ops)}
    reach: dict[int, frozenset[int]] = {}  # cache node -> operations reached through cache nodes

    def through(c: int) -> frozenset[int]:
        got = reach.get(c)
        if got is not None:
            return got
        stack, seen, out = [c], {c}, set()
        while stack:
            x = stack.pop()
            for w in succ[x]:
                if L.kind[w] == KIND_OP:
                    out.add(index[w])
                elif w not in seen:
                    seen.add(w)
                    stack.append(w)
        reach[c] = frozenset(out)
        return reach[c]

    succs: list[list[int]] = []
    for v in ops:
        out: set[int] = set()
        for w in succ[v]:
            if L.kind[w] == KIND_OP:
                out.add(index[w])
            else:
                out |= through(w)
        succs.append(sorted(out))
    preds: list[list[int]] = [[] for _ in ops]
    for i, ws in enumerate(succs):
        for j in ws:
            preds[j].append(i)
    peak = inst.is_peak_buffer().tolist()
    size = inst.buf_size.tolist()
    users = [0] * inst.num_buffers
    bufs: list[list[tuple[int, int]]] = []
    for v in ops:
        mine = sorted({b for b in L.bufs[v] if peak[b]})
        for b in mine:
            users[b] += 1
        bufs.append([(b, size[b]) for b in mine])
    return OpGraph(ops, preds, succs, bufs, users)


def full_order(inst: Instance, g: OpGraph, op_seq: Sequence[int]) -> list[int]:
    """The node order of an operation sequence (operation indices of ``g``): each ALLOC
    just before its first user, each FREE right after its last one
    (:func:`~dansched.stages.dlr.reorder.tighten_lifetimes`)."""
    ops = [g.ops[i] for i in op_seq]
    chosen = set(ops)
    rest = [v for v in range(inst.n) if v not in chosen]
    return tighten_lifetimes(inst, ops + rest)
