"""One self-contained HTML page to explore a timed plan (``dansched view``, ``solve --html``).

The page holds every script, style and datum inline (it opens from ``file://``
with no network) and shows:

- the engines' timeline, one lane per pipe of the hardware model; wheel zooms,
  drag pans, and where many tasks fall in one pixel column a merged bar is drawn
  (its opacity is the column's busy share); a zero-cycle task (the SPILL_OUT of a
  buffer DDR already holds) fills no part of its lane at any zoom, it is a short
  tick at the lane's foot (as in the ``trace --png`` Gantt chart); the time axis
  labels every tick with as many digits as its step needs, so no two ticks share a
  label at any zoom; hovering a task shows its node id, Op, cycles, start, end,
  buffers (with the residency segment each one is in) and the edge it waited on
  (:func:`binding_predecessors`); spill tasks have their own colours;
- a memory map per tier: every residency segment a rectangle of offset x time,
  at least 3 pixels tall and 2 wide (a buffer far smaller than a pixel is still a
  patch of its light colour; only boxes that are not grown get an outline, so tiny
  buffers never pile up into dark hairlines); SPILL_IN segments coloured apart, a
  SPILL_OUT end marked by a red edge and the spilled-out gap (the buffer in DDR) by
  a dashed line to where it comes back (drawn when at most 300 gaps are in view, so
  that they never hide the map);
- clicking a task highlights every segment of its buffers, clicking a segment the
  tasks that use that segment;
- a summary: the evaluator's metrics, the report's traffic-makespan frontier (a table and
  a plot of makespan against traffic, the floor for each point's traffic dashed under it,
  the knee filled, this plan ringed), stages, bounds and gaps (``<case>_report.json`` when
  present; one row per makespan floor), and ``taskStatistics``;
- a find box (node id) whose answer, found or not, shows beside it in the header,
  which stays on screen while the page scrolls.

Renderer: a small hand-written 2-D canvas renderer rather than a plotting library.
The page must stay small and work offline, and a library bundle (plotly's offline
bundle alone is about 3.5 MB) would weigh more than Matmul_Case1's data itself;
general-purpose charts also keep one object per drawn shape, which does not scale
to 300k tasks, whereas the timeline here only ever draws about one rectangle per
pixel column per lane (binary search on the lane's sorted starts and ends plus
prefix sums give each column's busy share and spill count in O(log n)).

Data: one JSON object in a ``<script type="application/json">`` element, in
columnar integer arrays (tasks sorted by pipe, then start and end; starts delta-coded
per pipe).

Figures past 2**53: refused, not encoded. The page's numbers are JavaScript doubles,
which hold every integer up to 2**53 - 1 exactly and no longer all of them beyond.
Rather than carry large figures as strings or BigInt (which would need every drawing,
hit test, prefix sum and tooltip of the page redone in scaled or big arithmetic, for
plans of more than 104 days at 1 GHz), :func:`check_view_range` refuses such a plan
with one line naming the figure (:class:`~dansched.errors.InputError`: exit status 2)
before anything is written; the plan files, ``dansched evaluate`` and ``dansched
trace`` still show it. It checks the instance alone (capacities, BufIds, the busiest
pipe's load, below which no makespan can be) before a solve, and every figure of the
evaluation and the report before the page is built (:func:`build_view_data`).

For tests the page exposes ``window.dansched`` (``frontier()``: the plot's dots, ``taskAt(x, y)``,
``segmentAt(x, y)``, ``hover(x, y)``, ``hoverInfo()``, ``click(x, y)``,
``highlighted()``, ``find(id)``, ``drawTimes()``, ``taskCenter(id)``, ``segmentCenter(buf, seg)``,
``setView(t0, t1)``, ``axisTicks()``, ``lane(pipe)``, ``segmentBox(buf, seg)``; coordinates
are client pixels, except ``lane`` and ``segmentBox``: canvas pixels) and sets ``data-ready`` on
``<body>`` (milliseconds since navigation start) once the first draw has finished.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ...checks import FREQ_GHZ
from ...errors import InputError, ViewError
from ...instance import Instance
from ...models.bounds.floors import busiest_pipe
from ...plan import Plan, atomic_write_text
from ...simulate import Evaluation
from .trace import BufferSegment, TimedTask, buffer_segments, plan_statistics, timed_tasks

__all__ = [
    "WAIT_KINDS",
    "ViewError",
    "Waits",
    "binding_predecessors",
    "segment_of_use",
    "task_columns",
    "segment_columns",
    "build_view_data",
    "check_view_range",
    "view_html",
    "page_text",
    "write_view",
]

#: What set a node's start: nothing (it starts at 0), an edge of the augmented DAG
#: (an original ``data`` edge, a ``spill`` edge, an address-``reuse`` edge), or the
#: previous task on its ``pipe``.
WAIT_KINDS = ("", "data", "spill", "reuse", "pipe")
TEMPLATE = "view_template.html"
JS_SAFE_INTEGER = 2**53 - 1  # JavaScript numbers hold integers exactly up to here
DATA_TOKEN = "__DANSCHED_VIEW_DATA__"


@dataclass(frozen=True)
class Waits:
    """Per node id: the node that set its start (``node``, -1 if none), the kind of that
    dependency (an index into :data:`WAIT_KINDS`), and the first pipe task reached by
    following binding predecessors through cache nodes (``task``, -1 if none)."""

    node: list[int]
    kind: list[int]
    task: list[int]


def binding_predecessors(
    order: Sequence[int],
    preds: Sequence[Sequence[int]],
    pipe: Sequence[int],
    start: Sequence[int],
    end: Sequence[int],
    spill_edges: Sequence[tuple[int, int]] = (),
    reuse_edges: Sequence[tuple[int, int]] = (),
) -> Waits:
    """The edge each node waited on under the simulator (docs/rules.md, section 7; paper Eqs. 9-10:
    ``start(v) = max(end of v's predecessors, end of the previous node on v's pipe)``).

    A node starting at 0 waited on nothing. Otherwise the binding predecessor is the
    predecessor whose end equals the start (several: the one latest in the schedule),
    else the previous task on the pipe (whose end then equals the start). Cache nodes
    (ALLOC, FREE) take no time, so ``task`` follows the binding chain through them to
    the pipe task that really held the node back."""
    n = len(pipe)
    pos = [0] * n
    for i, v in enumerate(order):
        pos[v] = i
    spill, reuse = set(spill_edges), set(reuse_edges)
    node, kind, task = [-1] * n, [0] * n, [-1] * n
    prev_on_pipe: dict[int, int] = {}
    for v in order:
        s, p = start[v], pipe[v]
        if s > 0:
            best = -1
            for u in preds[v]:
                if end[u] == s and (best < 0 or pos[u] > pos[best]):
                    best = u
            if best >= 0:
                node[v] = best
                kind[v] = 2 if (best, v) in spill else 3 if (best, v) in reuse else 1
            elif p >= 0 and p in prev_on_pipe:
                node[v], kind[v] = prev_on_pipe[p], 4
            w = node[v]
            task[v] = w if w < 0 or pipe[w] >= 0 else task[w]
        if p >= 0:
            prev_on_pipe[p] = v
    return Waits(node, kind, task)


def segment_of_use(
    inst: Instance,
    plan: Plan,
    ev: Evaluation,
    tasks: Sequence[TimedTask] | None = None,
) -> dict[tuple[int, int], int]:
    """For every (node id, BufId) of a pipe task, the index (0 from the ALLOC, k after the
    k-th SPILL_IN) of the residency segment of that buffer the task runs in: the last
    segment that begins (ALLOC or SPILL_IN) at or before the task in the schedule.
    ``tasks`` is :func:`~dansched.application.report.trace.timed_tasks` when the caller has it."""
    pos = {v: i for i, v in enumerate(plan.order)}
    begins: dict[int, list[int]] = {int(bid): [] for bid in inst.buf_id.tolist()}
    for seg in ev.segments():  # in the order they start
        begins[int(inst.buf_id[seg.buf])].append(seg.start)
    out: dict[tuple[int, int], int] = {}
    for t in tasks if tasks is not None else timed_tasks(inst, plan, ev):
        for bid in t.bufs:
            out[(t.node, bid)] = max(0, bisect_right(begins[bid], pos[t.node]) - 1)
    return out


def _metrics(ev: Evaluation) -> dict[str, Any]:
    keys = ("max_v_stay", "physical_peak", "extra_traffic", "spill_count", "makespan")
    return {k: getattr(ev, k) for k in keys}


TASK_COLUMNS = (
    "id",
    "op",
    "pipe",
    "startDelta",
    "dur",
    "slack",
    "wait",
    "waitOp",
    "waitKind",
    "waitTask",
    "bufPtr",
    "bufs",
    "segs",
)


def task_columns(
    inst: Instance,
    tasks: Sequence[TimedTask],
    waits: Waits,
    segment_index: Callable[[int, int], int],
    ops: dict[str, int],
) -> dict[str, list[int]]:
    """Columns of the timeline, one entry per task, sorted by (pipe, start, end, id), so that
    ends too never decrease along a pipe (a zero-cycle task before a task starting with it): node id,
    Op (index into ``ops``, which grows), pipe index, start minus the previous start on
    the same pipe (the first: its start), cycles, slack, the wait (:class:`Waits`, its
    Op and kind), and the task's buffers in CSR form (``bufPtr``; ``bufs`` BufIds,
    ``segs`` the index of the segment each is used in, from ``segment_index(node, BufId)``)."""
    pipe_rank = {p: i for i, p in enumerate(inst.hw.pipes)}
    cols: dict[str, list[int]] = {k: [] for k in TASK_COLUMNS}
    cols["bufPtr"].append(0)
    appenders = [cols[k].append for k in TASK_COLUMNS[:10]]
    bufs, segs, ptr = cols["bufs"], cols["segs"], cols["bufPtr"]
    last_pipe, last_start = -1, 0
    for t in sorted(tasks, key=lambda t: (pipe_rank[t.pipe], t.start, t.end, t.node)):
        p, v = pipe_rank[t.pipe], t.node
        if p != last_pipe:
            last_pipe, last_start = p, 0
        w = waits.node[v]
        w_op = ops.setdefault(_op_name(inst, w), len(ops)) if w >= 0 else -1
        values = (
            v,
            ops.setdefault(t.op, len(ops)),
            p,
            t.start - last_start,
            t.end - t.start,
            t.slack,
            w,
            w_op,
            waits.kind[v],
            waits.task[v],
        )
        for append, value in zip(appenders, values):
            append(value)
        last_start = t.start
        for bid in t.bufs:
            bufs.append(bid)
            segs.append(segment_index(v, bid))
        ptr.append(len(bufs))
    return cols


def segment_columns(inst: Instance, segments: Sequence[BufferSegment]) -> dict[str, list[int]]:
    """Columns of the memory maps, one entry per residency segment (in the order of
    :func:`~dansched.application.report.trace.buffer_segments`): tier index, BufId, size, offset,
    start, end, segment number, and ``last`` (1 when a FREE ends it, 0 a SPILL_OUT)."""
    tier_rank = {t: i for i, t in enumerate(inst.hw.tiers)}
    last = {s.buf_id: i for i, s in enumerate(segments)}
    return {
        "tier": [tier_rank[s.tier] for s in segments],
        "buf": [s.buf_id for s in segments],
        "size": [s.size for s in segments],
        "off": [s.offset for s in segments],
        "start": [s.start for s in segments],
        "end": [s.end for s in segments],
        "seg": [s.segment for s in segments],
        "last": [int(last[s.buf_id] == i) for i, s in enumerate(segments)],
    }


def _too_large(inst: Instance, what: str, value: int) -> InputError:
    return InputError(
        f"{inst.name}: {what} is {value:,}, past 2**53 - 1 = {JS_SAFE_INTEGER:,}, the largest integer "
        "the page's JavaScript numbers hold exactly: nothing written (solve such plans without --html; "
        "evaluate and trace show them)"
    )


def _large_in_report(value: Any, path: str) -> tuple[str, int] | None:
    """The first integer of ``value`` (nested dicts and lists, depth first) beyond
    :data:`JS_SAFE_INTEGER` in magnitude, with its dotted path; None when there is none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return (path, value) if abs(value) > JS_SAFE_INTEGER else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _large_in_report(item, f"{path}.{key}")
        if found is not None:
            return found
    return None


