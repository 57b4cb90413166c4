"""Contracted-graph relaxation of the minimum-peak problem (problem 1, paper Eq. 6), solved
exactly by CP-SAT on windows of single-residency blocks: a lower bound on maxV_stay over
every order.

**Contraction.** Fix a single-residency tier ``T`` (L0A, L0B or L0C). Each buffer ``x`` of
``T`` with at least one user becomes one super-node, its *block* ``B_x`` (the operations
that use ``x``); every other node is dropped, and what it contributes is kept only through
DAG reachability (below). The L0 rule is what makes blocks atomic: every user of ``x`` runs
inside ``x``'s lifetime ``[ALLOC(x), FREE(x)]``, and two buffers of ``T`` are never live
together, so in every valid order the lifetimes of ``T``'s buffers are disjoint intervals
and the blocks run in a total order ``sigma`` -- all of ``B_x`` before all of ``B_y`` or
the reverse. If an operation of ``B_x`` is a DAG ancestor of one of ``B_y``, then
``sigma(x) < sigma(y)``.

**Relaxed liveness.** Over the Stage-1 graph (instance edges plus the lifetime edges
ALLOC -> user -> FREE), let ``A(v)`` be the L1/UB buffers whose ALLOC is an ancestor of
``v`` and ``F(v)`` those whose FREE is a descendant of ``v``; for a block, ``O(x)`` (the
*opening* blocks of ``b``: ``b`` in ``A(u)`` for some ``u`` in ``B_x``) and ``C(x)``
(*closing*: ``b`` in ``F(u)``). For an operation ``v`` of block ``x`` and a buffer
``b``, say ``b`` is *relaxed-live at v* when

- (open) ``b`` is in ``A(v)``, or some block ``y`` with ``sigma(y) < sigma(x)`` opens ``b``;
- (close) ``b`` is in ``F(v)``, or some block ``y`` with ``sigma(y) > sigma(x)`` closes ``b``.

**Lemma (soundness).** In every valid order, a buffer relaxed-live at ``v`` is live while
``v`` runs, so ``V_stay`` after ``v`` is at least the relaxed-live bytes at ``v``.
Proof: (open) either ``ALLOC(b)`` is an ancestor of ``v``, or it is an ancestor of some
``u`` in ``B_y`` with ``B_y`` entirely before ``B_x``, so ``ALLOC(b) < u < v``;
(close) symmetrically ``FREE(b)`` is a descendant of ``v`` or of some ``w`` entirely after
``v``. A buffer allocated before ``v`` and freed after it is counted in the prefix ending
at ``v``. QED.

So for every valid order, with ``sigma`` the block order it induces,
``maxV_stay >= max over blocks x and v in B_x of relaxed(sigma, x, v)``, and the optimum of
Eq. 6 is at least ``min over sigma`` (consistent with the block precedences) of that
maximum: the *block-order relaxation*. Each contraction only lowers the optimum: dropping
the other nodes drops constraints and witnesses (liveness is only ever under-counted),
and keeping ``sigma`` a permutation of whole blocks is implied by the L0 rule, not
imposed. **Windows.** The same argument holds for any subset ``W`` of the blocks, with the
order ``sigma`` restricted to ``W`` and the witnesses ``y`` taken in ``W`` only (fewer
witnesses, fewer live buffers), so each window's relaxation is itself a lower bound,
and so is the maximum over windows. When CP-SAT stops before proving optimality the
window contributes its proven objective bound (``BestObjectiveBound``, rounded up), which
is below the relaxation's minimum; the result never depends on the solution found.

**Model** (per window of ``n`` blocks): positions ``p_x`` in ``0..n-1``, all different,
with ``p_x < p_y`` for DAG-ordered blocks; per buffer ``b`` the first opening position
``min p_y`` and the last closing position ``max p_y`` over the window; Booleans
``open(b,x)`` (forced to 1 when the first opening is before ``p_x``), ``close(b,x)``
(when the last closing is after ``p_x``) and ``live >= open + close - 1``; per block
operation ``v``: ``peak >= sum of sizes of the buffers in A(v) & F(v) + sum of the
relaxed terms``; minimise ``peak``.

Windows are runs of ``window`` consecutive blocks in the topological order of their first
operation (half-overlapping); a window is solved only when its value at the topological
block order (an upper bound on its relaxation) exceeds ``floor``, the best bound already
known, heaviest first, within a deterministic budget
(:class:`~dansched.params.BoundParams`: ``contracted_window``, ``contracted_window_ms``,
``contracted_total_ms``, ``contracted_work_bits``, ``contracted_max_blocks``).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

from ortools.sat.python import cp_model

from ...errors import PeakWorkExceeded
from ...graph import MpasGraph, build_mpas_graph
from ...instance import KIND_OP, Instance
from ...params import BoundParams
from ..exact.solver import deterministic_solver, solve_model, stopped_by_clock
from .bound import Bound

__all__ = [
    "BlockWindow",
    "contracted_blocks",
    "block_windows",
    "relaxed_peak",
    "window_relaxation",
    "contracted_peak_bound",
]


@dataclass(frozen=True)
class BlockWindow:
    """One window of the contracted graph: blocks in topological order of their first
    operation, each with its operations' relaxed-liveness facts as buffer bitsets (bit
    ``i`` is buffer ``bufs[i]``, of size ``sizes[i]``).

    ``ops[k]``: per operation of block ``k``, ``(A(v), F(v))``; ``opens[k]`` / ``closes[k]``:
    the buffers block ``k`` opens / closes; ``before[k]``: window blocks that must precede it."""

    tier: str
    nodes: tuple[tuple[int, ...], ...]  # the operations (node ids) of each block
    bufs: tuple[int, ...]
    sizes: tuple[int, ...]
    ops: tuple[tuple[tuple[int, int], ...], ...]
    opens: tuple[int, ...]
    closes: tuple[int, ...]
    before: tuple[tuple[int, ...], ...]

    @property
    def n(self) -> int:
        return len(self.ops)


def _reach_bits(
    g: MpasGraph, seeds: dict[int, int], forward: bool, keep: set[int], budget: list[int]
) -> dict[int, int]:
    """For each node of ``keep``: the OR of ``1 << seeds[u]`` over ``u`` equal to it or an
    ancestor (``forward``) / descendant (not ``forward``) of it. A node's set is dropped
    once every neighbour has read it; ``budget[0]`` (bits handled) raises
    :class:`PeakWorkExceeded` when it runs out."""
    order = g.topo if forward else g.topo[::-1]
    into = g.preds if forward else g.succs
    outof = g.succs if forward else g.preds
    left = [len(s) for s in outof]
    sets: dict[int, int] = {}
    out: dict[int, int] = {}
    for v in order:
        bits = 0
        for u in into[v]:
            bits |= sets[u]
            left[u] -= 1
            if not left[u]:
                del sets[u]
        if v in seeds:
            bits |= 1 << seeds[v]
        budget[0] -= bits.bit_length()
        if budget[0] < 0:
            raise PeakWorkExceeded("contracted relaxation: reachability sets exceed the work budget")
        if left[v]:
            sets[v] = bits
        if v in keep:
            out[v] = bits
    return out


def contracted_blocks(
    inst: Instance, g: MpasGraph, tier: str, work_bits: int
) -> tuple[list[list[int]], dict[int, int], dict[int, int], list[int], list[int]]:
    """Blocks of ``tier`` (operation lists, in topological order of their first operation)
    and, for every block operation, ``A(v)`` and ``F(v)`` as bitsets over ``peak`` (the
    L1/UB buffer ids, bit ``i`` for ``peak[i]``), plus each block's DAG-ancestor blocks as
    a bitset over block indices. Returns ``(blocks, A, F, anc_blocks, peak)``."""
    t = inst.hw.tier_index(tier)
    tiers = inst.buf_tier.tolist()
    is_peak = inst.is_peak_buffer().tolist()
    pos = [0] * g.n
    for i, v in enumerate(g.topo):
        pos[v] = i
    users: dict[int, list[int]] = {}
    for v in g.topo:
        if g.kind[v] == KIND_OP:
            for b in g.bufs[v]:
                if tiers[b] == t:
                    users.setdefault(b, []).append(v)
    blocks = sorted(users.values(), key=lambda ops: (pos[ops[0]], ops[0]))
    peak = [b for b in range(inst.num_buffers) if is_peak[b]]
    index = {b: i for i, b in enumerate(peak)}
    keep = {v for ops in blocks for v in ops}
    budget = [work_bits]
    a_seed = {g.buf_alloc[b]: index[b] for b in peak}
    f_seed = {g.buf_free[b]: index[b] for b in peak}
    A = _reach_bits(g, a_seed, True, keep, budget)
    F = _reach_bits(g, f_seed, False, keep, budget)
    # block ancestry: seed each block's operations with the block's index (an op of two
    # blocks of one tier cannot exist in a legal problem-1 instance; the first one wins)
    bseed: dict[int, int] = {}
    for k, ops in enumerate(blocks):
        for v in ops:
            bseed.setdefault(v, k)
    reach = _reach_bits(g, bseed, True, keep, budget)
    anc = []
    for k, ops in enumerate(blocks):
        bits = 0
        for v in ops:
            bits |= reach[v]
        anc.append(bits & ~(1 << k))
    return blocks, A, F, anc, peak


def _bit_list(bits: int) -> list[int]:
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


def _relevant(ks: list[int], blocks: list[list[int]], A: dict[int, int], F: dict[int, int]) -> int:
    """The buffers (bitset) that some operation of the window's blocks ``ks`` can see
    relaxed-live: opened there or by another window block, and closed there or by another."""
    once_o = many_o = once_c = many_c = 0
    opens, closes = [], []
    for k in ks:
        o = c = 0
        for v in blocks[k]:
            o |= A[v]
            c |= F[v]
        opens.append(o)
        closes.append(c)
        many_o |= once_o & o
        once_o |= o
        many_c |= once_c & c
        once_c |= c
    seen = 0
    for i, k in enumerate(ks):
        other_o = many_o | (once_o & ~opens[i])
        other_c = many_c | (once_c & ~closes[i])
        for v in blocks[k]:
            seen |= (A[v] | other_o) & (F[v] | other_c)
    return seen


def block_windows(
    inst: Instance, g: MpasGraph, tier: str, size: int, work_bits: int, max_blocks: int | None = None
) -> list[BlockWindow]:
    """Half-overlapping windows of ``size`` consecutive blocks of ``tier`` (all blocks when
    there are at most ``size``), each restricted to the buffers its blocks can see. Raises
    :class:`PeakWorkExceeded` past ``max_blocks`` blocks or ``work_bits`` bits of reachability."""
    if max_blocks is not None:
        t = inst.hw.tier_index(tier)
        count = sum(1 for b in inst.buf_tier.tolist() if b == t)
        if count > max_blocks:
            raise PeakWorkExceeded(f"contracted relaxation: {count:,} {tier} blocks > {max_blocks:,}")
    blocks, A, F, anc, peak = contracted_blocks(inst, g, tier, work_bits)
    nb = len(blocks)
    if nb == 0:
        return []
    sizes = inst.buf_size.tolist()
    if nb <= size:
        starts = [0]
    else:
        step = max(1, size // 2)
        starts = list(range(0, nb - size + 1, step))
        if starts[-1] != nb - size:
            starts.append(nb - size)
    out = []
    for s in starts:
        ks = list(range(s, min(nb, s + size)))
        seen = _relevant(ks, blocks, A, F)
        local = _bit_list(seen)
        remap = {j: i for i, j in enumerate(local)}

        def loc(bits: int, seen: int = seen, remap: dict[int, int] = remap) -> int:
            r = 0
            for j in _bit_list(bits & seen):
                r |= 1 << remap[j]
            return r

        ops, opens, closes, before = [], [], [], []
        for _i, k in enumerate(ks):
            facts = tuple((loc(A[v]), loc(F[v])) for v in blocks[k])
            ops.append(facts)
            o = c = 0
            for a, f in facts:
                o |= a
                c |= f
            opens.append(o)
            closes.append(c)
            before.append(tuple(i2 for i2, k2 in enumerate(ks) if (anc[k] >> k2) & 1))
        out.append(
            BlockWindow(
                tier=tier,
                nodes=tuple(tuple(blocks[k]) for k in ks),
                bufs=tuple(peak[j] for j in local),
                sizes=tuple(sizes[peak[j]] for j in local),
                ops=tuple(ops),
                opens=tuple(opens),
                closes=tuple(closes),
                before=tuple(before),
            )
        )
    return out


def relaxed_peak(w: BlockWindow, perm: list[int]) -> int:
    """The relaxation's value at one block order ``perm`` (window block indices in run
    order): max over block operations of the relaxed-live bytes (see the module docstring)."""
    place = {k: i for i, k in enumerate(perm)}
    nbuf = len(w.bufs)
    first_open = [math.inf] * nbuf
    last_close = [-math.inf] * nbuf
    for k in range(w.n):
        for j in _bit_list(w.opens[k]):
            first_open[j] = min(first_open[j], place[k])
        for j in _bit_list(w.closes[k]):
            last_close[j] = max(last_close[j], place[k])
    best = 0
    for k in range(w.n):
        p = place[k]
        for a, f in w.ops[k]:
            total = 0
            for j in range(nbuf):
                if ((a >> j) & 1 or first_open[j] < p) and ((f >> j) & 1 or last_close[j] > p):
                    total += w.sizes[j]
            best = max(best, total)
    return best


def window_relaxation(
    w: BlockWindow, deterministic_time: float, time_limit: float, hint: list[int] | None = None
) -> tuple[int, bool, bool]:
    """Proven lower bound on the window's block-order relaxation (its optimum when the
    second value is True), by CP-SAT (see the module docstring for the model); the third
    value says whether the wall-clock safety net ended the solve."""
    n, nbuf = w.n, len(w.bufs)
    m = cp_model.CpModel()
    p = [m.new_int_var(0, n - 1, f"p{k}") for k in range(n)]
    m.add_all_different(p)
    for k in range(n):
        for k2 in w.before[k]:
            m.add(p[k2] < p[k])
    openers = [[k for k in range(n) if (w.opens[k] >> j) & 1] for j in range(nbuf)]
    closers = [[k for k in range(n) if (w.closes[k] >> j) & 1] for j in range(nbuf)]
    first: list[cp_model.IntVar | None] = [None] * nbuf
    last: list[cp_model.IntVar | None] = [None] * nbuf
    for j in range(nbuf):
        if openers[j]:
            fo = first[j] = m.new_int_var(0, n - 1, f"fo{j}")
            m.add_min_equality(fo, [p[k] for k in openers[j]])
        if closers[j]:
            lc = last[j] = m.new_int_var(0, n - 1, f"lc{j}")
            m.add_max_equality(lc, [p[k] for k in closers[j]])
    total = sum(w.sizes)
    peak = m.new_int_var(0, total, "peak")
    opn: dict[tuple[int, int], cp_model.IntVar] = {}
    cls: dict[tuple[int, int], cp_model.IntVar] = {}
    liv: dict[tuple[int, int], cp_model.IntVar] = {}

    def open_var(j: int, k: int):
        if (j, k) not in opn:
            x = opn[j, k] = m.new_bool_var(f"o{j}_{k}")
            m.add(first[j] >= p[k]).only_enforce_if(x.negated())
        return opn[j, k]

    def close_var(j: int, k: int):
        if (j, k) not in cls:
            x = cls[j, k] = m.new_bool_var(f"c{j}_{k}")
            m.add(last[j] <= p[k]).only_enforce_if(x.negated())
        return cls[j, k]

    def live_var(j: int, k: int):
        if (j, k) not in liv:
            x = liv[j, k] = m.new_bool_var(f"l{j}_{k}")
            m.add(x >= open_var(j, k) + close_var(j, k) - 1)
        return liv[j, k]

    for k in range(n):
        for a, f in w.ops[k]:
            const = 0
            terms = []
            for j in range(nbuf):
                ina, inf = (a >> j) & 1, (f >> j) & 1
                can_open = ina or (first[j] is not None and any(k2 != k for k2 in openers[j]))
                can_close = inf or (last[j] is not None and any(k2 != k for k2 in closers[j]))
                if not (can_open and can_close) or not w.sizes[j]:
                    continue
                if ina and inf:
                    const += w.sizes[j]
                elif ina:
                    terms.append(w.sizes[j] * close_var(j, k))
                elif inf:
                    terms.append(w.sizes[j] * open_var(j, k))
                else:
                    terms.append(w.sizes[j] * live_var(j, k))
            m.add(peak >= const + sum(terms))
    m.minimize(peak)
    if hint is not None:
        for i, k in enumerate(hint):
            m.add_hint(p[k], i)
    solver = deterministic_solver(0, deterministic_time, time_limit)
    # no LP relaxation: on these permutation models its solves are not charged to the
    # deterministic clock (measured 13 s of wall clock for 0.4 deterministic seconds)
    solver.parameters.linearization_level = 0
    status = solve_model(solver, m)
    clock = stopped_by_clock(solver, status)
    if status == cp_model.OPTIMAL:
        return int(round(solver.objective_value)), True, clock
    if status == cp_model.FEASIBLE:
        return int(math.ceil(solver.best_objective_bound - 1e-6)), False, clock
    return 0, False, clock


def _topological_perm(w: BlockWindow) -> list[int]:
    """A block order of the window that respects its precedences (smallest index first;
    index order when they form a cycle, which leaves no valid order at all)."""
    indeg = [len(b) for b in w.before]
    after: list[list[int]] = [[] for _ in range(w.n)]
    for k, bs in enumerate(w.before):
        for k2 in bs:
            after[k2].append(k)
    ready = [k for k in range(w.n) if not indeg[k]]
    heapq.heapify(ready)
    out = []
    while ready:
        k = heapq.heappop(ready)
        out.append(k)
        for k2 in after[k]:
            indeg[k2] -= 1
            if not indeg[k2]:
                heapq.heappush(ready, k2)
    return out if len(out) == w.n else list(range(w.n))


def contracted_peak_bound(
    inst: Instance, floor: int = 0, params: BoundParams = BoundParams(), g: MpasGraph | None = None
) -> Bound:
    """The best window bound of the block-order relaxation over every single-residency tier
    (see the module docstring); 0 when no window can beat ``floor`` or none applies."""
    if params.contracted_total_ms <= 0:
        return Bound(0, "contracted block-order relaxation: no budget")
    if g is None:
        g = build_mpas_graph(inst, check_l0=False)
    cands = []
    for tier in inst.hw.single_residency_tiers:
        try:
            wins = block_windows(
                inst, g, tier, params.contracted_window, params.contracted_work_bits, params.contracted_max_blocks
            )
        except PeakWorkExceeded as e:
            return Bound(0, f"contracted block-order relaxation skipped: {e}")
        for i, w in enumerate(wins):
            hint = _topological_perm(w)
            ub = relaxed_peak(w, hint)
            if ub > floor:
                cands.append((-ub, tier, i, w, hint))
    cands.sort(key=lambda c: (c[0], c[1], c[2]))
    budget = params.contracted_total_ms / 1000.0
    best, where, proven, clock = 0, "", False, False
    for neg_ub, tier, i, w, hint in cands:
        if budget <= 0 or -neg_ub <= best:
            continue
        dt = min(params.contracted_window_ms / 1000.0, budget)
        val, opt, fired = window_relaxation(w, dt, params.contracted_time_limit, hint)
        clock = clock or fired
        budget -= dt
        if val > best:
            best, where, proven = val, f"{tier} window {i} ({w.n} blocks, {len(w.bufs)} buffers)", opt
    net = " (the wall-clock safety net stopped CP-SAT)" if clock else ""
    if best == 0:
        return Bound(
            0, f"contracted block-order relaxation: no window beats the known bound{net}", stopped_by_clock=clock
        )
    how = "solved exactly" if proven else "CP-SAT proven bound"
    method = f"contracted block-order relaxation (single-residency blocks as super-nodes), {how}: {where}{net}"
    return Bound(best, method, stopped_by_clock=clock)
