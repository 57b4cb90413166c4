"""Adjacency lists as CSR arrays, the form every kernel reads, and back.

A graph of ``n`` nodes is two int64 arrays: ``ptr`` (``n + 1`` offsets) and ``idx``; node
``v``'s list is ``idx[ptr[v]:ptr[v + 1]]``, in the order it was given. Plain numpy, no
compiled code: these run once per graph, the kernels many times.

>>> ptr, idx = csr_of_lists([[1, 2], [], [0]])
>>> ptr.tolist(), idx.tolist()
([0, 2, 2, 3], [1, 2, 0])
>>> lists_of(*transposed(ptr, idx))
[[2], [0], [0]]
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from itertools import chain

import numpy as np

__all__ = ["csr_of_pairs", "csr_of_lists", "lists_of", "transposed", "int64_array"]


def int64_array(values: Iterable[int] | np.ndarray) -> np.ndarray:
    """``values`` as a C-contiguous int64 array (no copy when it already is one), the one
    argument type of the kernels: one compiled version each."""
    if isinstance(values, np.ndarray):
        return np.ascontiguousarray(values, dtype=np.int64)
    return np.fromiter(values, dtype=np.int64)


def csr_of_pairs(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lists of ``dst`` grouped by ``src`` (``n`` lists; stable within a list)."""
    order = np.argsort(src, kind="stable")
    counts = np.bincount(src, minlength=n) if len(src) else np.zeros(n, dtype=np.int64)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    return ptr, dst[order].astype(np.int64)


def csr_of_lists(lists: Sequence[Collection[int]]) -> tuple[np.ndarray, np.ndarray]:
    """CSR arrays of Python lists (each list's order kept)."""
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, lists), dtype=np.int64, count=len(lists)), out=ptr[1:])
    return ptr, np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=int(ptr[-1]))


def lists_of(ptr: np.ndarray, idx: np.ndarray) -> list[list[int]]:
    """Python lists of CSR arrays."""
    p, ix = ptr.tolist(), idx.tolist()
    return [ix[p[i] : p[i + 1]] for i in range(len(p) - 1)]


def transposed(ptr: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reversed graph: ``v`` is in ``u``'s new list for each ``u`` in ``v``'s list; each new
    list ascending in ``v`` (as appending ``v`` to ``u``'s list, ``v`` in increasing order, gives)."""
    n = len(ptr) - 1
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
    return csr_of_pairs(n, idx, src)
