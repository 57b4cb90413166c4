"""Heads and tails that respect the pipes: how early a task can start and how much must
follow it, when each pipe runs one task at a time (docs/rules.md, section 7; paper Eqs.
9-10).

The longest path into a task (Eq. 32's dependency-only earliest start) treats its
ancestors as if they ran side by side. They do not: the ancestors of ``v`` on one pipe run
one after another, each no earlier than its own head, and ``v`` starts only after the last
of them has ended and the path from it to ``v`` has run. So

    head(v) >= JPS({(head(u), cycles(u), D(u, v)) : u an ancestor of v on pipe p})

for every pipe ``p``, where ``D(u, v)`` is the longest path from the end of ``u`` to the
start of ``v`` and JPS is the optimum of the preemptive one-machine problem with heads,
bodies and tails (Jackson's preemptive schedule; it is at least ``min head + sum cycles +
min D`` of every subset of those ancestors, Carlier 1982). The heads are computed in
topological order, so each uses the pipe-aware heads of the ancestors: the one-machine bound
applied recursively. The tails are the same bound on the reversed DAG (its heads, from the
successor lists and the order reversed): ``tail(v)`` is a proven least time from the end of
``v`` to the end of the plan.

Both are lower bounds for every schedule of the DAG given, whatever its order: spills and
address reuse only add nodes and edges, so heads and tails of the instance DAG hold for every
plan, and those of a plan's augmented DAG for every order with that plan's memory behaviour.
A node with more than ``limit`` ancestors (descendants) on a pipe keeps the longest path for
that pipe (:class:`dansched.params.BoundParams`: ``head_set_limit``, ``plan_head_set_limit``),
so the work stays within ``limit`` per node and pipe. The compiled pass is
:func:`dansched.kernels.heads.pipe_heads`.
"""

from __future__ import annotations

import numpy as np

from ...kernels.csr import int64_array
from ...kernels.heads import pipe_heads

__all__ = ["pipe_aware_heads"]


def pipe_aware_heads(
    pred_ptr: np.ndarray,
    pred_idx: np.ndarray,
    pipe: np.ndarray,
    cycles: np.ndarray,
    order: np.ndarray,
    limit: int,
    base: np.ndarray | None = None,
) -> np.ndarray:
    """Per node, a proven earliest start (module docstring): one pass per pipe that has a
    task, in pipe order, each from the heads the earlier passes proved (``base``: heads known
    already, zeros when not given). ``order`` is a topological order of the CSR graph
    ``pred_ptr``, ``pred_idx``; ``limit`` the most ancestors of one pipe a head is computed
    from. At least the longest path into each node, even when no node takes a pipe."""
    pipe, cycles, order = int64_array(pipe), int64_array(cycles), int64_array(order)
    limit = min(limit, len(pipe))  # no set holds more
    head = np.zeros(len(pipe), dtype=np.int64) if base is None else int64_array(base).copy()
    pipes = sorted(int(p) for p in np.unique(pipe) if p >= 0) or [-1]
    for p in pipes:  # pipe -1 (none on a pipe): the longest path alone
        head = pipe_heads(order, pred_ptr, pred_idx, pipe, cycles, head, p if p >= 0 else -2, limit)
    return head
