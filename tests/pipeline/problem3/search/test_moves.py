"""Each operator of the makespan search on its own, against hand-computed plans.

The fixture is a stream of three UB buffers of 10 units (docs/rules.md: a COPY_IN-backed
spill costs 0 cycles out, 2 * 10 + 150 = 170 in, and 10 units of traffic). Nodes: b0
loaded by L0 (MTE2 10), b1 by L1, V1 (VECTOR 50) reads b0 and b1; b2 loaded by L2, V2
reads b1 and b2; V3 reads b0 again. The plan spills b0 after V1 (SPILL_OUT 12) and
reloads it after V2's buffers are freed (SPILL_IN 13 at offset 10, b1's old addresses),
b2 taking b0's addresses [0, 10):

    L0 0-10, L1 10-20, V1 20-70, SPILL_OUT 70, L2 70-80 (b2 waits for the SPILL_OUT),
    V2 80-130, FREE b1 / b2 130, SPILL_IN 130-300 (waits for FREE b1), V3 300-350.

Every plan a move returns is judged by the shared evaluator here.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import alloc, capacities, free, op

from dansched.instance import instance_from_records
from dansched.params import SearchParams
from dansched.pipeline.problem3.search.driver import MOVES
from dansched.pipeline.problem3.search.focus import DESTROY, Chain
from dansched.pipeline.problem3.search.layout import Layout
from dansched.pipeline.problem3.search.moves import MoveContext
from dansched.plan import Plan
from dansched.simulate import evaluate


def _stream(ub: int, with_b3: bool = False):
    """The module docstring's plan in a UB of ``ub`` units; ``with_b3``: a fourth buffer b3
    (loaded by L3 before V1, offset 20) read by V2 and V3, resident throughout."""
    nodes = [
        alloc(0, 0, 10),
        op(1, "COPY_IN", "MTE2", 10, [0]),
        alloc(2, 1, 10),
        op(3, "COPY_IN", "MTE2", 10, [1]),
        op(4, "V1", "VECTOR", 50, [0, 1]),
        alloc(5, 2, 10),
        op(6, "COPY_IN", "MTE2", 10, [2]),
        op(7, "V2", "VECTOR", 50, [1, 2] + ([3] if with_b3 else [])),
        free(8, 1, 10),
        free(9, 2, 10),
        op(10, "V3", "VECTOR", 50, [0] + ([3] if with_b3 else [])),
        free(11, 0, 10),
    ]
    edges = [[0, 1], [1, 4], [2, 3], [3, 4], [4, 7], [5, 6], [6, 7], [7, 10], [7, 8], [7, 9], [10, 11]]
    edges += [[0, 11], [2, 8], [5, 9]]
    if with_b3:
        nodes += [alloc(12, 3, 10), op(13, "COPY_IN", "MTE2", 10, [3]), free(14, 3, 10)]
        edges += [[12, 13], [13, 7], [10, 14], [12, 14]]
    inst = instance_from_records("stream", nodes, edges, capacities(UB=ub))
    n = inst.n
    if with_b3:
        order = [0, 1, 2, 3, 12, 13, 4, n, 5, 6, 7, 8, 9, n + 1, 10, 11, 14]
        offsets = ((0, 0), (1, 10), (2, 0), (3, 20))
    else:
        order = [0, 1, 2, 3, 4, n, 5, 6, 7, 8, 9, n + 1, 10, 11]
        offsets = ((0, 0), (1, 10), (2, 0))
    plan = Plan(tuple(order), offsets, ((0, 10),))
    ev = evaluate(inst, plan)
    assert ev.valid and ev.makespan == 350 and ev.extra_traffic == 10
    return inst, plan, ev


def _apply(name: str, inst, plan, ev, headroom: int = 100):
    """Move ``name`` on the reload of b0 (the focus segment SPILL_IN 13 starts), choosing the
    best address each time (``choices=1``: no draw): the plan and the evaluator's verdict."""
    ctx = MoveContext(inst, Layout.of(inst, plan, ev), ev, headroom, SearchParams(choices=1))
    assert MOVES[name].accepts(ctx, inst.n + 1)
    got = MOVES[name].apply(ctx, inst.n + 1, np.random.default_rng(0))
    if got is None:
        return None, None
    new = got.plan(inst)
    return new, evaluate(inst, new)


