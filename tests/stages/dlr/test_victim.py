"""Victim rules behind one interface: the window eviction of the scan asks the rule for
the cost of each victim, so a new rule is priced by itself (checked by hand on a tier
with three equal buffers), and every rule of the registry answers both questions."""

from __future__ import annotations

import pytest
from helpers import alloc, free, hw_file, op

from dansched.hardware import load_hardware
from dansched.instance import instance_from_records
from dansched.plan import plan_from_indices
from dansched.simulate import evaluate
from dansched.stages.dlr.scan import linear_scan
from dansched.stages.dlr.victim import (
    RULES,
    RUNNING_COST,
    VICTIMS,
    AheadOfNeed,
    VictimFacts,
    VictimRule,
    running_buffers,
    victim_rule,
)


class PriceList:
    """A toy rule: each buffer has a fixed price; the cheapest is evicted."""

    name = "price-list"

    def __init__(self, price: dict[int, float]) -> None:
        self.price = price

    def pick(self, pool, facts: VictimFacts, k: int) -> int:
        return min(pool, key=lambda b: (self.price[b], b))

    def cost(self, b: int, facts: VictimFacts, k: int) -> float:
        return self.price[b]


def _three_full(tmp_path):
    """UB holds 30 units: a, b, c (10 each, BufIds 0, 1, 2) fill it when d (BufId 3) arrives
    at position 4; b is needed next (position 7), then c (8), then a (9)."""
    nodes = [
        alloc(0, 0, 10),
        alloc(1, 1, 10),
        alloc(2, 2, 10),
        op(3, "ADD", "VECTOR", 5, [0, 1, 2]),
        alloc(4, 3, 10),
        op(5, "ADD", "VECTOR", 5, [3]),
        free(6, 3, 10),
        op(7, "ADD", "VECTOR", 5, [1]),
        op(8, "ADD", "VECTOR", 5, [2]),
        op(9, "ADD", "VECTOR", 5, [0]),
        free(10, 0, 10),
        free(11, 1, 10),
        free(12, 2, 10),
    ]
    edges = [[0, 3], [1, 3], [2, 3], [3, 5], [4, 5], [5, 6], [6, 7], [7, 8], [8, 9], [9, 10], [7, 11], [8, 12]]
    return instance_from_records("three_full", nodes, edges, load_hardware(hw_file(tmp_path, UB=30)))


def _window_victim(inst, rule: str | VictimRule) -> int:
    """The BufId the window eviction spills, after checking the plan with the evaluator."""
    res = linear_scan(inst, list(range(inst.n)), rule=rule, mode="bestfit", evict="window")
    plan = plan_from_indices(inst, res.sequence, res.offsets, res.spills())
    ev = evaluate(inst, plan)
    assert ev.valid, [e.message for e in ev.errors[:3]]
    assert ev.spill_count == 1 and ev.extra_traffic == 20  # one unbacked spill of 10 units
    return plan.spills[0][0]


def test_window_eviction_asks_a_new_rule_for_its_cost(tmp_path):
    inst = _three_full(tmp_path)
    # by hand: each window of 10 units holds one buffer, the window costs that buffer's price
    assert _window_victim(inst, PriceList({0: 3.0, 1: 1.0, 2: 2.0})) == 1
    assert _window_victim(inst, PriceList({0: 2.0, 1: 3.0, 2: 1.0})) == 2
    # the cost-aware rule prices 1/score: a (needed last, distance 5) is the cheapest
    assert _window_victim(inst, "score") == 0
    # min-reload: each victim costs one spill (d leaves at 6, before b, c or a come back), so
    # no reload gap; the tie-break term orders a, b, c (all last used at 3: lowest index first)
    assert _window_victim(inst, "min-reload") == 0


