"""Pictures of plans and instances (matplotlib, imported only when a picture is drawn).

- :func:`plan_png_bytes`: a Gantt chart of the pipes (the seed paper's Figure 10; two
  charts side by side on a shared time axis when a second plan is given, e.g. the
  plan before CPE on the left and after on the right) above, per tier, the layout
  over time (Figure 9): a strip of the tier's occupancy (resident bytes as a
  percentage of its capacity) over a residency map (offset from 0 to the capacity
  against time, each resident segment in its own colour).
- :func:`info_png`: counts, operator and pipe mix (Figure 5), the ECDF of ALLOC
  sizes and the distribution of buffer lifetimes (Figure 6).

Zero-cycle tasks (the SPILL_OUT of a buffer DDR already holds, an operation with
``Cycles: 0``) occupy no time, so they fill no bar: each is a short tick at the
foot of its pipe's row, as on the ``dansched view`` page.

The residency map splits time into :data:`TIME_SAMPLES` bins and the tier's
addresses ``[0, capacity)`` into at most :data:`OFFSET_ROWS` bins; each segment
paints every cell its offset range and residency touch (at least one cell, so
that no buffer vanishes), later-starting segments over earlier ones, in the
pastel colour of its buffer (the page's colours, cycled by BufId), orange after a
SPILL_IN, white where nothing is resident. A tier that is always full (the L0
tiers of a matmul) thus shows its buffers turning over instead of one flat colour.
Times are in cycles.

Figures are drawn on :class:`matplotlib.figure.Figure` with the Agg canvas (no
pyplot state, no display needed) and written through a temporary file and a
rename (:func:`write_bytes_atomic`), so a failure never leaves half a PNG; the
``*_bytes`` variants render without writing, so a command can draw everything
before it writes anything.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...plan import atomic_write_files
from .info import InstanceInfo
from .stats import TaskStatistics
from .text import printable
from .trace import BufferSegment, TimedTask, buffer_segments, plan_statistics, timed_tasks

__all__ = [
    "PlanPicture",
    "plan_picture",
    "plan_png_bytes",
    "info_png_bytes",
    "info_png",
    "frontier_png_bytes",
    "write_bytes_atomic",
    "residency_grid",
    "residency_rgb",
    "occupancy_steps",
    "TIME_SAMPLES",
    "OFFSET_ROWS",
]

TIME_SAMPLES = 480
OFFSET_ROWS = 256
CLASS_COLOURS = {"DMA": "#4c72b0", "CUBE": "#dd8452", "VECTOR": "#55a868"}
SPILL_COLOUR = "#c44e52"
OTHER_COLOUR = "#8c8c8c"
#: Colours of resident segments, cycled by BufId, and of a segment after a SPILL_IN
#: (the ``dansched view`` page's memory-map colours).
BUFFER_HUES = ("#a9c4ec", "#b7dfc2", "#d5c3ec", "#f1d7a7", "#b9e0e3", "#ecc0cf", "#d6dba9", "#c9ccd3")
SPILLED_IN_HUE = "#f5a65b"
TICK_HEIGHT = 0.15  # zero-cycle task ticks, in rows of the Gantt chart


@dataclass(frozen=True)
class PlanPicture:
    """What a plan picture needs: a label, the pipes, the timed tasks, the buffer segments."""

    label: str
    pipes: tuple[str, ...]
    tiers: tuple[str, ...]
    capacity: dict[str, int]
    tasks: Sequence[TimedTask]
    segments: Sequence[BufferSegment]
    makespan: int
    stats: TaskStatistics


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # matplotlib is optional (the plot extra)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def plan_picture(inst, plan, evaluation, label: str) -> PlanPicture:
    """Gather what :func:`plan_png_bytes` draws from a plan with timing."""
    tasks = timed_tasks(inst, plan, evaluation)
    makespan = int(evaluation.makespan or 0)
    return PlanPicture(
        label=printable(label),  # matplotlib cannot draw a file name's undecodable bytes
        pipes=tuple(inst.hw.pipes),
        tiers=tuple(inst.hw.tiers),
        capacity=dict(inst.hw.capacity),
        tasks=tasks,
        segments=buffer_segments(inst, plan, evaluation),
        makespan=makespan,
        stats=plan_statistics(tasks, makespan),
    )


def _png_bytes(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (:func:`dansched.plan.atomic_write_files`)."""
    atomic_write_files([(path, data)])


