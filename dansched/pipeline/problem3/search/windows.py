"""The window moves of the makespan search: a stretch of the plan around the focus task
re-planned exactly by CP-SAT, the current plan as the hint.

- :class:`OrderWindow`: the memory-aware window (:mod:`dansched.models.windows.memory`): the
  order and the times of the window's nodes, memory events included; offsets and spills
  stay. This is the polish's window (:mod:`dansched.pipeline.problem3.stage3.polish`) as a repair
  the search can call wherever its destroy step looks, the head of the graph included
  (which tile's loads go first).
- :class:`JointWindow`: the joint window (:mod:`dansched.models.windows.joint`): order,
  times, spills (kept, removed or added within the traffic headroom) and the offsets of
  the segments that start in the window, together: the double-buffered reload (a room
  freed earlier, a victim without write-back) and the multi-spill re-plan are its
  solutions.

Both take ``params.window_width`` operation nodes around the focus and CP-SAT's
``params.window_time`` of deterministic time, seeded; a window whose model finds nothing
better than the current plan does not apply.
"""

from __future__ import annotations

import numpy as np

from ....models.windows.driver import window_bounds
from ....models.windows.joint import JointWindowContext, JointWindowSolution, solve_joint_window
from ....models.windows.memory import MemoryWindowContext, solve_memory_window
from ....simulate import spill_of_node
from .layout import Layout
from .moves import MoveContext

__all__ = ["OrderWindow", "JointWindow", "replanned"]

WALL_SECONDS = 60.0  # a safety net per window only: the deterministic time decides


class _WindowMove:
    """A move on the window of operation nodes around its focus task, solved by CP-SAT."""

    uses_cpsat = True

    def accepts(self, ctx: MoveContext, focus: int) -> bool:
        return ctx.schedule.graph.pipe[focus] >= 0

    def bounds(self, ctx: MoveContext, focus: int) -> tuple[int, int]:
        sched = ctx.schedule
        return window_bounds(sched.order, sched.graph.pipe, sched.pos[focus], ctx.params.window_width)


class OrderWindow(_WindowMove):
    """The memory-aware window around the focus: a new order of its nodes."""

    name = "order window"

    def apply(self, ctx: MoveContext, focus: int, rng: np.random.Generator) -> Layout | None:
        sched = ctx.schedule
        lo, hi = self.bounds(ctx, focus)
        mctx = MemoryWindowContext.of(ctx.inst, ctx.segments, sched)
        got = solve_memory_window(
            mctx, lo, hi, deterministic_time=ctx.params.window_time, wall_time=WALL_SECONDS, seed=ctx.seed
        )
        if got.plan is None:
            return None
        out = ctx.layout.copy()
        out.order = out.order[:lo] + got.plan + out.order[hi:]
        return out


class JointWindow(_WindowMove):
    """The joint window around the focus: its order, spills and offsets re-planned."""

    name = "joint window"

    def apply(self, ctx: MoveContext, focus: int, rng: np.random.Generator) -> Layout | None:
        sched = ctx.schedule
        lo, hi = self.bounds(ctx, focus)
        jctx = JointWindowContext(
            ctx.inst,
            ctx.segments,
            sched,
            set(sched.graph.reuse_edges),
            ctx.succs,
            ctx.headroom,
            ctx.params.window_spills,
        )
        got = solve_joint_window(
            jctx, lo, hi, deterministic_time=ctx.params.window_time, wall_time=WALL_SECONDS, seed=ctx.seed
        )
        return None if got.plan is None else replanned(ctx, lo, hi, got.plan)


def replanned(ctx: MoveContext, lo: int, hi: int, sol: JointWindowSolution) -> Layout:
    """``ctx.layout`` with positions ``[lo, hi)`` re-planned by ``sol``: its new spills added
    (numbered after the plan's), its nodes in their new order, the new offsets of the
    segments that start in the window, the removed spills dropped."""
    inst, lay = ctx.inst, ctx.layout
    out = lay.copy()
    ids: dict[int, int] = {}
    for out_node, in_node, buf, offset in sol.new_spills:
        ids[out_node], ids[in_node] = out.add_spill(buf, offset)
    out.order = lay.order[:lo] + [ids.get(v, v) for v in sol.sequence] + lay.order[hi:]
    for node, offset in sol.offsets.items():
        if node < inst.n:
            out.first[int(inst.node_buf[node])] = offset
        else:
            out.spill_off[spill_of_node(inst.n, node)[0]] = offset
    out.remove_spills(sol.removed)
    return out