def test_every_registered_rule_picks_and_prices():
    """Each rule of the registry is a VictimRule; on two buffers that differ only in their
    next need (positions 12 and 20 at k = 10, when a third arrives in a tier of two) every
    rule but LRU evicts the later one and prices it lower; LRU evicts the least recently
    used (last use 2 before 5). For the min-reload rules both victims keep the least traffic
    (the third leaves at 11), and the later one is also the least recently used."""
    need = {0: 12.0, 1: 20.0}.__getitem__
    facts = VictimFacts(
        need,
        [5, 2, -1],
        [8, 8, 8],
        [16, 16, 16],
        [182, 182, 182],
        needs=[[0, 5, 12], [1, 2, 20], [10, 11]],
        tiers=[0, 0, 0],
        residents=lambda t: [0, 1],
        capacity=lambda t, j: 16,
    )
    rules = [*RULES.values(), victim_rule("recency-4")]
    assert {r.name for r in rules} == {
        "eager",
        "score",
        "space-time",
        "lru",
        "min-reload",
        "recency-4",
    }
    for rule in rules:
        if rule.name == "lru":
            assert rule.pick([0, 1], facts, 10) == 1
            assert rule.cost(1, facts, 10) == pytest.approx(1 / 9) and rule.cost(0, facts, 10) == pytest.approx(1 / 6)
        else:
            assert rule.pick([0, 1], facts, 10) == 1, rule.name
            assert rule.cost(1, facts, 10) < rule.cost(0, facts, 10), rule.name
    assert all(name in RULES for names in VICTIMS.values() for name in names)


def _running_facts(running: set[int]) -> VictimFacts:
    """Three resident buffers of one tier: next needs 12, 20, 30 at k = 10, last uses 9, 2,
    1; a fourth (needs 10, 11) arrives at 10."""
    need = {0: 12.0, 1: 20.0, 2: 30.0, 3: 11.0}.__getitem__
    return VictimFacts(
        need,
        [9, 2, 1, -1],
        [8, 8, 8, 8],
        [16, 16, 16, 16],
        [182, 182, 182, 182],
        needs=[[0, 9, 12], [1, 2, 20], [1, 30], [10, 11]],
        tiers=[0, 0, 0, 0],
        residents=lambda t: [0, 1, 2],
        capacity=lambda t, j: 24,
        running=lambda k: running,
    )


def test_ahead_of_need_keeps_the_running_buffers_for_last():
    """``ahead-<rule>`` makes the base rule's choice among the buffers no running operation
    holds: farthest next use evicts 2 (need 30), but with 2 running, 1 (need 20); with every
    buffer running, the base rule's choice over the whole pool. A running buffer costs
    :data:`RUNNING_COST` more, so a window avoids it."""
    ahead = victim_rule("ahead-eager")
    assert isinstance(ahead, AheadOfNeed) and ahead.name == "ahead-eager"
    assert ahead.pick([0, 1, 2], _running_facts(set()), 10) == 2
    assert ahead.pick([0, 1, 2], _running_facts({2}), 10) == 1
    assert ahead.pick([0, 1, 2], _running_facts({0, 1, 2}), 10) == 2
    facts = _running_facts({2})
    assert ahead.cost(2, facts, 10) == pytest.approx(RULES["eager"].cost(2, facts, 10) + RUNNING_COST)
    assert ahead.cost(1, facts, 10) == pytest.approx(RULES["eager"].cost(1, facts, 10))
    # LRU evicts the least recently used (2, last used at 1); ahead of need, 1 instead
    assert victim_rule("ahead-lru").pick([0, 1, 2], _running_facts({2}), 10) == 1


def test_min_reload_ahead_breaks_ties_away_from_the_running_buffers():
    """In a tier of 24 units (three rooms of 8) a fourth buffer (needs 10, 11) arrives at 10:
    evicting any of the three keeps the least reload traffic (each leaves once and comes back
    once before 30), so the tie-break decides: ``lru`` evicts 2 (last used at 1); ``ahead``
    the least recently used of those not running: with 2 running, 1."""
    facts = _running_facts({2})
    assert victim_rule("min-reload").pick([0, 1, 2], facts, 10) == 2
    assert victim_rule("min-reload-ahead").pick([0, 1, 2], facts, 10) == 1
    assert victim_rule("min-reload-ahead").pick([0, 1, 2], _running_facts(set()), 10) == 2


def test_running_buffers_of_a_scan_are_the_pipe_predecessor_and_the_inputs(tmp_path):
    """In ``_three_full``'s order, the event at position 4 (d's ALLOC) waits for the ADD at 5:
    its previous operation on VECTOR is the ADD at 3 (a, b, c) and its input edges come from
    that ADD too; at position 7 the ADD of b follows the ADD of d (position 5: d)."""
    inst = _three_full(tmp_path)
    running = running_buffers(inst, list(range(inst.n)))
    index = inst.buffer_index
    assert running(4) == {index(0), index(1), index(2)}
    assert running(7) == {index(3)}
    assert running(12) == frozenset()  # no operation at or after the last FREE
