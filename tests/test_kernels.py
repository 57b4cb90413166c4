"""The compiled kernels against their readable references (dansched/kernels/).

- the evaluator's fast path (``simulate.evaluate_fast``) against ``evaluate_reference`` on
  random small plans, valid (the strategies' cases, DLR's plans of generated graphs) and
  mutated ones: the same verdict; on a valid plan the same metrics, start and end times,
  augmented predecessors, spill edges and reuse edges; on an invalid one a first kind the
  reference reports too; and ``evaluate`` (fast path, reference when it rejects) always
  says exactly what the reference says;
- the compiled cycle simulator against the Python loop;
- the compiled list scheduler and forward-backward pass against the Python ones they
  replaced (tests/list_schedule_reference.py), on the memory skeletons of random plans and
  on random order constraints with many ties;
- farthest-next-use replacement against the dictionary-and-heapq version
  (tests/belady_reference.py);
- the ``min-reload`` rule's two continuations side by side against the walk of each to the
  end with sets (tests/min_reload_reference.py), on random tiers;
- the heads that respect one pipe against the pass with dictionaries
  (tests/heads_reference.py), and the compiled Jackson bound against the Python one, on
  random DAGs and task sets.

The default run draws few examples; ``-m slow`` draws many more and adds the official
graphs.

The list scheduler's active mode is checked on the same inputs, with random sets of active
pipes, against the rule stated plainly (``list_schedule_by_rule``), which in turn agrees
with the replaced scheduler when no pipe is active.
"""

from __future__ import annotations

import random
from dataclasses import replace

import belady_reference
import heads_reference
import list_schedule_reference as ref
import min_reload_reference
import numpy as np
import pytest
import skeleton_reference
from helpers import OFFICIAL_CASES, official_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import SETTINGS, cases, hw  # noqa: F401  (hw is a fixture)

from dansched.generate import generate
from dansched.graph import bottom_level
from dansched.hardware import default_hardware, load_hardware
from dansched.instance import Instance, instance_from_records, load_instance
from dansched.kernels.belady import belady_misses
from dansched.kernels.csr import csr_of_lists, int64_array
from dansched.kernels.heads import jackson, pipe_heads
from dansched.kernels.min_reload import first_keeping_minimum
from dansched.models.bounds.floors import jackson_preemptive_bound
from dansched.plan import Plan
from dansched.simulate import (
    Evaluation,
    evaluate,
    evaluate_fast,
    evaluate_reference,
    simulate_timing,
    simulate_timing_reference,
)
from dansched.stages.cpe.list_schedule import forward_backward, list_schedule, list_schedule_arrays
from dansched.stages.cpe.skeleton import memory_skeleton
from dansched.stages.dlr.stage import dlr_plan
from dansched.stages.dlr.victim import tier_events

MANY = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_same_judgement(inst: Instance, plan: Plan) -> Evaluation:
    """``evaluate`` says what the reference says; the fast path alone agrees on the verdict,
    and names a kind the reference reports when it rejects. Returns the reference's."""
    want = evaluate_reference(inst, plan)
    got = evaluate(inst, plan)
    assert got.to_dict() == want.to_dict()
    fast = evaluate_fast(inst, plan)
    if fast is None:  # files the fast path leaves to the reference
        assert not want.valid
        return want
    assert fast.valid == want.valid, (fast.error_counts, want.error_counts)
    if not fast.valid:
        [kind] = fast.error_counts
        assert kind in want.error_counts, (kind, want.error_counts)
        return want
    assert fast.to_dict() == want.to_dict()
    assert (fast.start, fast.end, fast.makespan) == (want.start, want.end, want.makespan)
    g, h = fast.graph, want.graph
    assert g is not None and h is not None
    assert g == h
    assert g.preds == h.preds
    assert g.spill_edges == h.spill_edges
    assert g.reuse_edges == h.reuse_edges
    assert (g.pipe, g.cycles, g.spill_buf, g.memory_events) == (h.pipe, h.cycles, h.spill_buf, h.memory_events)
    assert g.succs() == h.succs()
    assert fast.residency == want.residency
    assert fast.segments() == want.segments()
    return want


# ---------------------------------------------------------------------------------
# the evaluator's fast path
# ---------------------------------------------------------------------------------


