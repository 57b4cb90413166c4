"""Orders that keep every buffer's lifetime (ALLOC before each user, each user before
FREE), for problems 2 and 3, which have no single-residency rule (docs/rules.md, section 8).

>>> from dansched.instance import instance_from_records
>>> a = {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 8, "Type": "L0A"}
>>> b = {"Id": 1, "Op": "ALLOC", "BufId": 1, "Size": 8, "Type": "L0A"}
>>> op = {"Id": 2, "Op": "MMAD", "Pipe": "CUBE", "Cycles": 3, "Bufs": [1, 0]}
>>> f0 = {"Id": 3, "Op": "FREE", "BufId": 0, "Size": 8, "Type": "L0A"}
>>> f1 = {"Id": 4, "Op": "FREE", "BufId": 1, "Size": 8, "Type": "L0A"}
>>> lifetime_order(instance_from_records("two_l0a", [a, b, op, f0, f1], []))
[0, 1, 2, 3, 4]
"""

from __future__ import annotations

from ...graph import build_mpas_graph
from ...instance import Instance

__all__ = ["lifetime_order"]


def lifetime_order(inst: Instance) -> list[int]:
    """The smallest-id-first topological order of the edges together with the lifetime
    edges; raises :class:`~dansched.errors.NoLegalOrderError` (exit status 1)
    when they form a cycle (an edge ``FREE -> user`` or ``user -> ALLOC``)."""
    return build_mpas_graph(inst, check_l0=False).topo
