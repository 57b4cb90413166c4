"""Instance: an operator-level DAG with ALLOC/FREE buffer events (docs/rules.md, section 1).

An :class:`Instance` is immutable: per-node numpy arrays, CSR successor /
predecessor / buffer lists and a buffer table. :func:`load_instance` reads the
contest JSON or CSV-pair form and checks every well-formedness rule of
docs/rules.md, section 1.2, against a hardware model; a violation raises :class:`InstanceError`
with a one-line message naming the node or buffer.

>>> from dansched.instance import instance_from_records
>>> inst = instance_from_records("tiny", [
...     {"Id": 0, "Op": "ALLOC", "BufId": 7, "Size": 4, "Type": "UB"},
...     {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [7]},
...     {"Id": 2, "Op": "FREE", "BufId": 7, "Size": 4, "Type": "UB"}], [[0, 1], [1, 2]])
>>> inst.n, inst.num_buffers, bool(inst.buf_backed[0])
(3, 1, True)
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from .checks import TEXT_ENCODING, check_integer, check_path, check_type, read_json
from .errors import ArgumentError, DuplicateKeyError, InstanceError
from .hardware import SUPPORTED_LIMIT, Hardware, default_hardware, did_you_mean, spill_traffic
from .kernels.csr import csr_of_pairs, lists_of
from .plan import atomic_write_files, atomic_write_text, check_case_name
from .reprs import cut

__all__ = [
    "Instance",
    "KIND_OP",
    "KIND_ALLOC",
    "KIND_FREE",
    "load_instance",
    "instance_from_records",
    "instance_name",
    "write_json",
    "write_csv_pair",
    "require_instance",
]

KIND_OP, KIND_ALLOC, KIND_FREE = 0, 1, 2
NODE_FIELDS = ("Id", "Op", "BufId", "Size", "Type", "Pipe", "Cycles", "Bufs")
INT_LIMIT = 2**63  # every integer, and the totals of Size and of Cycles, must stay below (int64)
# a float holds every integer up to 2**53 exactly; an integer written as a float beyond it may
# already be another integer (12345678901234567.0 reads as ...68), so it is refused, not read
EXACT_FLOAT = 2**53


@dataclass(frozen=True, eq=False)
class Instance:
    """An operator-level DAG, read-only. Node arrays are indexed by node id, buffer
    arrays by buffer index (the rank of its ``BufId``; ``buf_id`` maps back)."""

    name: str
    hw: Hardware
    op: tuple[str, ...]
    kind: np.ndarray  # int8: KIND_OP / KIND_ALLOC / KIND_FREE
    pipe: np.ndarray  # int16 index into hw.pipes, -1 for cache nodes
    cycles: np.ndarray  # int64, 0 for cache nodes
    node_buf: np.ndarray  # int64 buffer index of a cache node, -1 for operations
    bufs_ptr: np.ndarray
    bufs_idx: np.ndarray  # buffer indices used by each operation
    edges: np.ndarray  # (E, 2) unique edges, sorted
    succ_ptr: np.ndarray
    succ_idx: np.ndarray
    pred_ptr: np.ndarray
    pred_idx: np.ndarray
    buf_id: np.ndarray  # BufId value of each buffer
    buf_size: np.ndarray
    buf_tier: np.ndarray  # index into hw.tiers
    buf_alloc: np.ndarray  # node id of the ALLOC
    buf_free: np.ndarray  # node id of the FREE
    buf_backed: np.ndarray  # bool: used by a COPY_IN, so DDR already holds it
    users_ptr: np.ndarray
    users_idx: np.ndarray  # operation nodes whose Bufs hold the buffer
    warnings: tuple[str, ...] = field(default=())

    def __repr__(self) -> str:
        """One line: the case, its sizes and the hardware (never the node arrays)."""
        return cut(
            f"Instance({self.name}, {self.n:,} nodes, {self.num_edges:,} edges, {self.num_buffers:,} buffers; "
            f"{self.hw.capacity_text})"
        )

    # ---- sizes -------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.op)

    @property
    def num_buffers(self) -> int:
        return len(self.buf_id)

    @property
    def num_edges(self) -> int:
        return len(self.edges)

    # ---- adjacency ---------------------------------------------------------------
    def _node(self, v: Any, what: str) -> int:
        return check_integer(v, f"Instance.{what}: v (a node id)", 0, self.n - 1)

    def succ(self, v: int) -> np.ndarray:
        """The successors of node ``v``."""
        v = self._node(v, "succ")
        return self.succ_idx[self.succ_ptr[v] : self.succ_ptr[v + 1]]

    def pred(self, v: int) -> np.ndarray:
        """The predecessors of node ``v``."""
        v = self._node(v, "pred")
        return self.pred_idx[self.pred_ptr[v] : self.pred_ptr[v + 1]]

    def bufs(self, v: int) -> np.ndarray:
        """The buffer indices operation ``v`` uses (none for a cache node)."""
        v = self._node(v, "bufs")
        return self.bufs_idx[self.bufs_ptr[v] : self.bufs_ptr[v + 1]]

    def users(self, b: int) -> np.ndarray:
        """The operations using buffer index ``b``."""
        b = check_integer(b, "Instance.users: b (a buffer index)", 0, self.num_buffers - 1)
        return self.users_idx[self.users_ptr[b] : self.users_ptr[b + 1]]

    def lists(self) -> AdjacencyLists:
        """Plain Python lists of the CSR arrays, for tight pure-Python loops (cached)."""
        cached = self.__dict__.get("_lists")
        if cached is None:
            cached = AdjacencyLists.of(self)
            object.__setattr__(self, "_lists", cached)
        return cached

    # ---- derived facts -------------------------------------------------------------
    def is_peak_buffer(self) -> np.ndarray:
        """Bool per buffer: its tier is one of the hardware's peak tiers (L1, UB)."""
        peak = [self.hw.tier_index(t) for t in self.hw.peak_tiers]
        return np.isin(self.buf_tier, peak)

    def buffer_index(self, buf_id_value: int) -> int:
        """Buffer index of a ``BufId`` value; :class:`~dansched.errors.ArgumentError` when
        the instance has none (or it is not an integer)."""
        value = check_integer(buf_id_value, "Instance.buffer_index: buf_id_value (a BufId)", -INT_LIMIT, INT_LIMIT - 1)
        i = int(np.searchsorted(self.buf_id, value))
        if i >= len(self.buf_id) or int(self.buf_id[i]) != value:
            raise ArgumentError(f"Instance.buffer_index: {self.name} has no buffer with BufId {value}")
        return i

    def same_as(self, other: Instance) -> bool:
        """Equal graphs, fields and buffer tables (the name and warnings aside)."""
        check_type(other, Instance, "Instance.same_as: other")
        if self.op != other.op or self.hw != other.hw:
            return False
        names = [
            "kind",
            "pipe",
            "cycles",
            "node_buf",
            "bufs_ptr",
            "bufs_idx",
            "edges",
            "buf_id",
            "buf_size",
            "buf_tier",
            "buf_alloc",
            "buf_free",
            "buf_backed",
            "users_ptr",
            "users_idx",
        ]
        return all(np.array_equal(getattr(self, k), getattr(other, k)) for k in names)

    def to_records(self) -> tuple[list[dict[str, Any]], list[list[int]]]:
        """The instance as contest JSON node records and edge pairs."""
        nodes: list[dict[str, Any]] = []
        for v in range(self.n):
            if self.kind[v] == KIND_OP:
                nodes.append(
                    {
                        "Id": v,
                        "Op": self.op[v],
                        "Pipe": self.hw.pipes[self.pipe[v]],
                        "Cycles": int(self.cycles[v]),
                        "Bufs": [int(self.buf_id[b]) for b in self.bufs(v)],
                    }
                )
            else:
                b = int(self.node_buf[v])
                nodes.append(
                    {
                        "Id": v,
                        "Op": self.op[v],
                        "BufId": int(self.buf_id[b]),
                        "Size": int(self.buf_size[b]),
                        "Type": self.hw.tiers[self.buf_tier[b]],
                    }
                )
        return nodes, self.edges.tolist()


