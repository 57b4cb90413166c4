"""The DAN-Scheduler pipeline: :func:`solve` runs MPAS -> DLR -> CPE (paper Eq. 16) with the
shared evaluator between the stages; :class:`SolveOptions` says what it does;
:class:`~dansched.pipeline.report.SolveReport` is what it reports. Problem 3 is one search
over Stage-2 candidates (:mod:`dansched.pipeline.problem3`)."""

from __future__ import annotations

from .options import EFFORTS, PROBLEMS, WINDOW_MODES, SolveOptions, effort_options
from .report import CandidateRecord, PlanFigures, SolveReport
from .solve import SolveResult, solve

__all__ = [
    "SolveOptions",
    "effort_options",
    "EFFORTS",
    "SolveResult",
    "SolveReport",
    "CandidateRecord",
    "PlanFigures",
    "solve",
    "PROBLEMS",
    "WINDOW_MODES",
]
