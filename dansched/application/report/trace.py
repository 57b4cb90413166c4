"""Schedule trace of a timed plan in Chrome / Google Trace Event Format (opens in Perfetto).

The file is one JSON object whose first key is ``traceEvents`` and whose second is
``taskStatistics`` (:mod:`dansched.application.report.stats`); ``displayTimeUnit`` and
``otherData`` (instance, clock, makespan, estimated latency) follow.

Layout of ``traceEvents``:

- metadata events (``ph: "M"``) naming the processes and threads and fixing
  their order (``process_name``, ``process_sort_index``, ``thread_name``,
  ``thread_sort_index``);
- process 1, ``NPU core 0``: one thread per pipe of the hardware model (MTE1,
  MTE2, MTE3, FIXP, CUBE, VECTOR in the default model), one complete event
  (``ph: "X"``) per operation and spill node, named ``"<id> <Op>"``, with ``cat``
  its engine class (DMA, CUBE, VECTOR) and ``args`` holding ``Id``, ``Op``,
  ``Pipe``, ``Cycles``, ``Bufs`` (BufId values), ``start_cycle``, ``end_cycle``
  and ``slack_cycles`` (:func:`node_slack`). Zero-cycle operations (a backed
  SPILL_OUT, an operation with ``Cycles: 0``) are kept as zero-length events:
  they are tasks a pipe runs. ALLOC and FREE nodes get no event of their own:
  they take no pipe and no time, so on a pipe track they would be clutter; the
  moments they stand for are the ends of the buffer-lifetime events below.
- process 2, ``NPU core 0 buffers``: buffer residency. Each resident segment of
  a buffer (ALLOC to its first SPILL_OUT's end, each SPILL_IN's start to the
  next SPILL_OUT's end or the FREE) is an X event named ``buf <BufId>`` with
  ``cat`` its tier and its offset range in ``args``. Segments of one tier are
  packed greedily into lanes (threads ``UB #0``, ``UB #1``, ...), so that no
  two segments on a thread overlap in time and every viewer draws them side by
  side instead of nesting them; the number of lanes of a tier is the largest
  number of its buffers resident at once.

Time: ``ts`` and ``dur`` are microseconds at ``freq_ghz`` (default 1 GHz, where
1 cycle = 1 ns = 0.001 us); exact cycle figures stay in ``args``.

Only a plan with a layout (problems 2 and 3) has timing: a problem-1 order has
none (docs/rules.md, section 7), and :func:`build_trace` raises :class:`TraceError` for it.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...checks import FREQ_GHZ
from ...errors import TraceError
from ...instance import Instance
from ...plan import Plan, atomic_write_text
from ...simulate import AugmentedGraph, Evaluation, Timing, spill_of_node
from .stats import TaskStatistics, cycles_to_us, engine_class, estimated_latency_line, task_statistics

__all__ = [
    "TimedTask",
    "BufferSegment",
    "CORE_PID",
    "BUFFER_PID",
    "timed_tasks",
    "buffer_segments",
    "node_slack",
    "plan_statistics",
    "build_trace",
    "trace_json_text",
    "trace_text",
    "write_trace",
]

CORE_PID = 1
BUFFER_PID = 2
SPILL_OUT_OP, SPILL_IN_OP = "SPILL_OUT", "SPILL_IN"


@dataclass(frozen=True)
class TimedTask:
    """One operation or spill node as the simulator ran it (cycles)."""

    node: int
    op: str
    pipe: str
    start: int
    end: int
    bufs: tuple[int, ...]  # BufId values
    slack: int
    cls: str  # engine class (:func:`dansched.application.report.stats.engine_class`)


@dataclass(frozen=True)
class BufferSegment:
    """A residency segment (:class:`dansched.simulate.Segment`) as the trace and the
    pictures show it: the buffer's BufId resident at ``[offset, offset + size)`` of ``tier``
    (its name) from ``start`` to ``end`` (cycles)."""

    buf_id: int
    tier: str
    offset: int
    size: int
    start: int
    end: int
    segment: int  # 0 from the ALLOC, k after the k-th SPILL_IN of this buffer


def _require_timing(ev: Evaluation) -> Timing:
    timing = ev.timing
    if timing is None:
        raise TraceError(
            "a trace needs a plan with a layout (<case>_memory.txt): a problem-1 order has no timing "
            "(docs/rules.md, section 7); solve with --problem 2 or 3, or give the memory and spill files"
        )
    return timing


def _node_op(inst: Instance, v: int) -> str:
    if v < inst.n:
        return inst.op[v]
    return SPILL_OUT_OP if spill_of_node(inst.n, v)[1] else SPILL_IN_OP


def _node_bufs(inst: Instance, graph: AugmentedGraph, v: int) -> tuple[int, ...]:
    ids = inst.buf_id
    if v < inst.n:
        return tuple(int(ids[b]) for b in inst.bufs(v))
    return (int(ids[graph.spill_buf[spill_of_node(inst.n, v)[0]]]),)


def node_slack(
    order: Sequence[int],
    preds: Sequence[Sequence[int]],
    pipe: Sequence[int],
    cycles: Sequence[int],
    start: Sequence[int],
    makespan: int,
) -> list[int]:
    """Slack (total float) of every node, in cycles: its latest start that does not
    delay the makespan minus its simulated start.

    The latest starts are taken on the *timing graph*: the augmented DAG (original,
    spill and address-reuse edges) plus an edge between consecutive nodes of each
    pipe in schedule order, i.e. with the pipe order fixed as the simulator runs it.
    ``LS(v) = min(makespan, LS(s) for every successor s) - cycles(v)``, walked in
    reverse schedule order. Delaying one node by up to its slack, all else fixed,
    leaves the makespan unchanged; nodes on a critical path have slack 0."""
    n = len(pipe)
    succs: list[list[int]] = [[] for _ in range(n)]
    for v, ps in enumerate(preds):
        for u in ps:
            succs[u].append(v)
    latest = [makespan] * n
    next_on_pipe: dict[int, int] = {}
    for v in reversed(order):
        lf = makespan
        for s in succs[v]:
            if latest[s] < lf:
                lf = latest[s]
        p = pipe[v]
        if p >= 0:
            nxt = next_on_pipe.get(p)
            if nxt is not None and latest[nxt] < lf:
                lf = latest[nxt]
            next_on_pipe[p] = v
        latest[v] = lf - cycles[v]
    return [latest[v] - start[v] for v in range(n)]


def timed_tasks(inst: Instance, plan: Plan, ev: Evaluation) -> list[TimedTask]:
    """Operation and spill nodes with their simulated start/end and slack, by (start, id)."""
    timing = _require_timing(ev)
    g = timing.graph
    slack = node_slack(plan.order, g.preds, g.pipe, g.cycles, timing.start, timing.makespan)
    pipes = inst.hw.pipes
    tasks = [
        TimedTask(
            v,
            _node_op(inst, v),
            pipes[g.pipe[v]],
            timing.start[v],
            timing.end[v],
            _node_bufs(inst, g, v),
            slack[v],
            engine_class(pipes[g.pipe[v]], inst.hw.dma_pipes),
        )
        for v in plan.order
        if g.pipe[v] >= 0
    ]
    tasks.sort(key=lambda t: (t.start, t.node))
    return tasks


def buffer_segments(inst: Instance, plan: Plan, ev: Evaluation) -> list[BufferSegment]:
    """Resident segments of every buffer (see the module docstring), by (tier, start, BufId):
    the evaluator's residency segments (:meth:`~dansched.simulate.Evaluation.segments`)
    placed in time.

    A segment starts at the ALLOC's (or SPILL_IN's) start and ends at the FREE's
    start or the SPILL_OUT's end: the space stays taken while the data is copied out
    (a FREE takes no time, so both are the end of the event that ends the segment)."""
    timing = _require_timing(ev)
    start, end = timing.start, timing.end
    count = [0] * inst.num_buffers
    out: list[BufferSegment] = []
    for seg in ev.segments():
        b = seg.buf
        out.append(
            BufferSegment(
                int(inst.buf_id[b]),
                inst.hw.tiers[seg.tier],
                seg.offset,
                seg.size,
                start[seg.start_node],
                end[seg.end_node],
                count[b],
            )
        )
        count[b] += 1
    tier_rank = {t: i for i, t in enumerate(inst.hw.tiers)}
    out.sort(key=lambda s: (tier_rank[s.tier], s.start, s.end, s.buf_id, s.segment))
    return out


def _assign_lanes(segments: Sequence[BufferSegment]) -> list[int]:
    """Lane of each segment of one tier (segments sorted by start): the lowest-numbered
    lane free at its start, so no lane holds two segments that overlap in time. A lane
    whose last segment is zero-length stays taken at that instant, so that a viewer
    never nests the next segment under it."""
    busy: list[tuple[int, int, int]] = []  # (end, 1 if zero-length else 0, lane)
    free: list[int] = []
    lanes: list[int] = []
    count = 0
    for s in segments:
        while busy and (busy[0][0] < s.start or (busy[0][0] == s.start and not busy[0][1])):
            heapq.heappush(free, heapq.heappop(busy)[2])
        if free:
            lane = heapq.heappop(free)
        else:
            lane, count = count, count + 1
        heapq.heappush(busy, (s.end, int(s.end <= s.start), lane))
        lanes.append(lane)
    return lanes


def plan_statistics(tasks: Sequence[TimedTask], makespan: int) -> TaskStatistics:
    """:func:`~dansched.application.report.stats.task_statistics` of the timed tasks of a plan."""
    groups: dict[str, list[tuple[int, int]]] = {}
    for t in tasks:
        groups.setdefault(t.cls, []).append((t.start, t.end))
    return task_statistics(groups, makespan)


def _meta(name: str, pid: int, tid: int | None, value: Any) -> dict[str, Any]:
    e: dict[str, Any] = {"name": name, "ph": "M", "pid": pid}
    if tid is not None:
        e["tid"] = tid
    key = "sort_index" if name.endswith("sort_index") else "name"
    e["args"] = {key: value}
    return e


def _task_events(inst: Instance, tasks: Sequence[TimedTask], freq_ghz: float) -> list[dict[str, Any]]:
    tid = {p: i + 1 for i, p in enumerate(inst.hw.pipes)}
    events = []
    for t in tasks:
        events.append(
            {
                "name": f"{t.node} {t.op}",
                "cat": t.cls,
                "ph": "X",
                "ts": cycles_to_us(t.start, freq_ghz),
                "dur": cycles_to_us(t.end - t.start, freq_ghz),
                "pid": CORE_PID,
                "tid": tid[t.pipe],
                "args": {
                    "Id": t.node,
                    "Op": t.op,
                    "Pipe": t.pipe,
                    "Cycles": t.end - t.start,
                    "Bufs": list(t.bufs),
                    "start_cycle": t.start,
                    "end_cycle": t.end,
                    "slack_cycles": t.slack,
                },
            }
        )
    return events


def _buffer_events(inst: Instance, segments: Sequence[BufferSegment], freq_ghz: float) -> tuple[list, list]:
    """(metadata, X events) of the buffer process: one lane thread per concurrent segment of a tier."""
    meta: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    for ti, tier in enumerate(inst.hw.tiers):
        segs = [s for s in segments if s.tier == tier]
        if not segs:
            continue
        lanes = _assign_lanes(segs)
        for lane in range(max(lanes) + 1):
            tid = 1000 * (ti + 1) + lane
            meta.append(_meta("thread_name", BUFFER_PID, tid, f"{tier} #{lane}"))
            meta.append(_meta("thread_sort_index", BUFFER_PID, tid, tid))
        for s, lane in zip(segs, lanes):
            events.append(
                {
                    "name": f"buf {s.buf_id}",
                    "cat": tier,
                    "ph": "X",
                    "ts": cycles_to_us(s.start, freq_ghz),
                    "dur": cycles_to_us(s.end - s.start, freq_ghz),
                    "pid": BUFFER_PID,
                    "tid": 1000 * (ti + 1) + lane,
                    "args": {
                        "BufId": s.buf_id,
                        "Type": tier,
                        "Size": s.size,
                        "offset": s.offset,
                        "range": f"[{s.offset}, {s.offset + s.size})",
                        "segment": s.segment,
                        "start_cycle": s.start,
                        "end_cycle": s.end,
                    },
                }
            )
    return meta, events


def _build(inst: Instance, plan: Plan, ev: Evaluation, freq_ghz: float) -> tuple[dict[str, Any], TaskStatistics]:
    freq_ghz = FREQ_GHZ.check(freq_ghz, "--freq-ghz")
    makespan = _require_timing(ev).makespan
    tasks = timed_tasks(inst, plan, ev)
    segments = buffer_segments(inst, plan, ev)
    meta = [
        _meta("process_name", CORE_PID, None, "NPU core 0"),
        _meta("process_sort_index", CORE_PID, None, CORE_PID),
        _meta("process_name", BUFFER_PID, None, "NPU core 0 buffers"),
        _meta("process_sort_index", BUFFER_PID, None, BUFFER_PID),
    ]
    for i, p in enumerate(inst.hw.pipes):
        meta.append(_meta("thread_name", CORE_PID, i + 1, p))
        meta.append(_meta("thread_sort_index", CORE_PID, i + 1, i + 1))
    buf_meta, buf_events = _buffer_events(inst, segments, freq_ghz)
    stats = plan_statistics(tasks, makespan)
    trace = {
        "traceEvents": meta + buf_meta + _task_events(inst, tasks, freq_ghz) + buf_events,
        "taskStatistics": stats.to_dict(freq_ghz),
        "displayTimeUnit": "ns",
        "otherData": {
            "instance": inst.name,
            "freq_ghz": freq_ghz,
            "makespan_cycles": makespan,
            "estimated_latency": estimated_latency_line(makespan, freq_ghz),
            "slack": "args.slack_cycles: latest start without delaying the makespan "
            "(augmented DAG, pipe order fixed) minus start, in cycles",
        },
    }
    return trace, stats


def build_trace(inst: Instance, plan: Plan, ev: Evaluation, freq_ghz: float = 1.0) -> dict[str, Any]:
    """The trace object (see the module docstring). Raises :class:`TraceError` for a
    plan without timing, :class:`~dansched.errors.ArgumentError` for a clock out of range
    (:data:`dansched.checks.FREQ_GHZ`)."""
    return _build(inst, plan, ev, freq_ghz)[0]


def trace_json_text(trace: dict[str, Any]) -> str:
    """JSON text of a trace: one event per line (diffable, compact), keys in insertion order."""
    events = ",\n".join(json.dumps(e, separators=(",", ":")) for e in trace["traceEvents"])
    rest = "".join(f",\n{json.dumps(k)}: {json.dumps(v, indent=1)}" for k, v in trace.items() if k != "traceEvents")
    return '{"traceEvents": [\n' + events + "\n]" + rest + "\n}\n"


def trace_text(inst: Instance, plan: Plan, ev: Evaluation, fingerprint: str, freq_ghz: float = 1.0) -> str:
    """The text of a plan folder's ``<case>_trace.json``: the trace (:func:`build_trace`)
    carrying the plan's ``fingerprint`` (its sha256, :mod:`dansched.plan_folder`) in
    ``otherData.plan_fingerprint``."""
    trace = build_trace(inst, plan, ev, freq_ghz)
    trace.setdefault("otherData", {})["plan_fingerprint"] = fingerprint
    return trace_json_text(trace)


def write_trace(
    inst: Instance, plan: Plan, evaluation: Evaluation, path: str | Path, freq_ghz: float = 1.0
) -> TaskStatistics:
    """Build the trace of ``plan`` and write it atomically to ``path``; returns its statistics.

    ``evaluation`` is ``dansched.simulate.evaluate(inst, plan)`` for a plan with a layout
    (problems 2 and 3); raises :class:`TraceError` for a problem-1 order or a bad clock."""
    trace, stats = _build(inst, plan, evaluation, freq_ghz)
    atomic_write_text(path, trace_json_text(trace))
    return stats
