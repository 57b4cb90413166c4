"""The one way dansched runs CP-SAT: deterministic (one worker, a fixed seed, a
``max_deterministic_time`` budget), with the wall-clock limit only as a safety net.

CP-SAT's own SIGINT handler is off (``catch_sigint_signal``): it ran inside the search's
native code and could deadlock on the allocator's lock. A signal stops a search through
the solver's own stop call instead (:func:`solve_model` registers it with
:func:`dansched.interrupt.stoppable`)."""

from __future__ import annotations

from ortools.sat.python import cp_model

from ...interrupt import stoppable
from ...simulate import work

__all__ = ["deterministic_solver", "solve_model", "stopped_by_clock"]


def deterministic_solver(seed: int, deterministic_time: float, time_limit: float) -> cp_model.CpSolver:
    """A CpSolver whose result depends only on the model, ``seed`` and ``deterministic_time``
    (unless ``time_limit`` seconds of wall clock run out first)."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
    solver.parameters.max_deterministic_time = deterministic_time
    solver.parameters.max_time_in_seconds = max(0.01, time_limit)
    solver.parameters.catch_sigint_signal = False  # SIGINT and SIGTERM are dansched's (module docstring)
    return solver


def solve_model(solver: cp_model.CpSolver, model: cp_model.CpModel) -> cp_model.CpSolverStatus:
    """``solver.solve(model)``, once more with symmetry detection off when CP-SAT fails
    inside (OR-Tools 9.15 raises ``IndexError: absl::btree_map::at`` from presolve on
    some small symmetric models with a solution hint). The retry is as deterministic as
    the first try; a second failure propagates. A signal meanwhile stops the search
    (:func:`dansched.interrupt.stoppable`)."""
    with stoppable(solver.stop_search):
        try:
            status = solver.solve(model)
        except IndexError:
            solver.parameters.symmetry_level = 0
            status = solver.solve(model)
    work.add_model(len(model.proto.variables) + len(model.proto.constraints))
    return status


def stopped_by_clock(solver: cp_model.CpSolver, status: cp_model.CpSolverStatus | int) -> bool:
    """Whether the wall-clock safety net, not the deterministic budget, ended a solve that
    had not finished (then its result may depend on the machine's load)."""
    if status in (cp_model.OPTIMAL, cp_model.INFEASIBLE, cp_model.MODEL_INVALID):
        return False
    p = solver.parameters
    return solver.wall_time >= p.max_time_in_seconds and solver.deterministic_time < p.max_deterministic_time