@dataclass(frozen=True)
class AdjacencyLists:
    """Python-list mirrors of an instance's CSR arrays (list indexing beats numpy in loops)."""

    succ: list[list[int]]
    pred: list[list[int]]
    bufs: list[list[int]]
    users: list[list[int]]
    kind: list[int]
    pipe: list[int]
    cycles: list[int]
    node_buf: list[int]

    @classmethod
    def of(cls, inst: Instance) -> AdjacencyLists:
        return cls(
            succ=lists_of(inst.succ_ptr, inst.succ_idx),
            pred=lists_of(inst.pred_ptr, inst.pred_idx),
            bufs=lists_of(inst.bufs_ptr, inst.bufs_idx),
            users=lists_of(inst.users_ptr, inst.users_idx),
            kind=inst.kind.tolist(),
            pipe=inst.pipe.tolist(),
            cycles=inst.cycles.tolist(),
            node_buf=inst.node_buf.tolist(),
        )


# ---------------------------------------------------------------------------------
# building and checking
# ---------------------------------------------------------------------------------


def require_instance(value: Any, what: str) -> Instance:
    """``value`` when it is an :class:`Instance`, else
    :class:`~dansched.errors.ArgumentError` naming ``what`` (``solve: inst``) and how to
    make one. Every public call that takes an instance checks it first."""
    hint = "load_instance(path) reads a file, GraphBuilder().build(name) builds one"
    result: Instance = check_type(value, Instance, what, hint)
    return result