def test_readdress_moves_the_focus_segment_alone():
    """b0 back at [0, 10) instead of [10, 20): both ranges are free over its residency and
    both were last freed at 130, so the timing is unchanged; only the spill's NewOffset moves."""
    inst, plan, ev = _stream(30)
    new, got = _apply("readdress", inst, plan, ev)
    assert got.valid and got.makespan == 350
    assert new.order == plan.order and new.offsets == plan.offsets and new.spills == ((0, 0),)


def test_readdress_off_a_reuse_wait_starts_the_reload_early():
    """With b3 resident at [20, 30), the reload goes to the never-used [30, 40): no reuse
    edge, so it runs after the SPILL_OUT (70) once MTE2 is free (80): 80-250, V3 250-300."""
    inst, plan, ev = _stream(40, with_b3=True)
    new, got = _apply("readdress", inst, plan, ev)
    assert got.valid and got.makespan == 300 and new.spills == ((0, 30),)


def test_hoist_reload_runs_the_reload_right_after_its_eviction():
    """In a UB of 30 the SPILL_IN moves to just after the SPILL_OUT, into the free [20, 30);
    it then holds MTE2 70-240, L2 runs 240-250, V2 250-300, V3 300-350."""
    inst, plan, ev = _stream(30)
    new, got = _apply("hoist reload", inst, plan, ev)
    n = inst.n
    assert got.valid and got.makespan == 350 and new.spills == ((0, 20),)
    assert new.order.index(n + 1) == new.order.index(n) + 1


def test_hoist_reload_needs_room_from_its_new_place_on():
    """In a UB of 20, b1 and b2 hold the whole tier until FREE b2: no place applies."""
    inst, plan, ev = _stream(20)
    assert _apply("hoist reload", inst, plan, ev) == (None, None)


def test_delay_eviction_keeps_the_victim_and_moves_what_took_its_room():
    """The SPILL_OUT moves after L2, b2 to the free [20, 30): L2 no longer waits for the
    SPILL_OUT (20-30), V2 70-120, the reload 120-290 after FREE b1, V3 290-340."""
    inst, plan, ev = _stream(30)
    new, got = _apply("delay eviction", inst, plan, ev)
    n = inst.n
    assert got.valid and got.makespan == 340 and got.extra_traffic == 10
    assert new.order.index(n) == new.order.index(6) + 1  # right after L2
    assert dict(new.offsets)[2] == 20 and new.spills == ((0, 10),)


def test_swap_victim_evicts_a_buffer_idle_at_the_eviction():
    """With b3 (idle from its load at 30 until V2) the spill evicts b3 instead of b0: b3
    leaves at 30, b2 takes [20, 30) (L2 30-40), b3 comes back at [30, 40) right before V2
    (40-210), V2 210-260, and V3, whose b0 never left, 260-310. Same traffic (both backed)."""
    inst, plan, ev = _stream(40, with_b3=True)
    new, got = _apply("swap victim", inst, plan, ev)
    n = inst.n
    assert got.valid and got.makespan == 310 and got.extra_traffic == 10
    assert new.spills == ((3, 30),) and dict(new.offsets)[2] == 20
    assert new.order.index(n + 1) == new.order.index(7) - 1  # the reload right before V2


def test_swap_victim_within_the_traffic_headroom_only():
    inst, plan, ev = _stream(40, with_b3=True)
    # b1 and b3 cost as much traffic as b0 (all backed): a negative headroom refuses them
    assert _apply("swap victim", inst, plan, ev, headroom=-1) == (None, None)


