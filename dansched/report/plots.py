"""Pictures of plans and instances (matplotlib, imported only when a picture is drawn).

- :func:`plan_png_bytes`: a Gantt chart of the pipes (the seed paper's Figure 10; two
  charts side by side on a shared time axis when a second plan is given, e.g. the
  plan before CPE on the left and after on the right) above a per-tier
  offset-vs-time heatmap of the layout (Figure 9).
- :func:`info_png`: counts, operator and pipe mix (Figure 5), the ECDF of ALLOC
  sizes and the distribution of buffer lifetimes (Figure 6).

The heatmap samples the time axis at :data:`TIME_SAMPLES` instants (bin centres)
and the used address range of a tier in at most :data:`OFFSET_ROWS` bins; a cell
holds the fraction of its addresses taken by resident buffers at that instant
(0 to 1 for a valid plan). Times are in cycles.

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

import numpy as np

from ..plan import atomic_write_files
from .info import InstanceInfo
from .stats import TaskStatistics
from .trace import BufferSegment, TimedTask, buffer_segments, plan_statistics, timed_tasks

__all__ = [
    "PlanPicture",
    "plan_picture",
    "plan_png_bytes",
    "info_png_bytes",
    "info_png",
    "write_bytes_atomic",
    "occupancy_grid",
    "TIME_SAMPLES",
    "OFFSET_ROWS",
]

TIME_SAMPLES = 480
OFFSET_ROWS = 256
CLASS_COLOURS = {"DMA": "#4c72b0", "CUBE": "#dd8452", "VECTOR": "#55a868"}
SPILL_COLOUR = "#c44e52"
OTHER_COLOUR = "#8c8c8c"


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
        label=label,
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
    for t in pic.tasks:
        if t.end > t.start:
            by_row.setdefault((t.pipe, _task_colour(t)), []).append((t.start, t.end - t.start))
    for (pipe, colour), bars in sorted(by_row.items()):
        ax.broken_barh(bars, (rows[pipe] - 0.4, 0.8), facecolors=colour, linewidth=0)
    ax.set_yticks(list(rows.values()), list(rows.keys()))
    ax.set_ylim(-0.6, len(pic.pipes) - 0.4)
    ax.set_xlim(0, max(x_max, 1))
    ax.set_xlabel("time (cycles)")
    idle = pic.stats.percent("total_idle")
    ax.set_title(f"{pic.label}\nmakespan {pic.makespan:,} cycles, idle {idle:.1f} %", fontsize=10)


def _gantt_legend(ax) -> None:
    from matplotlib.patches import Patch

    handles = [Patch(color=c, label=k) for k, c in CLASS_COLOURS.items()] + [Patch(color=SPILL_COLOUR, label="spill")]
    ax.legend(handles=handles, loc="upper right", fontsize=8, framealpha=0.8)


def occupancy_grid(
    segments: Sequence[BufferSegment],
    makespan: int,
    top: int,
    samples: int = TIME_SAMPLES,
    rows: int = OFFSET_ROWS,
) -> np.ndarray:
    """Occupied fraction of each (time sample, offset bin) cell, shape ``(samples, rows)``.

    Sample ``i`` is the instant ``(i + 0.5) * makespan / samples``; a segment covers the
    samples inside ``[start, end)``. Offset bins split ``[0, top)`` evenly."""
    rows = max(1, min(rows, top))
    grid = np.zeros((samples + 1, rows))
    if not segments or makespan <= 0 or top <= 0:
        return grid[:samples]
    start = np.array([s.start for s in segments], dtype=float)
    end = np.array([s.end for s in segments], dtype=float)
    lo = np.array([s.offset for s in segments], dtype=float)
    hi = lo + np.array([s.size for s in segments], dtype=float)
    i0 = np.clip(np.ceil(start * samples / makespan - 0.5), 0, samples).astype(int)
    i1 = np.clip(np.ceil(end * samples / makespan - 0.5), 0, samples).astype(int)
    edges = np.linspace(0.0, float(top), rows + 1)
    width = edges[1] - edges[0]
    for chunk in range(0, len(segments), 2048):
        sl = slice(chunk, chunk + 2048)
        cover = np.minimum(hi[sl, None], edges[None, 1:]) - np.maximum(lo[sl, None], edges[None, :-1])
        cover = np.clip(cover, 0.0, None) / width
        np.add.at(grid, i0[sl], cover)
        np.add.at(grid, i1[sl], -cover)
    return np.cumsum(grid, axis=0)[:samples]


def _draw_heatmap(ax, tier: str, capacity: int, segments: Sequence[BufferSegment], makespan: int):
    top = max(s.offset + s.size for s in segments)
    grid = occupancy_grid(segments, makespan, top)
    image = ax.imshow(
        grid.T,
        origin="lower",
        aspect="auto",
        extent=(0, max(makespan, 1), 0, top),
        cmap="Blues",
        vmin=0.0,
        vmax=1.0,
        interpolation="nearest",
    )
    ax.set_title(f"{tier}: {len(segments):,} segments\naddresses 0-{top:,} of {capacity:,}", fontsize=9)
    ax.set_xlabel("time (cycles)")
    ax.set_ylabel("offset")
    return image


def plan_png_bytes(pictures: Sequence[PlanPicture]) -> bytes:
    """PNG of the Gantt chart(s) of ``pictures`` side by side (shared time axis; give the
    plan before CPE first), above the layout heatmaps of the last picture (one per tier it uses)."""
    main = pictures[-1]
    used = [t for t in main.tiers if any(s.tier == t for s in main.segments)]
    ncols = max(len(pictures), 1)
    fig = _figure(max(7.0 * ncols, 3.6 * max(len(used), 1)), 4.0 + (3.2 if used else 0.0))
    top, bottom = fig.subfigures(2, 1, height_ratios=[4.0, 3.2]) if used else (fig, None)
    axes = np.atleast_1d(top.subplots(1, ncols, sharex=True, sharey=True))
    x_max = max(p.makespan for p in pictures)
    for ax, pic in zip(axes, pictures):
        _draw_gantt(ax, pic, x_max)
    _gantt_legend(axes[-1])
    if bottom is not None:
        hax = np.atleast_1d(bottom.subplots(1, len(used)))
        image = None
        for ax, tier in zip(hax, used):
            segs = [s for s in main.segments if s.tier == tier]
            image = _draw_heatmap(ax, tier, main.capacity[tier], segs, main.makespan)
        bottom.colorbar(image, ax=list(hax), label="occupied fraction", shrink=0.9)
        bottom.suptitle(f"{main.label}: layout (offset vs time)", fontsize=10)
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
    names = [k for k, _ in items][::-1]
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
    fig.suptitle(f"{info.name}: {info.nodes:,} nodes, {info.edges:,} edges", fontsize=11)
    return _png_bytes(fig)


def info_png(path: str | Path, info: InstanceInfo) -> None:
    """:func:`info_png_bytes`, written atomically to ``path``."""
    write_bytes_atomic(path, info_png_bytes(info))
