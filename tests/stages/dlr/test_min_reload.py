"""The ``min-reload`` victim rule against a brute force, and every plan a scan with it makes
against the shared evaluator.

The oracle (tests/min_reload_reference.py) walks a tiny tier with sets: the traffic of the
farthest-next-use continuation after a given first victim, and the least traffic over every
sequence of eviction choices. On each eviction point of a random walk:

- the rule's candidates (the victims it accepts when they come first in its tie-break) are
  exactly those whose farthest-next-use continuation spends no more than that of the
  farthest-next-use victim (the rule's definition);
- with one size and one spill traffic, farthest-next-use is optimal, and the candidates are
  exactly the victims some least-traffic eviction sequence starts with;
- with several sizes or traffics the test is only sufficient: a candidate's true minimum is
  no more than farthest-next-use's traffic (the rule does not promise the true minimum, which
  farthest-next-use may miss there);
- the pick is the first candidate by the tie-break.

Through the scan: every placement with the rule on small random instances and generated
graphs under tight capacities gives a plan the evaluator accepts with the scan's traffic;
counting units, the scan never spends more than the one that always evicts the farthest
next need (``eager``). ``-m slow`` checks 4,000 random tiers (about 11,600 eviction points).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from min_reload_reference import (
    eviction_points,
    farthest,
    next_need,
    random_tier,
    remaining_traffic,
)
from strategies import SETTINGS

from dansched.generate import generate
from dansched.instance import instance_from_records
from dansched.plan import plan_from_indices
from dansched.simulate import evaluate
from dansched.stages.dlr.placements import PLACEMENTS, scan_variant
from dansched.stages.dlr.reorder import tighten_lifetimes
from dansched.stages.dlr.scan import linear_scan
from dansched.stages.dlr.victim import RULES, TIE_BREAKS, MinReload, VictimFacts, victim_rule
from dansched.testing import audit_instance, tight_hardware


def _facts(needs, sizes, traffic, capacity, residents, k, last_use):
    return VictimFacts(
        lambda b: next_need(needs, b, k),
        last_use,
        sizes,
        traffic,
        [0] * len(sizes),
        needs=needs,
        tiers=[0] * len(sizes),
        residents=lambda t: sorted(residents),
        capacity=lambda t, j: capacity,
    )


def _candidates(rule, needs, sizes, traffic, capacity, residents, k, pool):
    """The victims the rule accepts: each made the least recently used in turn."""
    out = set()
    for p in pool:
        last_use = [0] * len(sizes)
        last_use[p] = -1
        if rule.pick(pool, _facts(needs, sizes, traffic, capacity, residents, k, last_use), k) == p:
            out.add(p)
    return out


def _check_tier(seed: int, uniform: bool, backed_mix: bool) -> int:
    """Every eviction point of one random tier; returns how many were checked."""
    rng = random.Random(seed)
    n = rng.randint(3, 6)
    if uniform:
        sizes = [2] * n
        capacity = 2 * rng.randint(1, 3)
    else:
        sizes = [rng.randint(1, 3) for _ in range(n)]
        capacity = rng.randint(max(sizes), 6)
    backed = [rng.random() < 0.5 for _ in range(n)] if backed_mix else [True] * n
    traffic = [s if bk else 2 * s for s, bk in zip(sizes, backed)]
    needs = random_tier(rng, n, sizes, capacity, rng.randint(3, 10))
    rule = victim_rule("min-reload")
    checked = 0
    for k, residents, pool in eviction_points(rng, needs, sizes, capacity):
        cap = lambda j: capacity  # noqa: E731
        f = farthest(needs, sizes, pool, k)
        belady = {p: remaining_traffic(needs, sizes, traffic, cap, residents, k, p) for p in pool}
        best = {p: remaining_traffic(needs, sizes, traffic, cap, residents, k, p, every_choice=True) for p in pool}
        got = _candidates(rule, needs, sizes, traffic, capacity, residents, k, pool)
        assert got == {p for p in pool if belady[p] <= belady[f]}, (needs, sorted(residents), k)
        if uniform and not backed_mix:
            assert belady == best  # farthest-next-use is optimal here
            assert got == {p for p in pool if best[p] == min(best.values())}
        for p in got:
            assert best[p] <= belady[f]
        # the pick: the first candidate by each tie-break
        last_use = [rng.randint(0, k) for _ in range(n)]
        for tie, key in TIE_BREAKS.items():
            facts = _facts(needs, sizes, traffic, capacity, residents, k, last_use)
            want = min(got, key=lambda b: (key(facts, k, b), -sizes[b], b))
            assert MinReload(tie).pick(pool, facts, k) == want
        checked += 1
    return checked


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_candidates_of_equal_buffers_are_the_optimal_victims(seed):
    _check_tier(seed, uniform=True, backed_mix=False)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), uniform=st.booleans())
def test_candidates_keep_farthest_next_use_traffic(seed, uniform):
    _check_tier(seed, uniform=uniform, backed_mix=True)


@pytest.mark.slow
def test_brute_force_many_tiers():
    checked = 0
    for seed in range(2000):
        checked += _check_tier(seed, uniform=True, backed_mix=False)
        checked += _check_tier(seed, uniform=False, backed_mix=True)
    assert checked > 5000


def test_a_chain_of_exchanges_by_hand():
    """Three rooms of one unit (one size, one traffic). At position 9 buffer 4 arrives in a full
    tier (0, 1, 3). Farthest-next-use evicts 0 (next needed at 13), then 3 at 12 and 2 at 13:
    three spills. Evicting 1 (next needed at 11) costs three as well: 3 at 11 and 1 again at
    12, while 0 and 2 stay. Yet 0 cannot simply stay in 1's room (the tier is full at 12 with
    1, 2 and 4): one exchange alone would miss this candidate. Evicting 3 costs four."""
    needs = [[0, 2, 4, 6, 13], [1, 2, 6, 7, 11, 14, 19], [3, 5, 7, 12, 18], [8, 10, 20], [9, 11, 14, 15], [16, 17]]
    sizes, traffic = [1] * 6, [1] * 6
    residents, k, pool = frozenset({0, 1, 3}), 9, [0, 1, 3]
    cap = lambda j: 3  # noqa: E731
    assert [remaining_traffic(needs, sizes, traffic, cap, residents, k, p) for p in pool] == [3, 3, 4]
    assert _candidates(victim_rule("min-reload"), needs, sizes, traffic, 3, residents, k, pool) == {0, 1}
    last_use = [6, 7, 7, 8, 9, 0]  # the last needs before 9
    facts = _facts(needs, sizes, traffic, 3, residents, k, last_use)
    assert victim_rule("min-reload").pick(pool, facts, k) == 0 == RULES["eager"].pick(pool, facts, k)
    last_use[1], last_use[3] = 5, 0  # 3 is not a candidate, 1 is: the least recently used of them
    facts = _facts(needs, sizes, traffic, 3, residents, k, last_use)
    assert victim_rule("min-reload").pick(pool, facts, k) == 1


def test_the_rule_needs_its_facts():
    facts = VictimFacts(lambda b: 5, [0, 1], [1, 1], [1, 1], [0, 0])
    with pytest.raises(ValueError, match="needs the facts"):
        victim_rule("min-reload").pick([0, 1], facts, 3)
    with pytest.raises(ValueError, match="unknown tie-break"):
        MinReload("mru")


# ---- plans the scan makes with the rule ---------------------------------------------------


def _scans_are_valid(inst) -> int:
    """Every placement with each tie-break on the instance's own order: a valid plan with the
    scan's traffic. Returns the spills made."""
    spills = 0
    for rule in (MinReload(tie) for tie in TIE_BREAKS):
        for placement in PLACEMENTS:
            res = scan_variant(inst, tighten_lifetimes(inst, list(range(inst.n))), placement, rule)
            if res is None:
                continue
            plan = plan_from_indices(inst, res.sequence, res.offsets, res.spills())
            ev = evaluate(inst, plan)
            assert ev.valid, (rule.name, placement, [e.message for e in ev.errors[:3]])
            assert ev.extra_traffic == res.traffic
            spills += res.spill_count
    return spills


