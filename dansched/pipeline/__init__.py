"""The DAN-Scheduler pipeline: :func:`run_pipeline` runs MPAS -> DLR -> CPE (paper Eq. 16) with the
shared evaluator between the stages; :class:`SolveOptions` says what it does;
:class:`~dansched.pipeline.report.SolveReport` is what it reports. Problem 3 is one search
over Stage-2 candidates (:mod:`dansched.pipeline.problem3`)."""

from __future__ import annotations

from .options import EFFORTS, PROBLEMS, WINDOW_MODES, SolveOptions, effort_options
from .report import CandidateRecord, PlanFigures, SolveReport
from .run import SolveResult, run_pipeline

__all__ = [
    "SolveOptions",
    "effort_options",
    "EFFORTS",
    "SolveResult",
    "SolveReport",
    "CandidateRecord",
    "PlanFigures",
    "run_pipeline",
    "PROBLEMS",
    "WINDOW_MODES",
]
