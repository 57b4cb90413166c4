"""Stage 2: Deterministic Linear Repackaging (paper Section 4.3, Algorithm 2).

:func:`dlr_plan` turns a Stage-1 order into a plan (order sigma(2) with spill
nodes, an offset per buffer, the spill list) that the shared evaluator accepts,
minimising extra DDR traffic, then spill count, then makespan. It compares a few
variants and keeps the best:

- *orders* (sigma(2)): the Stage-1 order with lifetimes tightened (lazy ALLOC,
  eager FREE, :func:`~dansched.stages.dlr.reorder.tighten_lifetimes`), also with lazy
  loads and eager stores; the instance's own order, treated the same way; and
  reuse-aware list schedules (:func:`~dansched.stages.dlr.reuse.reuse_order`) chosen
  for traffic rather than peak;
- *placements* (the registry :data:`~dansched.stages.dlr.placements.PLACEMENTS`): the
  paper's online best fit with greedy eviction (Algorithm 2,
  lines 7-12); best fit with cheapest-window eviction; a lifetime-aware offline
  packing (greedy by size, :mod:`dansched.stages.dlr.packing`) of the segments of a
  unit-counting scan; and the exact spill plan of the order (an integer cover,
  :mod:`dansched.stages.dlr.spillplan`) with its segments packed greedily or by CP-SAT;
- *victim rules* (the registry :data:`~dansched.stages.dlr.victim.VICTIMS`): with
  ``victim="cost"`` the paper's score (Eqs. 27-31) and its
  space-time variant; with ``victim="lru"`` the LRU rule of the Table 4 ablation;
  with ``victim="recency-<W>"`` the score with a recency penalty.
  The L0 tiers always evict by eager flush (Eq. 26).

Every scan places SPILL_OUTs right where space is needed (or, in a spill plan,
right after the buffer's last use before the gap) and SPILL_INs right before the
first later user, so the spill and reuse edges the evaluator derives are
satisfied by construction; the kept plan is checked by
:func:`dansched.simulate.evaluate` before it is returned. ``info`` reports which
variant won and what the others reached.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ...errors import PlacementFailed, ReuseBudgetExceeded
from ...instance import Instance
from ...interrupt import stopping
from ...params import DlrParams, Progress
from ...plan import Plan, plan_from_indices
from ...simulate import Evaluation, evaluate
from .placements import PLACEMENTS, scan_variant
from .reorder import is_topological, tighten_lifetimes
from .reuse import reuse_order
from .scan import ScanResult
from .stats import DlrStats
from .victim import VICTIMS, RecencyAware, is_victim_rule

__all__ = [
    "DlrResult",
    "Combination",
    "dlr_plan",
    "scan_variant",
    "stage2_orders",
    "uniform_tiers",
    "PLACEMENTS",
    "VICTIMS",
]


@dataclass
class Combination:
    """One combination of DLR: an order, a placement and a victim rule, and what its scan reached."""

    order_name: str
    placement: str
    rule: str
    scan: ScanResult

    @property
    def key(self) -> tuple[int, int]:
        return (self.scan.traffic, self.scan.spill_count)

    @property
    def name(self) -> str:
        return f"{self.order_name}/{self.placement}/{self.rule}"

    def plan(self, inst: Instance) -> Plan:
        """The plan this variant's scan made (not yet judged)."""
        return plan_from_indices(inst, self.scan.sequence, self.scan.offsets, self.scan.spills())


@dataclass
class DlrResult:
    """Stage 2's plan, its evaluation and what the report says of it (``stats``)."""

    plan: Plan
    evaluation: Evaluation
    stats: DlrStats
    variants: list[Combination] = field(default_factory=list)  # every variant scanned, the winner included


