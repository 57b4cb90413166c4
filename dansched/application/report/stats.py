"""Task statistics of a timed plan, defined like a compiler schedule trace's.

A compiler's schedule-trace pass reports, besides the estimated latency, how the
busy time of its engine classes overlaps. dansched does the same with its own
engine classes (:data:`ENGINE_CLASSES`): ``DMA`` = the hardware model's data-movement
pipes (``roles.dma``: MTE1, MTE2, MTE3, FIXP by default),
``CUBE`` and ``VECTOR``. Every figure is first computed exactly, in integer
cycles, on the task intervals ``[start, end)`` of the operation and spill nodes
(cache nodes take no pipe and no time), then converted to microseconds at a clock.

Definitions (``U(X)`` is the union of the busy intervals of class ``X`` on the
time axis, ``|.|`` its total length):

- ``total_duration``: wall time from 0 to the last task's end (the makespan);
- ``dma_duration`` / ``cube_duration`` / ``vector_duration``: ``|U(X)|``;
- ``dma_cube_overlap``, ``dma_vector_overlap``, ``cube_vector_overlap``:
  ``|U(X) & U(Y)|``;
- ``all_tasks_union``: ``|U(all tasks)|`` (tasks on pipes outside the three
  classes of a custom hardware model count here only);
- ``total_idle``: ``total_duration - all_tasks_union``;
- ``vector_without_cube``: ``|U(VECTOR) - U(CUBE)|``;
- ``dma_without_overlaps``: ``|U(DMA) - (U(CUBE) | U(VECTOR))|``;
- ``sum_dma`` / ``sum_cube`` / ``sum_vector``: the sum of the task durations of
  the class (larger than the union when pipes of a class run in parallel).

Each also appears with a ``_pct`` suffix: its share of ``total_duration``.

>>> s = task_statistics({"DMA": [(0, 15), (45, 60)], "VECTOR": [(15, 45)]}, 60)
>>> s.cycles["all_tasks_union"], s.cycles["total_idle"], s.cycles["dma_vector_overlap"]
(60, 0, 0)
>>> estimated_latency_line(60, 1.0)
'Estimated latency: 0.060 us (60 cycles at 1 GHz)'
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "ENGINE_CLASSES",
    "STATISTIC_KEYS",
    "TaskStatistics",
    "engine_class",
    "union_intervals",
    "union_length",
    "intersection_length",
    "task_statistics",
    "cycles_to_us",
    "estimated_latency_line",
    "format_statistics",
]

ENGINE_CLASSES = ("DMA", "CUBE", "VECTOR")

#: The ``taskStatistics`` keys, in the order they are written (each also with ``_pct``).
STATISTIC_KEYS = (
    "total_duration",
    "dma_duration",
    "cube_duration",
    "vector_duration",
    "dma_cube_overlap",
    "dma_vector_overlap",
    "cube_vector_overlap",
    "all_tasks_union",
    "total_idle",
    "vector_without_cube",
    "dma_without_overlaps",
    "sum_dma",
    "sum_cube",
    "sum_vector",
)

_LOG_LABELS = {
    "total_duration": "total duration",
    "dma_duration": "DMA duration",
    "cube_duration": "CUBE duration",
    "vector_duration": "VECTOR duration",
    "dma_cube_overlap": "DMA-CUBE overlap",
    "dma_vector_overlap": "DMA-VECTOR overlap",
    "cube_vector_overlap": "CUBE-VECTOR overlap",
    "all_tasks_union": "all tasks union",
    "total_idle": "total idle",
    "vector_without_cube": "VECTOR duration without CUBE overlap",
    "dma_without_overlaps": "DMA duration without overlaps",
    "sum_dma": "Sum of DMA task durations",
    "sum_cube": "Sum of CUBE task durations",
    "sum_vector": "Sum of VECTOR task durations",
}

Interval = tuple[int, int]


def engine_class(pipe: str, dma_pipes: Collection[str]) -> str:
    """Engine class of a pipe: ``DMA`` for a data-movement pipe of the hardware model
    (:attr:`dansched.hardware.Hardware.dma_pipes`), else the pipe's own name (``CUBE``,
    ``VECTOR``, or a pipe a custom hardware model adds)."""
    return "DMA" if pipe in dma_pipes else pipe


def union_intervals(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted, disjoint, non-touching intervals covering the same points as ``intervals``
    (half-open ``[a, b)``; empty intervals vanish)."""
    out: list[list[int]] = []
    for a, b in sorted(iv for iv in intervals if iv[1] > iv[0]):
        if out and a <= out[-1][1]:
            if b > out[-1][1]:
                out[-1][1] = b
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def union_length(union: Sequence[Interval]) -> int:
    """Total length of disjoint intervals."""
    return sum(b - a for a, b in union)


