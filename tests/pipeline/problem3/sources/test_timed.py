"""The time-driven Stage-2 scheduler (dansched.pipeline.problem3.sources.timed): every plan it makes
passes the shared evaluator, its engine clock is the evaluator's timing, and each part
(address-reuse waits, best fit, victim windows, task queues) agrees with an oracle
worked out independently (a per-address array, hand-computed values)."""

from __future__ import annotations

import tracemalloc
from functools import cache

import pytest
from helpers import SHIPPED, alloc, capacities, exp_records, free, generated, op, stage2_reference

from dansched.errors import TimedFailed
from dansched.graph import topological_order
from dansched.instance import instance_from_records, load_instance
from dansched.params import DEFAULT_TRIALS, SLACK_TRIALS, TimedParams
from dansched.pipeline.problem3.sources.timed import timed_schedule
from dansched.pipeline.problem3.sources.timed.emission import Buffers, Emission
from dansched.pipeline.problem3.sources.timed.engines import NO_PIPE, Engines
from dansched.pipeline.problem3.sources.timed.eviction import VictimWindow, chosen_window, victim_windows
from dansched.pipeline.problem3.sources.timed.placement import Tier, has_prefetch_room
from dansched.pipeline.problem3.sources.timed.scheduler import TimedScheduler
from dansched.pipeline.problem3.sources.timed.window import TaskQueues
from dansched.rooms import choose_room
from dansched.simulate import evaluate
from dansched.testing import audit_instance, random_dag

ALL_TRIALS = DEFAULT_TRIALS + SLACK_TRIALS


@cache
def generated_with_reference(family: str, scale: int, seed: int, tight: bool = True):
    """:func:`generated` and its Stage-2 reference order, made once per test session."""
    inst = generated(family, scale, seed, tight)
    return inst, stage2_reference(inst)[1]


GENERATED = [("matmul", 2, 1), ("fa", 2, 3), ("conv", 2, 5), ("random", 5, 11)]


# ------------------------------------------------------------------ whole scheduler
@pytest.mark.parametrize("tight", [True, False])
@pytest.mark.parametrize("family,scale,seed", GENERATED + [("random", 3, 7)])
def test_every_trial_gives_a_valid_plan_on_generated_graphs(family, scale, seed, tight):
    inst, ref = generated_with_reference(family, scale, seed, tight)
    made = 0
    for params in ALL_TRIALS:
        try:
            plan = timed_schedule(inst, ref, params)
        except TimedFailed:
            continue  # allowed (no room after evicting); the pipeline then keeps Stage 2's plan
        ev = evaluate(inst, plan)
        assert ev.valid, (params.name, [e.message for e in ev.errors[:3]])
        made += 1
    assert made > 0, "no trial produced a plan"


def _clock_cases():
    insts = [audit_instance(s) for s in range(8)] + [random_dag(s) for s in range(8)]
    insts += [generated(f, sc, sd) for f, sc, sd in GENERATED]
    return insts


@pytest.mark.parametrize("inst", _clock_cases(), ids=lambda inst: inst.name)
def test_engine_clock_is_the_evaluators_timing(inst):
    """The end time the scheduler's engine clock gave each node, spill nodes included, is
    the end time the shared cycle simulator computes for the emitted plan."""
    spilled = 0
    for params in ALL_TRIALS:
        run = TimedScheduler(inst, topological_order(inst), params, None)
        try:
            plan = run.run()
        except TimedFailed:
            continue
        ev = evaluate(inst, plan)
        assert ev.valid, [e.message for e in ev.errors[:3]]
        assert run.em.engines.end == list(ev.end)
        assert max(run.em.engines.end) == ev.makespan
        spilled += bool(plan.spills)
    if inst.name.startswith(("matmul", "fa", "conv")):
        assert spilled, "the tight tiers should make some trial spill"


@pytest.mark.parametrize("family,scale,seed", GENERATED)
def test_traffic_limit_stops_the_scheduler(family, scale, seed):
    inst, ref = generated_with_reference(family, scale, seed, True)
    plan = timed_schedule(inst, ref, DEFAULT_TRIALS[0])
    ev = evaluate(inst, plan)
    assert ev.valid and ev.extra_traffic > 0  # the tight tiers make this trial spill
    assert timed_schedule(inst, ref, DEFAULT_TRIALS[0], traffic_limit=ev.extra_traffic) == plan
    with pytest.raises(TimedFailed, match="over the allowance"):
        timed_schedule(inst, ref, DEFAULT_TRIALS[0], traffic_limit=ev.extra_traffic - 1)