@SETTINGS
@given(seed=st.integers(0, 10_000), nodes=st.integers(12, 40))
def test_every_scan_with_the_rule_passes_the_evaluator(seed, nodes):
    """Small random instances under the tightest capacities their operations allow."""
    try:
        inst = audit_instance(seed, nodes)
    except ValueError:  # even one operation needs more nodes
        return
    _scans_are_valid(inst)


@pytest.mark.parametrize("family", ["conv", "fa", "matmul", "random"])
def test_scans_of_generated_graphs_with_the_rule_are_valid(family):
    """Generated graphs under the tightest capacities their operations allow (they spill)."""
    nodes, edges = generate(family, scale=2, seed=3)
    inst = instance_from_records(family, nodes, edges, tight_hardware(nodes))
    assert _scans_are_valid(inst) > 0


@SETTINGS
@given(seed=st.integers(0, 10_000), nodes=st.integers(12, 40))
def test_counting_units_the_rule_spends_no_more_than_farthest_next_use(seed, nodes):
    """Where the scan counts units (as the continuations do), each eviction keeps the traffic
    of farthest-next-use from that state on, so the whole scan spends no more than the scan
    that always evicts the farthest next need (``eager``), whose traffic is the oracle."""
    try:
        inst = audit_instance(seed, nodes)
    except ValueError:
        return
    order = tighten_lifetimes(inst, list(range(inst.n)))
    eager = linear_scan(inst, order, "eager", mode="units").traffic
    for tie in TIE_BREAKS:
        assert linear_scan(inst, order, MinReload(tie), mode="units").traffic <= eager