def check_view_range(inst: Instance, ev: Evaluation | None = None, report: dict[str, Any] | None = None) -> None:
    """Refuse a page whose figures JavaScript could not hold exactly (the module docstring
    says why refusing, not encoding): raises :class:`~dansched.errors.InputError` naming the
    first figure past 2**53 - 1.

    With the instance alone (before a solve): every tier capacity, every BufId (the page
    keys buffers by BufId), and the busiest pipe's load (its Cycles added up), a floor on
    any plan's makespan (a pipe runs one task at a time, paper Eqs. 9-10). With an
    evaluation: also its makespan and metrics; with a report: every integer in it. Node
    ids stay below the node count; offsets, sizes, starts, ends and slacks below a
    capacity or the makespan, so they need no check of their own."""
    for tier in inst.hw.tiers:
        if int(inst.hw.capacity[tier]) > JS_SAFE_INTEGER:
            raise _too_large(inst, f"the capacity of {tier}", int(inst.hw.capacity[tier]))
    for bid in (int(inst.buf_id.min()), int(inst.buf_id.max())) if inst.num_buffers else ():
        if abs(bid) > JS_SAFE_INTEGER:
            raise _too_large(inst, "a BufId", bid)
    L = inst.lists()
    pipe, load = busiest_pipe(L.pipe, L.cycles)
    if load > JS_SAFE_INTEGER:
        raise _too_large(inst, f"the load of pipe {inst.hw.pipes[pipe]} (its Cycles added up, a makespan floor)", load)
    if ev is not None:
        for key, value in _metrics(ev).items():
            if value is not None and abs(int(value)) > JS_SAFE_INTEGER:
                raise _too_large(inst, f"the plan's {key}", int(value))
    if report is not None:
        found = _large_in_report(report, "report")
        if found is not None:
            raise _too_large(inst, found[0], found[1])


