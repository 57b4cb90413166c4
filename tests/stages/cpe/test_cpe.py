"""Stage 3 (CPE): memory behaviour untouched, makespan never worse, exact windows, loads fed by need."""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import SHIPPED

from dansched import CpeParams
from dansched.errors import ArgumentError
from dansched.generate import GraphBuilder
from dansched.graph import bottom_level
from dansched.hardware import load_hardware
from dansched.instance import instance_from_records, load_instance
from dansched.pipeline.problem3.stage3.relayout import _OverlapSweep
from dansched.plan import Plan, plan_from_indices
from dansched.simulate import evaluate
from dansched.stages.cpe.exact_window import exact_windows
from dansched.stages.cpe.list_schedule import backward_pass, forward_pass, list_schedule
from dansched.stages.cpe.refine import cpe_refine, feed_by_need, need_pipes
from dansched.stages.cpe.skeleton import critical_chain, is_refinement, memory_skeleton
from dansched.stages.dlr.stage import dlr_plan
from dansched.testing import audit_instance, random_dag


def _roomy_plan(path, tmp_path):
    """The id order with every buffer at its own address in a tier big enough for all."""
    inst0 = load_instance(path)
    totals = {t: max(1, int(inst0.buf_size[inst0.buf_tier == i].sum())) for i, t in enumerate(inst0.hw.tiers)}
    toml = tmp_path / "roomy.toml"
    toml.write_text("[tiers]\n" + "".join(f"{t} = {v}\n" for t, v in totals.items()))
    inst = load_instance(path, load_hardware(toml))
    offsets, used = np.zeros(inst.num_buffers, dtype=int), {}
    for b in range(inst.num_buffers):
        t = int(inst.buf_tier[b])
        offsets[b] = used.get(t, 0)
        used[t] = offsets[b] + int(inst.buf_size[b])
    return inst, plan_from_indices(inst, range(inst.n), offsets)


def _two_pipe_case():
    """X (MTE2, 30) and Y (MTE2, 5) -> Z (CUBE, 30). Order X, Y, Z: 30 + 5 + 30 = 65.
    Y first lets Z run beside X: Y 0-5, Z 5-35, X 5-35, makespan 35 = MTE2 load (optimal)."""
    nodes = [
        {"Id": 0, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 30, "Bufs": []},
        {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 5, "Bufs": []},
        {"Id": 2, "Op": "MATMUL", "Pipe": "CUBE", "Cycles": 30, "Bufs": []},
    ]
    return instance_from_records("two_pipe", nodes, [[1, 2]])


def test_exact_window_finds_known_optimum():
    inst = _two_pipe_case()
    plan = Plan(order=(0, 1, 2), offsets=())
    ev = evaluate(inst, plan)
    assert ev.valid and ev.makespan == 65
    skel = memory_skeleton(inst, plan.order, ev.graph)
    order, makespan, stats = exact_windows(skel, plan.order, 64, time_limit=5)
    assert makespan == 35
    assert order == [1, 0, 2] or order == [1, 2, 0]
    assert stats.improved >= 1
    assert evaluate(inst, Plan(order=tuple(order), offsets=())).makespan == 35


def test_cpe_on_two_pipe_case_reaches_pipe_load():
    inst = _two_pipe_case()
    plan = Plan(order=(0, 1, 2), offsets=())
    res = cpe_refine(inst, plan, evaluate(inst, plan), exact_window=64, time_limit=5)
    assert evaluate(inst, res.plan).makespan == 35


@pytest.mark.parametrize("name", ["conv_s2", "fa_s2", "matmul_s2", "random_s5"])
def test_cpe_keeps_memory_behaviour(name, tmp_path):
    inst, plan = _roomy_plan(SHIPPED / f"{name}.json", tmp_path)
    ev2 = evaluate(inst, plan)
    assert ev2.valid
    res = cpe_refine(inst, plan, ev2, exact_window=16, time_limit=2)
    ev3 = evaluate(inst, res.plan)
    assert ev3.valid, ev3.errors[:3]
    assert res.plan.offsets == plan.offsets and res.plan.spills == plan.spills
    for key in ("extra_traffic", "spill_count", "physical_peak", "max_v_stay"):
        assert getattr(ev3, key) == getattr(ev2, key)
    assert ev3.makespan <= ev2.makespan
    # memory events keep their relative order
    mem = ev2.graph.memory_events
    assert [v for v in res.plan.order if v in mem] == [v for v in plan.order if v in mem]
    assert is_refinement(memory_skeleton(inst, plan.order, ev2.graph), res.plan.order)


