"""How much memory a solve needs, and the one line a solve that ran out of it ends with.

A graph too large for the machine's memory fails wherever the next allocation happens
(often Stage 3's memory skeleton, which holds the augmented graph and its timing). Rather
than that traceback, :func:`out_of_memory` turns the ``MemoryError`` into
:class:`~dansched.errors.OutOfMemory` (exit status 1) saying what the graph needs.

The estimate is linear in the graph's size, fitted on measured peaks
(``benchmarks/results/bench_scale*.md`` and a 2M-node chain at ``--effort fast``): about
1 KiB per node and per edge on top of 150 MiB for the interpreter and the solvers; a
1,012,336-node random graph (1,689,788 edges) peaked at 2.5 GiB (estimate 2.7 GiB), a
2,000,064-node chain (2,666,751 edges) at 4.0 GiB (estimate 4.6 GiB).

>>> round(memory_needed(1_000_000, 1_500_000) / 2**30, 1)
2.5

A solve allocates millions of small lists and tuples that live until the stage ends;
Python's cyclic collector would walk them again and again (a fifth of a fast solve's time)
to find almost no cycles. :func:`collection_paused` switches it off for the solve: the
reference counts still free everything that is not in a cycle, and the few cycles left wait
for the collector's first run after the solve (measured on Matmul_Case1 at default effort:
the same plans, peak memory 2 % higher, the solve a fifth faster).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

from ..errors import OutOfMemory
from ..instance import Instance

__all__ = ["memory_needed", "out_of_memory", "collection_paused", "BASE_BYTES", "BYTES_PER_ELEMENT"]

BASE_BYTES = 150 * 2**20  # the interpreter with numpy, OR-Tools and HiGHS loaded
BYTES_PER_ELEMENT = 2**10  # per node and per edge of the instance (module docstring)


def memory_needed(nodes: int, edges: int) -> int:
    """Bytes a solve of a graph of ``nodes`` nodes and ``edges`` edges needs, about."""
    return BASE_BYTES + BYTES_PER_ELEMENT * (nodes + edges)


@contextlib.contextmanager
def out_of_memory(inst: Instance) -> Iterator[None]:
    """Run the block; a ``MemoryError`` in it becomes :class:`OutOfMemory` naming the graph's
    size and :func:`memory_needed` (one already converted passes as it is)."""
    try:
        yield
    except OutOfMemory:
        raise
    except MemoryError:
        need = memory_needed(inst.n, inst.num_edges) / 2**30
        raise OutOfMemory(
            f"{inst.name}: out of memory (host RAM): a graph of {inst.n:,} nodes and {inst.num_edges:,} edges needs "
            f"about {need:.1f} GiB of RAM to solve (about 1 KiB per node and per edge); run it where that much is free"
        ) from None


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """Run the block with Python's cyclic garbage collector off (module docstring); as it
    was before afterwards. Nested blocks leave it to the outermost."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
