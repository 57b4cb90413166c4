"""The joint window (order, spills and addresses of a stretch of a plan re-planned together):
the current plan is always one of its solutions, its plans pass the shared evaluator within
the traffic budget, and on the hand-computed stream of tests/pipeline/problem3/search/test_moves.py
it removes a needless spill and finds nothing where nothing can be gained."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import generated
from pipeline.problem3.search.test_moves import _stream

from dansched.models.exact.solver import deterministic_solver
from dansched.models.windows.driver import window_bounds
from dansched.models.windows.joint import JointWindowContext, JointWindowModel
from dansched.params import SearchParams
from dansched.pipeline import SolveOptions, run_pipeline
from dansched.pipeline.problem3.search.layout import Layout
from dansched.pipeline.problem3.search.moves import MoveContext
from dansched.pipeline.problem3.search.windows import JointWindow
from dansched.simulate import evaluate


def _context(inst, plan, ev, headroom=0):
    ctx = MoveContext(inst, Layout.of(inst, plan, ev), ev, headroom, SearchParams(window_width=12))
    sched = ctx.schedule
    return ctx, JointWindowContext(inst, ctx.segments, sched, set(sched.graph.reuse_edges), ctx.succs, headroom)


def _spilling_plan(family, seed):
    inst = generated(family, 2, seed)
    res = run_pipeline(inst, SolveOptions(problem=2, order_search=None))
    ev = evaluate(inst, res.plan)
    assert ev.valid and ev.spill_count > 0
    return inst, res.plan, ev


@pytest.mark.parametrize("family, seed", [("matmul", 0), ("conv", 1), ("fa", 0)])
def test_the_current_plan_is_a_solution_of_every_window_of_it(family, seed):
    """Every constraint family holds at the plan the window was cut from: its start times,
    its spills kept, its offsets (the model must never exclude the plan it starts from)."""
    inst, plan, ev = _spilling_plan(family, seed)
    _, jctx = _context(inst, plan, ev)
    sched = jctx.sched
    segs = {(s.buf, s.start_node): s for s in ev.segments()}
    for center in range(0, len(plan.order), max(1, len(plan.order) // 6)):
        lo, hi = window_bounds(sched.order, sched.graph.pipe, center, 12)
        model = JointWindowModel(jctx, lo, hi)
        if not model.build():
            continue
        m = model.m
        for v in model.window:
            m.add(model.s[v] == sched.start[v])
        for chain in model.chains:
            for gap in chain.gaps:
                m.add(gap.evicted == int(gap.was_evicted))
                if gap.was_evicted:
                    m.add(gap.offset == segs[(chain.buf, gap.into)].offset)
            if chain.begin is not None:
                m.add(chain.first_offset == segs[(chain.buf, chain.begin)].offset)
        solver = deterministic_solver(0, 5.0, 60)
        solver.parameters.linearization_level = 0
        assert solver.status_name(solver.solve(m)) in ("OPTIMAL", "FEASIBLE"), (lo, hi)


@pytest.mark.parametrize("family, seed", [("matmul", 0), ("conv", 1)])
@pytest.mark.parametrize("headroom", [0, 400])
def test_every_joint_window_plan_passes_the_evaluator_within_the_budget(family, seed, headroom):
    inst, plan, ev = _spilling_plan(family, seed)
    ctx, _ = _context(inst, plan, ev, headroom)
    made = 0
    for v in [v for v in plan.order if ctx.schedule.graph.pipe[v] >= 0][::7]:
        got = JointWindow().apply(ctx, v, np.random.default_rng(0))
        if got is None:
            continue
        made += 1
        judged = evaluate(inst, got.plan(inst))
        assert judged.valid, judged.errors[:2]
        assert judged.extra_traffic <= ev.extra_traffic + headroom
    assert made


def test_a_window_over_the_whole_stream_removes_the_needless_spill():
    """In a UB of 30 the three buffers fit together: the joint window keeps b0 resident
    (its spill removed, no traffic): L0 0-10, L1 10-20, L2 20-30, V1 20-70, V2 70-120,
    V3 120-170."""
    inst, plan, ev = _stream(30)
    ctx = MoveContext(inst, Layout.of(inst, plan, ev), ev, 0, SearchParams(window_width=50, window_time=5.0))
    got = JointWindow().apply(ctx, 10, np.random.default_rng(0))
    new = got.plan(inst)
    judged = evaluate(inst, new)
    assert judged.valid and judged.makespan == 170 and judged.extra_traffic == 0 and new.spills == ()


def test_nothing_is_gained_where_the_spill_is_forced():
    """In a UB of 20, V2 needs b1 and b2 (the whole tier) between V1 and V3, which need b0:
    b0 must leave after V1 (70) and may come back only when V2 (L2 waits for b0's room,
    80-130) frees a buffer: reload 130-300, V3 300-350, the plan as it is."""
    inst, plan, ev = _stream(20)
    ctx = MoveContext(inst, Layout.of(inst, plan, ev), ev, 0, SearchParams(window_width=50, window_time=5.0))
    got = JointWindow().apply(ctx, 10, np.random.default_rng(0))
    assert got is None or evaluate(inst, got.plan(inst)).makespan == 350