def _swap(plan: Plan, rnd: random.Random) -> Plan:
    order = list(plan.order)
    i, j = rnd.randrange(len(order)), rnd.randrange(len(order))
    order[i], order[j] = order[j], order[i]
    return replace(plan, order=tuple(order))


def _move(plan: Plan, rnd: random.Random) -> Plan:
    order = list(plan.order)
    v = order.pop(rnd.randrange(len(order)))
    order.insert(rnd.randrange(len(order) + 1), v)
    return replace(plan, order=tuple(order))


def _changed(lines: tuple[tuple[int, int], ...], rnd: random.Random, column: int, value: int) -> tuple:
    """``lines`` with one of them, at random, given ``value`` in ``column``."""
    out = [list(line) for line in lines]
    out[rnd.randrange(len(out))][column] = value
    return tuple(tuple(line) for line in out)


def _new_offset(plan: Plan, rnd: random.Random) -> int:
    """Anywhere (in range or not), or where some buffer starts."""
    return rnd.choice([rnd.randint(-3, 600), rnd.choice(plan.offsets or ((0, 0),))[1]])


def _offset(plan: Plan, rnd: random.Random) -> Plan:
    return replace(plan, offsets=_changed(plan.offsets or (), rnd, 1, _new_offset(plan, rnd)))


def _spill_offset(plan: Plan, rnd: random.Random) -> Plan:
    if not plan.spills:
        return _offset(plan, rnd)
    return replace(plan, spills=_changed(plan.spills, rnd, 1, _new_offset(plan, rnd)))


def _spill_buffer(plan: Plan, rnd: random.Random) -> Plan:
    if not plan.spills:
        return _swap(plan, rnd)
    return replace(plan, spills=_changed(plan.spills, rnd, 0, rnd.choice(plan.offsets or ((0, 0),))[0]))


def _spill_in_first(plan: Plan, rnd: random.Random) -> Plan:
    """A SPILL_IN moved just before its SPILL_OUT."""
    n = len(plan.order) - 2 * len(plan.spills)
    if not plan.spills:
        return _move(plan, rnd)
    k = rnd.randrange(len(plan.spills))
    order = [v for v in plan.order if v != n + 2 * k + 1]
    at = order.index(n + 2 * k)
    return replace(plan, order=tuple(order[:at] + [n + 2 * k + 1] + order[at:]))


def _drop(plan: Plan, rnd: random.Random) -> Plan:
    order = list(plan.order)
    del order[rnd.randrange(len(order))]
    return replace(plan, order=tuple(order))


def _duplicate(plan: Plan, rnd: random.Random) -> Plan:
    order = list(plan.order)
    order.insert(rnd.randrange(len(order) + 1), rnd.choice(order))
    return replace(plan, order=tuple(order))


def _unknown(plan: Plan, rnd: random.Random) -> Plan:
    order = list(plan.order)
    order[rnd.randrange(len(order))] = rnd.choice([-1, len(order), len(order) + 7])
    return replace(plan, order=tuple(order))


def _extra_spill_line(plan: Plan, rnd: random.Random) -> Plan:
    first = rnd.choice(plan.offsets or ((0, 0),))
    return replace(plan, spills=plan.spills + (first,))


def _unknown_buffer(plan: Plan, rnd: random.Random) -> Plan:
    return replace(plan, offsets=_changed(plan.offsets or (), rnd, 0, 10**12 + rnd.randrange(9)))


def _offset_twice(plan: Plan, rnd: random.Random) -> Plan:
    offsets = plan.offsets or ()
    return replace(plan, offsets=offsets + (rnd.choice(offsets),))


MUTATIONS = [
    _swap,
    _move,
    _offset,
    _spill_offset,
    _spill_buffer,
    _spill_in_first,
    _drop,
    _duplicate,
    _unknown,
    _extra_spill_line,
    _unknown_buffer,
    _offset_twice,
]


@SETTINGS
@given(case=cases())
def test_fast_path_accepts_valid_plans_with_the_reference_figures(hw, case):
    inst = instance_from_records("prop", case.nodes, case.edges, hw)
    plan = case.plan()
    want = assert_same_judgement(inst, plan)
    assert want.valid and evaluate_fast(inst, plan) is not None


