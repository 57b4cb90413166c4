"""Stage 1: Memory-Pressure-Aware Topological Scheduling (paper Section 4.2).

:func:`mpas_order` returns a problem-1 order (docs/rules.md, section 8.1): topological, with
buffer lifetimes respected and at most one live buffer per L0 tier, aiming at a
low maxV_stay over L1+UB (Eq. 6). Variants:

``mpas-paper``
    Algorithm 1 as written (Eqs. 17-21, :mod:`.paper`); the reference for
    ablations. Taken literally it opens every L0 buffer first (their Delta_pk is
    0), which breaks the single-residency rule; rather than return an invalid
    problem-1 answer or fail, its ready set is restricted to L0-legal nodes (an
    L0 ALLOC waits while its tier is live or while opening it would deadlock),
    and the literal key decides everything else.
``mpas-greedy``
    The operation-level greedy of :mod:`.greedy` under every restart policy,
    best one kept, no local search.
``mpas`` (default)
    ``mpas-greedy`` followed by local improvement (:mod:`.improve`) of the
    best orders; skipped once a restart meets the lower bound of
    :func:`dansched.models.bounds.peak.peak_lower_bound`.

Restarts (deterministic, fixed list; ties keep the earlier one): the greedy with
memory-first weights (``net``: net bytes first; ``net+h``: criticality of Eq. 20
as a tie-breaker), and depth-first completion priorities (``dfs-*``) from the
FREE nodes in ascending or descending id order with predecessors expanded by id
or by h(v). The first restart follows the input order (a compiler's own order is
often a good loop nest; the greedy only makes it lazy, eager and L0-legal).
The result names the winner, e.g. ``mpas[input]+ls``. On large graphs only the
first restarts run (:class:`~dansched.params.MpasParams` ``restart_work``) and the local
search is skipped (``ls_max_ops``), which keeps Matmul_Case1 (31k nodes) to a few seconds. Past
``restart_work`` nodes no greedy runs: the input restart is replaced by its
linear-time equivalent, the input order with lazy ALLOC and eager FREE
(:func:`dansched.graph.lazy_eager_order`), when the input order is legal; the
greedy's L0 checks grow faster than linearly on such graphs. If every restart
dead-ends, that compaction is the answer too when the input order is legal.

The greedy's L0 checks are a heuristic (:mod:`.l0`): a pass can get stuck with every
ready operation waiting on a single-residency tier although an order exists. Then
Stage 1 falls back before giving up (:func:`_unstuck`): the paper's Algorithm 1, then
an exact search for an L0-legal completion of the longest prefix a pass scheduled
(:mod:`dansched.models.exact.l0_order`, CP-SAT), then of the whole graph. Only that last
search proving the model infeasible (or a structural proof: two buffers of one L0 tier
in one operation, a lifetime cycle) says "no L0-legal order exists"; a search that runs
out of budget says "no L0-legal order found". An order found this way is made
memory-aware again: the greedy restarts run with it as their reference order, and the
best legal order goes on to the local search like any other.

Everything is a function of the instance: no randomness, no clock (the local
search is bounded by a number of evaluations, not by time).

>>> from dansched.instance import load_instance  # doctest: +SKIP
>>> res = mpas_order(load_instance("instances/Exp.json"))  # doctest: +SKIP
>>> res.order, res.variant, res.max_v_stay  # doctest: +SKIP
([0, 1, 2, 3, 4, 5, 6], 'mpas[input]', 10)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ...errors import NoLegalOrderError
from ...graph import MpasGraph, build_mpas_graph, lazy_eager_order
from ...instance import KIND_ALLOC, KIND_FREE, KIND_OP, Instance
from ...interrupt import stopping
from ...models.bounds.peak import peak_lower_bound
from ...models.exact.l0_order import l0_legal_completion
from ...models.exact.op_model import peak_op_model
from ...params import MpasParams
from ...plan import Plan
from ...simulate import evaluate, max_v_stay
from .greedy import greedy_run
from .improve import improve_order
from .paper import paper_run
from .policy import Policy, RankPolicy, Weights, dfs_positions
from .units import build_units

__all__ = ["MpasResult", "VARIANTS", "mpas_order", "restart_policies"]

VARIANTS = ("mpas", "mpas-greedy", "mpas-paper")


@dataclass
class MpasResult:
    """A Stage-1 order and how it was found."""

    order: list[int]
    variant: str  # e.g. "mpas-paper", "mpas[net]", "mpas[dfs-desc/id]+ls"
    max_v_stay: int
    restarts: dict[str, int] = field(default_factory=dict)  # restart name -> its maxV_stay
    seconds: float = 0.0


def _rank(g: MpasGraph) -> list[int]:
    rank = [0] * g.n
    for i, v in enumerate(g.topo):
        rank[v] = i
    return rank


def restart_policies(g: MpasGraph) -> list[tuple[str, Callable[[], Policy]]]:
    """The fixed list of greedy restarts as ``(name, make_policy)`` pairs (built on
    demand): input order, the weightings of paper Figure 7's study (memory-first
    ``net``; ``net+h`` with the criticality of Eq. 20), and depth-first completion
    priorities."""
    frees = [v for v in range(g.n) if g.kind[v] == KIND_FREE]

    def by_id(sign: int):
        return lambda v: sorted(g.preds[v], key=lambda u: (g.kind[u] == KIND_ALLOC, sign * u))

    def by_h(v: int) -> list[int]:
        return sorted(g.preds[v], key=lambda u: (g.kind[u] == KIND_ALLOC, -g.h[u], u))

    def dfs(name: str, goals: list[int], po) -> tuple[str, Callable[[], Policy]]:
        return name, lambda: RankPolicy(name, dfs_positions(g, goals, po))

    out: list[tuple[str, Callable[[], Policy]]] = [
        ("input", lambda: RankPolicy("input", tuple(_rank(g)))),
        ("net", lambda: Weights("net", 1.0, 0.0, 0.0)),
    ]
    for gname, goals in (("desc", frees[::-1]), ("asc", frees)):
        for pname, po in (("rid", by_id(-1)), ("id", by_id(1)), ("h", by_h)):
            out.append(dfs(f"dfs-{gname}/{pname}", goals, po))
        if gname == "desc":
            out.append(("net+h", lambda: Weights("net+h", 1.0, 0.0, 1.0)))
    return out


def _local_search(inst: Instance, g: MpasGraph, order: list[int], params: MpasParams) -> list[int]:
    m = peak_op_model(inst, g)
    if not m.valid:
        return order
    index = {v: i for i, v in enumerate(m.ops.tolist())}
    seq = [index[v] for v in order if g.kind[v] == KIND_OP]
    better, _ = improve_order(m, seq, max_evaluations=params.ls_evaluations, params=params.moves)
    return lazy_eager_order(g, [int(m.ops[i]) for i in better])


def _is_legal(inst: Instance, order: list[int]) -> bool:
    return evaluate(inst, Plan(order=tuple(order))).valid


def _compacted_input(inst: Instance, g: MpasGraph) -> tuple[int, list[int]] | None:
    """``(maxV_stay, order)`` of the input order with lazy ALLOC and eager FREE
    (:func:`dansched.graph.lazy_eager_order`), or None when the input order is not a
    legal problem-1 order (then neither is its compaction)."""
    own = list(range(inst.n))
    if not _is_legal(inst, own):
        return None
    order = lazy_eager_order(g, own)
    return max_v_stay(inst, order), order


def _memory_aware(inst: Instance, g: MpasGraph, legal: list[int], params: MpasParams) -> tuple[int, str, list[int]]:
    """``(maxV_stay, how, order)``: the best of a legal order with lazy ALLOC and eager FREE
    and the greedy restarts run with it as their reference order (their L0 checks then
    simulate completions that follow a legal order, so they rarely get stuck again)."""
    order = lazy_eager_order(g, legal)
    best = (max_v_stay(inst, order), "compacted", order)
    rank = [0] * g.n
    for i, v in enumerate(legal):
        rank[v] = i
    units = build_units(g, rank)
    policies = [("input", lambda: RankPolicy("input", tuple(rank)))] + restart_policies(g)[1:]
    for _name, make in policies[: max(1, params.restart_work // max(1, g.n))]:
        if stopping():
            break
        policy = make()
        order, stuck = greedy_run(g, policy, rank, units)
        if stuck is None:
            peak = max_v_stay(inst, order)
            if peak < best[0] and _is_legal(inst, order):
                best = (peak, policy.name, order)
    return best


def _unstuck(
    inst: Instance, g: MpasGraph, stuck: list[tuple[list[int], str]], params: MpasParams, paper: bool = True
) -> tuple[list[int], str]:
    """An L0-legal order when every greedy pass got stuck on the L0 rule (``stuck``: each
    pass's prefix and why it stopped): the paper's Algorithm 1 (unless it is the pass that
    got stuck), then the exact search (:mod:`dansched.models.exact.l0_order`) for a legal
    completion of the longest prefix a pass scheduled, then of the empty prefix, whose
    infeasibility proves that no order exists. A completion found is made memory-aware
    again (:func:`_memory_aware`). Returns the order and how it was found; raises
    :class:`~dansched.errors.NoLegalOrderError` saying whether no order exists (and how
    that was proven) or none was found within the budget."""
    if paper:
        order, why = paper_run(g)
        if why is None and _is_legal(inst, order):
            return order, "mpas-paper (every greedy pass got stuck)"
        stuck = stuck + [(order, str(why))]
    prefix, why = max(stuck, key=lambda s: len(s[0]))
    dt, seconds = params.l0_search_deterministic_time, params.l0_search_seconds
    clock = False
    for start in [prefix, []] if prefix else [[]]:
        found = l0_legal_completion(g, start, dt, seconds)
        clock = clock or found.stopped_by_clock
        legal = list(start) + found.order
        if found.status == "found" and _is_legal(inst, legal):
            _peak, how, order = _memory_aware(inst, g, legal, params)
            return order, f"exact L0 search ({len(found.order):,} nodes after {len(start):,}), {how}"
        if found.status == "infeasible" and not start:
            raise NoLegalOrderError(f"no L0-legal order exists: {found.proof} ({why})")
    net = " (the wall-clock safety net stopped it)" if clock else ""
    raise NoLegalOrderError(
        f"no L0-legal order found: {why}, and CP-SAT neither found an order nor proved that none exists "
        f"within {dt:g} deterministic seconds{net} (MpasParams.l0_search_deterministic_time)"
    )


def _no_valid(found: list) -> list:
    """Every restart's order was rejected by the evaluator: a bug, reported as exit 1."""
    raise NoLegalOrderError(f"MPAS: the evaluator rejected all {len(found)} greedy orders (internal error)")


def mpas_order(
    inst: Instance, variant: str = "mpas", target: int | None = None, params: MpasParams = MpasParams()
) -> MpasResult:
    """Stage-1 order of ``inst`` (see the module docstring).

    ``target``: stop trying restarts once one reaches it (default: the peak lower
    bound). ``params``: the budgets (:class:`~dansched.params.MpasParams`). Raises
    :class:`~dansched.errors.NoLegalOrderError` (a :class:`~dansched.errors.PlanInvalidError`, exit status 1) when no L0-legal
    order exists (its message says how that was proven) or the exact search found none
    within its budget, ValueError for an unknown variant."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown MPAS variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    t0 = time.perf_counter()
    g = build_mpas_graph(inst)
    if variant == "mpas-paper":
        order, why = paper_run(g)
        how = "mpas-paper"
        if why is not None:
            order, how = _unstuck(inst, g, [(order, why)], params, paper=False)
        return MpasResult(order, how, max_v_stay(inst, order), seconds=time.perf_counter() - t0)
    policies = restart_policies(g)[: params.restart_work // max(1, g.n)]
    if not policies:  # too large for the greedy: its input restart, in linear time, when legal
        compact = _compacted_input(inst, g)
        if compact is not None:
            return MpasResult(
                compact[1],
                "mpas[input, compacted]",
                compact[0],
                {"input, compacted": compact[0]},
                time.perf_counter() - t0,
            )
        policies = restart_policies(g)[:1]
    if target is None:
        target = peak_lower_bound(inst, g).value
    rank = _rank(g)
    units = build_units(g, rank)
    found: list[tuple[int, int, str, list[int]]] = []  # (maxV_stay, restart, variant, order)
    restarts: dict[str, int] = {}
    stuck: list[tuple[list[int], str]] = []
    for i, (_name, make) in enumerate(policies):
        policy = make()
        order, why = greedy_run(g, policy, rank, units)
        if why is not None:
            stuck.append((order, why))
            continue
        peak = max_v_stay(inst, order)
        restarts[policy.name] = peak
        found.append((peak, i, f"mpas[{policy.name}]", order))
        if peak <= target or stopping():  # a stop request: the best order so far (dansched.interrupt)
            break
    if not found:  # every restart got stuck: the input order, when it is legal, is still an answer
        compact = _compacted_input(inst, g)
        if compact is not None:
            return MpasResult(
                compact[1],
                "input order, compacted (every restart dead-ended)",
                compact[0],
                restarts,
                time.perf_counter() - t0,
            )
        order, how = _unstuck(inst, g, stuck, params)
        restarts[how] = max_v_stay(inst, order)
        found.append((restarts[how], len(policies), how, order))
    found.sort(key=lambda x: (x[0], x[1]))
    # the best legal order (normally the best one) goes to the local search
    peak, _, name, order = next((f for f in found if _is_legal(inst, f[3])), None) or _no_valid(found)
    best = (peak, name, order)
    if variant == "mpas" and peak > target and len(units.members) <= params.ls_max_ops and not stopping():
        improved = _local_search(inst, g, order, params)
        p = max_v_stay(inst, improved)
        restarts[f"{name}+ls"] = p
        if p < best[0] and _is_legal(inst, improved):
            best = (p, f"{name}+ls", improved)
    return MpasResult(best[2], best[1], best[0], restarts, time.perf_counter() - t0)
