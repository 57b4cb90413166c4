"""The one way dansched runs CP-SAT: deterministic (one worker, a fixed seed, a
``max_deterministic_time`` budget), with the wall-clock limit only as a safety net."""

from __future__ import annotations

from ortools.sat.python import cp_model

__all__ = ["deterministic_solver"]


def deterministic_solver(seed: int, deterministic_time: float, time_limit: float) -> cp_model.CpSolver:
    """A CpSolver whose result depends only on the model, ``seed`` and ``deterministic_time``
    (unless ``time_limit`` seconds of wall clock run out first)."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
    solver.parameters.max_deterministic_time = deterministic_time
    solver.parameters.max_time_in_seconds = max(0.01, time_limit)
    return solver