def _judge_mutated(hw, case, seed: int, count: int) -> None:
    """``count`` random mutations of the case's valid plan, judged alike by both paths."""
    inst = instance_from_records("prop", case.nodes, case.edges, hw)
    rnd = random.Random(seed)
    plan = case.plan()
    for _ in range(count):
        plan = rnd.choice(MUTATIONS)(plan, rnd)
    assert_same_judgement(inst, plan)


@SETTINGS
@given(case=cases(), seed=st.integers(0, 2**32 - 1), count=st.integers(1, 3))
def test_fast_path_agrees_with_the_reference_on_mutated_plans(hw, case, seed, count):
    _judge_mutated(hw, case, seed, count)


@pytest.mark.slow
@MANY
@given(case=cases(max_spills=6), seed=st.integers(0, 2**32 - 1), count=st.integers(0, 3))
def test_fast_path_agrees_with_the_reference_many(hw, case, seed, count):
    _judge_mutated(hw, case, seed, count)


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.__name__.strip("_") for m in MUTATIONS])
def test_each_mutation_of_a_stage2_plan_is_judged_alike(mutation):
    """DLR's plan of a generated graph (with spills, on a tight L1), then each mutation a few times."""
    inst, plan = _stage2_case("matmul", 2)
    assert evaluate_fast(inst, plan) is not None
    rnd = random.Random(mutation.__name__)
    kinds = set()
    for _ in range(6):
        want = assert_same_judgement(inst, mutation(plan, rnd))
        kinds |= set(want.error_counts)
    if mutation not in (_offset, _spill_offset, _swap, _move, _spill_buffer):  # these may leave a plan valid
        assert kinds


def _stage2_case(family: str, scale: int) -> tuple[Instance, Plan]:
    nodes, edges = generate(family, scale, seed=1)
    hw = default_hardware()
    inst = instance_from_records(family, nodes, edges, hw)
    res = dlr_plan(inst, list(range(inst.n)), other_orders=False)
    return inst, res.plan


@pytest.mark.parametrize("family", ["matmul", "fa", "conv"])
def test_stage2_plans_of_generated_graphs(family):
    inst, plan = _stage2_case(family, 2)
    assert_same_judgement(inst, plan)
    assert evaluate_fast(inst, plan).valid


@pytest.mark.slow
@pytest.mark.parametrize("case", OFFICIAL_CASES)
def test_stage2_plans_of_the_official_graphs(case):
    inst = load_instance(official_path(case))
    plan = dlr_plan(inst, list(range(inst.n)), other_orders=False).plan
    want = assert_same_judgement(inst, plan)
    assert want.valid
    rnd = random.Random(case)
    for mutation in MUTATIONS:
        assert_same_judgement(inst, mutation(plan, rnd))


def test_figures_past_64_bits_are_left_to_the_reference(tmp_path):
    """A plan that spills one buffer 80 times at 2**57 cycles a spill: its time passes 2**63
    (the instance's own horizon, one spill per gap, stays below 2**60), so the fast path
    leaves it to the reference's exact integers."""
    (tmp_path / "hw.toml").write_text(f"[tiers]\nUB = 4\n[spill]\nfixed_cycles = 0\ncycles_per_unit = {2**54}\n")
    nodes = [
        {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 4, "Type": "UB"},
        {"Id": 1, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 1, "Bufs": [0]},
        {"Id": 2, "Op": "FREE", "BufId": 0, "Size": 4, "Type": "UB"},
    ]
    inst = instance_from_records("big", nodes, [[0, 1], [1, 2]], load_hardware(tmp_path / "hw.toml"))
    k = 80
    plan = Plan(order=(0, 1, *range(3, 3 + 2 * k), 2), offsets=((0, 0),), spills=((0, 0),) * k)
    assert evaluate_fast(inst, plan) is None
    ev = evaluate(inst, plan)
    assert ev.valid and ev.makespan == 1 + k * 2 * 4 * 2**54 > 2**63
    assert ev.extra_traffic == k * 2 * 4


# ---------------------------------------------------------------------------------
# the cycle simulator
# ---------------------------------------------------------------------------------


