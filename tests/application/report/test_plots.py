"""The plan pictures of ``dansched trace --png``: zero-cycle tasks as ticks in the Gantt
chart, and per tier an occupancy strip over a residency map that shows the buffers
resident over time, in colour, even where the tier is always full."""

from __future__ import annotations

import io

import numpy as np
from matplotlib.colors import to_rgb
from view_instances import backed_spills_instance

from dansched.application.report.plots import (
    BUFFER_HUES,
    SPILLED_IN_HUE,
    occupancy_steps,
    plan_picture,
    plan_png_bytes,
    residency_grid,
    residency_rgb,
)
from dansched.application.report.trace import BufferSegment


def seg(buf: int, offset: int, size: int, start: int, end: int, segment: int = 0) -> BufferSegment:
    return BufferSegment(buf, "L0A", offset, size, start, end, segment)


def test_residency_grid_of_two_back_to_back_segments_filling_the_tier():
    segments = [seg(0, 0, 256, 0, 100), seg(1, 0, 256, 100, 200)]
    grid = residency_grid(segments, makespan=200, capacity=256, samples=4, rows=4)
    assert grid.tolist() == [[0, 0, 1, 1]] * 4


def test_residency_grid_leaves_free_cells_empty_and_never_loses_a_tiny_buffer():
    # capacity 1024 in 4 rows of 256 addresses, 10 time bins of 10 cycles
    segments = [seg(0, 0, 512, 0, 50), seg(1, 700, 1, 62, 63)]
    grid = residency_grid(segments, makespan=100, capacity=1024, samples=10, rows=4)
    expected = np.full((4, 10), -1)
    expected[0:2, 0:5] = 0  # offsets [0, 512), cycles [0, 50)
    expected[2, 6] = 1  # one address, one cycle: the cell holding address 700 at cycle 62
    assert grid.tolist() == expected.tolist()


def test_a_tier_always_full_shows_its_buffers_turning_over():
    """Like an L0 tier of a matmul: two halves, each holding back-to-back buffers all the
    time. Occupancy is 100 % everywhere (one flat colour as a heatmap of occupancy); the
    residency map shows the buffers: several colours, and no free (white) cell."""
    segments = []
    for half in range(2):
        for k in range(40):
            segments.append(seg(2 * k + half, 128 * half, 128, 100 * k, 100 * (k + 1)))
    grid = residency_grid(segments, makespan=4000, capacity=256, samples=80, rows=16)
    rgb = residency_rgb(segments, grid)
    colours = {tuple(c) for c in rgb.reshape(-1, 3)}
    assert (grid >= 0).all() and (1.0, 1.0, 1.0) not in colours
    assert colours == {to_rgb(h) for h in BUFFER_HUES}  # every buffer hue shows (BufIds 0-79 cycle through 8)
    assert all(len({tuple(c) for c in rgb[:, j]}) == 2 for j in range(80))  # each instant: two buffers, two colours
    times, used = occupancy_steps(segments)
    assert times.tolist() == [100 * k for k in range(41)] and used.tolist() == [256] * 40 + [0]


def test_occupancy_steps_counts_a_segment_from_its_start_to_its_end():
    times, used = occupancy_steps([seg(0, 0, 6, 0, 10), seg(1, 6, 4, 5, 20), seg(2, 0, 6, 10, 12)])
    assert times.tolist() == [0, 5, 10, 12, 20] and used.tolist() == [6, 10, 10, 4, 0]


def test_plan_png_marks_zero_cycle_tasks_and_colours_the_residency():
    """A backed buffer spilled 5 times: the Gantt chart has a tick, not a bar, at each
    zero-cycle SPILL_OUT (MTE3 row); the PNG's residency map holds the buffer's hue and,
    after each SPILL_IN, the orange of a spilled-in segment."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.figure import Figure
    from PIL import Image

    from dansched.application.report.plots import _draw_gantt

    inst, plan, ev = backed_spills_instance(5)
    outs = sorted(ev.start[inst.n + 2 * k] for k in range(5))
    assert all(ev.end[inst.n + 2 * k] == ev.start[inst.n + 2 * k] for k in range(5))
    pic = plan_picture(inst, plan, ev, "backed")
    fig = Figure()
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    _draw_gantt(ax, pic, ev.makespan)
    mte3_row = len(inst.hw.pipes) - 1 - inst.hw.pipe_index("MTE3")
    ticks = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(ticks) == 1
    xs = sorted(float(s[0][0]) for s in ticks[0].get_segments())
    assert xs == outs and all(mte3_row - 0.5 < s[0][1] < s[1][1] < mte3_row for s in ticks[0].get_segments())
    bars_y = {
        round(float(p.vertices[:, 1].mean()))
        for c in ax.collections
        if isinstance(c, PolyCollection)
        for p in c.get_paths()
    }
    assert mte3_row not in bars_y  # no bar on the row of the zero-cycle tasks

    png = np.asarray(Image.open(io.BytesIO(plan_png_bytes([pic]))).convert("RGB"))
    present = {tuple(c) for c in png.reshape(-1, 3)}
    for hue in (BUFFER_HUES[0], SPILLED_IN_HUE):
        assert tuple(round(255 * x) for x in to_rgb(hue)) in present


def test_the_frontier_picture_draws_each_point_above_its_floor():
    """The README's frontier picture (the page's plot as a PNG): a PNG of the plot's size,
    with the knee's dot filled in the frontier's blue and the floor's dashed red drawn."""
    from PIL import Image

    from dansched.application.report.plots import frontier_png_bytes

    rows = [
        {"traffic": 100, "makespan": 1000, "floor": {"value": 700}, "knee": False},
        {"traffic": 150, "makespan": 880, "floor": {"value": 720}, "knee": True},
    ]
    image = Image.open(io.BytesIO(frontier_png_bytes(rows, "case: frontier", chosen=0))).convert("RGB")
    assert image.size == (640, 380)
    colours = {c for _, c in image.getcolors(maxcolors=1 << 20)}
    near = lambda rgb: any(sum(abs(a - b) for a, b in zip(c, rgb)) < 30 for c in colours)  # noqa: E731
    assert near(tuple(int(255 * v) for v in to_rgb("#3366cc"))) and near(tuple(int(255 * v) for v in to_rgb("#cc3333")))