def _require_hardware(hw: Any, what: str) -> Hardware | None:
    if hw is None:
        return None
    result: Hardware = check_type(hw, Hardware, what, "load_hardware(path) reads a file, None: the default")
    return result


def _is_int(x: Any) -> TypeGuard[int | np.integer[Any]]:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _shown(x: Any, limit: int = 40) -> str:
    """``repr`` of a field's value for a one-line message, shortened when it is long."""
    try:
        text = repr(x)
    except ValueError:  # an int with more digits than Python will print
        return f"an integer of {int(x).bit_length()} bits"
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


class _Literal(float):
    """A JSON number beyond :data:`EXACT_FLOAT` as it was written: the float, and the text
    (``repr``) that messages quote."""

    text: str

    def __repr__(self) -> str:
        return self.text


def _json_float(text: str) -> float:
    """A JSON number with a fraction or an exponent: a float, kept with its text when it is
    an integral one beyond :data:`EXACT_FLOAT` (the loader refuses those)."""
    value = float(text)
    if value.is_integer() and abs(value) > EXACT_FLOAT:
        literal = _Literal(text)
        literal.text = text
        return literal
    return value


def _check_exact(x: Any, what: str) -> None:
    """Refuse an integral float beyond :data:`EXACT_FLOAT`: the integer it was written as
    may not be the one it holds."""
    if isinstance(x, float) and x.is_integer() and abs(x) > EXACT_FLOAT:
        raise InstanceError(
            f"{what} is {_shown(x)}, an integral float beyond 2**53, which a float cannot hold "
            "exactly: write it as an integer"
        )


def _require_int(x: Any, what: str) -> int:
    _check_exact(x, what)
    if not _is_int(x):
        raise InstanceError(f"{what} must be an integer, got {_shown(x)}")
    if not -INT_LIMIT <= x < INT_LIMIT:
        raise InstanceError(f"{what} is {_shown(int(x))}, too large: values must fit in 63 bits (|value| < 2**63)")
    return int(x)


def _find_cycle(n: int, succ: list[list[int]], indeg: list[int]) -> list[int]:
    """A cycle of the graph as its nodes in edge order, starting at its smallest node
    (empty when the graph is acyclic). Kahn's algorithm removes every node not on or
    behind a cycle; each node left has a predecessor left, so walking predecessors from
    any of them must repeat a node, and the walk between the repeats is a cycle."""
    deg = list(indeg)
    stack = [v for v in range(n) if deg[v] == 0]
    seen = 0
    while stack:
        v = stack.pop()
        seen += 1
        for w in succ[v]:
            deg[w] -= 1
            if deg[w] == 0:
                stack.append(w)
    if seen == n:
        return []
    left = [v for v in range(n) if deg[v] > 0]
    pred: dict[int, int] = {}  # one predecessor left, the smallest, per node left
    for u in left:
        for w in succ[u]:
            if deg[w] > 0 and (w not in pred or u < pred[w]):
                pred[w] = u
    walk, at = [left[0]], {left[0]: 0}
    while pred[walk[-1]] not in at:
        at[pred[walk[-1]]] = len(walk)
        walk.append(pred[walk[-1]])
    cycle = walk[at[pred[walk[-1]]] :][::-1]  # the walk went backwards along the edges
    k = cycle.index(min(cycle))
    return cycle[k:] + cycle[:k]


def _cycle_text(cycle: list[int], shown: int = 12) -> str:
    """``0 -> 457 -> 0``; a long cycle shows its first nodes and how many it has."""
    nodes = [str(v) for v in cycle]
    if len(nodes) > shown:
        nodes = nodes[: shown - 1] + [f"... ({len(cycle)} nodes in all)"]
    return " -> ".join(nodes + [str(cycle[0])])


@dataclass
class _NodeRecords:
    """What the node records say, checked one record at a time (docs/rules.md, section 1.2)."""

    n: int
    op: list[str]
    kind: np.ndarray
    pipe: np.ndarray
    cycles: np.ndarray
    node_bufid: list[int | None]  # BufId of a cache node (BufIds may be negative)
    op_bufs: list[list[int]]
    allocs: dict[int, tuple[int, int, str]] = field(default_factory=dict)  # BufId -> (node, Size, Type)
    frees: dict[int, tuple[int, int, str]] = field(default_factory=dict)
    costed_one: Counter[str] = field(default_factory=Counter)  # Op -> operations costed 1 cycle
    total_cycles: int = 0

    @classmethod
    def empty(cls, n: int) -> _NodeRecords:
        return cls(
            n,
            [""] * n,
            np.zeros(n, dtype=np.int8),
            np.full(n, -1, dtype=np.int16),
            np.zeros(n, dtype=np.int64),
            [None] * n,
            [[] for _ in range(n)],
        )