@SETTINGS
@given(data=st.data())
def test_compiled_timing_equals_the_python_loop(data):
    n = data.draw(st.integers(1, 30))
    preds = [sorted(data.draw(st.sets(st.integers(0, v - 1), max_size=4))) if v else [] for v in range(n)]
    pipe = data.draw(st.lists(st.integers(-1, 3), min_size=n, max_size=n))
    cycles = data.draw(st.lists(st.integers(0, 50), min_size=n, max_size=n))
    order = data.draw(st.lists(st.integers(0, n - 1), max_size=2 * n))  # any walk, repeats and gaps included
    assert simulate_timing(order, preds, pipe, cycles) == simulate_timing_reference(order, preds, pipe, cycles)


def test_timing_past_64_bits_uses_exact_integers():
    big = 2**62
    assert simulate_timing([0, 1, 2], [[], [0], [1]], [0, 0, 0], [big, big, big])[2] == 3 * big


# ---------------------------------------------------------------------------------
# the list scheduler and forward-backward
# ---------------------------------------------------------------------------------


@SETTINGS
@given(case=cases(max_spills=6), seed=st.integers(0, 2**32 - 1), count=st.integers(0, 3), chain=st.booleans())
def test_compiled_memory_skeleton_equals_the_python_pass(hw, case, seed, count, chain):
    """The kernel's order constraints and memory events are the Python pass's, with and
    without the event chain, on plans whose orders were moved (still valid or not: the
    constraints are read off any order the evaluator accepted)."""
    inst = instance_from_records("prop", case.nodes, case.edges, hw)
    plan = case.plan()
    rnd = random.Random(seed)
    for _ in range(count):
        moved = _move(plan, rnd)
        if evaluate(inst, moved).valid:
            plan = moved
    ev = evaluate(inst, plan)
    skel = memory_skeleton(inst, plan.order, ev.graph, chain=chain)
    want_preds, want_events = skeleton_reference.order_preds(inst, plan.order, ev.graph, chain=chain)
    assert skel.order_preds == want_preds
    assert skel.memory_events == want_events
    succs: list[list[int]] = [[] for _ in range(len(want_preds))]
    for v, ps in enumerate(want_preds):
        for u in ps:
            succs[u].append(v)
    assert skel.order_succs() == succs


@pytest.mark.parametrize("family", ["matmul", "fa", "conv"])
def test_compiled_memory_skeleton_on_stage2_plans(family):
    inst, plan = _stage2_case(family, 2)
    ev = evaluate(inst, plan)
    for chain in (True, False):
        skel = memory_skeleton(inst, plan.order, ev.graph, chain=chain)
        want = skeleton_reference.order_preds(inst, plan.order, ev.graph, chain=chain)
        assert (skel.order_preds, skel.memory_events) == want


@SETTINGS
@given(case=cases(max_spills=3), seed=st.integers(0, 2**32 - 1), chain=st.booleans())
def test_compiled_list_scheduler_on_memory_skeletons(hw, case, seed, chain):
    inst = instance_from_records("prop", case.nodes, case.edges, hw)
    plan = case.plan()
    ev = evaluate(inst, plan)
    skel = memory_skeleton(inst, plan.order, ev.graph, chain=chain)
    g = skel.timing
    rnd = random.Random(seed)
    for prio, tie in (
        (bottom_level(g.preds, g.cycles, plan.order), [plan.order.index(v) for v in range(g.n)]),
        ([rnd.randint(0, 3) for _ in range(g.n)], [rnd.randint(-2, 2) for _ in range(g.n)]),
    ):
        want = ref.list_schedule_arrays(skel.order_preds, skel.order_succs(), g.preds, g.pipe, g.cycles, prio, tie)
        assert list_schedule(skel, prio, tie) == want
        assert list_schedule_arrays(skel.order_preds, skel.order_succs(), g.preds, g.pipe, g.cycles, prio, tie) == want
        active = sorted(p for p in range(len(inst.hw.pipes)) if rnd.random() < 0.5)
        args = (skel.order_preds, skel.order_succs(), g.preds, g.pipe, g.cycles, prio, tie)
        assert ref.list_schedule_by_rule(*args) == want
        assert list_schedule(skel, prio, tie, active) == ref.list_schedule_by_rule(*args, active)
    assert forward_backward(skel, plan.order) == ref.forward_backward(skel, plan.order)