def build_view_data(
    inst: Instance,
    plan: Plan,
    ev: Evaluation,
    report: dict[str, Any] | None = None,
    freq_ghz: float = 1.0,
) -> dict[str, Any]:
    """The page's data object (columnar; see the module docstring). Raises
    :class:`~dansched.application.report.trace.TraceError` for a plan without timing and
    :class:`~dansched.errors.InputError` for figures past 2**53 (:func:`check_view_range`)."""
    freq_ghz = FREQ_GHZ.check(freq_ghz, "--freq-ghz")
    tasks = timed_tasks(inst, plan, ev)
    check_view_range(inst, ev, report)
    segments = buffer_segments(inst, plan, ev)
    timing = ev.timing
    assert timing is not None, "timed_tasks refuses a plan without timing"
    g = timing.graph
    waits = binding_predecessors(plan.order, g.preds, g.pipe, timing.start, timing.end, g.spill_edges, g.reuse_edges)
    used = segment_of_use(inst, plan, ev, tasks)
    seg_index = {(s.buf_id, s.segment): i for i, s in enumerate(segments)}
    ops: dict[str, int] = {}
    cols = task_columns(inst, tasks, waits, lambda v, bid: seg_index[(bid, used[(v, bid)])], ops)
    makespan = int(ev.makespan or 0)
    return {
        "case": inst.name,
        "makespan": makespan,
        "freqGhz": freq_ghz,
        "pipes": list(inst.hw.pipes),
        "tiers": list(inst.hw.tiers),
        "caps": [int(inst.hw.capacity[t]) for t in inst.hw.tiers],
        "ops": list(ops),
        "waitKinds": list(WAIT_KINDS),
        "tasks": cols,
        "segments": segment_columns(inst, segments),
        "metrics": _metrics(ev),
        "stats": plan_statistics(tasks, makespan).to_dict(freq_ghz),
        "report": report,
    }