def _node_id(rec: Any, pos: int, n: int, seen_id: list[bool]) -> int:
    if not isinstance(rec, dict):
        raise InstanceError(f"node record #{pos}: must be an object with fields {', '.join(NODE_FIELDS)}")
    if "Id" not in rec:
        raise InstanceError(f"node record #{pos}: missing field 'Id'")
    v = _require_int(rec["Id"], f"node record #{pos}: 'Id'")
    if not 0 <= v < n:
        raise InstanceError(f"node {v}: ids must be exactly 0..{n - 1}")
    if seen_id[v]:
        raise InstanceError(f"node {v}: id appears twice")
    seen_id[v] = True
    return v


def _read_cache_node(t: _NodeRecords, v: int, rec: dict[str, Any], name_op: str, hw: Hardware) -> None:
    """An ALLOC or FREE record: BufId, a positive Size and a tier of the hardware model."""
    t.kind[v] = KIND_ALLOC if name_op == "ALLOC" else KIND_FREE
    for key in ("BufId", "Size", "Type"):
        if key not in rec or rec[key] is None:
            raise InstanceError(f"node {v} ({name_op}): missing field '{key}'")
    b = _require_int(rec["BufId"], f"node {v} ({name_op}): 'BufId'")
    size = _require_int(rec["Size"], f"node {v} ({name_op}) of buffer {b}: 'Size'")
    if size <= 0:
        raise InstanceError(f"node {v} ({name_op}) of buffer {b}: Size must be > 0, got {size}")
    tier = rec["Type"]
    if not isinstance(tier, str) or tier not in hw.capacity:
        raise InstanceError(
            f"node {v} ({name_op}) of buffer {b}: Type {_shown(tier)} is not a tier of the hardware model "
            f"{list(hw.tiers)}{_suggestion(tier, hw.tiers)} (to add one: --hw FILE with [new_tiers] NAME = capacity)"
        )
    table = t.allocs if name_op == "ALLOC" else t.frees
    if b in table:
        raise InstanceError(f"buffer {b}: more than one {name_op} (nodes {table[b][0]} and {v})")
    table[b] = (v, size, tier)
    t.node_bufid[v] = b


def _suggestion(name: Any, known: Sequence[str]) -> str:
    """``: did you mean X?`` for a name close to a known one (as a ``--hw`` typo gets), else nothing."""
    hint = did_you_mean(name, list(known)) if isinstance(name, str) else ""
    return hint if hint.startswith(":") else ""


def _read_op_node(t: _NodeRecords, v: int, rec: dict[str, Any], name_op: str, hw: Hardware) -> None:
    """An operation record: a pipe of the hardware model, Cycles (1 when missing or not a
    non-negative integer) and the distinct buffer ids of Bufs."""
    p = rec.get("Pipe")
    if p not in hw.pipes:
        raise InstanceError(
            f"node {v} ({name_op}): Pipe {_shown(p)} is not a pipe of the hardware model {list(hw.pipes)}"
            f"{_suggestion(p, hw.pipes)}"
        )
    t.pipe[v] = hw.pipe_index(p)
    c = rec.get("Cycles")
    _check_exact(c, f"node {v} ({name_op}): 'Cycles'")
    if _is_int(c) and c >= 0:
        if c >= INT_LIMIT:
            raise InstanceError(
                f"node {v} ({name_op}): Cycles is {_shown(int(c))}, too large: values must fit in 63 bits (< 2**63)"
            )
        t.cycles[v] = int(c)
        t.total_cycles += int(c)
    else:
        t.cycles[v] = 1
        t.costed_one[name_op] += 1
    bl = rec.get("Bufs", [])
    if bl is None:
        bl = []
    if not isinstance(bl, list):
        raise InstanceError(f"node {v} ({name_op}): 'Bufs' must be a list of buffer ids, got {_shown(bl)}")
    uniq: list[int] = []
    for x in bl:
        b = _require_int(x, f"node {v} ({name_op}): each id in 'Bufs'")
        if b not in uniq:
            uniq.append(b)
    t.op_bufs[v] = uniq


def _read_nodes(nodes: Sequence[Any], hw: Hardware) -> _NodeRecords:
    if not isinstance(nodes, Sequence) or isinstance(nodes, (str, bytes)):
        raise InstanceError("instance: 'Nodes' must be a list of node records")
    n = len(nodes)
    if n == 0:
        raise InstanceError("instance: it has no nodes")
    t = _NodeRecords.empty(n)
    seen_id = [False] * n
    for pos, rec in enumerate(nodes):
        v = _node_id(rec, pos, n, seen_id)
        name_op = rec.get("Op")
        if not isinstance(name_op, str) or not name_op:
            raise InstanceError(f"node {v}: 'Op' must be a non-empty string, got {_shown(name_op)}")
        t.op[v] = name_op
        if name_op in ("ALLOC", "FREE"):
            _read_cache_node(t, v, rec, name_op, hw)
        else:
            _read_op_node(t, v, rec, name_op, hw)
    return t


