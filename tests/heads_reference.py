"""The heads that respect one pipe written plainly (dictionaries of ancestors, the Python
Jackson bound): the oracle of the compiled pass ``dansched.kernels.heads.pipe_heads``
(tests/test_kernels.py). The bound and its proof: ``dansched/models/bounds/heads.py``."""

from __future__ import annotations

from collections.abc import Sequence

from dansched.models.bounds.floors import jackson_preemptive_bound


def pipe_heads(
    order: Sequence[int],
    preds: Sequence[Sequence[int]],
    pipe: Sequence[int],
    cycles: Sequence[int],
    head: Sequence[int],
    target: int,
    limit: int,
) -> list[int]:
    """Per node: the largest of ``head``, the longest path with the new heads, and Jackson's
    bound over its ancestors on ``target`` (heads, cycles, longest path from each to the
    node), those ancestors counted only while there are at most ``limit`` of them."""
    r = list(head)
    sets: dict[int, dict[int, int] | None] = {}
    for v in order:
        h = r[v]
        anc: dict[int, int] | None = {}
        for w in preds[v]:
            h = max(h, r[w] + cycles[w])
            if anc is None:
                continue
            got = sets[w]
            if got is None:
                anc = None
                continue
            for u, d in got.items():
                anc[u] = max(anc.get(u, 0), d + cycles[w])
            if pipe[w] == target:
                anc.setdefault(w, 0)
            if len(anc) > limit:
                anc = None
        sets[v] = anc
        if anc is not None and len(anc) >= 2:
            h = max(h, jackson_preemptive_bound([(r[u], cycles[u], d) for u, d in anc.items()]))
        r[v] = h
    return r