def intersection_length(u: Sequence[Interval], w: Sequence[Interval]) -> int:
    """Length of the intersection of two unions (each sorted and disjoint): a two-pointer sweep."""
    i = j = 0
    total = 0
    while i < len(u) and j < len(w):
        lo = max(u[i][0], w[j][0])
        hi = min(u[i][1], w[j][1])
        if hi > lo:
            total += hi - lo
        if u[i][1] <= w[j][1]:
            i += 1
        else:
            j += 1
    return total


def cycles_to_us(cycles: float, freq_ghz: float) -> float:
    """Cycles to microseconds at ``freq_ghz`` (1 GHz: 1 cycle = 1 ns = 0.001 us)."""
    if not freq_ghz > 0:
        raise ValueError(f"the clock must be positive, got {freq_ghz} GHz")
    return round(cycles / (1000.0 * freq_ghz), 9)


@dataclass(frozen=True)
class TaskStatistics:
    """Exact figures in cycles (``cycles[key]`` for every key of :data:`STATISTIC_KEYS`)."""

    cycles: Mapping[str, int]

    def percent(self, key: str) -> float:
        """``key`` as a percentage of the total duration (0 when the total is 0)."""
        total = self.cycles["total_duration"]
        return round(100.0 * self.cycles[key] / total, 2) if total else 0.0

    def to_dict(self, freq_ghz: float = 1.0) -> dict[str, float]:
        """The ``taskStatistics`` object: each key in microseconds, then the ``_pct`` variants."""
        out: dict[str, float] = {k: cycles_to_us(self.cycles[k], freq_ghz) for k in STATISTIC_KEYS}
        out.update({f"{k}_pct": self.percent(k) for k in STATISTIC_KEYS})
        return out


def task_statistics(intervals: Mapping[str, Iterable[Interval]], total_duration: int) -> TaskStatistics:
    """Statistics of task intervals grouped by engine class (see the module docstring).

    ``intervals`` maps a class name (``DMA``, ``CUBE``, ``VECTOR`` or any other) to
    half-open ``[start, end)`` intervals in cycles; ``total_duration`` is the makespan."""
    lists = {k: list(v) for k, v in intervals.items()}
    union = {k: union_intervals(lists.get(k, ())) for k in ENGINE_CLASSES}
    everything = union_intervals(iv for v in lists.values() for iv in v)
    compute = union_intervals(union["CUBE"] + union["VECTOR"])
    length = {k: union_length(u) for k, u in union.items()}
    all_union = union_length(everything)
    c = {
        "total_duration": int(total_duration),
        "dma_duration": length["DMA"],
        "cube_duration": length["CUBE"],
        "vector_duration": length["VECTOR"],
        "dma_cube_overlap": intersection_length(union["DMA"], union["CUBE"]),
        "dma_vector_overlap": intersection_length(union["DMA"], union["VECTOR"]),
        "cube_vector_overlap": intersection_length(union["CUBE"], union["VECTOR"]),
        "all_tasks_union": all_union,
        "total_idle": int(total_duration) - all_union,
        "vector_without_cube": length["VECTOR"] - intersection_length(union["VECTOR"], union["CUBE"]),
        "dma_without_overlaps": length["DMA"] - intersection_length(union["DMA"], compute),
        "sum_dma": sum(b - a for a, b in lists.get("DMA", ())),
        "sum_cube": sum(b - a for a, b in lists.get("CUBE", ())),
        "sum_vector": sum(b - a for a, b in lists.get("VECTOR", ())),
    }
    return TaskStatistics(c)


def _clock(freq_ghz: float) -> str:
    return f"{freq_ghz:g} GHz"


def estimated_latency_line(makespan_cycles: int, freq_ghz: float = 1.0) -> str:
    """One log line with the estimated latency of a plan at ``freq_ghz``.

    >>> estimated_latency_line(1_533_691, 1.5)
    'Estimated latency: 1,022.461 us (1,533,691 cycles at 1.5 GHz)'
    """
    us = cycles_to_us(makespan_cycles, freq_ghz)
    return f"Estimated latency: {us:,.3f} us ({int(makespan_cycles):,} cycles at {_clock(freq_ghz)})"


def format_statistics(stats: TaskStatistics, freq_ghz: float = 1.0) -> list[str]:
    """The statistics as log lines in the compiler's style: ``- DMA duration [us]: 0.030 (50.00 %)``."""
    lines = ["Tasks statistics:"]
    for k in STATISTIC_KEYS:
        us = cycles_to_us(stats.cycles[k], freq_ghz)
        lines.append(f"  - {_LOG_LABELS[k]} [us]: {us:,.3f} ({stats.percent(k):.2f} %)")
    return lines