def stage2_orders(
    inst: Instance,
    order: Sequence[int],
    other_orders: bool = True,
    reuse: bool = True,
    large: bool = False,
    params: DlrParams = DlrParams(),
) -> dict[str, list[int]]:
    """The sigma(2) candidates, by name: the given order with lifetimes tightened
    (``stage1``) and, with ``other_orders``, also with loads made lazy (``stage1-lazy``), the
    instance's own order treated alike (``input``, ``input-lazy``) and reuse-aware
    list schedules built on the given order (``reuse``: tasks in waves that run side by
    side; ``reuse-serial<w>``: waves of ``w`` tasks chosen together, run one after
    another; only with ``reuse``). Duplicates are dropped. With ``large`` only ``reuse`` is
    built, within ``params.reuse_scans_per_node`` scan steps per node emitted (dropped as
    soon as that is not enough: graphs with many tasks ready at once)."""
    out: dict[str, list[int]] = {"stage1": tighten_lifetimes(inst, order)}
    if not other_orders:
        return out

    def add(name: str, o: list[int]) -> None:
        if all(o != other for other in out.values()):
            out[name] = o

    add("stage1-lazy", tighten_lifetimes(inst, order, lazy_loads=True))
    own = list(range(inst.n))
    if own != list(order) and is_topological(inst, own):
        add("input", tighten_lifetimes(inst, own))
        add("input-lazy", tighten_lifetimes(inst, own, lazy_loads=True))
    if not reuse:
        return out
    if large:
        try:
            got = reuse_order(
                inst,
                order,
                lookahead=params.reuse_lookahead,
                budget=params.reuse_scans_per_node,
                allowance=params.reuse_scan_allowance,
            )
            add("reuse", got)
        except ReuseBudgetExceeded:
            pass
        return out
    add("reuse", reuse_order(inst, order, lookahead=params.reuse_lookahead))
    for w in params.serial_wave_widths:
        if stopping():  # a stop request (dansched.interrupt): the orders made so far
            break
        add(f"reuse-serial{w}", reuse_order(inst, order, lookahead=params.reuse_lookahead, width=w, serial=True))
    return out


def uniform_tiers(inst: Instance) -> bool:
    """Every tier holds buffers of one size and one spill price (all backed or none), so
    any victim frees the same room at the same cost: best fit never fragments, and the
    cost-aware rules reduce to farthest-next-use eviction, optimal for the order
    (Belady). Only the paper's placement is then worth running."""
    kinds: dict[int, set[tuple[int, bool]]] = {}
    for t, size, backed in zip(inst.buf_tier.tolist(), inst.buf_size.tolist(), inst.buf_backed.tolist()):
        kinds.setdefault(t, set()).add((size, backed))
    return all(len(k) == 1 for k in kinds.values())


def _probe_orders(
    inst: Instance, order: list[int], other_orders: bool, probe: str, rule: str, params: DlrParams
) -> tuple[dict[str, list[int]], list[Combination], bool]:
    """Step 1: every candidate order scanned with the probe placement and rule. The
    reuse-aware orders (the costly part) only when the cheap ones spill, in full within
    ``params.reuse_orders_max_nodes``, budgeted beyond. Returns the orders, their probe
    variants and whether the cheap orders spill. The probes ignore ``params.traffic_limit``:
    they rank the orders for the other placements, which may come in under the limit."""
    params = replace(params, traffic_limit=None)
    variants: list[Combination] = []
    orders = stage2_orders(inst, order, other_orders, reuse=False, params=params)
    for name, o in orders.items():
        if variants and stopping():  # a stop request (dansched.interrupt): the variants scanned so far
            break
        res = scan_variant(inst, o, probe, rule, params)
        if res is not None:
            variants.append(Combination(name, probe, rule, res))
    spills = not variants or min(v.scan.traffic for v in variants) > 0
    if other_orders and spills and not (variants and stopping()):
        large = inst.n > params.reuse_orders_max_nodes
        for name, o in stage2_orders(inst, order, other_orders, reuse=True, large=large, params=params).items():
            if name in orders:
                continue
            orders[name] = o
            if variants and stopping():
                break
            res = scan_variant(inst, o, probe, rule, params)
            if res is not None:
                variants.append(Combination(name, probe, rule, res))
    return orders, variants, spills


def _ranked_orders(variants: list[Combination], within: float) -> list[str]:
    """The order names by their best probe variant; after the first, only those whose
    probe traffic is within ``within`` times the best."""
    ranked: list[str] = []
    best_probe = min((v.scan.traffic for v in variants), default=0)
    for v in sorted(variants, key=lambda v: (v.key, v.name)):
        if v.order_name not in ranked and (not ranked or v.scan.traffic <= within * best_probe):
            ranked.append(v.order_name)
    return ranked


def _stats(variants: list[Combination], winner: Combination) -> DlrStats:
    by_order: dict[str, int] = {}
    for v in variants:
        by_order[v.order_name] = min(by_order.get(v.order_name, v.scan.traffic), v.scan.traffic)
    return DlrStats(winner.order_name, winner.placement, winner.rule, by_order, len(variants))