def _check_buffers(t: _NodeRecords) -> None:
    """One ALLOC and one FREE per buffer, agreeing on Size and Type; totals within 63 bits."""
    for b, (v, size, tier) in t.allocs.items():
        if b not in t.frees:
            raise InstanceError(f"buffer {b}: has an ALLOC (node {v}) but no FREE")
        fv, fsize, ftier = t.frees[b]
        if (fsize, ftier) != (size, tier):
            raise InstanceError(
                f"buffer {b}: ALLOC (node {v}) says {size} in {tier}, FREE (node {fv}) says {fsize} in {ftier}"
            )
    for b, (fv, _, _) in t.frees.items():
        if b not in t.allocs:
            raise InstanceError(f"buffer {b}: has a FREE (node {fv}) but no ALLOC")
    total_size = sum(size for _, size, _ in t.allocs.values())
    if total_size >= INT_LIMIT:
        raise InstanceError(
            f"instance: the Sizes of all buffers add up to {total_size}, more than 63 bits hold (< 2**63)"
        )
    if t.total_cycles >= INT_LIMIT:
        raise InstanceError(
            f"instance: the Cycles of all operations add up to {t.total_cycles}, more than 63 bits hold (< 2**63)"
        )


@dataclass
class _BufferTable:
    """Buffers in BufId order: id, Size, tier index, ALLOC and FREE node."""

    ids: np.ndarray
    size: np.ndarray
    tier: np.ndarray
    alloc: np.ndarray
    free: np.ndarray
    index_of: dict[int, int]


def _buffer_table(t: _NodeRecords, hw: Hardware) -> _BufferTable:
    """The buffer table; a buffer larger than its tier is an error."""
    ids = sorted(t.allocs)
    bt = _BufferTable(
        ids=np.array(ids, dtype=np.int64),
        size=np.array([t.allocs[b][1] for b in ids], dtype=np.int64),
        tier=np.array([hw.tier_index(t.allocs[b][2]) for b in ids], dtype=np.int16),
        alloc=np.array([t.allocs[b][0] for b in ids], dtype=np.int64),
        free=np.array([t.frees[b][0] for b in ids], dtype=np.int64),
        index_of={int(b): i for i, b in enumerate(ids)},
    )
    for i, b in enumerate(ids):
        cap = hw.capacity[hw.tiers[bt.tier[i]]]
        if bt.size[i] > cap:
            raise InstanceError(
                f"buffer {b} (ALLOC node {int(bt.alloc[i])}): Size {int(bt.size[i])} is larger than "
                f"tier {hw.tiers[bt.tier[i]]} ({cap})"
            )
    return bt