@SETTINGS
@given(data=st.data())
def test_compiled_list_scheduler_on_random_constraints_with_ties(data):
    """Random order constraints (timing predecessors a subset of them), pipes with cache
    nodes among them, priorities and ties from small ranges so that keys collide."""
    n = data.draw(st.integers(1, 25))
    opreds = [sorted(data.draw(st.sets(st.integers(0, v - 1), max_size=3))) if v else [] for v in range(n)]
    tpreds = [[u for u in ps if data.draw(st.booleans())] for ps in opreds]
    osuccs: list[list[int]] = [[] for _ in range(n)]
    for v, ps in enumerate(opreds):
        for u in ps:
            osuccs[u].append(v)
    pipe = data.draw(st.lists(st.integers(-1, 2), min_size=n, max_size=n))
    cycles = [0 if p < 0 else c for p, c in zip(pipe, data.draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)))]
    prio = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    tie = data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    want = ref.list_schedule_arrays(opreds, osuccs, tpreds, pipe, cycles, prio, tie)
    assert list_schedule_arrays(opreds, osuccs, tpreds, pipe, cycles, prio, tie) == want
    assert ref.list_schedule_by_rule(opreds, osuccs, tpreds, pipe, cycles, prio, tie) == want
    active = sorted(data.draw(st.sets(st.integers(0, 3))))  # pipe 3 has no node: harmless
    want = ref.list_schedule_by_rule(opreds, osuccs, tpreds, pipe, cycles, prio, tie, active)
    assert list_schedule_arrays(opreds, osuccs, tpreds, pipe, cycles, prio, tie, active) == want


def test_cyclic_order_constraints_are_refused_by_both():
    args = ([[1], [0]], [[1], [0]], [[], []], [0, 0], [1, 1], [0, 0], [0, 1])
    with pytest.raises(RuntimeError, match="cyclic"):
        ref.list_schedule_arrays(*args)
    with pytest.raises(RuntimeError, match="cyclic"):
        ref.list_schedule_by_rule(*args, [0])
    with pytest.raises(RuntimeError, match="cyclic"):
        list_schedule_arrays(*args)
    with pytest.raises(RuntimeError, match="cyclic"):
        list_schedule_arrays(*args, [0])


@pytest.mark.parametrize("family", ["matmul", "fa"])
def test_forward_backward_on_stage2_plans(family):
    inst, plan = _stage2_case(family, 2)
    ev = evaluate(inst, plan)
    skel = memory_skeleton(inst, plan.order, ev.graph)
    assert forward_backward(skel, plan.order) == ref.forward_backward(skel, plan.order)


def test_kernels_run_without_a_writable_cache_folder(monkeypatch):
    """numba finds no cache folder (read-only package, no writable home): the decorator
    still gives a working kernel, compiled in the process."""
    from numba.core import caching

    from dansched.kernels.jit import compiled

    monkeypatch.setattr(caching.CacheImpl, "_locator_classes", [])

    def double(x: int) -> int:
        return 2 * x

    assert compiled(double)(21) == 42


# ---------------------------------------------------------------------------------
# farthest-next-use replacement (the wave search's ranking)
# ---------------------------------------------------------------------------------


@SETTINGS
@given(data=st.data())
def test_compiled_belady_equals_the_python_heaps(data):
    """Random accesses over a few items in two or three tiers (each item in one tier), a
    few slots each: the same misses as the dictionary-and-heapq version."""
    items = data.draw(st.integers(1, 12))
    tiers = data.draw(st.integers(1, 3))
    item_tier = data.draw(st.lists(st.integers(0, tiers - 1), min_size=items, max_size=items))
    seq = data.draw(st.lists(st.integers(0, items - 1), max_size=60))
    slots = data.draw(st.lists(st.integers(1, 4), min_size=tiers, max_size=tiers))
    seq_tier = [item_tier[s] for s in seq]
    want = belady_reference.belady_misses(seq, seq_tier, dict(enumerate(slots)))
    got = belady_misses(int64_array(seq), int64_array(seq_tier), int64_array(slots), items)
    assert got == want


