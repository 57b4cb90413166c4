"""The plan as it is emitted: ALLOC, SPILL_OUT, SPILL_IN, FREE and operation nodes
appended to the order, each timed by the engine clock (paper Eqs. 9-10), with the
offsets, the spill list and the extra traffic they imply.

Spill ``k`` (0-based here) of a buffer is the node pair ``SPILL_OUT = n + 2k`` (spill-out
pipe) and ``SPILL_IN = n + 2k + 1`` (spill-in pipe), with the transfer latency of Eq. 8
(a SPILL_OUT of a backed buffer, one some COPY_IN uses, writes nothing and takes no
time) and the extra traffic of Eq. 28 (:func:`dansched.hardware.spill_traffic`). The
edges the plan adds reach the clock as ``after``: a segment's start waits for the event
that freed its addresses (address reuse), a SPILL_OUT for the buffer's uses so far, a
SPILL_IN for its SPILL_OUT, an operation and a FREE for the SPILL_INs of their buffers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .....errors import TimedFailed
from .....hardware import spill_traffic
from .....instance import Instance
from .....plan import Plan, plan_from_indices
from .....simulate import spill_node_ids
from .....stages.dlr.victim import round_trip_cycles
from .engines import NO_PIPE, Engines
from .placement import Tier

__all__ = ["Buffers", "ResidentState", "Emission"]


@dataclass(frozen=True)
class Buffers:
    """Facts per buffer index: size, tier index, backed (a COPY_IN uses it), ALLOC node,
    the latency of one transfer (Eq. 8), the extra traffic of one spill (Eq. 28) and its
    cycles out and in (Eq. 29)."""

    size: list[int]
    tier: list[int]
    backed: list[bool]
    alloc_node: list[int]
    transfer_cycles: list[int]
    traffic: list[int]
    round_trip_cycles: list[int]

    @classmethod
    def of(cls, inst: Instance) -> Buffers:
        size = inst.buf_size.tolist()
        backed = inst.buf_backed.tolist()
        return cls(
            size=size,
            tier=inst.buf_tier.tolist(),
            backed=backed,
            alloc_node=inst.buf_alloc.tolist(),
            transfer_cycles=[inst.hw.spill_cycles(s) for s in size],
            traffic=[spill_traffic(s, k) for s, k in zip(size, backed)],
            round_trip_cycles=[
                round_trip_cycles(s, k, inst.hw.spill_fixed_cycles, inst.hw.spill_cycles_per_unit)
                for s, k in zip(size, backed)
            ],
        )


@dataclass
class ResidentState:
    """Per buffer: its offset while resident (``None`` otherwise), whether it was
    allocated, the latest end of its ALLOC, uses and spill nodes so far (``use_end``),
    of its SPILL_INs (``in_end``); and the spill index of each buffer spilled out and
    not yet back (``pending_in``)."""

    where: list[int | None]
    allocated: list[bool]
    use_end: list[int]
    in_end: list[int]
    pending_in: dict[int, int] = field(default_factory=dict)

    @classmethod
    def empty(cls, nb: int) -> ResidentState:
        return cls(where=[None] * nb, allocated=[False] * nb, use_end=[0] * nb, in_end=[0] * nb)


class Emission:
    """Appends timed nodes to the order and keeps residency, offsets and spills in step.
    ``limit``: the extra traffic past which a SPILL_OUT raises :class:`TimedFailed`."""

    def __init__(
        self,
        engines: Engines,
        tiers: Sequence[Tier],
        buffers: Buffers,
        spill_pipes: tuple[int, int],
        limit: int | None,
    ) -> None:
        self.engines = engines
        self.tiers = tiers
        self.buffers = buffers
        self.out_pipe, self.in_pipe = spill_pipes
        self.limit = limit
        self.res = ResidentState.empty(len(buffers.size))
        self.order: list[int] = []
        self.emitted = [False] * engines.n  # per instance node
        self.offset = [-1] * len(buffers.size)  # first offset of each buffer
        self.spills: list[list[int]] = []  # [buffer, NewOffset] in spill order
        self.traffic = 0

    def _append(self, v: int, after: int, pipe: int, cycles: int) -> int:
        e = self.engines.run(v, after, pipe, cycles)
        self.order.append(v)
        return e

    def alloc(self, b: int, off: int) -> None:
        """ALLOC of ``b`` at ``off``, after the event that freed those addresses."""
        tier, size = self.tiers[self.buffers.tier[b]], self.buffers.size[b]
        a = self.buffers.alloc_node[b]
        e = self._append(a, tier.wait(off, size), NO_PIPE, 0)
        self.emitted[a] = True
        tier.add(off, size, b)
        self.offset[b] = off
        res = self.res
        res.where[b] = off
        res.allocated[b] = True
        res.use_end[b] = max(res.use_end[b], e)

    def spill_out(self, b: int) -> None:
        """SPILL_OUT of resident ``b``, after its uses so far; its addresses are free from
        its end. Raises :class:`TimedFailed` past the traffic limit."""
        bufs, res = self.buffers, self.res
        k = len(self.spills)
        self.spills.append([b, -1])
        self.traffic += bufs.traffic[b]
        if self.limit is not None and self.traffic > self.limit:
            raise TimedFailed(f"traffic {self.traffic} over the allowance {self.limit}")
        cycles = 0 if bufs.backed[b] else bufs.transfer_cycles[b]
        e = self._append(spill_node_ids(self.engines.n, k)[0], res.use_end[b], self.out_pipe, cycles)
        res.use_end[b] = max(res.use_end[b], e)
        at = res.where[b]
        assert at is not None, "a spilled buffer is resident"
        self.tiers[bufs.tier[b]].remove(at, e)
        res.where[b] = None
        res.pending_in[b] = k

    def spill_out_end(self, b: int) -> int:
        """End of the SPILL_OUT that ``b``, spilled and not back, waits to reload after."""
        return self.engines.end[spill_node_ids(self.engines.n, self.res.pending_in[b])[0]]

    def spill_in(self, b: int, off: int) -> None:
        """SPILL_IN of spilled ``b`` at ``off``, after its SPILL_OUT and the event that
        freed those addresses."""
        bufs, res = self.buffers, self.res
        tier = self.tiers[bufs.tier[b]]
        wait = tier.wait(off, bufs.size[b])
        out_end = self.spill_out_end(b)
        k = res.pending_in.pop(b)
        e = self._append(
            spill_node_ids(self.engines.n, k)[1], max(wait, out_end), self.in_pipe, bufs.transfer_cycles[b]
        )
        self.spills[k][1] = off
        tier.add(off, bufs.size[b], b)
        res.where[b] = off
        res.in_end[b] = max(res.in_end[b], e)
        res.use_end[b] = max(res.use_end[b], e)

    def free(self, f: int, b: int) -> None:
        """FREE node ``f`` of resident ``b``, after its SPILL_INs; its addresses are free from its end."""
        res = self.res
        e = self._append(f, res.in_end[b], NO_PIPE, 0)
        self.emitted[f] = True
        at = res.where[b]
        assert at is not None, "a freed buffer is resident"
        self.tiers[self.buffers.tier[b]].remove(at, e)
        res.where[b] = None

    def operation(self, v: int, pipe: int, cycles: int, bufs: Sequence[int]) -> None:
        """Operation ``v`` on ``pipe``, its buffers resident, after their SPILL_INs."""
        res = self.res
        after = 0
        for b in bufs:
            if res.in_end[b] > after:
                after = res.in_end[b]
        e = self._append(v, after, pipe, cycles)
        self.emitted[v] = True
        for b in bufs:
            if e > res.use_end[b]:
                res.use_end[b] = e

    def plan(self, inst: Instance) -> Plan:
        """The finished plan; :class:`TimedFailed` if some node was never emitted."""
        if len(self.order) != inst.n + 2 * len(self.spills):
            raise TimedFailed("not every node was emitted")
        return plan_from_indices(inst, self.order, self.offset, [(b, o) for b, o in self.spills])