def _task_colour(t: TimedTask) -> str:
    if t.op in ("SPILL_OUT", "SPILL_IN"):
        return SPILL_COLOUR
    return CLASS_COLOURS.get(t.cls, OTHER_COLOUR)


def _draw_gantt(ax, pic: PlanPicture, x_max: int) -> None:
    """One row per pipe (first pipe on top), one bar per task, coloured by engine class."""
    rows = {p: len(pic.pipes) - 1 - i for i, p in enumerate(pic.pipes)}
    by_row: dict[tuple[str, str], list[tuple[int, int]]] = {}
    ticks: dict[str, tuple[list[int], list[float]]] = {}
    for t in pic.tasks:
        if t.end > t.start:
            by_row.setdefault((t.pipe, _task_colour(t)), []).append((t.start, t.end - t.start))
        else:  # a zero-cycle task: a tick at the row's foot, never a bar
            xs, ys = ticks.setdefault(_task_colour(t), ([], []))
            xs.append(t.start)
            ys.append(rows[t.pipe] - 0.4)
    for (pipe, colour), bars in sorted(by_row.items()):
        ax.broken_barh(bars, (rows[pipe] - 0.4, 0.8), facecolors=colour, linewidth=0)
    for colour, (xs, ys) in sorted(ticks.items()):
        ax.vlines(xs, ys, [y + TICK_HEIGHT for y in ys], colors=colour, linewidth=0.6)
    ax.set_yticks(list(rows.values()), list(rows.keys()))
    ax.set_ylim(-0.6, len(pic.pipes) - 0.4)
    ax.set_xlim(0, max(x_max, 1))
    ax.set_xlabel("time (cycles)")
    idle = pic.stats.percent("total_idle")
    ax.set_title(f"{pic.label}\nmakespan {pic.makespan:,} cycles, idle {idle:.1f} %", fontsize=10)


def _gantt_legend(ax, zero_cycle: bool) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Any] = [Patch(color=c, label=k) for k, c in CLASS_COLOURS.items()]
    handles.append(Patch(color=SPILL_COLOUR, label="spill"))
    if zero_cycle:
        handles.append(Line2D([], [], color=SPILL_COLOUR, marker="|", linestyle="", label="zero-cycle task"))
    ax.legend(handles=handles, loc="upper right", fontsize=8, framealpha=0.8)