def test_cpe_is_deterministic(tmp_path):
    inst, plan = _roomy_plan(SHIPPED / "fa_s2.json", tmp_path)
    ev2 = evaluate(inst, plan)
    a = cpe_refine(inst, plan, ev2, exact_window=16, time_limit=2)
    b = cpe_refine(inst, plan, ev2, exact_window=16, time_limit=2)
    assert a.plan == b.plan


def test_critical_chain_ends_at_makespan():
    inst = _two_pipe_case()
    plan = Plan(order=(0, 1, 2), offsets=())
    ev = evaluate(inst, plan)
    skel = memory_skeleton(inst, plan.order, ev.graph)
    chain = critical_chain(skel.timing, plan.order, ev.start, ev.end)
    assert chain == [0, 1, 2]  # X delays Y on MTE2, Y gates Z
    assert ev.end[chain[-1]] == ev.makespan and ev.start[chain[0]] == 0


def test_recency_rule_prefers_the_buffer_idle_longest_among_equal_scores():
    """RecencyAware: with equal cost-aware scores the buffer used longest ago is evicted;
    a much better score still wins over recency once both are outside the window."""
    from dansched.stages.dlr.victim import RecencyAware, VictimFacts, victim_rule

    rule = victim_rule("recency-8")
    assert isinstance(rule, RecencyAware) and rule.window == 8
    need = {0: 50, 1: 50}.__getitem__
    sizes, traffic, cycles = [10, 10], [20, 20], [100, 100]
    assert rule.pick([0, 1], VictimFacts(need, [39, 20], sizes, traffic, cycles), 40) == 1  # 0 was used just now
    assert rule.pick([0, 1], VictimFacts(need, [20, 39], sizes, traffic, cycles), 40) == 0
    far = {0: 1000, 1: 50}.__getitem__  # buffer 0 is needed much later: better score
    assert rule.pick([0, 1], VictimFacts(far, [20, 25], sizes, traffic, cycles), 40) == 0
    with pytest.raises(ValueError, match="unknown victim rule"):
        victim_rule("recency-x")


def test_overlap_sweep_returns_exactly_the_overlapping_segments():
    rng = random.Random(3)
    start = np.array([rng.randrange(200) for _ in range(300)], dtype=np.int64)
    end = start + np.array([rng.randrange(1, 40) for _ in range(300)], dtype=np.int64)
    sweep = _OverlapSweep(start, end)
    for j in np.argsort(start, kind="stable").tolist():
        ps, pe = int(start[j]), int(end[j])
        want = set(np.flatnonzero((start < pe) & (end > ps)).tolist())
        got = sweep(ps, pe)
        assert len(got) == len(set(got)) and set(got) == want


