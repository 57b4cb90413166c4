"""Lower bounds on maxV_stay (problem 1, paper Eq. 6)."""

from __future__ import annotations

import numpy as np

from ..instance import Instance
from .bound import Bound

__all__ = ["working_set_bound"]


def working_set_bound(inst: Instance) -> Bound:
    """Every operation runs while all its buffers are live, so maxV_stay is at least the
    largest L1+UB working set of a single operation."""
    peak = inst.is_peak_buffer()
    best = 0
    for v in np.flatnonzero(inst.kind == 0).tolist():
        bs = inst.bufs(v)
        best = max(best, int(inst.buf_size[bs][peak[bs]].sum()))
    return Bound(best, "largest L1+UB working set of one operation")
