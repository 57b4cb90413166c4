"""Joint CP-SAT window: the order, the times, the spills and the addresses of a stretch of a
plan re-planned together (problem 3's makespan search, its *joint window* move).

The memory-aware window (:mod:`dansched.models.windows.memory`) lets the memory events of a
window move but keeps every offset and every spill. Here, for the window of consecutive
schedule positions ``[lo, hi)`` of a valid plan, one model decides all of them:

- **order and time** (:meth:`JointWindowModel.add_start_times`,
  :meth:`~JointWindowModel.add_precedence`, :meth:`~JointWindowModel.add_pipe_no_overlap`):
  a start time per window node and per optional spill node, no overlap per pipe (paper
  Eqs. 9-10) between the fixed neighbours on each pipe; edges from outside are release
  times, edges to nodes after the window deadlines, so nothing after the window is
  delayed (the state at its entry is fixed, its exit stays compatible with the rest);
- **residency** (:meth:`~JointWindowModel.add_chains`): every buffer resident somewhere
  in the window is a *chain* of *blocks* cut by *gaps* where it may be out of memory:
  each spill of it whose SPILL_OUT and SPILL_IN both lie in the window (kept or removed:
  a Boolean) and, between consecutive uses idle in the current timing, a new optional
  spill (a SPILL_OUT on the spill-out pipe after the use before the gap, a SPILL_IN on the
  spill-in pipe before the use after it; docs/rules.md, section 5); the uses of a block
  run after the reload that starts it and before the eviction that ends it;
- **addresses** (:meth:`~JointWindowModel.add_addresses`): each run of blocks between two
  evicted gaps is a *piece*, a box of time (from the event that makes the buffer resident
  to the end of the one that ends it) by addresses (its offset, a variable when the piece
  starts inside the window); per tier, no-overlap-2D between the pieces and every other
  segment resident during the window (fixed boxes: address reuse is then exactly the
  boxes' order in time, docs/rules.md, section 6). A piece that runs past the window
  avoids the addresses of the segments it shares schedule positions with after it;
- **traffic** (:meth:`~JointWindowModel.add_traffic`): the spills added less those
  removed cost at most the headroom left in the budget.

The objective is the window's latest ``end(v) + rest(v)`` (dependency-only path still to
run after ``v``), as in the memory-aware window; the current plan is the hint. The
solution becomes an order by Kahn's algorithm over the order constraints, the chosen pipe
sequences and, for boxes that share addresses, the end of the earlier before the start of
the later; the caller builds the plan and the shared evaluator judges it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model

from ...graph import keyed_topological_order
from ...hardware import spill_traffic
from ...instance import Instance
from ...simulate import Segment, spill_node_ids
from .seam import Schedule, WindowModel, WindowOutcome, pipe_sequence_edges, window_rest

__all__ = ["JointWindowContext", "JointWindowSolution", "JointWindowModel", "solve_joint_window"]


@dataclass(frozen=True)
class JointWindowContext:
    """What every joint window of one plan reads: the instance, the plan's residency segments
    (the evaluator's, :meth:`~dansched.simulate.Evaluation.segments`), its schedule on the
    augmented DAG G2, G2's address-reuse edges and successor lists, the traffic
    headroom the budget leaves, and how many new spills a window may offer at most."""

    inst: Instance
    segments: Sequence[Segment]
    sched: Schedule
    reuse: set[tuple[int, int]]
    succs: list[list[int]]
    headroom: int
    max_new_spills: int = 8


@dataclass
class JointWindowSolution:
    """A window re-planned: ``sequence`` (its nodes in their new order; the new spills'
    nodes as the ids ``new_spills`` names), the spills of the plan removed (0-based
    indices), the new spills as (SPILL_OUT id, SPILL_IN id, buffer index, offset), and the
    new offset of each segment that starts in the window (by its starting node)."""

    sequence: list[int]
    removed: list[int] = field(default_factory=list)
    new_spills: list[tuple[int, int, int, int]] = field(default_factory=list)
    offsets: dict[int, int] = field(default_factory=dict)


@dataclass
class _Gap:
    """Where a chain's buffer may be out of memory: an existing spill ``k`` (both nodes in
    the window) or a new one (``k = -1``, ids past the plan's nodes); ``evicted`` its
    Boolean, ``offset`` the offset of the block it starts, ``release`` the earliest time
    its SPILL_OUT may start."""

    k: int
    out: int
    into: int
    evicted: Any
    offset: Any
    release: int = 0
    was_evicted: bool = False


@dataclass
class _Chain:
    """A buffer's residency around the window: its blocks' uses (window operations, in
    schedule order) cut by ``gaps``; how it begins (a window node, or a fixed time and
    offset before the window) and ends (a window node, or a fixed time after it); the
    offset variable of its first block; when it runs past the window, the offsets its last
    piece may take there (``exit_domain``)."""

    buf: int
    tier: int
    size: int
    blocks: list[list[int]]
    gaps: list[_Gap]
    begin: int | None
    begin_time: int
    end: int | None
    end_time: int
    first_offset: Any
    exit_domain: cp_model.Domain | None


class JointWindowModel(WindowModel):
    """The model of positions ``[lo, hi)`` of the context's schedule (module docstring).
    Build with :meth:`build` (False: the window admits no model), then :meth:`solve`."""

    def __init__(self, ctx: JointWindowContext, lo: int, hi: int) -> None:
        super().__init__(ctx.sched, lo, hi)
        self.ctx = ctx
        self.graph = ctx.sched.graph
        self.present: dict[int, Any] = {}  # presence literal of each optional node
        self.chains: list[_Chain] = []
        self.boxes: list[tuple[int, Any, Any, Any, Any, int, int | None, int | None]] = []
        self.next_id = self.graph.n  # ids of new spill nodes

    # no LP relaxation: with the boxes' disjunctions it costs ten times the search (measured)
    linearization_level = 0

    current: float = 0  # the current window's objective (set by set_objective)

    def counts(self) -> dict[str, int]:
        return {"chains": len(self.chains), "gaps": sum(len(c.gaps) for c in self.chains)}

    def _end(self, v: int) -> Any:
        return self.s[v] + self.cycles[v]

    def _new_spill_node(self, pipe: int, cycles: int, lit: Any, hint: int) -> int:
        v = self.next_id
        self.next_id += 1
        before_end, after_start = self.neighbours
        lb = before_end.get(pipe, 0)
        ub = max(lb, after_start.get(pipe, self.big) - cycles)
        self.s[v] = self.m.new_int_var(lb, ub, f"n{v}")
        self.span[v] = (lb, ub + cycles)
        self.cycles[v], self.pipe[v], self.present[v] = cycles, pipe, lit
        self.m.add_hint(self.s[v], min(max(hint, lb), ub))
        return v

    def add_chains(self) -> None:
        """The chains of every buffer resident somewhere in the window (module docstring):
        their gaps (existing spills, removable; new ones, optional, the longest idle first,
        at most ``ctx.max_new_spills`` in all), and the order of each chain's uses,
        reloads and evictions."""
        inst, sched = self.ctx.inst, self.ctx.sched
        pos, start, end = sched.pos, sched.start, sched.end
        L = inst.lists()
        hw = inst.hw
        out_pipe, in_pipe = hw.pipe_index(hw.spill_out_pipe), hw.pipe_index(hw.spill_in_pipe)
        by_buf: dict[int, list[Segment]] = {}
        for seg in self.ctx.segments:
            if seg.start < self.hi and seg.end >= self.lo:
                by_buf.setdefault(seg.buf, []).append(seg)
        idle_gaps: list[tuple[int, int, int, int]] = []  # (-idle, buffer, segment index, use index)
        plans: dict[int, tuple[list[Segment], list[list[int]]]] = {}
        for b, segs in sorted(by_buf.items()):
            segs.sort(key=lambda s: s.start)
            uses_per_seg = []
            for j, seg in enumerate(segs):
                uses = sorted(
                    (u for u in L.users[b] if u in self.inside and seg.start < pos[u] < seg.end), key=lambda u: pos[u]
                )
                uses_per_seg.append(uses)
                # where the buffer may leave: before a use (from its previous use or the window's entry)
                for i, u in enumerate(uses):
                    if i == 0 and pos[seg.start_node] >= self.lo:
                        continue  # right after its ALLOC or reload: nothing gained
                    prev = end[uses[i - 1]] if i else self._last_touch(seg, b)
                    idle_gaps.append((-(start[u] - prev), b, j, i))
                if not uses and pos[seg.start_node] < self.lo and pos[seg.end_node] >= self.hi:
                    # resident across the whole window, idle there: it may leave and come back
                    idle_gaps.append((-(end[self.window[-1]] - start[self.window[0]]), b, j, 0))
            plans[b] = (segs, uses_per_seg)
        idle_gaps.sort()
        chosen = {(b, j, i) for _, b, j, i in idle_gaps[: self.ctx.max_new_spills]}
        for b, (segs, uses_per_seg) in plans.items():
            self._chain(b, segs, uses_per_seg, chosen, out_pipe, in_pipe)

    def _last_touch(self, seg: Segment, b: int) -> int:
        """The end of the latest use of ``b`` (or of its segment's starting event) before the
        window, inside segment ``seg``."""
        sched = self.ctx.sched
        pos, end = sched.pos, sched.end
        t = end[seg.start_node]
        for u in self.ctx.inst.lists().users[b]:
            if seg.start < pos[u] < self.lo:
                t = max(t, end[u])
        return t

    def _chain(
        self,
        b: int,
        segs: list[Segment],
        uses_per_seg: list[list[int]],
        chosen: set[tuple[int, int, int]],
        out_pipe: int,
        in_pipe: int,
    ) -> None:
        inst, m, sched = self.ctx.inst, self.m, self.ctx.sched
        pos, start, end = sched.pos, sched.start, sched.end
        tier, size = segs[0].tier, segs[0].size
        cap = inst.hw.capacity[inst.hw.tiers[tier]]
        backed = bool(inst.buf_backed[b])
        reload_cycles = inst.hw.spill_cycles(size)
        first, last = segs[0], segs[-1]
        past = pos[last.end_node] >= self.hi
        domain = cp_model.Domain(0, cap - size)
        exit_domain = self._offset_domain(b, tier, size, cap, last) if past else None
        begin: int | None = None
        first_offset: Any = first.offset
        begin_time = start[first.start_node]
        if pos[first.start_node] >= self.lo:
            begin = first.start_node
            first_offset = m.new_int_var_from_domain(domain, f"o{first.start_node}")
            if domain.contains(first.offset):
                m.add_hint(first_offset, first.offset)
        deadline = None
        if past:
            end_node, end_time = None, end[last.end_node]
            # a reload must be back before the buffer's next use after the window
            after = [start[u] for u in inst.lists().users[b] if self.hi <= pos[u] < last.end]
            deadline = min(after + [start[last.end_node]])
        else:
            end_node, end_time = last.end_node, end[last.end_node]
        blocks: list[list[int]] = [[]]
        gaps: list[_Gap] = []
        for j, seg in enumerate(segs):
            if j:  # the spill between segments j - 1 and j: both its nodes lie in the window
                k = seg.spill
                lit = m.new_bool_var(f"e{k}")
                m.add_hint(lit, 1)
                off = m.new_int_var_from_domain(domain, f"o{seg.start_node}")
                if domain.contains(seg.offset):
                    m.add_hint(off, seg.offset)
                out_id, in_id = spill_node_ids(inst.n, k)
                self.present[out_id] = self.present[in_id] = lit
                gaps.append(_Gap(k, out_id, in_id, lit, off, was_evicted=True))
                blocks.append([])
            for i, u in enumerate(uses_per_seg[j]):
                if (b, j, i) in chosen:
                    lit = m.new_bool_var(f"x{b}_{j}_{i}")
                    m.add_hint(lit, 0)
                    # the use before the gap: in the window (the chain orders them) or before it (fixed)
                    release = 0 if i else self._last_touch(seg, b)
                    out_id = self._new_spill_node(out_pipe, 0 if backed else reload_cycles, lit, release)
                    in_id = self._new_spill_node(in_pipe, reload_cycles, lit, start[u] - reload_cycles)
                    off = m.new_int_var_from_domain(domain, f"o{in_id}")
                    gaps.append(_Gap(-1, out_id, in_id, lit, off, release=release))
                    blocks.append([])
                blocks[-1].append(u)
            if not uses_per_seg[j] and (b, j, 0) in chosen:  # idle across the window
                lit = m.new_bool_var(f"x{b}_{j}")
                m.add_hint(lit, 0)
                release = self._last_touch(seg, b)
                out_id = self._new_spill_node(out_pipe, 0 if backed else reload_cycles, lit, release)
                in_id = self._new_spill_node(in_pipe, reload_cycles, lit, release)
                off = m.new_int_var_from_domain(domain, f"o{in_id}")
                gaps.append(_Gap(-1, out_id, in_id, lit, off, release=release))
                blocks.append([])
        chain = _Chain(b, tier, size, blocks, gaps, begin, begin_time, end_node, end_time, first_offset, exit_domain)
        self.chains.append(chain)
        self._chain_order(chain, deadline)

    def _offset_domain(self, b: int, tier: int, size: int, cap: int, last: Segment) -> cp_model.Domain:
        """Offsets a block of ``b`` may take when it runs past the window: inside the tier,
        clear of every segment of the tier it shares a schedule position with after the
        window (its own current offset stays allowed)."""
        hi, end_pos = self.hi, last.end
        busy = [
            (s.offset, s.offset + s.size)
            for s in self.ctx.segments
            if s.tier == tier and s.buf != b and s.start <= end_pos and s.end >= hi
        ]
        allowed = cp_model.Domain(0, cap - size)
        for a, z in busy:  # an offset o is forbidden when [o, o + size) meets [a, z)
            allowed = allowed.intersection_with(cp_model.Domain(a - size + 1, z - 1).complement())
        return allowed

    def _chain_order(self, chain: _Chain, deadline: int | None) -> None:
        """The uses of each block after the reload that starts it and before the eviction
        that ends it; each eviction after the release of its buffer, its reload after it; the
        chain's gaps in order; the window's first and last event of the buffer around it."""
        m = self.m
        gaps = chain.gaps
        for j, gap in enumerate(gaps):
            if gap.k < 0:
                m.add(self.s[gap.out] >= gap.release).only_enforce_if(gap.evicted)
            self.add_edge(gap.out, gap.into, gap.evicted)
            if chain.begin is not None:
                self.add_edge(chain.begin, gap.out, gap.evicted)
            if chain.end is not None:
                self.add_edge(gap.into, chain.end, gap.evicted)
            elif deadline is not None:
                m.add(self._end(gap.into) <= deadline).only_enforce_if(gap.evicted)
            for j2 in range(j + 1, len(gaps)):
                later = gaps[j2]
                both = m.new_bool_var("")
                m.add_bool_and([gap.evicted, later.evicted]).only_enforce_if(both)
                m.add_bool_or([~gap.evicted, ~later.evicted]).only_enforce_if(~both)
                self.add_edge(gap.into, later.out, both)
        for i, block in enumerate(chain.blocks):
            for u in block:
                if chain.begin is not None:
                    self.add_edge(chain.begin, u)
                if chain.end is not None:
                    self.add_edge(u, chain.end)
                for j, gap in enumerate(gaps):  # gap j lies between blocks j and j + 1
                    if j < i:
                        self.add_edge(gap.into, u, gap.evicted)
                    else:
                        self.add_edge(u, gap.out, gap.evicted)

    def add_precedence(self) -> None:
        """Every G2 edge inside the window except the address-reuse edges (re-derived from the
        boxes' order) and the edges of removable spills (their chain orders them)."""
        g = self.graph
        for v in self.window:
            for u in g.preds[v]:
                if (
                    u in self.inside
                    and (u, v) not in self.ctx.reuse
                    and u not in self.present
                    and v not in self.present
                ):
                    self.add_edge(u, v)

    def add_tasks_no_overlap(self) -> None:
        """Each pipe runs one task at a time (Eqs. 9-10); optional spill nodes only when present."""
        for v, p in self.pipe.items():
            self.add_task_interval(v, p, self.cycles[v], self.present.get(v))
        self.add_pipe_no_overlap()

    def add_addresses(self) -> None:
        """Per tier, no-overlap-2D between the chains' pieces (optional boxes: a run of blocks
        between two evicted gaps, at the offset of its first block) and the fixed boxes of
        every other segment the window's nodes could meet in time; the boxes in time are
        then the segments' order on their addresses (the address-reuse edges). A piece still
        resident when the window begins comes first on its addresses whatever the times, one
        still resident when it ends last: among the pieces alone (a second no-overlap-2D)
        the first reaches back to time 0 and the second forward to the horizon, so a window
        box can only follow the one, precede the other, or keep clear of its addresses."""
        m, sched = self.m, self.ctx.sched
        start, end = sched.start, sched.end
        t_lo = min(lo for lo, _ in self.span.values())
        t_hi = max([hi for _, hi in self.span.values()] + [c.end_time for c in self.chains])
        per_tier: dict[int, tuple[list[Any], list[Any]]] = {}
        tiers = {c.tier for c in self.chains}
        for seg in self.ctx.segments:  # fixed boxes: the segments no chain holds
            if (seg.start < self.hi and seg.end >= self.lo) or seg.tier not in tiers:
                continue
            a, z = start[seg.start_node], end[seg.end_node]
            if z <= t_lo or a >= t_hi or z <= a:
                continue
            xs, ys = per_tier.setdefault(seg.tier, ([], []))
            xs.append(m.new_fixed_size_interval_var(a, z - a, ""))
            ys.append(m.new_fixed_size_interval_var(seg.offset, seg.size, ""))
        pieces: dict[int, tuple[list[Any], list[Any]]] = {}
        for chain in self.chains:
            xs, ys = per_tier.setdefault(chain.tier, ([], []))
            pxs, pys = pieces.setdefault(chain.tier, ([], []))
            for x, y, x_reach in self._pieces(chain):
                xs.append(x)
                ys.append(y)
                pxs.append(x_reach)
                pys.append(y)
        for xs, ys in (*per_tier.values(), *pieces.values()):
            m.add_no_overlap_2d(xs, ys)

    def _pieces(self, chain: _Chain) -> list[tuple[Any, Any, Any]]:
        """The optional boxes of a chain, one per run of blocks ``a..c`` (module docstring),
        recorded in :attr:`boxes` for the decoding: the time interval, the address interval,
        and the time interval reaching back to 0 when the piece begins before the window and
        forward to the horizon when it ends after it."""
        m = self.m
        gaps = chain.gaps
        r = len(gaps)
        out = []
        for a in range(r + 1):
            for c in range(a, r + 1):
                conds = ([gaps[a - 1].evicted] if a else []) + ([gaps[c].evicted] if c < r else [])
                conds += [~gaps[j].evicted for j in range(a, c)]
                lit = m.new_bool_var(f"p{chain.buf}_{a}_{c}") if conds else None
                if lit is not None:
                    m.add_bool_and(conds).only_enforce_if(lit)
                    m.add_bool_or([~x for x in conds]).only_enforce_if(~lit)
                x0 = (
                    self.s[gaps[a - 1].into]
                    if a
                    else (self.s[chain.begin] if chain.begin is not None else chain.begin_time)
                )
                x1 = (
                    self._end(gaps[c].out)
                    if c < r
                    else (self._end(chain.end) if chain.end is not None else chain.end_time)
                )
                r0 = 0 if a == 0 and chain.begin is None else x0  # the reach of add_addresses
                r1 = self.big if c == r and chain.end is None else x1
                off = gaps[a - 1].offset if a else chain.first_offset
                if c == r and chain.exit_domain is not None and not isinstance(off, int):
                    # the piece runs past the window: clear of what it meets there
                    fits = m.add_linear_expression_in_domain(off, chain.exit_domain)
                    if lit is not None:
                        fits.only_enforce_if(lit)
                first_node = gaps[a - 1].into if a else chain.begin
                last_node = gaps[c].out if c < r else chain.end
                x, x_reach = self._interval(x0, x1, lit), self._interval(r0, r1, lit)
                if lit is None:
                    y = m.new_fixed_size_interval_var(off, chain.size, "")
                else:
                    y = m.new_optional_fixed_size_interval_var(off, chain.size, lit, "")
                self.boxes.append((chain.tier, lit, x0, x1, off, chain.size, first_node, last_node))
                out.append((x, y, x_reach))
        return out

    def _interval(self, x0: Any, x1: Any, lit: Any) -> Any:
        """The interval from ``x0`` to ``x1`` (present under ``lit`` when given)."""
        m = self.m
        if isinstance(x0, int) and isinstance(x1, int):
            return (
                m.new_fixed_size_interval_var(x0, x1 - x0, "")
                if lit is None
                else m.new_optional_fixed_size_interval_var(x0, x1 - x0, lit, "")
            )
        width = m.new_int_var(0, self.big, "")
        return (
            m.new_interval_var(x0, width, x1, "")
            if lit is None
            else m.new_optional_interval_var(x0, width, x1, lit, "")
        )

    def add_traffic(self) -> None:
        """The spills added less those removed cost at most the budget's headroom."""
        terms = []
        const = 0
        for chain in self.chains:
            t = spill_traffic(chain.size, bool(self.ctx.inst.buf_backed[chain.buf]))
            for gap in chain.gaps:
                if gap.was_evicted:  # removing it gives its traffic back
                    terms.append(-t * (1 - gap.evicted))
                else:
                    terms.append(t * gap.evicted)
        if terms:
            self.m.add(sum(terms) + const <= self.ctx.headroom)

    def set_objective(self) -> None:
        """Minimise the window's latest ``end(v) + rest(v)``; :attr:`current` is the current
        order's value."""
        sched, g = self.ctx.sched, self.graph
        # paths through a removable spill run only when it is kept: its own term counts them then
        succs = {v: [w for w in self.ctx.succs[v] if w not in self.present] for v in self.window}
        rest = window_rest(g, self.window, self.inside, self.ctx.reuse, succs, sched.rest)
        latest = max(sched.end[v] + rest[v] for v in self.window)
        terms = ((v, g.cycles[v], rest[v], self.present.get(v)) for v in self.window)
        obj = self.minimize_latest(terms, self.big + latest, "latest")
        for chain in self.chains:
            for gap in chain.gaps:
                if gap.k < 0:
                    self.m.add(obj >= self._end(gap.into)).only_enforce_if(gap.evicted)
        self.current = latest

    def build(self) -> bool:
        """Every constraint family, in order; False when the window holds no operation."""
        if not any(self.graph.pipe[v] >= 0 for v in self.window):
            return False
        self.add_start_times(self.ctx.succs)
        self.add_chains()
        self.add_precedence()
        self.add_tasks_no_overlap()
        self.add_addresses()
        self.add_traffic()
        self.set_objective()
        return True

    # -- solving and decoding ------------------------------------------------------------

    def solve(self, *, deterministic_time: float, wall_time: float, seed: int) -> WindowOutcome[JointWindowSolution]:
        """The re-planned window (None when the model finds nothing as good as the current
        window, or no order realises its choice; a tie is returned: it may free a pipe or an
        address sooner for what follows, and the caller judges the whole plan), with the
        status and stats."""
        solver, status, stats = self.solve_model(deterministic_time=deterministic_time, wall_time=wall_time, seed=seed)
        if solver is None:
            return WindowOutcome(status, None, stats)
        if stats.objective is not None and stats.objective > self.current:
            return WindowOutcome("NO_GAIN", None, stats)
        sol = self._decode(solver)
        return WindowOutcome(status if sol is not None else "CYCLIC_ORDER", sol, stats)

    def _decode(self, solver: cp_model.CpSolver) -> JointWindowSolution | None:
        def on(lit: Any) -> bool:
            return lit is None or bool(solver.boolean_value(lit))

        def value(x: Any) -> int:
            return int(x) if isinstance(x, int) else int(solver.value(x))

        nodes = [v for v in self.s if on(self.present.get(v))]
        alive = set(nodes)
        edges = [(u, v) for u, v, lit in self.order_edges if on(lit) and u in alive and v in alive]
        key = {v: (solver.value(self.s[v]), self.ctx.sched.pos[v] if v < self.graph.n else self.hi) for v in nodes}
        edges += pipe_sequence_edges(nodes, self.pipe, key)
        boxes = [(t, value(x0), value(x1), value(o), z, f, e) for t, lit, x0, x1, o, z, f, e in self.boxes if on(lit)]
        for i, (t, a0, a1, ao, az, af, ae) in enumerate(boxes):
            for t2, b0, b1, bo, bz, bf, be in boxes[i + 1 :]:
                if t != t2 or ao >= bo + bz or bo >= ao + az:
                    continue
                if a1 <= b0 and ae in alive and bf in alive:
                    edges.append((ae, bf))
                elif b1 <= a0 and be in alive and af in alive:
                    edges.append((be, af))
        seq = keyed_topological_order(nodes, edges, key)
        if seq is None:
            return None
        sol = JointWindowSolution(seq)
        for chain in self.chains:
            if chain.begin is not None:
                sol.offsets[chain.begin] = value(chain.first_offset)
            for gap in chain.gaps:
                kept = bool(solver.boolean_value(gap.evicted))
                if gap.k >= 0 and not kept:
                    sol.removed.append(gap.k)
                elif gap.k >= 0:
                    sol.offsets[gap.into] = value(gap.offset)
                elif kept:
                    sol.new_spills.append((gap.out, gap.into, chain.buf, value(gap.offset)))
        return sol


def solve_joint_window(
    ctx: JointWindowContext, lo: int, hi: int, *, deterministic_time: float, wall_time: float, seed: int
) -> WindowOutcome[JointWindowSolution]:
    """Build and solve the window ``[lo, hi)`` (:class:`JointWindowModel`)."""
    model = JointWindowModel(ctx, lo, hi)
    if not model.build():
        return WindowOutcome("NO_OPERATION", None, model.unsolved())
    return model.solve(deterministic_time=deterministic_time, wall_time=wall_time, seed=seed)
