"""The gap-hiding walk (dansched/pipeline/problem3/search/gaps.py) on hand-made plans, and
the frontier it makes on generated graphs against fixed allowances.

The fixture of ``test_moves._ahead``: V2 idles VECTOR 170 cycles waiting for the write-out
of V1's own buffer b1; spilling the idle b3 instead hides the whole gap for 10 units of
traffic (hand-computed there: 720 -> 550). Every plan is judged by the shared evaluator.
"""

from __future__ import annotations

import pytest
from helpers import hw_file
from test_moves import _ahead

from dansched.generate import generate
from dansched.hardware import load_hardware
from dansched.instance import instance_from_records
from dansched.params import GapParams, SearchParams
from dansched.pipeline import effort_options, run_pipeline
from dansched.pipeline.problem3.search.driver import PlanState
from dansched.pipeline.problem3.search.focus import BusiestGaps, Chain
from dansched.pipeline.problem3.search.gaps import gap_step, hide_gaps, step_headroom
from dansched.pipeline.problem3.search.layout import Layout
from dansched.simulate import evaluate


def _state():
    inst, plan, ev = _ahead()
    return inst, PlanState(plan, ev, Layout.of(inst, plan, ev))


def test_the_busiest_pipes_gap_and_the_waits_behind_it_are_the_foci():
    """VECTOR idles once, 170 cycles before V2 (50 -> 220): behind V2 waits ALLOC b2, behind
    it b1's SPILL_OUT (address reuse), behind that V1 (the SPILL_OUT follows b1's user)."""
    inst, st = _state()
    chain = Chain(st.plan.order, st.evaluation)
    assert chain.idle_gaps() == [(170, 7)]
    n = inst.n
    assert BusiestGaps(gaps=1, depth=8).foci(chain) == [7, 6, n, 5]


def test_one_step_hides_the_gap_for_one_spill():
    """The step takes the add-room move: 170 cycles for 10 units (b3 is backed), within a
    headroom of the costliest single spill of the tier the plan spills from (b1: 20)."""
    inst, st = _state()
    assert step_headroom(inst, st) == 20
    step, used = gap_step(inst, st, GapParams(), SearchParams(choices=1), work=10**9)
    assert step is not None and step.move == "add room"
    assert (step.gain, step.extra) == (170, 10)
    judged = evaluate(inst, step.state.plan)
    assert judged.valid and judged.makespan == 550 and judged.extra_traffic == 30
    assert used > 0 and used % st.evaluation.graph.n == 0  # one plan's nodes per try


def test_the_walk_ends_where_no_move_gains_or_past_its_reach():
    inst, st = _state()
    steps = hide_gaps(inst, st, reach=10**9, params=GapParams(), search=SearchParams(choices=1), saturation=0.0)
    assert [(s.move, s.gain, s.extra) for s in steps] == [("add room", 170, 10)]  # then nothing gains
    # a reach below the step's traffic (30): no step
    assert hide_gaps(inst, st, reach=29, params=GapParams(), search=SearchParams(choices=1), saturation=0.0) == []
    # saturated: 720 is within 100 % of VECTOR's load (550)
    assert hide_gaps(inst, st, reach=10**9, params=GapParams(), search=SearchParams(), saturation=1.0) == []
    # no work: no step
    assert hide_gaps(inst, st, reach=10**9, params=GapParams(work=0), search=SearchParams(), saturation=0.0) == []


@pytest.mark.parametrize(
    ("family", "scale", "seed", "effort", "walked"),
    [
        ("fa", 2, 0, "fast", True),
        ("conv", 2, 0, "fast", False),
        pytest.param("fa", 2, 0, "default", False, marks=pytest.mark.slow),
        pytest.param("conv", 2, 1, "default", False, marks=pytest.mark.slow),
    ],
)
def test_the_frontier_finds_what_every_fixed_allowance_finds(family, scale, seed, effort, walked, tmp_path):
    """``--frontier`` against ``--traffic-slack S`` for S within its reach: for each S, the
    frontier has a point carrying no more than S's allowance that is no slower than the
    plan of the solve at S (the walk to a smaller reach is a prefix of the walk to a larger
    one). Each point's figures are the evaluator's."""
    nodes, edges = generate(family, scale, seed)
    inst = instance_from_records(f"{family}{scale}", nodes, edges, load_hardware(hw_file(tmp_path, L1=1024, UB=256)))
    front = run_pipeline(inst, effort_options(effort, frontier=True))
    points = []
    for p in front.frontier:
        ev = evaluate(inst, p.plan)
        assert ev.valid and (ev.extra_traffic, ev.makespan) == (p.traffic, p.makespan)
        points.append((p.traffic, p.makespan))
    if walked:  # the walk trades traffic for time on this one: a point per step that adds traffic
        assert 1 < len(points) <= front.report.walk.steps + 1  # a step at no extra traffic replaces its point
    for slack in (5.0, 20.0, 50.0):
        fixed = run_pipeline(inst, effort_options(effort, traffic_slack=slack))
        allowance = fixed.report.budget.allowance
        within = [m for t, m in points if t <= allowance]
        assert within and min(within) <= fixed.evaluation.makespan, (slack, points, fixed.evaluation.makespan)