def test_exp_worked_example_is_serial():
    """The Exp chain of the rules' worked example runs strictly serially: makespan 60, no spill."""
    inst = load_instance(SHIPPED / "Exp.json")
    plan = timed_schedule(inst, list(range(inst.n)), TimedParams())
    ev = evaluate(inst, plan)
    assert ev.valid and ev.makespan == 60 and ev.extra_traffic == 0


def test_reference_must_hold_every_node():
    inst = load_instance(SHIPPED / "Exp.json")
    with pytest.raises(ValueError, match="every node"):
        timed_schedule(inst, list(range(inst.n - 1)))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"window": -1},
        {"fill": 0.0},
        {"fill": 1.5},
        {"victim_tolerance": -0.1},
        {"priority": "random"},
        {"reserve_ops": -2},
        {"compute_window": -1},
        {"feed_window": -1},
        {"victim_horizon": -1},
    ],
)
def test_params_are_validated(kwargs):
    with pytest.raises(ValueError):
        TimedParams(**kwargs)


def test_deterministic():
    inst, ref = generated_with_reference("fa", 2, 3, True)
    assert timed_schedule(inst, ref, DEFAULT_TRIALS[1]) == timed_schedule(inst, ref, DEFAULT_TRIALS[1])


def test_buffer_without_users_next_to_a_full_tier():
    """A buffer no operation uses is allocated at its FREE; when its tier is full the
    frontier makes room, and the plan stays valid."""
    nodes = [
        alloc(0, 0, 1024),
        op(1, "COPY_IN", "MTE2", 10, [0]),
        alloc(2, 1, 512),
        free(3, 1, 512),
        op(4, "COPY_OUT", "MTE3", 10, [0]),
        free(5, 0, 1024),
    ]
    inst = instance_from_records("unused", nodes, [[0, 1], [1, 4], [4, 5], [2, 3], [1, 3]])
    for ref in ([0, 1, 2, 3, 4, 5], [2, 3, 0, 1, 4, 5]):
        ev = evaluate(inst, timed_schedule(inst, ref, TimedParams()))
        assert ev.valid, [e.message for e in ev.errors]


def _peak_bytes(inst) -> int:
    tracemalloc.start()
    try:
        timed_schedule(inst, list(range(inst.n)), TimedParams())
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_tier_capacity():
    """UB = 2**40 (past any per-address array) gives the same plan as the default UB on
    the Exp example, valid, for about the same memory."""
    small = instance_from_records("exp", *exp_records())
    huge = instance_from_records("exp", *exp_records(), capacities(UB=2**40, L1=2**40))
    plan = timed_schedule(huge, list(range(huge.n)))
    ev = evaluate(huge, plan)
    assert ev.valid and ev.makespan == 60
    assert plan == timed_schedule(small, list(range(small.n)))
    assert _peak_bytes(huge) < _peak_bytes(small) + 64 * 1024


# ------------------------------------------------------------------ engines
def test_engines_start_rule_by_hand():
    """Eq. 9 on a hand-timed example: node 2 waits for its predecessor 0 (end 5), node 1
    for its pipe (busy until 5), a spill node for its extra predecessor."""
    clock = Engines(preds=[[], [], [0]], n=3, npipes=2)
    assert clock.run(0, after=0, pipe=0, cycles=5) == 5
    assert clock.run(1, after=0, pipe=0, cycles=2) == 7  # pipe 0 free at 5
    assert clock.run(2, after=0, pipe=1, cycles=4) == 9  # after node 0
    assert clock.run(3, after=8, pipe=NO_PIPE, cycles=0) == 8  # spill node: only ``after``
    assert clock.pipe_free == [7, 9] and clock.end == [5, 7, 9, 8]


# ------------------------------------------------------------------ emission
def _one_buffer_instance():
    """ALLOC b0 (UB, 10 units) -> VEC 5 cycles -> VEC 7 cycles -> FREE b0."""
    nodes = [alloc(0, 0, 10), op(1, "VEC", "VECTOR", 5, [0]), op(2, "VEC", "VECTOR", 7, [0]), free(3, 0, 10)]
    return instance_from_records("one", nodes, [[0, 1], [1, 2], [2, 3]])


def _emission(inst, limit=None):
    hw = inst.hw
    engines = Engines(inst.lists().pred, inst.n, len(hw.pipes))
    tiers = [Tier(hw.capacity[t]) for t in hw.tiers]
    pipes = (hw.pipe_index(hw.spill_out_pipe), hw.pipe_index(hw.spill_in_pipe))
    return Emission(engines, tiers, Buffers.of(inst), pipes, limit)


