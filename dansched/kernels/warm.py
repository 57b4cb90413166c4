"""Compile every kernel once, ahead of the first plan (``dansched warm``; the README's install
step runs it): the machine code lands in numba's on-disk cache, so no later run pays for it.
"""

from __future__ import annotations

import time

from . import belady, evaluate, heads, list_schedule, min_reload, skeleton, timing

__all__ = ["warm"]


def warm() -> dict[str, float]:
    """Compile (or load from the cache) each kernel module's kernels: the seconds each took."""
    out: dict[str, float] = {}
    for name, module in (
        ("evaluate", evaluate),
        ("timing", timing),
        ("list_schedule", list_schedule),
        ("skeleton", skeleton),
        ("belady", belady),
        ("min_reload", min_reload),
        ("heads", heads),
    ):
        t0 = time.perf_counter()
        module.warm()
        out[name] = time.perf_counter() - t0
    return out
