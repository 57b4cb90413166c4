"""Per-tier minimum peak: extra DDR traffic (problems 2 and 3) forced over *every* order by
the least logical peak of one tier.

**Claim.** Let ``P_t`` be a lower bound, over every order of the instance, on the largest
logically live bytes of tier ``t`` (buffers of ``t`` between their ALLOC and their FREE;
docs/rules.md, section 3), and ``cap_t`` its capacity. Every plan has extra traffic at
least ``ceil(rho_t * (P_t - cap_t))`` in tier ``t``, where ``rho_t`` is the least
traffic per byte of a spill of a buffer of ``t`` (1 for a backed buffer, which a COPY_IN
fills, else 2: ``hardware.spill_traffic``); the tiers' figures add up.

**Proof.** A plan's schedule, its spill nodes left out, is an order of the instance, so at
some schedule position ``P_t`` bytes of tier ``t`` are logically live. A live buffer is
either resident or *in an open spill* (after a SPILL_OUT, before the SPILL_IN that follows:
docs/rules.md, section 6.1), and the resident ones fit ``cap_t``; so at least
``P_t - cap_t`` bytes sit in open spills there, each of a different buffer and each spill
costing at least ``rho_t`` per byte of its buffer -- a buffer whose last use is behind
still pays its whole spill, write-out included. A spill belongs to one buffer, of one
tier, so the figures of different tiers count different spills and add up. QED.

``P_t`` is the first-free peeling bound of :func:`dansched.models.bounds.peak.first_free_bound`
(which needs no L0 rule, so it holds for problems 2 and 3) run on tier ``t`` alone; past
its work budget, the largest working set of one operation. The L0-rule bounds of
:mod:`dansched.models.bounds.peak_bounds` (product pattern, contracted relaxation, exact DP) are
not used: problems 2 and 3 have capacities, not the single-residency rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ...errors import PeakWorkExceeded
from ...graph import MpasGraph, build_mpas_graph
from ...hardware import spill_traffic
from ...instance import Instance
from ...params import BoundParams
from .bound import Bound
from .peak import first_free_bound, working_set_bound

__all__ = ["TierPeak", "tier_peaks", "tier_peak_traffic_bound"]


@dataclass(frozen=True)
class TierPeak:
    """One tier: its least logical peak over all orders, the capacity, and the traffic the
    excess forces (0 when the peak fits)."""

    tier: str
    peak: int
    capacity: int
    traffic: int


def _least_traffic_per_byte(inst: Instance, bufs: list[int]) -> float:
    sizes = inst.buf_size.tolist()
    backed = inst.buf_backed.tolist()
    return min(spill_traffic(sizes[b], backed[b]) / sizes[b] for b in bufs if sizes[b] > 0)


def tier_peaks(inst: Instance, params: BoundParams = BoundParams(), g: MpasGraph | None = None) -> list[TierPeak]:
    """Per tier whose buffers add up to more than its capacity, the least peak over all
    orders (first-free peeling on that tier alone) and the traffic its excess forces."""
    tiers = inst.buf_tier.tolist()
    sizes = inst.buf_size.tolist()
    out: list[TierPeak] = []
    for t, name in enumerate(inst.hw.tiers):
        bufs = [b for b in range(inst.num_buffers) if tiers[b] == t]
        cap = int(inst.hw.capacity[name])
        if sum(sizes[b] for b in bufs) <= cap:
            continue
        if g is None:
            g = build_mpas_graph(inst, check_l0=False)  # the bound holds without the L0 rule
        view = replace(inst, hw=replace(inst.hw, peak_tiers=(name,)))
        try:
            peak = first_free_bound(view, g, params).value
        except PeakWorkExceeded:
            peak = working_set_bound(view).value
        excess = peak - cap
        traffic = math.ceil(excess * _least_traffic_per_byte(inst, bufs) - 1e-9) if excess > 0 else 0
        out.append(TierPeak(name, int(peak), cap, int(traffic)))
    return out


def tier_peak_traffic_bound(inst: Instance, params: BoundParams = BoundParams(), g: MpasGraph | None = None) -> Bound:
    """The per-tier figures of :func:`tier_peaks` added up (module docstring), with the
    tiers that contribute, or why the bound is 0."""
    rows = tier_peaks(inst, params, g)
    total = sum(r.traffic for r in rows)
    if total > 0:
        parts = ", ".join(f"{r.tier} {r.traffic:,} (peak >= {r.peak:,} > {r.capacity:,})" for r in rows if r.traffic)
        return Bound(total, f"all orders: per tier, the least logical peak past capacity sits in open spills: {parts}")
    if not rows:
        return Bound(0, "all orders: per-tier peak 0, every tier's buffers fit its capacity together")
    worst = max(rows, key=lambda r: r.peak / r.capacity)
    return Bound(
        0,
        f"all orders: per-tier peak 0, every tier's least peak fits (fullest: {worst.tier} "
        f"{worst.peak:,} of {worst.capacity:,})",
    )
