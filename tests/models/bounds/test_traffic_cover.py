"""The fixed-order traffic cover under a deterministic budget (models/traffic.py).

Oracle: the covering problem solved by brute force (every subset of gaps, exact
integers) on small instances that spill. HiGHS's integer optimum must equal it, the LP
relaxation and the per-position bound must not exceed it; the budget (counts, not the
clock) decides which one is reported; a stopped wall-clock safety net is stated."""

from __future__ import annotations

from itertools import combinations

import pytest

from dansched.graph import topological_order
from dansched.models.bounds import traffic
from dansched.models.bounds.traffic import position_bound, tier_covers, traffic_lower_bound
from dansched.params import CoverBudget
from dansched.testing import audit_instance


def brute_force_cover(covers) -> int:
    """Least total price of a set of gaps covering every over-full row, per tier, summed."""
    total = 0
    for c in covers:
        gaps = sorted({g for cols, _ in c.rows for g in cols})
        assert len(gaps) <= 16, "brute force is for small covers"
        best = None
        for k in range(len(gaps) + 1):
            for chosen in combinations(gaps, k):
                pick = set(chosen)
                if all(sum(c.size[g] for g in cols if g in pick) >= excess for cols, excess in c.rows):
                    cost = sum(c.cost[g] for g in pick)
                    best = cost if best is None else min(best, cost)
        assert best is not None
        total += best
    return total


def small_covers():
    """Instances of :func:`audit_instance` whose id-order cover is small enough to enumerate
    and not trivially zero."""
    out = []
    for seed in range(40):
        inst = audit_instance(seed, max_nodes=24)
        order = topological_order(inst)
        covers = tier_covers(inst, order)
        gaps = sum(len({g for cols, _ in c.rows for g in cols}) for c in covers)
        if covers and 0 < gaps <= 14:
            out.append((inst, order, covers))
        if len(out) == 5:
            break
    assert len(out) >= 3
    return out


CASES = small_covers()


@pytest.mark.parametrize("k", range(len(CASES)))
def test_cover_bounds_against_brute_force(k):
    inst, order, covers = CASES[k]
    best = brute_force_cover(covers)
    mip = traffic_lower_bound(inst, order)
    assert mip.value == best and "integer optimum" in mip.method and not mip.stopped_by_clock
    lp = traffic_lower_bound(inst, order, CoverBudget(mip_max_nonzeros=0))
    assert lp.value <= best and not lp.stopped_by_clock
    assert position_bound(covers) <= best
    exact = traffic_lower_bound(inst, order, CoverBudget(exact_max_cost=0))
    assert exact.value == position_bound(covers) and "exact range" in exact.method


def test_same_bound_on_repeat():
    """No clock decides the figure: the same input gives the same bound and method."""
    inst, order, _ = CASES[0]
    got = {(b.value, b.method) for b in (traffic_lower_bound(inst, order) for _ in range(3))}
    assert len(got) == 1


def test_a_fired_safety_net_is_stated(monkeypatch):
    """When HiGHS reports its wall-clock limit, the bound says so in its method and flag
    and in the report row (``stopped_by_clock``)."""
    inst, order, covers = CASES[0]
    real_mip, real_lp = traffic._tier_mip, traffic._tier_lp

    def mip_stopped(c, budget):
        got, _, _ = real_mip(c, budget)
        return got, False, True

    def lp_stopped(c, budget, whole=False):
        return real_lp(c, budget, whole)[0], True

    monkeypatch.setattr(traffic, "_tier_mip", mip_stopped)
    monkeypatch.setattr(traffic, "_tier_lp", lp_stopped)
    b = traffic_lower_bound(inst, order)
    assert b.stopped_by_clock and "safety net" in b.method
    assert b.to_dict()["stopped_by_clock"] is True
    assert b.value <= brute_force_cover(covers)


def test_budget_is_checked():
    with pytest.raises(ValueError, match="node_limit"):
        CoverBudget(node_limit=-1)
    with pytest.raises(ValueError, match="safety_seconds"):
        CoverBudget(safety_seconds=0)