def test_move_timing_equals_the_full_simulation_after_any_legal_move():
    """MoveTiming (the local refinement's incremental makespan and its legality test) agrees
    with the simulator and with a check of every edge, on every single-node move of random
    DAGs with random pipes and cycles (the order constraints here: the DAG's edges)."""
    from types import SimpleNamespace

    import numpy as np

    from dansched.kernels.csr import csr_of_lists, transposed
    from dansched.simulate import simulate_timing_reference
    from dansched.stages.cpe.refine import MoveTiming, _move

    rng = random.Random(7)
    checked = 0
    for _ in range(60):
        n = rng.randint(2, 40)
        preds = [sorted({u for u in range(v) if rng.random() < 0.15}) for v in range(n)]
        pipe = [rng.choice([-1, 0, 1, 2]) for _ in range(n)]
        cycles = [rng.randint(0, 20) for _ in range(n)]
        ptr, idx = csr_of_lists(preds)
        g = SimpleNamespace(
            pred_ptr=ptr, pred_idx=idx, pipe_array=np.array(pipe, dtype=np.int64),
            cycles_array=np.array(cycles, dtype=np.int64), n=n,
        )  # fmt: skip
        skel = SimpleNamespace(timing=g, order_pred_csr=(ptr, idx), order_succ_csr=transposed(ptr, idx))
        order: list[int] = []  # a random topological order
        ready = [v for v in range(n) if not preds[v]]
        while ready:
            order.append(ready.pop(rng.randrange(len(ready))))
            ready += [v for v in range(n) if v not in order and v not in ready and all(u in order for u in preds[v])]
        _, end, _ = simulate_timing_reference(order, preds, pipe, cycles)
        timing = MoveTiming(skel, np.array(order, dtype=np.int64), np.array(end, dtype=np.int64))
        for _ in range(30):
            i, j = rng.randrange(n), rng.randrange(n)
            if i == j:
                continue
            cand = _move(order, i, j)
            pos = {v: k for k, v in enumerate(cand)}
            legal = all(pos[u] < pos[v] for v in range(n) for u in preds[v])
            assert timing.legal(i, j) == legal
            if legal:
                assert timing.makespan(i, j) == simulate_timing_reference(cand, preds, pipe, cycles)[2]
                checked += 1
    assert checked > 500


def _two_tiles_case():
    """Two tiles loaded on MTE2 (10 cycles each) into UB (1024): tile a (offset 0) for a short
    store X (MTE3, 5), tile b for a long VECTOR op Y (30). b takes the room (offset 512) of a
    scratch buffer c, which a VECTOR op P (2) uses first: b's load B can start at 2, a's load
    A at 0.

    Non-delay: MTE2 is free at 0 and only A is ready, so A runs 0-10, B 10-20, Y 20-50, X
    10-15: makespan 50. Fed by need: at 0 MTE2's earliest task A would finish at 10, and B
    can start before that (at 2); B is needed sooner (its right-justified latest start, 2,
    is before A's, 27), so MTE2 waits for it: B 2-12, Y 12-42, A 12-22, X 22-27: makespan
    42, the path P, B, Y (2 + 10 + 30). Returns the instance, its plan (ids in order) and the
    node ids of A and B."""
    g = GraphBuilder()
    c, a = g.alloc(512, "UB"), g.alloc(512, "UB")
    g.op("DUP", "VECTOR", 2, [c])
    g.free(c)
    b = g.alloc(512, "UB")
    load_a = g.op("COPY_IN", "MTE2", 10, [a])
    load_b = g.op("COPY_IN", "MTE2", 10, [b])
    g.op("COPY_OUT", "MTE3", 5, [a], after=[load_a])
    g.op("EXP", "VECTOR", 30, [b], after=[load_b])
    g.free(a)
    g.free(b)
    inst = g.build("two_tiles")
    return inst, Plan(order=tuple(range(inst.n)), offsets=((c, 512), (a, 0), (b, 512))), load_a, load_b


