"""The one decorator of the compiled kernels: numba's ``njit`` with the on-disk cache.

``cache=True`` keeps the machine code of each kernel beside its source, in the package's
``__pycache__`` when that folder is writable (an editable install), else in the user's
cache folder (``~/.cache/numba``; ``NUMBA_CACHE_DIR`` overrides both). The cache is keyed
by a hash of the kernel's source file, so an edit recompiles that file's kernels, and by
the argument types: every caller passes C-contiguous int64 arrays and Python ints, so each
kernel compiles exactly once per install (:func:`dansched.kernels.warm.warm`). Where no
folder is writable at all, the kernels still run, compiled anew in each process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba

__all__ = ["compiled"]

F = TypeVar("F", bound=Callable[..., Any])


def compiled(fn: F) -> F:
    """``fn`` compiled to machine code on its first call (or loaded from the cache)."""
    try:
        return cast(F, numba.njit(cache=True, nogil=True)(fn))
    except RuntimeError:  # numba found no writable cache folder for this source file
        return cast(F, numba.njit(cache=False, nogil=True)(fn))
