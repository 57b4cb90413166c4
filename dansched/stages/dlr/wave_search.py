"""Wave / sweep search for regular graphs: blocked reductions such as a
tiled matrix product, ordered output tile by output tile.

Structure, read from the graph alone (never from names: the carriers and their
sources of :mod:`dansched.models.bounds.grid`):

- a *source* of an operation ``v`` is a buffer of a spillable tier (not a
  single-residency L0 tier) that ``v`` uses, directly or through an L0 buffer that
  another operation fills from it (a MOVE from L1 to L0A feeding a MATMUL); the L0
  buffer's tier is the source's *port*;
- a *key* operation has exactly two ports with one source each (a row operand and a
  column operand) and one *accumulator*: an L0 buffer no other port uses, shared
  by the key operations of one output tile (a *group*);
- the groups form a *grid*: groups with the same row sources are a row, the same
  column sources a column; operations linked by a shared source belong to one
  reduction step ``k`` (union-find over sources), and every group has one
  operation per step.

A *wave* is the reduction of up to ``w`` groups at once (``w`` accumulators fit
their tier side by side), their k-loops interleaved (step by step). A *sweep*
walks the grid in bands of ``h`` rows (or columns), the bands in snake order,
each band's waves along it; the k-loops may alternate direction. Each sweep is a
key-operation order, completed into a full order (ancestors on demand, lazy loads
and ALLOCs, eager FREEs and stores: :func:`~dansched.stages.dlr.reorder.tighten_lifetimes`)
and scored by an exact replay of Stage 2's scan (best fit, the cost rule; when every
tier holds one buffer size this is farthest-next-use eviction, optimal for the
order). The best sweeps are then placed by :func:`~dansched.stages.dlr.stage.dlr_plan`
(every placement variant) and judged by the evaluator.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import chain

import numpy as np

from ...errors import PlacementFailed
from ...instance import Instance
from ...interrupt import stopping
from ...kernels.belady import belady_misses
from ...kernels.csr import int64_array
from ...models.bounds.grid import CarrierGraph, carrier_graph
from ...params import WaveParams
from ...plan import Plan
from ...simulate import Evaluation
from .reorder import tighten_lifetimes
from .scan import linear_scan
from .stage import dlr_plan
from .stats import WaveStats

__all__ = ["WaveResult", "TileGrid", "detect_grid", "sweep_orders", "wave_search"]


@dataclass
class TileGrid:
    """``ops[r][c][k]``: the key operation of output tile (row ``r``, column ``c``) at
    reduction step ``k``; ``width``: accumulators that fit their tier at once."""

    ops: list[list[list[int]]]
    width: int
    sources: dict[int, tuple[int, int]] = field(default_factory=dict)  # key op -> (row, column) source

    @property
    def shape(self) -> tuple[int, int, int]:
        return len(self.ops), len(self.ops[0]), len(self.ops[0][0])

    def transposed(self) -> TileGrid:
        R, C, _ = self.shape
        return TileGrid([[self.ops[r][c] for r in range(R)] for c in range(C)], self.width, self.sources)


@dataclass
class WaveResult:
    """The best sweep's plan, the evaluator's verdict on it (valid) and what the search did."""

    plan: Plan
    evaluation: Evaluation
    stats: WaveStats

    @property
    def traffic(self) -> int:
        return self.stats.traffic


def _ports(inst: Instance, graph: CarrierGraph, v: int) -> dict[int, set[int]]:
    """Port (tier of an L0 buffer of ``v``) -> the sources reaching ``v`` through its L0
    buffers of that tier (:attr:`~dansched.models.bounds.grid.CarrierGraph.sources`);
    ports without a source are left out."""
    ports: dict[int, set[int]] = {}
    for b in graph.carriers[v]:
        got = graph.sources.get(b)
        if got:
            ports.setdefault(int(inst.buf_tier[b]), set()).update(got)
    return ports


def detect_grid(inst: Instance) -> TileGrid | None:
    """The grid of a blocked reduction (module docstring), or ``None`` when the graph
    is not one. Sources and ports are read from the graph's carriers
    (:func:`~dansched.models.bounds.grid.carrier_graph`)."""
    hw = inst.hw
    graph = carrier_graph(inst)
    key: dict[int, tuple[int, int, int]] = {}  # op -> (row source, column source, accumulator)
    port_names: tuple[int, int] | None = None
    for v in range(inst.n):
        if graph.spillable[v]:
            continue  # a source used directly: not a key operation
        ports = _ports(inst, graph, v)
        if len(ports) != 2 or any(len(s) != 1 for s in ports.values()):
            continue
        p = tuple(sorted(ports))
        if port_names is None:
            port_names = p  # type: ignore[assignment]
        elif p != port_names:
            return None
        acc = [b for b in graph.carriers[v] if int(inst.buf_tier[b]) not in p]
        if len(acc) != 1:
            continue
        key[v] = (next(iter(ports[p[0]])), next(iter(ports[p[1]])), acc[0])
    if len(key) < 4 or port_names is None:
        return None
    groups: dict[int, list[int]] = {}
    for v in sorted(key):
        groups.setdefault(key[v][2], []).append(v)
    # reduction steps: union-find over sources linked by one operation
    parent: dict[int, int] = {}

    def find(a: int) -> int:
        while parent.setdefault(a, a) != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a, b, _ in key.values():
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    steps = sorted({find(a) for a, _, _ in key.values()})
    step_of = {s: i for i, s in enumerate(steps)}
    rows: dict[frozenset[int], list[int]] = {}
    cols: dict[frozenset[int], list[int]] = {}
    for g, ops in groups.items():
        if len({step_of[find(key[v][0])] for v in ops}) != len(ops) or len(ops) != len(steps):
            return None
        rows.setdefault(frozenset(key[v][0] for v in ops), []).append(g)
        cols.setdefault(frozenset(key[v][1] for v in ops), []).append(g)
    row_list = sorted(rows, key=min)
    col_list = sorted(cols, key=min)
    if len(row_list) * len(col_list) != len(groups) or len(row_list) < 2 and len(col_list) < 2:
        return None
    r_of = {g: i for i, k in enumerate(row_list) for g in rows[k]}
    c_of = {g: j for j, k in enumerate(col_list) for g in cols[k]}
    grid: list[list[list[int] | None]] = [[None] * len(col_list) for _ in row_list]
    for g, ops in groups.items():
        r, c = r_of[g], c_of[g]
        if grid[r][c] is not None:
            return None
        by_step = [0] * len(steps)
        for v in ops:
            by_step[step_of[find(key[v][0])]] = v
        grid[r][c] = by_step
    acc_tier = int(inst.buf_tier[next(iter(groups))])
    size = max(int(inst.buf_size[g]) for g in groups)
    width = max(1, hw.capacity[hw.tiers[acc_tier]] // size)
    return TileGrid(grid, width, {v: (a, b) for v, (a, b, _) in key.items()})  # type: ignore[arg-type]


def _sweep(grid: TileGrid, band: int, snake: bool, alternate: bool, across: bool) -> list[int]:
    """Key operations of one sweep: bands of ``band`` rows, walked along the columns
    (back and forth with ``snake``); each band column split into waves of
    ``grid.width`` groups (``across``: the waves take neighbouring columns of one row
    instead), the waves' k-loops interleaved, alternating direction with ``alternate``."""
    R, C, K = grid.shape
    w = grid.width
    out: list[int] = []
    forward = True
    ks = list(range(K))
    for b0 in range(0, R, band):
        rows = list(range(b0, min(R, b0 + band)))
        cols = list(range(C)) if (forward or not snake) else list(range(C - 1, -1, -1))
        forward = not forward
        waves: list[list[tuple[int, int]]] = []
        if across:
            for c0 in range(0, len(cols), w):
                chunk = cols[c0 : c0 + w]
                for r in rows if c0 // w % 2 == 0 or not snake else rows[::-1]:
                    waves.append([(r, c) for c in chunk])
        else:
            for i, c in enumerate(cols):
                rr = rows if i % 2 == 0 or not snake else rows[::-1]
                for r0 in range(0, len(rr), w):
                    waves.append([(r, c) for r in rr[r0 : r0 + w]])
        for wave in waves:
            for k in ks:
                out.extend(grid.ops[r][c][k] for r, c in wave)
            if alternate:
                ks.reverse()
    return out


