"""Instance statistics for ``dansched info`` (the seed paper's Figures 5 and 6).

Figure 5 of the paper characterises a workload by its node and edge counts,
ALLOC/FREE counts and operator mix; Figure 6 by the ECDF of ALLOC sizes and the
distribution of buffer lifetimes. :func:`instance_info` gathers all of them,
plus the pipe mix (operations and cycles per pipe) and the buffers per tier.

Buffer lifetime *(our definition)*: the number of schedule positions from a
buffer's ALLOC to its FREE, ``pos(FREE) - pos(ALLOC)``, in the smallest-id-first
topological order of the instance (Kahn's algorithm with the ready node of
smallest id first). When the ids are already a topological order, as in the
contest files, that order is simply ``0, 1, ..., N-1``, i.e. the trace order the
instance was recorded in; it does not depend on any solver.

>>> from dansched.instance import load_instance  # doctest: +SKIP
>>> instance_info(load_instance("instances/Exp.json")).lifetimes.tolist()  # doctest: +SKIP
[4, 4]
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...graph import topological_order
from ...instance import KIND_ALLOC, KIND_FREE, KIND_OP, Instance
from .tables import compact_table
from .text import markup_safe, no_trailing_spaces

__all__ = [
    "InstanceInfo",
    "LIFETIME_ORDER",
    "smallest_id_topological_order",
    "instance_info",
    "ecdf_points",
    "summary",
    "print_info",
]

LIFETIME_ORDER = "smallest-id-first topological order (the id order when ids are topological)"


@dataclass(frozen=True)
class InstanceInfo:
    """What ``dansched info`` reports about one instance."""

    name: str
    nodes: int
    edges: int
    operations: int
    allocs: int
    frees: int
    op_mix: dict[str, int]  # operation nodes per Op, most frequent first
    pipe_mix: dict[str, dict[str, int]]  # per pipe: {"operations", "cycles"}
    tier_mix: dict[str, dict[str, int]]  # per tier: {"buffers", "total_size", "max_size"}
    buffer_sizes: np.ndarray  # Size of every buffer (by buffer index; one ALLOC each)
    buffer_tiers: tuple[str, ...]  # tier of every buffer (by buffer index)
    lifetimes: np.ndarray  # per buffer (by buffer index), in positions of LIFETIME_ORDER
    ids_topological: bool

    @property
    def alloc_sizes(self) -> np.ndarray:
        """The Size of every ALLOC, sorted (each buffer has exactly one ALLOC)."""
        return np.sort(self.buffer_sizes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: counts, mixes, the ALLOC-size ECDF and lifetime quantiles."""
        return {
            "instance": self.name,
            "nodes": self.nodes,
            "edges": self.edges,
            "operations": self.operations,
            "allocs": self.allocs,
            "frees": self.frees,
            "op_mix": dict(self.op_mix),
            "pipe_mix": {k: dict(v) for k, v in self.pipe_mix.items()},
            "tier_mix": {k: dict(v) for k, v in self.tier_mix.items()},
            "alloc_size": summary(self.alloc_sizes),
            "alloc_size_ecdf": ecdf_points(self.alloc_sizes),
            "lifetime": {"unit": "schedule positions", "order": LIFETIME_ORDER, **summary(self.lifetimes)},
            "ids_topological": self.ids_topological,
        }


smallest_id_topological_order = topological_order  # the lifetimes' reference order


def ecdf_points(values: np.ndarray) -> list[list[float]]:
    """The ECDF at each distinct value: ``[[value, fraction of values <= value], ...]``."""
    if len(values) == 0:
        return []
    uniq, counts = np.unique(values, return_counts=True)
    frac = np.cumsum(counts) / len(values)
    return [[int(u), round(float(f), 6)] for u, f in zip(uniq.tolist(), frac.tolist())]


def summary(values: np.ndarray) -> dict[str, float]:
    """Count, min, quartiles, p90, max and mean of a sample (empty sample: count 0 only)."""
    if len(values) == 0:
        return {"count": 0}
    q = np.percentile(values, [25, 50, 75, 90])
    return {
        "count": int(len(values)),
        "min": int(np.min(values)),
        "p25": float(q[0]),
        "median": float(q[1]),
        "p75": float(q[2]),
        "p90": float(q[3]),
        "max": int(np.max(values)),
        "mean": round(float(np.mean(values)), 3),
    }


