"""A deterministic count of the work a run has done: the nodes the evaluator and the cycle
simulator have processed (each full evaluation counts its plan's nodes, spill nodes
included; each timing simulation its order's). Unlike a wall clock it is the same on every
machine and every load, so a rule on it (``dansched solve``'s slow-run warning,
docs/guide.md) gives the same answer everywhere.

>>> start = taken(); add(5); taken() - start
5
"""

from __future__ import annotations

from ..params import SlowRunParams

__all__ = [
    "add",
    "taken",
    "add_model",
    "model_taken",
    "units",
    "slow_note",
]

_count = [0]
_models = [0]


def add_model(size: int) -> None:
    """Count a CP-SAT search by its model's size (variables and constraints: building and
    presolving the model is most of a small search's time; CP-SAT's own deterministic time
    barely moves on the small models that make a run slow)."""
    _models[0] += int(size)


def model_taken() -> int:
    """The CP-SAT model sizes (variables + constraints) counted in this process so far."""
    return _models[0]


def add(nodes: int) -> None:
    """Count ``nodes`` node-visits."""
    _count[0] += int(nodes)


def taken() -> int:
    """The node-visits counted in this process so far (subtract two readings)."""
    return _count[0]


def units() -> int:
    """The work units counted so far: node-visits of the evaluator and the cycle simulator
    plus the sizes (variables and constraints) of the CP-SAT models solved."""
    return taken() + model_taken()


def slow_note(done: int, nodes: int, effort: str, params: SlowRunParams = SlowRunParams()) -> str | None:
    """The one-line warning of a run that has done ``done`` work units on a graph of
    ``nodes`` nodes at ``effort``, when that is past ``params.factor`` times the usual
    work per node of the effort (:class:`dansched.params.SlowRunParams`); None otherwise.

    >>> slow_note(100_000, 100, "default") is None
    True
    >>> slow_note(2_500_000, 100, "default")
    'slow run: 3.1x the usual work per node'
    """
    usual = params.usual(effort)
    per_node = done / max(1, nodes)
    if usual is None or per_node <= params.factor * usual:
        return None
    return f"slow run: {per_node / usual:.1f}x the usual work per node"