def residency_grid(
    segments: Sequence[BufferSegment],
    makespan: int,
    capacity: int,
    samples: int = TIME_SAMPLES,
    rows: int = OFFSET_ROWS,
) -> np.ndarray:
    """Which segment each (offset bin, time bin) cell shows, shape ``(rows, samples)``
    (row 0 at offset 0): an index into ``segments``, -1 where nothing is resident.

    Time bin ``j`` is ``[j, j + 1) * makespan / samples``; offset bin ``r`` is
    ``[r, r + 1) * capacity / rows`` (``rows`` is at most the capacity). A segment
    paints every cell that its ``[start, end)`` and ``[offset, offset + size)`` touch,
    and at least one, in the order of their starts (the later one shows where two
    share a cell); bins are computed in integers, so no rounding moves a segment."""
    rows = max(1, min(rows, capacity))
    grid = np.full((rows, samples), -1, dtype=np.int64)
    if makespan <= 0 or capacity <= 0:
        return grid
    for i in sorted(range(len(segments)), key=lambda k: (segments[k].start, segments[k].offset)):
        s = segments[i]
        c0 = min(samples - 1, max(0, s.start * samples // makespan))
        c1 = max(c0 + 1, min(samples, -(-s.end * samples // makespan)))
        r0 = min(rows - 1, max(0, s.offset * rows // capacity))
        r1 = max(r0 + 1, min(rows, -(-(s.offset + s.size) * rows // capacity)))
        grid[r0:r1, c0:c1] = i
    return grid


def residency_rgb(segments: Sequence[BufferSegment], grid: np.ndarray) -> np.ndarray:
    """RGB image (floats 0-1, shape ``grid.shape + (3,)``) of a :func:`residency_grid`:
    white where free, else the segment's buffer hue (cycled by BufId), orange after a SPILL_IN."""
    from matplotlib.colors import to_rgb

    hues = np.array([to_rgb(h) for h in BUFFER_HUES])
    buf = np.array([s.buf_id for s in segments], dtype=np.int64)
    spilled_in = np.array([s.segment > 0 for s in segments], dtype=bool)
    colours = np.ones((len(segments) + 1, 3))  # the last row: white, for index -1
    colours[:-1] = hues[buf % len(hues)]
    colours[:-1][spilled_in] = to_rgb(SPILLED_IN_HUE)
    return colours[grid]


def occupancy_steps(segments: Sequence[BufferSegment]) -> tuple[np.ndarray, np.ndarray]:
    """Resident bytes over time as a step function: ``(times, bytes)``, where ``bytes[k]``
    holds from ``times[k]`` to ``times[k + 1]`` (a segment counts in ``[start, end)``)."""
    if not segments:
        return np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    change: dict[int, int] = {}
    for s in segments:
        change[s.start] = change.get(s.start, 0) + s.size
        change[s.end] = change.get(s.end, 0) - s.size
    times = np.array(sorted(change), dtype=np.int64)
    return times, np.cumsum([change[int(t)] for t in times])


def _draw_occupancy(ax, tier: str, capacity: int, segments: Sequence[BufferSegment], makespan: int) -> None:
    """Resident bytes of a tier as a percentage of its capacity, over time (a step plot)."""
    times, used = occupancy_steps(segments)
    pct = 100.0 * used / capacity
    ax.fill_between(times, pct, step="post", color="#4c72b0", alpha=0.6, linewidth=0)
    ax.step(times, pct, where="post", color="#4c72b0", linewidth=0.6)
    spans = np.diff(np.r_[times, max(makespan, int(times[-1]))])
    mean = float((pct * spans).sum() / max(makespan, 1))
    ax.set_ylim(0, 105)
    ax.set_yticks([0, 50, 100])
    ax.set_ylabel("% of cap.", fontsize=8)
    ax.tick_params(labelsize=7, labelbottom=False)
    ax.set_title(
        f"{tier}: {len(segments):,} segments, capacity {capacity:,}\n"
        f"occupancy peak {pct.max():.0f} %, mean {mean:.0f} %",
        fontsize=9,
    )


def _draw_residency(ax, capacity: int, segments: Sequence[BufferSegment], makespan: int) -> None:
    """The residency map of a tier (:func:`residency_grid`), offsets 0 to its capacity."""
    from matplotlib.ticker import MaxNLocator

    grid = residency_grid(segments, makespan, capacity)
    ax.imshow(
        residency_rgb(segments, grid),
        origin="lower",
        aspect="auto",
        extent=(0, max(makespan, 1), 0, capacity),
        interpolation="nearest",
    )
    ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
    ax.set_xlabel("time (cycles)")
    ax.set_ylabel("offset")


def plan_png_bytes(pictures: Sequence[PlanPicture]) -> bytes:
    """PNG of the Gantt chart(s) of ``pictures`` side by side (shared time axis; give the
    plan before CPE first), above the layout of the last picture (one occupancy strip and
    residency map per tier it uses)."""
    main = pictures[-1]
    used = [t for t in main.tiers if any(s.tier == t for s in main.segments)]
    ncols = max(len(pictures), 1)
    fig = _figure(max(7.0 * ncols, 3.6 * max(len(used), 1)), 4.0 + (4.2 if used else 0.0))
    top, bottom = fig.subfigures(2, 1, height_ratios=[4.0, 4.2]) if used else (fig, None)
    axes = np.atleast_1d(top.subplots(1, ncols, sharex=True, sharey=True))
    x_max = max(p.makespan for p in pictures)
    for ax, pic in zip(axes, pictures):
        _draw_gantt(ax, pic, x_max)
    _gantt_legend(axes[-1], any(t.end == t.start for p in pictures for t in p.tasks))
    if bottom is not None:
        grid = np.array(bottom.subplots(2, len(used), sharex="col", height_ratios=[1, 3])).reshape(2, len(used))
        for k, tier in enumerate(used):
            segs = [s for s in main.segments if s.tier == tier]
            _draw_occupancy(grid[0, k], tier, main.capacity[tier], segs, main.makespan)
            _draw_residency(grid[1, k], main.capacity[tier], segs, main.makespan)
        bottom.suptitle(
            f"{main.label}: layout over time (strips: resident bytes, % of the tier's capacity; maps: offset vs time, "
            "one colour per buffer, orange after a SPILL_IN, white free)",
            fontsize=9,
        )
    return _png_bytes(fig)


def _draw_counts(ax, info: InstanceInfo) -> None:
    labels = ["nodes", "edges", "ops", "ALLOC", "FREE"]
    values = [info.nodes, info.edges, info.operations, info.allocs, info.frees]
    bars = ax.bar(labels, values, color=["#4c72b0", "#4c72b0", "#55a868", "#dd8452", "#c44e52"])
    ax.bar_label(bars, labels=[f"{v:,}" for v in values], fontsize=8)
    ax.set_title("(a) nodes, edges, ALLOC/FREE", fontsize=10)


def _draw_op_mix(ax, info: InstanceInfo, keep: int = 12) -> None:
    items = list(info.op_mix.items())
    if len(items) > keep:
        items = items[: keep - 1] + [("other", sum(c for _, c in items[keep - 1 :]))]
    names = [printable(k) for k, _ in items][::-1]
    counts = [c for _, c in items][::-1]
    ax.barh(names, counts, color="#55a868")
    ax.set_title("(b) operator mix (operation nodes)", fontsize=10)


def _draw_pipe_mix(ax, info: InstanceInfo) -> None:
    pipes = list(info.pipe_mix)
    ops = np.array([info.pipe_mix[p]["operations"] for p in pipes], dtype=float)
    cyc = np.array([info.pipe_mix[p]["cycles"] for p in pipes], dtype=float)
    x = np.arange(len(pipes))
    ax.bar(x - 0.2, 100 * ops / max(ops.sum(), 1), 0.4, label="operations")
    ax.bar(x + 0.2, 100 * cyc / max(cyc.sum(), 1), 0.4, label="cycles")
    ax.set_xticks(x, pipes)
    ax.set_ylabel("share (%)")
    ax.legend(fontsize=8)
    ax.set_title("(c) pipe mix", fontsize=10)


def _draw_ecdf(ax, info: InstanceInfo) -> None:
    """ECDF of ALLOC sizes, over all buffers and per tier."""
    sizes = np.asarray(info.buffer_sizes)
    tier_arr = np.array(info.buffer_tiers)
    curves = [("all", sizes)] + [(t, sizes[tier_arr == t]) for t in sorted(set(info.buffer_tiers))]
    for label, values in curves:
        if len(values):
            v = np.sort(values)
            y = np.arange(1, len(v) + 1) / len(v)
            ax.step(
                np.r_[v[0], v],
                np.r_[0.0, y],
                where="post",
                label=label,
                color="black" if label == "all" else None,
                linewidth=2 if label == "all" else 1,
            )
    if len(sizes):
        from matplotlib.ticker import NullFormatter, ScalarFormatter

        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlim(sizes.min() / 1.4, sizes.max() * 1.4)
        ax.legend(fontsize=8)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("ALLOC size")
    ax.set_ylabel("fraction <= size")
    ax.set_title("(d) ECDF of ALLOC sizes", fontsize=10)


def _draw_lifetimes(ax, info: InstanceInfo) -> None:
    life = np.asarray(info.lifetimes, dtype=float)
    if len(life):
        lo, hi = max(float(life.min()), 1.0), float(life.max())
        bins = np.unique(np.geomspace(lo, max(hi + 1.0, lo + 1.0), 40).round())
        tiers = sorted(set(info.buffer_tiers))
        tier_arr = np.array(info.buffer_tiers)
        ax.hist([life[tier_arr == t] for t in tiers], bins=bins, stacked=True, label=tiers)
        ax.set_xscale("log")
        ax.legend(fontsize=8)
    ax.set_xlabel("lifetime (schedule positions)")
    ax.set_ylabel("buffers")
    ax.set_title("(e) buffer lifetimes", fontsize=10)


def _draw_tiers(ax, info: InstanceInfo) -> None:
    tiers = list(info.tier_mix)
    counts = [info.tier_mix[t]["buffers"] for t in tiers]
    bars = ax.bar(tiers, counts, color="#8172b3")
    ax.bar_label(bars, labels=[f"{info.tier_mix[t]['total_size']:,}" for t in tiers], fontsize=7)
    ax.set_ylabel("buffers (label: total size)")
    ax.set_title("(f) buffers per tier", fontsize=10)


def info_png_bytes(info: InstanceInfo) -> bytes:
    """PNG with six panels: counts, operator mix, pipe mix, ALLOC-size ECDF, lifetimes, tiers."""
    fig = _figure(14.0, 8.0)
    axes = fig.subplots(2, 3)
    _draw_counts(axes[0, 0], info)
    _draw_op_mix(axes[0, 1], info)
    _draw_pipe_mix(axes[0, 2], info)
    _draw_ecdf(axes[1, 0], info)
    _draw_lifetimes(axes[1, 1], info)
    _draw_tiers(axes[1, 2], info)
    fig.suptitle(printable(f"{info.name}: {info.nodes:,} nodes, {info.edges:,} edges"), fontsize=11)
    return _png_bytes(fig)


def frontier_png_bytes(rows: Sequence[dict[str, Any]], title: str, chosen: int | None = None) -> bytes:
    """The page's plot of a traffic-makespan frontier (``rows``: the report's ``frontier``,
    lightest first), as a PNG: makespan against extra traffic, one dot per point (the knee
    filled), the floor for each point's traffic dashed under them, the row ``chosen`` (the
    plan of the solve's folder, an index into ``rows``) ringed, each dot labelled with its
    row number as the table prints it."""
    fig = _figure(6.4, 3.8)
    ax = fig.subplots()
    traffic = [r["traffic"] for r in rows]
    makespan = [r["makespan"] for r in rows]
    floor = [r["floor"]["value"] for r in rows]
    ax.plot(traffic, floor, linestyle="--", color="#cc3333", label="floor for the traffic")
    ax.plot(traffic, makespan, color="#3366cc", label="frontier (filled: the knee)")
    for k, r in enumerate(rows):
        knee = bool(r["knee"])
        ax.plot(
            [r["traffic"]],
            [r["makespan"]],
            "o",
            markersize=7,
            color="#3366cc",
            markerfacecolor="#3366cc" if knee else "#ffffff",
        )
        ax.annotate(
            f"{k + 1}{'*' if knee else ''}",
            (r["traffic"], r["makespan"]),
            textcoords="offset points",
            xytext=(5, 5),
            fontsize=8,
        )
    if chosen is not None:
        r = rows[chosen]
        ax.plot(
            [r["traffic"]],
            [r["makespan"]],
            "o",
            markersize=15,
            markerfacecolor="none",
            color="#333333",
            label="the plan of the solve's folder",
        )
    ax.margins(x=0.08, y=0.08)
    ax.set_xlabel("extra traffic")
    ax.set_ylabel("makespan (cycles)")
    ax.xaxis.set_major_formatter(_thousands())
    ax.yaxis.set_major_formatter(_thousands())
    ax.set_title(printable(title), fontsize=10)
    ax.legend(fontsize=8)
    return _png_bytes(fig)


def _thousands():
    """A tick formatter writing 12,345."""
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _pos: f"{v:,.0f}")


def info_png(path: str | Path, info: InstanceInfo) -> None:
    """:func:`info_png_bytes`, written atomically to ``path``."""
    write_bytes_atomic(path, info_png_bytes(info))