def _op_name(inst: Instance, v: int) -> str:
    if v < inst.n:
        return inst.op[v]
    return "SPILL_OUT" if (v - inst.n) % 2 == 0 else "SPILL_IN"


def _template() -> str:
    return resources.files("dansched.application.report").joinpath(TEMPLATE).read_text(encoding="utf-8")


def view_html(data: dict[str, Any]) -> str:
    """The page: the template with ``data`` inlined as JSON (``<`` escaped, so no text
    in the data can close the script element)."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")
    page = _template()
    if page.count(DATA_TOKEN) != 1:
        raise RuntimeError(f"{TEMPLATE}: expected exactly one {DATA_TOKEN} placeholder")
    return page.replace(DATA_TOKEN, text)


def page_text(
    inst: Instance,
    plan: Plan,
    ev: Evaluation,
    report: Mapping[str, Any] | None = None,
    freq_ghz: float = 1.0,
) -> str:
    """The text of a plan folder's ``<case>_view.html``: the page of ``plan`` with the figures
    of its ``report`` (when there is one)."""
    return view_html(build_view_data(inst, plan, ev, dict(report) if report is not None else None, freq_ghz))


def write_view(
    inst: Instance,
    plan: Plan,
    ev: Evaluation,
    path: str | Path,
    report: dict[str, Any] | None = None,
    freq_ghz: float = 1.0,
) -> Path:
    """Build the page of ``plan`` and write it atomically to ``path``; returns the path."""
    atomic_write_text(path, page_text(inst, plan, ev, report, freq_ghz))
    return Path(path)
