"""dansched: memory-aware scheduling of operator-level DAGs onto one NPU core.

Three deterministic stages from the DAN-Scheduler paper (MPAS, DLR, CPE), one
shared evaluator and cycle simulator (:mod:`dansched.simulate`), CP-SAT bounds.
"""

__version__ = "0.1.0"