def test_belady_by_hand():
    """One slot: every change of item misses; two slots, a b c a b: a and b are held, c
    misses and evicts the one used farthest ahead (b at 4, not a at 3), so b misses again."""
    i64 = int64_array
    assert belady_misses(i64([0, 0, 1, 0]), i64([0, 0, 0, 0]), i64([1]), 2) == 3
    assert belady_misses(i64([0, 1, 2, 0, 1]), i64([0] * 5), i64([2]), 3) == 4


# ---------------------------------------------------------------------------------
# the min-reload victim rule's continuations side by side
# ---------------------------------------------------------------------------------


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), uniform=st.booleans(), backed_mix=st.booleans())
def test_compiled_continuations_equal_the_python_walk(seed, uniform, backed_mix):
    """Random tiers (tests/min_reload_reference.py), at each eviction of a random walk: a victim
    keeps the minimum exactly when its walk to the end with sets spends no more than the
    farthest-next-use victim's; the first candidate of a random order that keeps it is the
    one the walks say; with one size and one traffic the binary search over next needs finds
    the same one."""
    rng = random.Random(seed)
    n = rng.randint(2, 7)
    sizes = [2] * n if uniform else [rng.randint(1, 3) for _ in range(n)]
    capacity = 2 * rng.randint(1, 3) if uniform else rng.randint(max(sizes), 7)
    traffic = [s * (2 if backed_mix and rng.random() < 0.5 else 1) for s in sizes]
    needs = min_reload_reference.random_tier(rng, n, sizes, capacity, rng.randint(2, 12))
    rank = int64_array(sorted(range(n), key=lambda b: (sizes[b], -b)))
    rank = int64_array(np.argsort(rank))  # larger size, then lower index: higher rank
    ev = tier_events(needs, [0] * n, sizes, 0, lambda t, j: capacity)
    need_ptr, need_pos = csr_of_lists(needs)
    for k, residents, pool in min_reload_reference.eviction_points(rng, needs, sizes, capacity):
        f = min_reload_reference.farthest(needs, sizes, pool, k)
        walk = {
            p: min_reload_reference.remaining_traffic(needs, sizes, traffic, lambda j: capacity, residents, k, p)
            for p in pool
        }
        args = (int64_array(sorted(residents)), ev.event_at(k), ev.pos, ev.ptr, ev.buf, ev.after, ev.cap)
        args += (need_ptr, need_pos, int64_array(sizes), int64_array(traffic), rank)
        for p in pool:  # each candidate alone
            assert first_keeping_minimum(int64_array([p]), f, *args, 0) == (0 if walk[p] <= walk[f] else -1)
        order = rng.sample(pool, len(pool))
        want = next((i for i, p in enumerate(order) if walk[p] <= walk[f]), -1)
        assert first_keeping_minimum(int64_array(order), f, *args, 0) == want
        if uniform and not backed_mix:
            assert first_keeping_minimum(int64_array(order), f, *args, 1) == want


@SETTINGS
@given(data=st.data())
def test_compiled_pipe_heads_equal_the_dictionaries(data):
    """Random DAGs (edges from lower to higher ids, a random topological order), random
    pipes, cycles, heads known already and limits, small enough that sets overflow too."""
    n = data.draw(st.integers(1, 40))
    edges = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    preds = [sorted({u for u, w in edges if u < w == v}) for v in range(n)]
    pipe = data.draw(st.lists(st.integers(-1, 2), min_size=n, max_size=n))
    cycles = data.draw(st.lists(st.integers(0, 20), min_size=n, max_size=n))
    head = data.draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    target = data.draw(st.integers(-1, 2))
    limit = data.draw(st.integers(0, 12))
    order = list(range(n))
    want = heads_reference.pipe_heads(order, preds, pipe, cycles, head, target, limit)
    ptr, idx = csr_of_lists(preds)
    i64 = int64_array
    got = pipe_heads(i64(order), ptr, idx, i64(pipe), i64(cycles), i64(head), target, limit)
    assert got.tolist() == want


@SETTINGS
@given(tasks=st.lists(st.tuples(st.integers(0, 50), st.integers(0, 20), st.integers(0, 50)), max_size=30))
def test_compiled_jackson_equals_the_python_heaps(tasks):
    r, p, q = (int64_array([t[k] for t in tasks]) for k in range(3))
    assert jackson(r, p, q) == jackson_preemptive_bound(tasks)
