"""Why a pipe idles: the binding constraint behind each idle gap of a timed plan.

The shared simulator starts a node at ``max(end of its predecessors in the augmented
graph, end of the previous node on its pipe)`` (docs/rules.md, section 7). So when a pipe idles
before node ``v``, some predecessor ``u`` of ``v`` ended exactly at ``start(v)``: the
*binding* predecessor. Walking that relation back from ``v`` gives the chain of waits
that kept the pipe idle, each link named by the kind of constraint:

- ``dag``: an edge of the instance (or a spill node's edge to a user of its buffer);
- ``spill``: an edge the spill rules add (``ALLOC -> SPILL_OUT -> SPILL_IN -> FREE``
  and the users before / after);
- ``reuse``: an address-reuse edge (the segment that last held the addresses must end
  first);
- ``pipe``: the previous node on the same pipe (pipes run in schedule order).

Cache nodes (ALLOC, FREE: no pipe, no cycles) are passed through: a link names the
pipe of the first real task behind it, and the first kind other than ``dag`` on the way. Among several binding predecessors the first
in the augmented graph's predecessor list is taken (deterministic), and a pipe link
only when no graph edge binds.

:func:`pipe_waits` sums, per pipe, the idle cycles by chain (the first ``depth``
links), which is what the trace shows when a plan sits above its floors: e.g. MTE2
idling while each reload waits for its victim's SPILL_OUT, which waits for the
victim's last MOVE.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ...instance import Instance
from ...models.bounds.floors import busiest_pipe_by_name
from ...plan import Plan
from ...simulate import Evaluation, Timing

__all__ = ["Wait", "PipeWaits", "pipe_waits", "busiest_pipe_name", "format_waits"]


@dataclass(frozen=True)
class Wait:
    """Idle cycles of a pipe explained by one chain of binding links, e.g.
    ``("reuse:MTE3", "spill:MTE1", "pipe:MTE1")``, over ``gaps`` idle gaps."""

    chain: tuple[str, ...]
    cycles: int
    gaps: int

    def describe(self) -> str:
        return " < ".join(self.chain)


@dataclass(frozen=True)
class PipeWaits:
    """A pipe's load, its idle cycles before its last task (``idle``), the cycles after
    it (``tail``), and the waits behind the idle cycles, largest first."""

    pipe: str
    load: int
    idle: int
    tail: int
    waits: tuple[Wait, ...]


def busiest_pipe_name(inst: Instance, ev: Evaluation) -> str:
    """The pipe with the largest total of task cycles in the timed plan (spill tasks
    included); the first in the hardware's pipe order on ties."""
    g = _timing(ev).graph
    return busiest_pipe_by_name(inst.hw.pipes, g.pipe, g.cycles)[0]


def pipe_waits(inst: Instance, plan: Plan, ev: Evaluation, pipe: str, depth: int = 3) -> PipeWaits:
    """The idle gaps of ``pipe`` in the valid timed plan ``plan`` (judged ``ev``), grouped by
    their chain of binding links (at most ``depth`` links each); see the module docstring."""
    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    timing = _timing(ev)
    g = timing.graph
    p = inst.hw.pipes.index(pipe)
    start, end = timing.start, timing.end
    kinds = {e: "reuse" for e in g.reuse_edges} | {e: "spill" for e in g.spill_edges}
    prev_on_pipe: dict[int, int] = {}
    last: dict[int, int] = {}
    for v in plan.order:
        q = g.pipe[v]
        if q >= 0:
            if q in last:
                prev_on_pipe[v] = last[q]
            last[q] = v

    def binding(v: int) -> tuple[int, str] | None:
        if start[v] == 0:  # nothing to wait for
            return None
        for u in g.preds[v]:
            if end[u] == start[v]:
                return u, kinds.get((u, v), "dag")
        q = prev_on_pipe.get(v)
        if q is not None and end[q] == start[v]:
            return q, "pipe"
        return None

    def link(v: int) -> tuple[int, str] | None:
        """The binding predecessor of ``v``, walked through cache nodes to a task; the
        link's kind is the first kind other than ``dag`` met on the way (a load waiting
        for its ALLOC, which waits for a FREE on the same addresses, waits for reuse)."""
        got = binding(v)
        if got is None:
            return None
        u, kind = got
        while g.pipe[u] < 0:
            nxt = binding(u)
            if nxt is None:
                return None
            u = nxt[0]
            kind = nxt[1] if kind == "dag" else kind
        return u, f"{kind}:{inst.hw.pipes[g.pipe[u]]}"

    cycles: Counter[tuple[str, ...]] = Counter()
    gaps: Counter[tuple[str, ...]] = Counter()
    free, load = 0, 0
    for v in plan.order:
        if g.pipe[v] != p:
            continue
        load += g.cycles[v]
        if start[v] > free:
            chain: list[str] = []
            u: int | None = v
            while u is not None and len(chain) < depth:
                got = link(u)
                if got is None:
                    break
                u, name = got
                chain.append(name)
            key = tuple(chain) or ("start",)
            cycles[key] += start[v] - free
            gaps[key] += 1
        free = end[v]
    waits = tuple(Wait(k, c, gaps[k]) for k, c in sorted(cycles.items(), key=lambda kv: (-kv[1], kv[0])))
    return PipeWaits(pipe, load, sum(cycles.values()), timing.makespan - free, waits)


def format_waits(w: PipeWaits, top: int = 3) -> list[str]:
    """Lines for a terminal: the pipe's load, idle and tail cycles, then its ``top`` waits."""
    lines = [f"busiest pipe {w.pipe}: load {w.load:,} cycles, idle {w.idle:,} before its last task, tail {w.tail:,}"]
    for x in w.waits[:top]:
        lines.append(f"  waits {x.cycles:,} cycles in {x.gaps:,} gap(s) on {x.describe()}")
    return lines


def _timing(ev: Evaluation) -> Timing:
    timing = ev.timing
    if not ev.valid or timing is None:
        raise ValueError("waits need a valid plan's timing (evaluate it without dropping detail)")
    return timing
