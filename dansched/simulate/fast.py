"""The evaluator's fast path on a full plan (:mod:`dansched.kernels.evaluate`, compiled): every
check on flat arrays, stopping at the first broken rule; a plan it accepts gets its
:class:`~dansched.simulate.types.Evaluation` from its arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..instance import Instance
from ..kernels import evaluate as kernel
from ..kernels.csr import int64_array
from ..plan import Plan
from .cycles import INT64_ROOM, simulate_timing_arrays
from .reference import max_v_stay
from .types import AugmentedGraph, Evaluation, Residency, memory_event_ids

__all__ = ["fast_evaluation"]


def _int_rows(values: Sequence[Any], width: int) -> np.ndarray | None:
    """``values`` (ints, or ``width``-tuples of ints) as an int64 array; None when one is not
    an integer of 64 bits or a row has another width (the reference then says what is wrong)."""
    if not len(values):
        return np.zeros((0, width) if width > 1 else 0, dtype=np.int64)
    try:
        a = np.array(values)
    except (ValueError, OverflowError):
        return None
    if a.dtype.kind != "i" or a.shape[1:] != ((width,) if width > 1 else ()):
        return None
    return np.ascontiguousarray(a, dtype=np.int64)


def _buffer_indices(inst: Instance, bids: np.ndarray) -> np.ndarray | None:
    """The buffer index of each ``BufId`` value; None when one names no buffer."""
    ids = inst.buf_id
    if not len(ids):
        return None if len(bids) else np.zeros(0, dtype=np.int64)
    at = np.searchsorted(ids, bids)
    found = (at < len(ids)) & (ids[np.minimum(at, len(ids) - 1)] == bids)
    return at.astype(np.int64) if bool(found.all()) else None


def _plan_arrays(inst: Instance, plan: Plan) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The plan as the fast path reads it: the order, every buffer's offset (by buffer index),
    each spill's buffer index and new offset. None when the files are not well formed (an
    entry that is not an integer, an unknown buffer, a buffer with no or two offsets)."""
    order = _int_rows(plan.order, 1)
    offsets = _int_rows(plan.offsets or (), 2)
    spills = _int_rows(plan.spills, 2)
    if order is None or offsets is None or spills is None:
        return None
    given = _buffer_indices(inst, offsets[:, 0])
    spill_buf = _buffer_indices(inst, spills[:, 0])
    if given is None or spill_buf is None or len(given) != inst.num_buffers:
        return None
    if not bool((np.bincount(given, minlength=inst.num_buffers) == 1).all()):
        return None
    offset = np.zeros(inst.num_buffers, dtype=np.int64)
    offset[given] = offsets[:, 1]
    return order, offset, spill_buf, np.ascontiguousarray(spills[:, 1])


def _fits_int64(inst: Instance, spill_buf: np.ndarray) -> bool:
    """The plan's time and traffic stay below 2**63, so int64 holds every figure: a bound with
    every spill costed at the largest spilled buffer (exact Python integers)."""
    if not len(spill_buf):
        return True
    hw, size = inst.hw, int(inst.buf_size[spill_buf].max())
    time_bound = int(inst.cycles.sum()) + len(spill_buf) * 2 * hw.spill_cycles(size)
    return max(time_bound, len(spill_buf) * 2 * size) < INT64_ROOM


def fast_evaluation(inst: Instance, plan: Plan) -> Evaluation | None:
    """The fast path on a full plan (``plan.offsets`` given; the arguments checked by the
    caller, :func:`dansched.simulate.evaluate_fast`)."""
    arrays = _plan_arrays(inst, plan)
    if arrays is None or not _fits_int64(inst, arrays[2]):
        return None
    order, offset, spill_buf, spill_off = arrays
    hw = inst.hw
    i64 = np.int64
    status, pipe, cycles, traffic, spill_edges, reuse_edges, segments, ptr, idx, peak = kernel.judge_layout(
        order,
        inst.kind.astype(i64),
        inst.pipe.astype(i64),
        int64_array(inst.cycles),
        int64_array(inst.node_buf),
        int64_array(inst.bufs_ptr),
        int64_array(inst.bufs_idx),
        int64_array(inst.pred_ptr),
        int64_array(inst.pred_idx),
        int64_array(inst.users_ptr),
        int64_array(inst.users_idx),
        int64_array(inst.buf_size),
        int64_array(inst.buf_tier),
        int64_array(inst.buf_alloc),
        int64_array(inst.buf_free),
        inst.buf_backed.astype(i64),
        np.array([hw.capacity[t] for t in hw.tiers], dtype=i64),
        np.array([t in hw.peak_tiers for t in hw.tiers], dtype=i64),
        np.array([hw.pipe_index(hw.spill_out_pipe), hw.pipe_index(hw.spill_in_pipe)], dtype=i64),
        np.array([hw.spill_fixed_cycles, hw.spill_cycles_per_unit], dtype=i64),
        offset,
        spill_buf,
        spill_off,
    )
    if status != kernel.VALID:
        return Evaluation(2, False, [], {kernel.STATUS_KIND[status]: 1}, None)
    start, end, makespan = simulate_timing_arrays(order, ptr, idx, pipe, cycles)
    k = len(spill_buf)
    spills = spill_buf.tolist()
    graph = AugmentedGraph(inst.n, pipe, cycles, ptr, idx, spill_edges, reuse_edges, memory_event_ids(inst, k), spills)
    residency = Residency(
        list(plan.order),
        segments[:, 0].tolist(),
        segments[:, 1].tolist(),
        offset.tolist(),
        spills,
        spill_off.tolist(),
        inst.buf_tier.tolist(),
        inst.buf_size.tolist(),
        inst.n,
        inst.lists().node_buf,
    )
    return Evaluation(
        problem=2,
        valid=True,
        errors=[],
        error_counts={},
        max_v_stay=max_v_stay(inst, order),
        physical_peak=int(peak),
        extra_traffic=int(traffic),
        spill_count=k,
        makespan=makespan,
        start=start.tolist(),
        end=end.tolist(),
        graph=graph,
        residency=residency,
    )