def test_add_room_spills_one_more_buffer_and_runs_the_reload_into_its_room():
    """b3, idle between V2 and V3, leaves right after V2 (a new spill, 10 more traffic) and
    the reload of b0 moves to just after it, into b3's [20, 30); b3 comes back at [30, 40)
    right before V3: reload 130-300, b3's reload 300-470, V3 470-520."""
    inst, plan, ev = _stream(40, with_b3=True)
    new, got = _apply("add room", inst, plan, ev)
    n = inst.n
    assert got.valid and got.makespan == 520 and got.extra_traffic == 20
    assert new.spills == ((0, 20), (3, 30))
    v2, out_b3, in_b0, in_b3, v3 = (new.order.index(v) for v in (7, n + 2, n + 1, n + 3, 10))
    assert out_b3 == v2 + 1 and in_b0 == out_b3 + 1 and in_b3 < v3
    ctx = MoveContext(inst, Layout.of(inst, plan, ev), ev, 5, SearchParams(choices=1))
    assert not MOVES["add room"].accepts(ctx, n + 1)  # 10 more units: over the headroom


def _ahead():
    """A new buffer b2 whose room the plan frees by evicting the running operation's buffer
    (UB of 30, VECTOR ops in a chain): b3 is loaded (L3, MTE2 10, backed) and idle until V3;
    b0 is loaded (L0) for V2; V1 (50) writes b1 (not backed: its write-out takes 2 * 10 + 150
    = 170 cycles), read again by V4; V2 (50) reads b0 and writes b2; V2b (200) reads
    nothing; V3 (200) reads b3, V4 (50) reads b1. At b2's ALLOC b3, b0 and b1 fill the tier;
    farthest next use evicts b1, V1's own buffer:

        L3 0-10, L0 10-20, V1 0-50, SPILL_OUT b1 50-220 (after V1), ALLOC b2 220 (b1's room),
        V2 220-270, V2b 270-470, V3 470-670, SPILL_IN b1 270-440 (after FREE b2), V4 670-720.
    """
    nodes = [
        alloc(0, 3, 10),
        op(1, "COPY_IN", "MTE2", 10, [3]),
        alloc(2, 0, 10),
        op(3, "COPY_IN", "MTE2", 10, [0]),
        alloc(4, 1, 10),
        op(5, "V1", "VECTOR", 50, [1]),
        alloc(6, 2, 10),
        op(7, "V2", "VECTOR", 50, [0, 2]),
        free(8, 0, 10),
        free(9, 2, 10),
        op(10, "V2b", "VECTOR", 200, []),
        op(11, "V3", "VECTOR", 200, [3]),
        op(12, "V4", "VECTOR", 50, [1]),
        free(13, 3, 10),
        free(14, 1, 10),
    ]
    edges = [[0, 1], [2, 3], [4, 5], [6, 7], [3, 7], [5, 7], [7, 8], [7, 9], [7, 10], [10, 11], [1, 11]]
    edges += [[11, 12], [5, 12], [11, 13], [12, 14], [0, 13], [2, 8], [4, 14], [6, 9]]
    inst = instance_from_records("ahead", nodes, edges, capacities(UB=30))
    n = inst.n
    order = [0, 1, 2, 3, 4, 5, n, 6, 7, 8, 9, 10, 11, n + 1, 12, 13, 14]
    plan = Plan(tuple(order), ((0, 10), (1, 20), (2, 20), (3, 0)), ((1, 20),))
    ev = evaluate(inst, plan)
    assert ev.valid and ev.makespan == 720 and ev.extra_traffic == 20
    return inst, plan, ev