def test_emission_of_a_spill_by_hand():
    """The buffer is spilled between its two uses and reloaded at offset 20. By hand
    (transfer 2*10 + 150 = 170 cycles): ALLOC 0, VEC ends 5, SPILL_OUT 5-175, SPILL_IN
    175-345, VEC 345-352, FREE 352; traffic 2*10. The evaluator agrees."""
    inst = _one_buffer_instance()
    em = _emission(inst)
    em.alloc(0, 0)
    em.operation(1, inst.lists().pipe[1], 5, [0])
    em.spill_out(0)
    assert em.res.pending_in == {0: 0} and em.spill_out_end(0) == 175
    em.spill_in(0, 20)
    em.operation(2, inst.lists().pipe[2], 7, [0])
    em.free(3, 0)
    assert em.engines.end == [0, 5, 352, 352, 175, 345]
    plan = em.plan(inst)
    assert plan.order == (0, 1, 4, 5, 2, 3) and plan.spills == ((0, 20),)
    ev = evaluate(inst, plan)
    assert ev.valid and ev.extra_traffic == em.traffic == 20
    assert list(ev.end) == em.engines.end and ev.makespan == 352


def test_emission_stops_past_the_traffic_limit():
    em = _emission(_one_buffer_instance(), limit=19)
    em.alloc(0, 0)
    with pytest.raises(TimedFailed, match="traffic 20 over the allowance 19"):
        em.spill_out(0)


# ------------------------------------------------------------------ placement
def test_the_least_late_room_of_a_tier_by_hand():
    """Tier of 32: resident [4, 8) and [12, 16); free gaps [0, 4) (freed at 50), [8, 12)
    (freed at 5) and [16, 32) (never used). The time-driven scheduler's default room rule,
    least late (a time-aware best fit, Eq. 24), and earliest released."""
    tier = Tier(32)
    for off, b in ((0, 0), (4, 1), (8, 2), (12, 3)):
        tier.add(off, 4, b)
    tier.remove(0, end_time=50)
    tier.remove(8, end_time=5)
    assert tier.free_ranges() == [(0, 4), (8, 12), (16, 32)]

    def room(want, size=4, extra=(), rule="least-late"):
        return choose_room(tier.free_ranges(extra), size, rule, tier.wait, want)

    # needed at 10: [8, 12) is free by then and fits exactly
    assert room(10) == 8
    # needed at 0: only [16, 32) is free at once; of its two ends the lower
    assert room(0) == 16
    # needed at 60: all free by then, the smallest gap first ([0, 4) before [8, 12))
    assert room(60) == 0
    # [8, 12) promised to another buffer: needed at 10, the fresh range wins
    assert room(10, extra=[(8, 4)]) == 16
    assert room(0, size=17) is None
    # earliest released: never-used [16, 32) first, whenever the buffer is wanted
    assert room(60, rule="earliest-released") == 16
    assert tier.overlapping(3, 13) == [4, 12]


def test_prefetch_room_keeps_the_reserve_free():
    tier = Tier(100)
    tier.add(0, 40, 0)
    assert has_prefetch_room(tier, 30, [(50, 10)], reserve=20, fill=1.0)  # 40+10+30+20 = 100
    assert not has_prefetch_room(tier, 31, [(50, 10)], reserve=20, fill=1.0)
    assert not has_prefetch_room(tier, 30, [(50, 10)], reserve=20, fill=0.9)


# ------------------------------------------------------------------ eviction
def _eviction_tier():
    """Tier of 40 holding buffers 0..3 at [0, 10), [10, 20), [20, 30), [30, 40)."""
    tier = Tier(40)
    for b in range(4):
        tier.add(10 * b, 10, b)
    return tier


# buffer -> next use (operation positions, frontier 0, 10 operations), traffic, use end
NEXT = {0: 1, 1: 9, 2: 4, 3: 10}  # buffer 3: no use left (dead)
TRAFFIC = [20, 20, 10, 20]
USE_END = [5, 30, 8, 0]


def _windows(size, pinned=(), horizon=None):
    return victim_windows(
        _eviction_tier(),
        size,
        set(pinned),
        [],
        next_use=NEXT.__getitem__,
        frontier=0,
        n_ops=10,
        cost=lambda b: TRAFFIC[b] / (NEXT[b] + 1),  # a victim rule's cost: traffic over the reuse distance
        use_end=USE_END,
        horizon=horizon,
    )