def sweep_orders(grid: TileGrid, max_band: int) -> dict[str, list[int]]:
    """Every sweep of :func:`_sweep` by name (duplicates dropped), for the grid and its
    transpose."""
    out: dict[str, list[int]] = {}
    seen: set[tuple[int, ...]] = set()
    for t_name, g in (("rows", grid), ("cols", grid.transposed())):
        R = g.shape[0]
        for band in range(1, min(max_band, R) + 1):
            for across in (False, True):
                for snake in (True, False):
                    for alternate in (True, False):
                        seq = _sweep(g, band, snake, alternate, across)
                        sig = tuple(seq)
                        if sig in seen:
                            continue
                        seen.add(sig)
                        name = (
                            f"{t_name}-band{band}-{'across' if across else 'down'}"
                            f"{'-snake' if snake else ''}{'-alt' if alternate else ''}"
                        )
                        out[name] = seq
    return out


def source_loads(inst: Instance, grid: TileGrid, key_ops: Sequence[int]) -> int:
    """Loads of source buffers along ``key_ops`` when each source tier keeps as many
    sources as fit by size (its capacity over the largest source there) and evicts the
    one used farthest ahead (Belady: the fewest loads for this access sequence when
    every source of a tier has one size). A cheap first ranking of sweeps; the scan's
    replay decides."""
    sources = grid.sources
    seq = np.fromiter(chain.from_iterable(sources[v] for v in key_ops), dtype=np.int64)
    seq_tier = int64_array(inst.buf_tier[seq])
    largest = np.zeros(len(inst.hw.tiers), dtype=np.int64)
    np.maximum.at(largest, seq_tier, inst.buf_size[seq])
    capacity = np.array([inst.hw.capacity[t] for t in inst.hw.tiers], dtype=np.int64)
    slots = np.where(largest > 0, np.maximum(1, capacity // np.maximum(largest, 1)), 0)
    return int(belady_misses(seq, seq_tier, int64_array(slots), inst.num_buffers))


def full_order(inst: Instance, key_ops: Sequence[int]) -> list[int]:
    """A full order running ``key_ops`` in that sequence: every other node follows in id
    order, then lifetimes are tightened with lazy loads (ancestors on demand)."""
    chosen = set(key_ops)
    rest = [v for v in range(inst.n) if v not in chosen]
    return tighten_lifetimes(inst, list(key_ops) + rest, lazy_loads=True)


def wave_search(inst: Instance, params: WaveParams = WaveParams(), deadline: float | None = None) -> WaveResult | None:
    """The best sweep's plan (module docstring), or ``None`` when the graph has no grid
    structure or no sweep could be placed. ``deadline`` (``time.perf_counter()`` value), a
    safety net only, stops scoring further sweeps; the result's stats then say
    ``stopped_by_clock``."""
    t0 = time.perf_counter()
    if inst.n > params.max_nodes:
        return None
    grid = detect_grid(inst)
    if grid is None:
        return None
    R, C, K = grid.shape
    if R * C * K > params.max_key_ops:
        return None
    sweeps = sweep_orders(grid, params.max_band)
    ranked = sorted((source_loads(inst, grid, seq), name) for name, seq in sweeps.items())
    scored: list[tuple[tuple[int, int], str, list[int]]] = []
    stopped = False  # the wall-clock safety net cut the replays short
    for _, name in ranked[: params.replay]:
        if deadline is not None and time.perf_counter() > deadline:
            stopped = True
            break
        if scored and stopping():  # a stop request: the best replay so far (dansched.interrupt)
            break
        order = full_order(inst, sweeps[name])
        try:
            res = linear_scan(inst, order, rule="score", mode="bestfit", evict="greedy")
        except PlacementFailed:
            continue
        scored.append(((res.traffic, res.spill_count), name, order))
    if not scored:
        return None
    scored.sort(key=lambda s: (s[0], s[1]))
    best: WaveResult | None = None
    for _, name, order in scored[: params.keep]:
        if best is not None and stopping():
            break
        try:
            got = dlr_plan(inst, order, other_orders=False)
        except PlacementFailed:
            continue
        t = got.evaluation.metrics.extra_traffic
        if got.evaluation.valid and (best is None or t < best.traffic):
            stats = WaveStats(t, name, (R, C, K), grid.width, len(ranked), len(scored), stopped_by_clock=stopped)
            best = WaveResult(got.plan, got.evaluation, stats)
    if best is not None:
        best = replace(best, stats=replace(best.stats, seconds=time.perf_counter() - t0))
    return best
