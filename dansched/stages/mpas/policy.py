"""Priorities for the production MPAS greedy (:mod:`.greedy`).

A policy maps a ready unit (head ``v``, its ``net`` and ``transient`` L1+UB bytes,
normalised criticality ``h`` of Eq. 20, input rank) to a key; the smallest key
runs next. :class:`Weights` is the memory-first / criticality-first family of
the paper's Figure 7; :class:`RankPolicy` follows a fixed priority, e.g. the
input order or :func:`dfs_positions`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ...graph import MpasGraph

__all__ = ["Policy", "Weights", "RankPolicy", "dfs_positions"]


class Policy(Protocol):
    @property
    def name(self) -> str: ...

    def key(self, v: int, net: int, transient: int, h: float, rank: int) -> tuple: ...


@dataclass(frozen=True)
class Weights:
    """One restart's priority. The key of a unit is
    ``(w_net * net + w_peak * transient - w_h * h(v) / h_max, net, transient, rank)``,
    smallest first; ``w_h`` > 0 leans towards criticality (Eq. 20), the others
    towards memory (Eq. 19)."""

    name: str = "net"
    w_net: float = 1.0
    w_peak: float = 0.0
    w_h: float = 0.0

    def key(self, v: int, net: int, transient: int, h: float, rank: int) -> tuple:
        return (self.w_net * net + self.w_peak * transient - self.w_h * h, net, transient, rank)


@dataclass(frozen=True)
class RankPolicy:
    """Follow a precomputed priority ``pos`` (lower first), e.g. a depth-first
    completion order from :func:`dfs_positions`; ties by input order."""

    name: str
    pos: tuple[int, ...]

    def key(self, v: int, net: int, transient: int, h: float, rank: int) -> tuple:
        return (self.pos[v], rank)


def dfs_positions(g: MpasGraph, goals: list[int], pred_order) -> tuple[int, ...]:
    """Post-order positions of a depth-first walk *backwards* from each goal in
    turn (predecessors expanded in ``pred_order(v)`` order): the walk finishes a
    buffer's users as soon as their inputs allow, which keeps live sets small on
    tree-like parts of the graph."""
    n = g.n
    pos = [n] * n
    seen = bytearray(n)
    k = 0
    for root in goals:
        if seen[root]:
            continue
        seen[root] = 1
        stack = [(root, iter(pred_order(root)))]
        while stack:
            v, it = stack[-1]
            for u in it:
                if not seen[u]:
                    seen[u] = 1
                    stack.append((u, iter(pred_order(u))))
                    break
            else:
                stack.pop()
                pos[v] = k
                k += 1
    return tuple(pos)