def _buffer_uses(t: _NodeRecords, bt: _BufferTable, hw: Hardware) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(node, buffer index)`` pairs of every operation's Bufs, and which buffers a COPY_IN
    fills (backed); the buffers one operation needs in a tier must fit in it together."""
    bsrc: list[int] = []
    bdst: list[int] = []
    backed = np.zeros(len(bt.ids), dtype=bool)
    for v in range(t.n):
        if t.kind[v] != KIND_OP:
            continue
        per_tier: Counter[int] = Counter()
        for b in t.op_bufs[v]:
            if b not in bt.index_of:
                raise InstanceError(f"node {v} ({t.op[v]}): uses buffer {b}, which has no ALLOC")
            i = bt.index_of[b]
            bsrc.append(v)
            bdst.append(i)
            per_tier[int(bt.tier[i])] += int(bt.size[i])
            if t.op[v] == "COPY_IN":
                backed[i] = True
        for tier, total in per_tier.items():
            cap = hw.capacity[hw.tiers[tier]]
            if total > cap:
                raise InstanceError(
                    f"node {v} ({t.op[v]}): its buffers in {hw.tiers[tier]} need {total}, the tier holds {cap}"
                )
    return np.array(bsrc, dtype=np.int64), np.array(bdst, dtype=np.int64), backed


def _check_horizons(t: _NodeRecords, bt: _BufferTable, users: np.ndarray, backed: np.ndarray, hw: Hardware) -> None:
    """Supported ranges (docs/rules.md): the time horizon (every operation's Cycles plus the
    cycles of one spill of each buffer between each two consecutive needs of it: ALLOC,
    each user, FREE) and the traffic horizon (the traffic of those spills) stay below
    :data:`~dansched.hardware.SUPPORTED_LIMIT`. Exact Python integers throughout; the
    message names the figure and its largest part."""
    sizes, gaps = bt.size.tolist(), (users + 1).tolist()
    c_in = [hw.spill_cycles(s) for s in sizes]
    spill_time = [g * (c + (0 if k else c)) for g, c, k in zip(gaps, c_in, backed.tolist())]
    spill_load = [g * spill_traffic(s, bool(k)) for g, s, k in zip(gaps, sizes, backed.tolist())]

    def buffer(i: int) -> str:
        return f"buffer {int(bt.ids[i])} (Size {sizes[i]}, at most {gaps[i]} spill(s))"

    cycles = t.cycles.tolist()
    time_total = sum(cycles) + sum(spill_time)
    if time_total >= SUPPORTED_LIMIT:
        v = max(range(t.n), key=cycles.__getitem__)
        b = max(range(len(sizes)), key=spill_time.__getitem__, default=None)
        if b is not None and spill_time[b] > cycles[v]:
            largest = f"{buffer(b)}, {spill_time[b]} spill cycles"
        else:
            largest = f"node {v} ({t.op[v]}), Cycles {cycles[v]}"
        raise InstanceError(
            f"instance: its time horizon is {time_total} cycles, beyond the supported 2**60 = {SUPPORTED_LIMIT} "
            f"(docs/rules.md, Supported ranges); the largest part: {largest}"
        )
    traffic_total = sum(spill_load)
    if traffic_total >= SUPPORTED_LIMIT:
        b = max(range(len(sizes)), key=spill_load.__getitem__)
        raise InstanceError(
            f"instance: its traffic horizon is {traffic_total} units, beyond the supported 2**60 = {SUPPORTED_LIMIT} "
            f"(docs/rules.md, Supported ranges); the largest part: {buffer(b)}, {spill_load[b]} units"
        )


def _read_edges(edges: Iterable[Any], n: int) -> np.ndarray:
    """The distinct edges as an ``(E, 2)`` array, sorted; every node must exist, the graph
    must be acyclic."""
    edge_list: list[tuple[int, int]] = []
    if not isinstance(edges, Iterable) or isinstance(edges, (str, bytes, dict)):
        raise InstanceError("instance: 'Edges' must be a list of [src, dst] pairs")
    for k, e in enumerate(edges):
        if not isinstance(e, (list, tuple)) or len(e) != 2:
            raise InstanceError(f"edge #{k}: must be a pair [src, dst], got {_shown(e)}")
        u = _require_int(e[0], f"edge #{k}: source")
        w = _require_int(e[1], f"edge #{k}: target")
        for x in (u, w):
            if not 0 <= x < n:
                raise InstanceError(f"edge #{k} [{u}, {w}]: node {x} does not exist")
        if u == w:
            raise InstanceError(f"edge #{k} [{u}, {w}]: node {u} depends on itself (the graph must be acyclic)")
        edge_list.append((u, w))
    return np.array(sorted(set(edge_list)), dtype=np.int64).reshape(-1, 2)


def _cycles_warnings(costed_one: Counter[str]) -> list[str]:
    if not costed_one:
        return []
    total = sum(costed_one.values())
    detail = ", ".join(f"{k}: {c}" for k, c in sorted(costed_one.items()))
    return [f"{total} operation node(s) have missing or invalid Cycles and cost 1 cycle ({detail})"]


def instance_from_records(
    name: str,
    nodes: Sequence[Any],
    edges: Iterable[Any],
    hw: Hardware | None = None,
) -> Instance:
    """Check contest node records and edge pairs (docs/rules.md, section 1.2) and build an
    :class:`Instance`. ``name`` is the case name, the stem of the files it is written to, so
    it must be one (:func:`~dansched.plan.check_case_name`: no ``/``, no NUL...)."""
    check_case_name(name, "instance_from_records: name")
    hw = _require_hardware(hw, "instance_from_records: hw") or default_hardware()
    t = _read_nodes(nodes, hw)
    _check_buffers(t)
    bt = _buffer_table(t, hw)
    n = t.n
    node_buf = np.array([-1 if b is None else bt.index_of[b] for b in t.node_bufid], dtype=np.int64)
    bsrc, bdst, backed = _buffer_uses(t, bt, hw)
    _check_horizons(t, bt, np.bincount(bdst, minlength=len(bt.ids)), backed, hw)
    bufs_ptr, bufs_idx = csr_of_pairs(n, bsrc, bdst)
    users_ptr, users_idx = csr_of_pairs(len(bt.ids), bdst, bsrc)
    earr = _read_edges(edges, n)
    succ_ptr, succ_idx = csr_of_pairs(n, earr[:, 0], earr[:, 1])
    pred_ptr, pred_idx = csr_of_pairs(n, earr[:, 1], earr[:, 0])
    cycle = _find_cycle(n, lists_of(succ_ptr, succ_idx), np.diff(pred_ptr).tolist())
    if cycle:
        raise InstanceError(f"the edges close a cycle: {_cycle_text(cycle)} (the graph must be acyclic)")
    return Instance(
        name=name,
        hw=hw,
        op=tuple(t.op),
        kind=t.kind,
        pipe=t.pipe,
        cycles=t.cycles,
        node_buf=node_buf,
        bufs_ptr=bufs_ptr,
        bufs_idx=bufs_idx,
        edges=earr,
        succ_ptr=succ_ptr,
        succ_idx=succ_idx,
        pred_ptr=pred_ptr,
        pred_idx=pred_idx,
        buf_id=bt.ids,
        buf_size=bt.size,
        buf_tier=bt.tier,
        buf_alloc=bt.alloc,
        buf_free=bt.free,
        buf_backed=backed,
        users_ptr=users_ptr,
        users_idx=users_idx,
        warnings=tuple(_cycles_warnings(t.costed_one)),
    )


# ---------------------------------------------------------------------------------
# file formats
# ---------------------------------------------------------------------------------


def _csv_pair_paths(path: Path) -> tuple[Path, Path, str]:
    stem = path.name
    for suffix in ("_Nodes.csv", "_Edges.csv"):
        if stem.endswith(suffix):
            case = stem[: -len(suffix)]
            return path.with_name(f"{case}_Nodes.csv"), path.with_name(f"{case}_Edges.csv"), case
    raise InstanceError(f"{path}: a CSV instance is named <case>_Nodes.csv beside <case>_Edges.csv")


def instance_name(path: str | Path) -> str:
    """The case name of an instance file: its stem, without ``_Nodes``/``_Edges`` for CSV."""
    p = Path(path)
    if p.suffix.lower() == ".csv":
        return _csv_pair_paths(p)[2]
    return p.stem


def _csv_cell(value: str, key: str, where: str) -> Any:
    """A cell's value: text for Op, Type and Pipe, a list for Bufs, else an integer when it
    is one (``3`` or ``3.0``; ``where``: the file and line, for the message refusing an
    integral float beyond :data:`EXACT_FLOAT`), else the text."""
    value = value.strip()
    if value == "":
        return None
    if key in ("Op", "Type", "Pipe"):
        return value
    if key == "Bufs":
        inner = value.strip("[]").strip()
        if not inner:
            return []
        out: list[int | str] = []
        for part in inner.split(","):
            part = part.strip()
            try:
                out.append(int(part))
            except ValueError:
                out.append(part)
        return out
    try:
        return int(value)
    except ValueError:
        pass
    try:  # integral floats such as "3.0", as spreadsheet tools write integer columns with blanks
        exact = Decimal(value)  # the value as written: no float rounds it first
    except InvalidOperation:
        return value
    if not exact.is_finite() or exact != exact.to_integral_value():
        return value
    if abs(exact) > EXACT_FLOAT:
        raise InstanceError(
            f"{where}: {key} is {value}, an integral float beyond 2**53, which a float cannot hold exactly: "
            "write it as an integer"
        )
    return int(exact)


def _read_csv_pair(path: Path) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    nodes_path, edges_path, _ = _csv_pair_paths(path)
    for p in (nodes_path, edges_path):
        if not p.is_file():
            raise InstanceError(
                f"{p}: no such file (a CSV instance needs both {nodes_path.name} and {edges_path.name})"
            )
    nodes: list[dict[str, Any]] = []
    with nodes_path.open(newline="", encoding=TEXT_ENCODING) as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None:
            raise InstanceError(f"{nodes_path}: header must be {','.join(NODE_FIELDS)}")
        names = [h.strip() for h in reader.fieldnames]
        twice = next((h for i, h in enumerate(names) if h in names[:i]), None)
        if twice is not None:  # the last column of a name would silently win
            raise InstanceError(f"{nodes_path}: the header names {twice!r} twice")
        missing = [k for k in NODE_FIELDS if k not in names]
        if missing:  # a column left out (or misspelt) would silently read as blank fields
            raise InstanceError(f"{nodes_path}: header must be {','.join(NODE_FIELDS)} (missing {', '.join(missing)})")
        for line, row in enumerate(reader, start=2):
            if None in row:
                raise InstanceError(f"{nodes_path}:{line}: more fields than the header names")
            where = f"{nodes_path}:{line}"
            rec = {k.strip(): _csv_cell(v or "", k.strip(), where) for k, v in row.items() if k.strip() in NODE_FIELDS}
            rec = {k: v for k, v in rec.items() if v is not None}
            if rec.get("Op") not in ("ALLOC", "FREE") and "Bufs" not in rec:
                rec["Bufs"] = []
            nodes.append(rec)
    edges: list[list[Any]] = []
    with edges_path.open(newline="", encoding=TEXT_ENCODING) as fh:
        rows = csv.reader(fh)
        header = next(rows, None)
        if header is None or [h.strip() for h in header[:2]] != ["StartNodeId", "EndNodeId"]:
            raise InstanceError(f"{edges_path}: header must be StartNodeId,EndNodeId")
        for line, fields in enumerate(rows, start=2):
            if not fields:
                continue
            if len(fields) != 2:
                raise InstanceError(f"{edges_path}:{line}: an edge is two node ids")
            where = f"{edges_path}:{line}"
            edges.append([_csv_cell(fields[0], "StartNodeId", where), _csv_cell(fields[1], "EndNodeId", where)])
    return nodes, edges


def load_instance(path: str | Path, hw: Hardware | None = None) -> Instance:
    """Load a contest instance: ``<case>.json`` or ``<case>_Nodes.csv`` + ``<case>_Edges.csv``."""
    check_path(path, "load_instance: path")
    _require_hardware(hw, "load_instance: hw")
    p = Path(path)
    if p.is_dir():
        raise InstanceError(f"{p}: is a folder; give <case>.json or <case>_Nodes.csv")
    if p.suffix.lower() == ".csv":
        try:
            nodes, edges = _read_csv_pair(p)
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise InstanceError(f"{p}: cannot read as a CSV instance: {exc}") from None
        return _from_file(p, instance_name(p), nodes, edges, hw)
    if not p.is_file():
        raise InstanceError(f"{p}: no such file")
    try:
        data = read_json(p.read_text(encoding=TEXT_ENCODING), parse_float=_json_float)  # each key once
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{p}: cannot read: {exc}") from None
    except DuplicateKeyError as exc:  # a duplicated "Nodes" would drop nodes without a word
        raise InstanceError(f"{p}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{p}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise InstanceError(f"{p}: not a contest instance (JSON nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer literal with more digits than Python converts
        raise InstanceError(f"{p}: not valid JSON ({str(exc).split(';')[0]})") from None
    if not isinstance(data, dict) or "Nodes" not in data or "Edges" not in data:
        missing = " and ".join(k for k in ("Nodes", "Edges") if not isinstance(data, dict) or k not in data)
        raise InstanceError(f"{p}: expected an object with 'Nodes' and 'Edges' (no {missing!s} key)")
    return _from_file(p, p.stem, data["Nodes"], data["Edges"], hw)


def _from_file(path: Path, name: str, nodes: Any, edges: Any, hw: Hardware | None) -> Instance:
    """:func:`instance_from_records` on the records of the file ``path``, whose error names
    that file first."""
    try:
        return instance_from_records(name, nodes, edges, hw)
    except InstanceError as exc:
        raise InstanceError(f"{path}: {exc}") from None


def write_json(inst: Instance, path: str | Path) -> None:
    """Write the instance in contest JSON form (atomically: a temporary file, then a rename)."""
    nodes, edges = require_instance(inst, "write_json: inst").to_records()
    check_path(path, "write_json: path")
    atomic_write_text(path, json.dumps({"Nodes": nodes, "Edges": edges}, separators=(",", ":")) + "\n")


def write_csv_pair(inst: Instance, directory: str | Path, case: str | None = None) -> Path:
    """Write ``<case>_Nodes.csv`` and ``<case>_Edges.csv``; returns the nodes file's path.
    Both are complete in temporary files before either is renamed into place."""
    inst = require_instance(inst, "write_csv_pair: inst")
    d = Path(check_path(directory, "write_csv_pair: directory"))
    case = check_case_name(inst.name if case is None else case, "write_csv_pair: case")
    nodes, edges = inst.to_records()
    nodes_path = d / f"{case}_Nodes.csv"
    nodes_text, edges_text = io.StringIO(), io.StringIO()
    w = csv.writer(nodes_text)
    w.writerow(NODE_FIELDS)
    for rec in nodes:
        bufs = rec.get("Bufs")
        w.writerow(
            [
                rec["Id"],
                rec["Op"],
                rec.get("BufId", ""),
                rec.get("Size", ""),
                rec.get("Type", ""),
                rec.get("Pipe", ""),
                rec.get("Cycles", ""),
                ",".join(map(str, bufs)) if bufs is not None else "",
            ]
        )
    w = csv.writer(edges_text)
    w.writerow(["StartNodeId", "EndNodeId"])
    w.writerows(edges)
    atomic_write_files(
        [
            (nodes_path, nodes_text.getvalue().encode()),
            (d / f"{case}_Edges.csv", edges_text.getvalue().encode()),
        ]
    )
    return nodes_path