def _pipe_mix(inst: Instance) -> dict[str, dict[str, int]]:
    ops = inst.kind == KIND_OP
    out = {}
    for i, p in enumerate(inst.hw.pipes):
        on = ops & (inst.pipe == i)
        if on.any():
            out[p] = {"operations": int(on.sum()), "cycles": int(inst.cycles[on].sum())}
    return out


def _tier_mix(inst: Instance) -> dict[str, dict[str, int]]:
    out = {}
    for i, t in enumerate(inst.hw.tiers):
        sizes = inst.buf_size[inst.buf_tier == i]
        if len(sizes):
            out[t] = {"buffers": int(len(sizes)), "total_size": int(sizes.sum()), "max_size": int(sizes.max())}
    return out


def instance_info(inst: Instance) -> InstanceInfo:
    """Gather the statistics of ``inst`` (see the module docstring)."""
    ops = inst.kind == KIND_OP
    op_counts = Counter(inst.op[v] for v in np.flatnonzero(ops).tolist())
    op_mix = dict(sorted(op_counts.items(), key=lambda kv: (-kv[1], kv[0])))
    order = smallest_id_topological_order(inst)
    pos = np.empty(inst.n, dtype=np.int64)
    pos[np.asarray(order, dtype=np.int64)] = np.arange(inst.n)
    lifetimes = pos[inst.buf_free] - pos[inst.buf_alloc]
    alloc_nodes = np.flatnonzero(inst.kind == KIND_ALLOC)
    return InstanceInfo(
        name=inst.name,
        nodes=inst.n,
        edges=inst.num_edges,
        operations=int(ops.sum()),
        allocs=len(alloc_nodes),
        frees=int((inst.kind == KIND_FREE).sum()),
        op_mix=op_mix,
        pipe_mix=_pipe_mix(inst),
        tier_mix=_tier_mix(inst),
        buffer_sizes=inst.buf_size.copy(),
        buffer_tiers=tuple(inst.hw.tiers[t] for t in inst.buf_tier.tolist()),
        lifetimes=lifetimes,
        ids_topological=order == list(range(inst.n)),
    )


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"


def print_info(info: InstanceInfo, console=None) -> None:
    """Rich tables: overview, operator and pipe mix, tiers."""
    from rich.console import Console

    console = console or Console(file=no_trailing_spaces(sys.stdout), emoji=False, highlight=False)
    over = compact_table(f"{info.name}: instance")
    over.add_column("figure")
    over.add_column("value", justify="right")
    for label, value in (
        ("nodes", info.nodes),
        ("edges", info.edges),
        ("operations", info.operations),
        ("ALLOC", info.allocs),
        ("FREE", info.frees),
    ):
        over.add_row(label, f"{value:,}")
    for label, values in (("ALLOC size", info.alloc_sizes), ("lifetime (positions)", info.lifetimes)):
        s = summary(values)
        if s["count"]:
            over.add_row(
                label,
                f"min {_fmt(s['min'])} · median {_fmt(s['median'])} · p90 {_fmt(s['p90'])} · max {_fmt(s['max'])}",
            )
    console.print(over)
    console.print(f"lifetime = pos(FREE) - pos(ALLOC) in the {LIFETIME_ORDER}", highlight=False)

    mix = compact_table("operators and pipes")
    for col in ("Op", "nodes", "share"):
        mix.add_column(col, justify="left" if col == "Op" else "right")
    for op, c in info.op_mix.items():
        mix.add_row(markup_safe(op), f"{c:,}", f"{100 * c / max(info.operations, 1):.1f} %")
    pipes = compact_table()
    for col in ("Pipe", "operations", "cycles", "cycle share"):
        pipes.add_column(col, justify="left" if col == "Pipe" else "right")
    total_cycles = sum(v["cycles"] for v in info.pipe_mix.values()) or 1
    for p, v in info.pipe_mix.items():
        pipes.add_row(
            markup_safe(p), f"{v['operations']:,}", f"{v['cycles']:,}", f"{100 * v['cycles'] / total_cycles:.1f} %"
        )
    console.print(mix)
    console.print(pipes)

    tiers = compact_table("buffers per tier")
    for col in ("Type", "buffers", "total size", "max size"):
        tiers.add_column(col, justify="left" if col == "Type" else "right")
    for t, v in info.tier_mix.items():
        tiers.add_row(markup_safe(t), f"{v['buffers']:,}", f"{v['total_size']:,}", f"{v['max_size']:,}")
    console.print(tiers)