def test_loads_fed_by_need_load_the_tile_needed_first():
    inst, plan, load_a, load_b = _two_tiles_case()
    ev = evaluate(inst, plan)
    assert ev.valid and ev.makespan == 50  # the plan's own order is non-delay already
    skel = memory_skeleton(inst, plan.order, ev.graph)
    dma = need_pipes(inst.hw, "dma")
    assert [inst.hw.pipes[p] for p in dma] == ["MTE1", "MTE2", "MTE3", "FIXP"]
    fed = feed_by_need(skel, plan.order, [("dma", dma), ("all", need_pipes(inst.hw, "all"))])
    for order in fed.values():
        assert is_refinement(skel, order)
        assert order.index(load_b) < order.index(load_a)
        assert evaluate(inst, Plan(tuple(order), plan.offsets)).makespan == 42
    # the same urgency without the active mode: MTE2 starts A at 0, B waits a whole transfer
    g = skel.timing
    late_start, rev_pos = backward_pass(skel, np.array(plan.order), np.array(ev.end))
    assert (late_start[load_a], late_start[load_b]) == (27, 2)
    for name, order in {
        "non-delay, urgency": forward_pass(skel, late_start, rev_pos).tolist(),
        "non-delay, bottom level": list_schedule(skel, bottom_level(g.preds, g.cycles, plan.order), [0] * g.n),
    }.items():
        assert order.index(load_a) < order.index(load_b), name
        assert evaluate(inst, Plan(tuple(order), plan.offsets)).makespan == 50, name
    res = cpe_refine(inst, plan, ev)
    assert res.stats.list_schedule_makespans == {
        "bottom-level": 50,
        "stage-2 order": 50,
        "loads fed by need: dma": 42,
        "forward-backward": 42,
    }
    assert res.stats.found_by.startswith("list scheduling (loads fed by need: dma)")
    assert res.makespan == 42 and evaluate(inst, res.plan).makespan == 42
    off = cpe_refine(inst, plan, ev, params=CpeParams(feed_by_need=()))
    assert "loads fed by need: dma" not in off.stats.list_schedule_makespans


def _small_instance(which: str, seed: int):
    return audit_instance(seed) if which == "tight" else random_dag(seed, n_ops=14 + seed)


@pytest.mark.parametrize(("which", "seed"), [("tight", s) for s in range(8)] + [("random", s) for s in range(4)])
def test_every_plan_cpe_returns_passes_the_evaluator(which, seed):
    """Random small instances (their Stage-2 plans; under the tightest capacities, some with
    spills): each list schedule fed by need, on the data-movement pipes and on all, is an
    order of the skeleton that the evaluator accepts with the Stage-2 memory figures; so is
    the plan CPE returns, never slower."""
    inst = _small_instance(which, seed)
    plan = dlr_plan(inst, list(range(inst.n)), other_orders=False).plan
    ev2 = evaluate(inst, plan)
    assert ev2.valid
    skel = memory_skeleton(inst, plan.order, ev2.graph)
    scopes = [(x, need_pipes(inst.hw, x)) for x in ("dma", "all")]
    plans = [Plan(tuple(o), plan.offsets, plan.spills) for o in feed_by_need(skel, plan.order, scopes).values()]
    res = cpe_refine(inst, plan, ev2, params=CpeParams(feed_by_need=("dma", "all")))
    for p in [*plans, res.plan]:
        assert is_refinement(skel, p.order)
        ev = evaluate(inst, p)
        assert ev.valid, ev.errors[:3]
        for key in ("extra_traffic", "spill_count", "physical_peak", "max_v_stay"):
            assert getattr(ev, key) == getattr(ev2, key)
    assert evaluate(inst, res.plan).makespan == res.makespan <= ev2.makespan
    assert set(res.stats.list_schedule_makespans) >= {"loads fed by need: dma", "loads fed by need: all"}


def test_the_active_mode_changes_most_of_those_orders():
    """The instances above exercise the active mode: on most of them an order fed by need
    differs from the non-delay order of the same priorities."""
    changed = 0
    for which, seed in [("tight", s) for s in range(8)]:
        inst = _small_instance(which, seed)
        plan = dlr_plan(inst, list(range(inst.n)), other_orders=False).plan
        ev = evaluate(inst, plan)
        skel = memory_skeleton(inst, plan.order, ev.graph)
        non_delay = forward_pass(skel, *backward_pass(skel, np.array(plan.order), np.array(ev.end))).tolist()
        fed = feed_by_need(skel, plan.order, [("dma", need_pipes(inst.hw, "dma"))])
        changed += fed["dma"] != non_delay
    assert changed >= 5


@pytest.mark.parametrize("bad", [("x",), ("dma", "dma"), ["dma"], "dma"])
def test_feed_scopes_are_checked(bad):
    with pytest.raises(ArgumentError, match="CpeParams.feed_by_need"):
        CpeParams(feed_by_need=bad)