def dlr_plan(
    inst: Instance,
    order: Sequence[int],
    victim: str = "cost",
    other_orders: bool = True,
    placements: Sequence[str] = tuple(PLACEMENTS),
    progress: Progress | None = None,
    params: DlrParams = DlrParams(),
) -> DlrResult:
    """Stage 2 on a Stage-1 ``order`` (node ids of the instance, a topological order).

    ``victim``: ``"cost"`` (Eqs. 27-31 and the exact spill plan), ``"lru"`` (LRU in
    every placement that evicts; no exact spill plan) or ``"recency-<W>"`` (the
    cost-aware score with a recency penalty, :class:`~dansched.stages.dlr.victim.RecencyAware`;
    no exact spill plan). ``other_orders=False`` keeps the
    Stage-1 order (only lifetimes tightened). Every variant scanned is returned in
    ``variants`` (problem 3 offers the others to Stage 3 as candidates). ``params``: the budgets (:class:`~dansched.params.DlrParams`).
    Raises ``ValueError`` for an order that is not a topological order of the instance."""
    if victim not in VICTIMS and not (victim.startswith(RecencyAware.prefix) and is_victim_rule(victim)):
        raise ValueError(f"victim must be one of {sorted(VICTIMS)} or recency-<W>, got {victim!r}")
    order = [int(v) for v in order]
    if not is_topological(inst, order):
        raise ValueError("Stage 2 needs a topological order of the instance's nodes")
    say = progress or (lambda _m: None)
    if victim != "cost":  # the exact spill plan would bypass the rule under study
        placements = tuple(p for p in placements if p != "spill-plan") or ("bestfit-greedy",)
    rules = VICTIMS.get(victim, (victim,))
    if uniform_tiers(inst):  # best fit cannot fragment, the cost rules are Belady: one variant says it all
        placements, rules = ("bestfit-greedy",), rules[:1]
    # 1. rank the orders with the paper's placement and rule, 2. try every placement
    # and rule on the best two (the second only when within params.second_order_within).
    probe = "bestfit-greedy" if "bestfit-greedy" in placements else placements[0]
    orders, variants, spills = _probe_orders(inst, order, other_orders, probe, rules[0], params)
    if not spills:  # no traffic at all: nothing left to gain from other placements
        placements = (probe,)
    for name in _ranked_orders(variants, params.second_order_within)[:2]:
        for placement in placements:
            for rule in rules[:1] if placement == "spill-plan" else rules:
                if placement == probe and rule == rules[0]:
                    continue
                if variants and stopping():
                    break
                say(f"DLR: {name} / {placement} / {rule}")
                res = scan_variant(inst, orders[name], placement, rule, params)
                if res is not None:
                    variants.append(Combination(name, placement, rule, res))
    if not variants:
        raise PlacementFailed(f"{inst.name}: no placement variant could place every buffer")
    plan, ev, winner = _pick(inst, variants, params.max_tie_evaluations)
    return DlrResult(plan, ev, _stats(variants, winner), variants)


def _pick(
    inst: Instance, variants: list[Combination], max_tie_evaluations: int
) -> tuple[Plan, Evaluation, Combination]:
    """Least traffic, then fewest spills, then the smallest makespan among (at most
    ``max_tie_evaluations``) tied variants, one per order first. Every plan
    considered is judged by the evaluator; an invalid one is skipped (a bug, never a
    result: the tests catch it)."""
    variants = sorted(variants, key=lambda v: (v.key, v.name))
    while variants:
        key = variants[0].key
        tied = [v for v in variants if v.key == key]
        variants = [v for v in variants if v.key != key]
        firsts: list[Combination] = []
        for v in tied:
            if all(f.order_name != v.order_name for f in firsts):
                firsts.append(v)
        trial = (firsts + [v for v in tied if v not in firsts])[:max_tie_evaluations]
        best = None
        verdicts: dict[Plan, Evaluation] = {}  # tied variants often make the same plan
        for v in trial:
            plan = v.plan(inst)
            ev = verdicts.get(plan)
            if ev is None:
                ev = verdicts[plan] = evaluate(inst, plan)
            if not ev.valid:
                continue
            k = (ev.extra_traffic, ev.spill_count, ev.makespan)
            if best is None or k < best[0]:
                best = (k, plan, ev, v)
        if best is not None:
            return best[1], best[2], best[3]
    raise PlacementFailed(f"{inst.name}: every Stage-2 variant produced an invalid plan")