def test_add_room_evicts_ahead_of_need_for_a_new_buffer():
    """Room for b2 ahead of need: b3, idle since its load and held by no running operation
    (V2's inputs b0 and b1 are), leaves right after L3 (backed: a 0-cycle write-out at 10, 10
    more traffic), b2 takes its room at once and V2 runs right after V1 (50-100); b3 comes
    back right before V3 (MTE2 100-270, hidden by V2b 100-300), V3 300-500, b1's reload
    270-440, V4 500-550: the 170 cycles of b1's write-out gone for 10 units of traffic."""
    inst, plan, ev = _ahead()
    ctx = MoveContext(inst, Layout.of(inst, plan, ev), ev, 10, SearchParams(choices=1))
    assert ctx.running(ctx.by_start[6]) == {0, 1}  # V2's inputs: L0's b0, V1's b1
    assert MOVES["add room"].accepts(ctx, 6)  # ALLOC b2 starts a segment: an ALLOC too
    got = MOVES["add room"].apply(ctx, 6, np.random.default_rng(0))
    assert got is not None
    new = got.plan(inst)
    judged = evaluate(inst, new)
    assert judged.valid and judged.makespan == 550 and judged.extra_traffic == 30
    n = inst.n
    assert new.order.index(n) == new.order.index(1) + 1  # b3's SPILL_OUT right after its load
    assert dict(new.offsets)[2] == 0  # b2 in b3's room


def test_the_search_victim_rule_ranks_running_buffers_last():
    """At b2's ALLOC, b0 (last used by L0 at position 3) is an input of V2: running. With
    b3 marked running instead, ``ahead-lru`` ranks it last although it was used earlier;
    plain ``lru`` keeps the oldest first."""
    inst, plan, ev = _ahead()
    for victim, ranked in (("ahead-lru", [0, 3]), ("lru", [3, 0])):
        ctx = MoveContext(inst, Layout.of(inst, plan, ev), ev, 10, SearchParams(choices=1, victim=victim))
        assert ctx.ranked_victims([0, 3], ctx.facts_at(7, frozenset({3}), [0, 3]), 7) == ranked


@pytest.mark.parametrize("name", ["hoist reload", "delay eviction", "swap victim"])
def test_reload_moves_refuse_a_focus_that_no_spill_starts(name):
    inst, plan, ev = _stream(40, with_b3=True)
    ctx = MoveContext(inst, Layout.of(inst, plan, ev), ev, 100, SearchParams(choices=1))
    assert not MOVES[name].accepts(ctx, 0)  # node 0 starts b0's ALLOC segment: no spill


def test_destroy_operators_offer_the_waits_on_the_critical_chain():
    """The critical chain runs L0, L1, V1, SPILL_OUT, ALLOC b2, L2, V2, FREE b1, SPILL_IN,
    V3. The critical reload is its one SPILL_IN; the critical reuse offers the segment
    starts that wait on an address there: ALLOC b2 (for the SPILL_OUT at 70) and the
    SPILL_IN (for FREE b1 at 130); the tasks are its nodes on a pipe (the SPILL_OUT on MTE3
    included, the head its first eight); a random spill offers the one spill there is."""
    inst, plan, ev = _stream(30)
    chain = Chain(plan.order, ev)
    n = inst.n
    assert chain.nodes == [1, 3, 4, n, 5, 6, 7, 8, n + 1, 10]
    assert DESTROY["critical reload"].foci(chain) == [n + 1]
    assert DESTROY["critical reuse"].foci(chain) == [5, n + 1]
    assert DESTROY["critical task"].foci(chain) == [1, 3, 4, n, 6, 7, n + 1, 10]
    assert DESTROY["head"].foci(chain) == [1, 3, 4, n, 6, 7, n + 1, 10]
    assert DESTROY["random spill"].foci(chain) == [n + 1]


def test_critical_reuse_finds_nothing_without_a_reuse_wait():
    """Without the spill (b0 resident throughout, in a UB of 40 everything fits apart) no
    segment start waits on an address: no focus."""
    inst, _, _ = _stream(40)
    n = inst.n
    plan = Plan(tuple(v for v in _stream(40)[1].order if v < n), ((0, 0), (1, 10), (2, 20)), ())
    ev = evaluate(inst, plan)
    assert ev.valid
    chain = Chain(plan.order, ev)
    assert DESTROY["critical reuse"].foci(chain) == [] and DESTROY["random spill"].foci(chain) == []