def test_victim_windows_costs_by_hand():
    """A window costs what the rule says its victims cost, summed; here traffic / (d + 1):
    buffer 0 20/2 = 10, buffer 1 20/10 = 2, buffer 2 10/5 = 2; a window meeting dead buffer
    3 never qualifies."""
    got = {(w.start, tuple(w.victims)): (w.cost, w.ready, w.nearest) for w in _windows(10)}
    assert got == {(0, (0,)): (10.0, 5, 1), (10, (1,)): (2.0, 30, 9), (20, (2,)): (2.0, 8, 4)}
    wide = {(w.start, tuple(w.victims)): w.cost for w in _windows(20)}
    assert wide == {(0, (0, 1)): 12.0, (10, (1, 2)): 4.0}


def test_cheapest_window_ties_go_to_the_earliest_spill_out():
    # buffers 1 and 2 cost 2 each: buffer 2's uses end at 8, buffer 1's at 30
    assert chosen_window(_windows(10), tolerance=0.0, victim_horizon=0).victims == [2]
    # pinned buffer 2: buffer 1 (cost 2) beats buffer 0 (cost 10) though 0 is free sooner
    assert chosen_window(_windows(10, pinned=[2]), tolerance=0.0, victim_horizon=0).victims == [1]
    # a tolerance of 5x lets buffer 0 (cost 10 <= 2 * 6) compete on time: its uses end at 5
    assert chosen_window(_windows(10, pinned=[2]), tolerance=5.0, victim_horizon=0).victims == [0]
    # with a horizon of 9 operations, buffer 1 (reused 9 ahead) competes whatever its cost
    windows = [VictimWindow(1.0, 50, 0, [7], 2), VictimWindow(9.0, 10, 10, [8], 9)]
    assert chosen_window(windows, tolerance=0.0, victim_horizon=9).victims == [8]
    assert chosen_window(windows, tolerance=0.0, victim_horizon=0).victims == [7]


def test_victims_past_the_horizon_only():
    """A load making its own room (horizon = its own next use, 4) may only evict buffers
    needed after it: buffer 1 (next use 9)."""
    assert [w.victims for w in _windows(10, horizon=4)] == [[1]]


def test_scheduler_spills_the_cheapest_window():
    """Two resident UB buffers of 1024: A (traffic 1024, backed by its COPY_IN) next used
    right after the frontier, B (traffic 2048) at the end. The frontier needs 1024 more
    units: A's cost 1024/2 beats B's 2048/3, so A is spilled and reloaded."""
    nodes = [
        alloc(0, 0, 1024),  # A
        alloc(1, 1, 1024),  # B
        alloc(2, 2, 1024),  # C
        op(3, "COPY_IN", "MTE2", 10, [0]),
        op(4, "VEC", "VECTOR", 10, [1]),
        op(5, "VEC", "VECTOR", 10, [2]),
        op(6, "VEC", "VECTOR", 10, [0]),
        op(7, "VEC", "VECTOR", 10, [1]),
        free(8, 0, 1024),
        free(9, 1, 1024),
        free(10, 2, 1024),
    ]
    edges = [[0, 3], [1, 4], [2, 5], [3, 4], [4, 5], [5, 6], [6, 7], [6, 8], [7, 9], [5, 10]]
    inst = instance_from_records("evict", nodes, edges, capacities(UB=2048))
    ref = [0, 3, 1, 4, 2, 5, 10, 6, 8, 7, 9]
    plan = timed_schedule(inst, ref, TimedParams(window=0, compute_window=0, feed_window=0))
    ev = evaluate(inst, plan)
    assert ev.valid, [e.message for e in ev.errors]
    assert [b for b, _ in plan.spills] == [0] and ev.extra_traffic == 1024


# ------------------------------------------------------------------ window
def test_task_queues_take_the_earliest_start():
    """Pipe 0 is free at 10, pipe 1 at 0: a task ready at 3 on pipe 1 starts before a
    more urgent one ready at 0 on pipe 0; on one pipe the larger priority goes first."""
    q = TaskQueues(2)
    q.push(0, (0, -100, 0, 1))
    q.push(1, (3, -1, 1, 2))
    q.push(1, (2, -5, 2, 3))
    q.push(1, (2, -9, 3, 4))
    assert q.next([10, 0]) == (1, (2, -9, 3, 4))  # ready at 2, more urgent than task 3
    assert q.next([10, 0]) == (1, (2, -5, 2, 3))
    assert q.next([10, 0]) == (1, (3, -1, 1, 2))
    assert q.next([10, 0]) == (0, (0, -100, 0, 1))
    assert q.next([10, 0]) is None
    q.block(0, (0, 0, 0, 5))
    q.unblock(5)
    assert q.next([0, 0]) == (0, (0, 0, 0, 5))
