"""Exact minimum-peak problem-1 order for small graphs: dynamic programming over
the sets of operations already run (down-sets of the operation-level DAG).

Why a set is enough: with every ALLOC placed just before the first operation
that needs it and every FREE right after the last operation it waits for (a
placement that never raises a prefix sum, so some optimal order has it), a
peak-tier buffer ``b`` is live while operation ``v`` runs exactly when one of
its openers is in ``S + {v}`` and not all of its closers are in ``S`` -- a
property of the set ``S`` run before ``v``, not of the order inside it. So

    best(S + {v}) = min over v of max(best(S), live_bytes(S, v)),

subject to: ``v``'s operation-level predecessors are in ``S``, and no L0 tier
holds two live buffers while ``v`` runs (also a set property). ``best(all)`` is
the optimum of Eq. 6 under the L0 rule; the DP keeps one predecessor per set to
rebuild an order. States grow with the width of the DAG, so this is for graphs
of a few dozen operations (``max_states`` guards it).

>>> from dansched.generate import generate
>>> from dansched.instance import instance_from_records
>>> inst = instance_from_records("r", *generate("random", scale=1, seed=0))
>>> res = exact_min_peak(inst)
>>> res.peak > 0 and len(res.order) == inst.n
True
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ExactModelInapplicable, ExactModelTooLarge, NoLegalOrderError
from ...graph import build_mpas_graph, lazy_eager_order
from ...instance import Instance
from .op_model import peak_op_model

__all__ = ["ExactOrder", "exact_min_peak"]


@dataclass(frozen=True)
class ExactOrder:
    peak: int  # optimal maxV_stay under the L0 rule
    order: list[int]  # a node order achieving it
    states: int  # down-sets explored


def exact_min_peak(inst: Instance, max_states: int = 2_000_000) -> ExactOrder:
    """Optimal maxV_stay and an optimal order (see the module docstring).

    Raises :class:`~dansched.graph.NoLegalOrderError` when no L0-legal
    order exists, :class:`ExactModelTooLarge` past ``max_states`` down-sets, and
    :class:`~dansched.errors.ExactModelInapplicable` when a buffer has no operation that
    opens or closes it."""
    g = build_mpas_graph(inst)
    m = peak_op_model(inst, g)
    size = inst.buf_size.tolist()
    l0 = {inst.hw.tier_index(t) for t in inst.hw.single_residency_tiers}
    tiers = inst.buf_tier.tolist()
    if not m.valid:
        raise ExactModelInapplicable(
            "exact model: every buffer needs an operation that opens it and one that closes it"
        )
    k = len(m.ops)
    nb = len(size)
    open_mask = [0] * nb
    close_mask = [0] * nb
    for b in range(nb):
        for i in m.open_idx[m.open_ptr[b] : m.open_ptr[b + 1]].tolist():
            open_mask[b] |= 1 << i
        for i in m.close_idx[m.close_ptr[b] : m.close_ptr[b + 1]].tolist():
            close_mask[b] |= 1 << i
    pred_mask = [sum(1 << p for p in m.op_preds[i]) for i in range(k)]
    weights = [int(m.size[b]) for b in range(nb)]
    l0_tier = [tiers[b] if tiers[b] in l0 else -1 for b in range(nb)]
    # a buffer can only be live during v if v opens it, or it was opened before and v is not past it;
    # checking all buffers keeps the code short (graphs here are small)

    def during(S: int, v: int) -> tuple[int, bool]:
        """Live peak-tier bytes while ``v`` runs after set ``S``; False if an L0 tier holds two."""
        Sv = S | (1 << v)
        total = 0
        seen: set[int] = set()
        for b in range(nb):
            if open_mask[b] & Sv and (close_mask[b] & S) != close_mask[b]:
                total += weights[b]
                t = l0_tier[b]
                if t >= 0:
                    if t in seen:
                        return total, False
                    seen.add(t)
        return total, True

    full = (1 << k) - 1
    best = {0: 0}
    parent: dict[int, tuple[int, int]] = {}
    layer = [0]
    states = 1
    for _ in range(k):
        nxt: dict[int, int] = {}
        for S in layer:
            base = best[S]
            for v in range(k):
                bit = 1 << v
                if S & bit or (pred_mask[v] & S) != pred_mask[v]:
                    continue
                live, ok = during(S, v)
                if not ok:
                    continue
                T = S | bit
                val = max(base, live)
                if T not in nxt or val < nxt[T]:
                    nxt[T] = val
                    parent[T] = (S, v)
        states += len(nxt)
        if states > max_states:
            raise ExactModelTooLarge(f"exact model: more than {max_states} down-sets")
        best.update(nxt)
        layer = sorted(nxt)
        if not layer:
            break
    if full not in best:
        raise NoLegalOrderError("no L0-legal order exists (exact search)")
    seq = []
    S = full
    while S:
        S, v = parent[S]
        seq.append(v)
    seq.reverse()
    order = lazy_eager_order(g, [int(m.ops[i]) for i in seq])
    return ExactOrder(peak=best[full], order=order, states=states)
