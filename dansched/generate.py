"""Synthetic instance families in the contest format (``dansched generate``).

Each family returns contest records (``Nodes``, ``Edges``) that pass every
well-formedness rule of docs/rules.md, section 1.2, on the default hardware model, with the
shape of the official family it imitates:

- ``matmul``: blocked C = A x B. Per output block a L0C accumulator; per k step
  the A and B blocks (L1, loaded once by COPY_IN) are moved to L0A/L0B (MTE1)
  and multiplied (CUBE); the block leaves through FIXP.
- ``fa``: FlashAttention-like blocks: Q K^T on CUBE, softmax pieces on VECTOR in
  UB, P V on CUBE, a running update, L1 <-> UB traffic.
- ``conv``: a chain of convolution layers over feature-map tiles; each tile of
  layer l reads neighbouring tiles of layer l-1 and a kernel block in L1.
- ``random``: layered DAGs with random pipes, cycles and buffers.
- ``chain``: ``64*scale`` ALLOC -> op -> FREE triples, each node linked to the next
  (``i -> i+1``), buffer sizes 1, 2, 3, ... (modulo the L1 capacity): as deep as a
  graph of its size can be.
- ``ladder``: two such chains interleaved, with a rung from the i-th operation of
  the first to the i-th operation of the second.

Everything is a function of ``(family, scale, seed)``: same arguments, same file.

>>> nodes, edges = generate("matmul", scale=1, seed=0)
>>> sum(1 for n in nodes if n["Op"] == "MATMUL")
8
"""

from __future__ import annotations

import json
import numbers
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .checks import GENERATE_SEED, SCALE, check_choice, check_integer, check_path, check_type
from .errors import ArgumentError
from .hardware import Hardware, default_hardware, did_you_mean
from .instance import Instance, instance_from_records, instance_name, write_csv_pair
from .plan import atomic_write_text, check_output_file

__all__ = ["FAMILIES", "MAX_GENERATED_NODES", "family_nodes", "generate", "generate_file", "GraphBuilder"]


class GraphBuilder:
    """Builds an instance in memory, node by node, as a compiler flow would: each buffer
    gets its ALLOC node (:meth:`alloc`) and FREE node (:meth:`free`), and the edges
    ALLOC -> user -> FREE (and ALLOC -> FREE) that the contest graphs carry are added
    for you; :meth:`op` adds an operation, ``after`` its other predecessors. Node ids
    are given in creation order, buffer ids from 0. ``hw`` (default: the shipped model) is
    the hardware the graph is for: a tier or pipe it lacks is refused as it is given, with
    the closest name (``alloc(64, "UBB")``: did you mean UB?).

    >>> g = GraphBuilder()
    >>> a = g.alloc(64, "UB")
    >>> load = g.op("COPY_IN", "MTE2", 20, [a])
    >>> add = g.op("ADD", "VECTOR", 30, [a], after=[load])
    >>> _ = g.free(a)
    >>> inst = g.build("tiny")
    >>> inst.n, inst.num_edges
    (4, 6)
    """

    def __init__(self, hw: Hardware | None = None) -> None:
        self.hw = default_hardware() if hw is None else check_type(hw, Hardware, "GraphBuilder: hw")
        self.nodes: list[dict[str, Any]] = []
        self.edges: list[list[int]] = []
        self._next_buf = 0
        self._buf_nodes: dict[int, tuple[int, int, str]] = {}  # buf -> (alloc node, size, tier)
        self._users: dict[int, list[int]] = {}
        self._freed: set[int] = set()

    def _buffer(self, b: Any, what: str) -> int:
        """``b`` when :meth:`alloc` returned it and :meth:`free` has not been called on it."""
        if isinstance(b, bool) or not isinstance(b, numbers.Integral) or int(b) not in self._buf_nodes:
            raise ArgumentError(f"GraphBuilder.{what}: {b!r} is not a buffer of this builder (alloc returns one)")
        if int(b) in self._freed:
            raise ArgumentError(f"GraphBuilder.{what}: buffer {b} is already freed")
        return int(b)

    def __repr__(self) -> str:
        return f"GraphBuilder({len(self.nodes):,} nodes, {self._next_buf:,} buffers, {len(self._freed):,} freed)"

    @staticmethod
    def _known(name: Any, known: tuple[str, ...], what: str, kind: str) -> None:
        """``name`` when it is one of ``known`` (the hardware's tiers or pipes), else
        :class:`ArgumentError` with the closest name."""
        check_type(name, str, what)
        if name not in known:
            raise ArgumentError(
                f"{what} {name!r} is not a {kind} of the hardware model {list(known)}{did_you_mean(name, list(known))}"
            )

    def alloc(self, size: int, tier: str) -> int:
        """A new buffer of ``size`` units in ``tier`` (its ALLOC node); returns its id."""
        size = check_integer(size, "GraphBuilder.alloc: size", 1)
        self._known(tier, self.hw.tiers, "GraphBuilder.alloc: tier", "tier")
        b = self._next_buf
        self._next_buf += 1
        v = len(self.nodes)
        self.nodes.append({"Id": v, "Op": "ALLOC", "BufId": b, "Size": size, "Type": tier})
        self._buf_nodes[b] = (v, size, tier)
        self._users[b] = []
        return b

    def op(self, name: str, pipe: str, cycles: int, bufs: Sequence[int], after: Sequence[int] = ()) -> int:
        """An operation on ``pipe`` taking ``cycles``, using the buffers ``bufs`` (ids that
        :meth:`alloc` returned), after the nodes ``after`` (ids that :meth:`op` and
        :meth:`free` returned); returns its node id."""
        check_type(name, str, "GraphBuilder.op: name")
        self._known(pipe, self.hw.pipes, "GraphBuilder.op: pipe", "pipe")
        cycles = check_integer(cycles, "GraphBuilder.op: cycles", 0)
        bufs = [self._buffer(b, "op") for b in check_type(bufs, (list, tuple), "GraphBuilder.op: bufs")]
        v = len(self.nodes)
        for u in check_type(after, (list, tuple), "GraphBuilder.op: after"):
            check_integer(u, "GraphBuilder.op: after", 0, v - 1)
        self.nodes.append({"Id": v, "Op": name, "Pipe": pipe, "Cycles": cycles, "Bufs": bufs})
        for b in bufs:
            a = self._buf_nodes[b][0]
            self.edges.append([a, v])
            self._users[b].append(v)
        for u in after:
            self.edges.append([int(u), v])
        return v

    def free(self, b: int) -> int:
        """The FREE node of buffer ``b``, after every operation that used it; returns its id."""
        b = self._buffer(b, "free")
        a, size, tier = self._buf_nodes[b]
        self._freed.add(b)
        v = len(self.nodes)
        self.nodes.append({"Id": v, "Op": "FREE", "BufId": b, "Size": size, "Type": tier})
        self.edges.append([a, v])
        for u in self._users[b]:
            self.edges.append([u, v])
        return v

    def records(self) -> tuple[list[dict[str, Any]], list[list[int]]]:
        """Contest node records and edges (sorted, without duplicates)."""
        edges = sorted({(u, w) for u, w in self.edges})
        return self.nodes, [list(e) for e in edges]

    def build(self, name: str, hw: Hardware | None = None) -> Instance:
        """The checked :class:`~dansched.instance.Instance` (every well-formedness rule of
        :func:`~dansched.instance.instance_from_records`) on ``hw`` (default: the builder's)."""
        return instance_from_records(name, *self.records(), self.hw if hw is None else hw)


def _matmul(scale: int, rng: random.Random) -> GraphBuilder:
    """An (2s x 2s) grid of output blocks with a k-loop of 2s (s = scale)."""
    n = k = 2 * max(1, scale)
    g = GraphBuilder()
    a_blk: dict[tuple[int, int], tuple[int, int]] = {}
    b_blk: dict[tuple[int, int], tuple[int, int]] = {}
    a_users: dict[tuple[int, int], int] = {}
    b_users: dict[tuple[int, int], int] = {}

    def load(table, key) -> tuple[int, int]:
        if key not in table:
            buf = g.alloc(128, "L1")
            table[key] = (buf, g.op("COPY_IN", "MTE2", 325, [buf]))
        return table[key]

    for i in range(n):
        for j in range(n):
            c = g.alloc(256, "L0C")
            prev = None
            for kk in range(k):
                abuf, acopy = load(a_blk, (i, kk))
                bbuf, bcopy = load(b_blk, (kk, j))
                l0a, l0b = g.alloc(128, "L0A"), g.alloc(128, "L0B")
                ma = g.op("MOVE", "MTE1", 31, [l0a, abuf], after=[acopy])
                mb = g.op("MOVE", "MTE1", 31, [l0b, bbuf], after=[bcopy])
                mm = g.op("MATMUL", "CUBE", 128, [c, l0b, l0a], after=[ma, mb] + ([prev] if prev is not None else []))
                g.free(l0a)
                g.free(l0b)
                prev = mm
                a_users[(i, kk)] = a_users.get((i, kk), 0) + 1
                b_users[(kk, j)] = b_users.get((kk, j), 0) + 1
                if a_users[(i, kk)] == n:
                    g.free(a_blk[(i, kk)][0])
                if b_users[(kk, j)] == n:
                    g.free(b_blk[(kk, j)][0])
            assert prev is not None  # n >= 1 matmuls ran
            g.op("COPY_OUT", "FIXP", 64 + rng.randrange(0, 4), [c], after=[prev])
            g.free(c)
    return g


def _fa(scale: int, rng: random.Random) -> GraphBuilder:
    """``2*scale`` query blocks, each attending over ``2*scale`` key/value blocks."""
    nq = nk = 2 * max(1, scale)
    g = GraphBuilder()
    kv: dict[int, tuple[int, int, int, int]] = {}
    for kb in range(nk):
        kbuf, vbuf = g.alloc(256, "L1"), g.alloc(256, "L1")
        kv[kb] = (kbuf, g.op("COPY_IN", "MTE2", 550, [kbuf]), vbuf, g.op("COPY_IN", "MTE2", 550, [vbuf]))
    kv_uses = {kb: 0 for kb in range(nk)}
    for _q in range(nq):
        qbuf = g.alloc(256, "L1")
        qcopy = g.op("COPY_IN", "MTE2", 550, [qbuf])
        acc = g.alloc(128, "UB")
        init = g.op("DUP", "VECTOR", 8, [acc])
        last = init
        for kb in range(nk):
            kbuf, kcopy, vbuf, vcopy = kv[kb]
            l0a, l0b, l0c = g.alloc(128, "L0A"), g.alloc(128, "L0B"), g.alloc(256, "L0C")
            m1 = g.op("MOVE", "MTE1", 31, [l0a, qbuf], after=[qcopy])
            m2 = g.op("MOVE", "MTE1", 31, [l0b, kbuf], after=[kcopy])
            s = g.op("MATMUL", "CUBE", 128, [l0c, l0b, l0a], after=[m1, m2])
            g.free(l0a)
            g.free(l0b)
            sub = g.alloc(128, "UB")
            fx = g.op("COPY", "FIXP", 40, [sub, l0c], after=[s])
            g.free(l0c)
            mx = g.alloc(2, "UB")
            rmax = g.op("ROWMAX", "VECTOR", 24 + rng.randrange(0, 8), [mx, sub], after=[fx])
            ex = g.op("EXP", "VECTOR", 60, [sub, mx], after=[rmax])
            g.free(mx)
            p1 = g.alloc(128, "L1")
            back = g.op("COPY", "MTE3", 40, [p1, sub], after=[ex])
            g.free(sub)
            l0a2, l0b2, l0c2 = g.alloc(128, "L0A"), g.alloc(128, "L0B"), g.alloc(256, "L0C")
            m3 = g.op("MOVE", "MTE1", 31, [l0a2, p1], after=[back])
            m4 = g.op("MOVE", "MTE1", 31, [l0b2, vbuf], after=[vcopy])
            g.free(p1)
            pv = g.op("MATMUL", "CUBE", 128, [l0c2, l0b2, l0a2], after=[m3, m4])
            g.free(l0a2)
            g.free(l0b2)
            part = g.alloc(128, "UB")
            fx2 = g.op("COPY", "FIXP", 40, [part, l0c2], after=[pv])
            g.free(l0c2)
            last = g.op("ADD", "VECTOR", 20, [acc, part], after=[fx2, last])
            g.free(part)
            kv_uses[kb] += 1
            if kv_uses[kb] == nq:
                g.free(kbuf)
                g.free(vbuf)
        g.free(qbuf)
        g.op("COPY_OUT", "MTE3", 100, [acc], after=[last])
        g.free(acc)
    return g


def _conv(scale: int, rng: random.Random) -> GraphBuilder:
    """``1 + scale`` layers of ``4*scale`` tiles; tile t of layer l reads tiles t-1..t+1 of l-1."""
    layers, tiles = 1 + max(1, scale), 4 * max(1, scale)
    g = GraphBuilder()
    prev: list[tuple[int, int]] = []  # (buffer, producer) per tile
    for _ in range(tiles):
        buf = g.alloc(144, "L1")
        prev.append((buf, g.op("COPY_IN", "MTE2", 300 + rng.randrange(0, 50), [buf])))
    remaining = [min(t + 1, tiles - 1) - max(t - 1, 0) + 1 for t in range(tiles)]
    for _layer in range(1, layers):
        kern = g.alloc(384, "L1")
        kcopy = g.op("COPY_IN", "MTE2", 700, [kern])
        cur: list[tuple[int, int]] = []
        for t in range(tiles):
            out = g.alloc(144, "L1")
            acc = g.alloc(256, "L0C")
            last = None
            for s in range(max(t - 1, 0), min(t + 1, tiles - 1) + 1):
                src, producer = prev[s]
                l0b = g.alloc(72, "L0B")
                mv = g.op("MOVE", "MTE1", 40, [l0b, kern], after=[kcopy])
                last = g.op(
                    "CONV",
                    "CUBE",
                    300 + rng.randrange(0, 40),
                    [acc, src, l0b],
                    after=[producer, mv] + ([last] if last is not None else []),
                )
                g.free(l0b)
                remaining[s] -= 1
                if remaining[s] == 0:
                    g.free(src)
            assert last is not None  # every tile reads at least itself
            fx = g.op("COPY", "FIXP", 60, [out, acc], after=[last])
            g.free(acc)
            cur.append((out, fx))
        g.free(kern)
        prev = cur
        remaining = [min(t + 1, tiles - 1) - max(t - 1, 0) + 1 for t in range(tiles)]
    for buf, producer in prev:
        g.op("COPY_OUT", "MTE3", 200, [buf], after=[producer])
        g.free(buf)
    return g


def _random(scale: int, rng: random.Random) -> GraphBuilder:
    """About ``20*scale`` operations; each buffer lives across a few operations, and the id
    order keeps at most one live buffer per L0 tier (so a problem-1 order always exists)."""
    g = GraphBuilder()
    n_ops = 20 * max(1, scale)
    pipes = [
        ("MTE2", "COPY_IN"),
        ("MTE1", "MOVE"),
        ("CUBE", "MATMUL"),
        ("VECTOR", "ADD"),
        ("FIXP", "COPY"),
        ("MTE3", "COPY_OUT"),
    ]
    tier_sizes = {"L1": (16, 512), "UB": (2, 256), "L0A": (16, 128), "L0B": (16, 128), "L0C": (16, 256)}
    live: list[tuple[int, int]] = []  # (buffer, remaining uses)
    recent: list[int] = []
    for _ in range(n_ops):
        pipe, name = pipes[rng.randrange(len(pipes))]
        bufs: list[int] = []
        per_tier: dict[str, int] = {}
        if live and rng.random() < 0.8:
            b, _left = live[rng.randrange(len(live))]
            bufs.append(b)
        if rng.random() < 0.7 or not bufs:
            tier = rng.choice(list(tier_sizes))
            open_l0 = [b for b, _left in live if tier.startswith("L0") and g._buf_nodes[b][2] == tier]
            if open_l0:  # at most one live buffer per L0 tier in id order, so problem 1 stays feasible
                if open_l0[0] not in bufs:
                    bufs.append(open_l0[0])
            else:
                lo, hi = tier_sizes[tier]
                b = g.alloc(rng.randint(lo, hi), tier)
                live.append((b, rng.randint(1, 3)))
                bufs.append(b)
        sizes = {b: g._buf_nodes[b] for b in bufs}
        for b in bufs:
            per_tier[sizes[b][2]] = per_tier.get(sizes[b][2], 0) + sizes[b][1]
        after = [recent[rng.randrange(len(recent))]] if recent and rng.random() < 0.5 else []
        v = g.op(name, pipe, rng.randint(1, 200), bufs, after=after)
        recent = (recent + [v])[-8:]
        keep = []
        for b, left in live:
            if b in bufs:
                left -= 1
            if left <= 0:
                g.free(b)
            else:
                keep.append((b, left))
        live = keep
    for b, _left in live:
        g.free(b)
    return g


CHAIN_TRIPLES_PER_SCALE = 64
L1_SIZES = 4096  # sizes cycle 1..4096, the default L1 capacity


def _chain_triple(
    g: GraphBuilder, size: int, tier: str, pipe: str, name: str, cycles: int, after: int | None
) -> tuple[int, int, int]:
    """One ALLOC -> op -> FREE triple (node ids consecutive); ``after`` -> its ALLOC."""
    b = g.alloc(size, tier)
    a = len(g.nodes) - 1
    if after is not None:
        g.edges.append([after, a])
    v = g.op(name, pipe, cycles, [b])
    f = g.free(b)
    return a, v, f


def _chain(scale: int, rng: random.Random) -> GraphBuilder:
    """``64*scale`` triples; every node id ``i`` has the edge ``i -> i+1``."""
    g = GraphBuilder()
    last = None
    for i in range(CHAIN_TRIPLES_PER_SCALE * max(1, scale)):
        _a, _v, last = _chain_triple(g, 1 + i % L1_SIZES, "L1", "MTE2", "COPY_IN", rng.randint(1, 200), last)
    return g


def _ladder(scale: int, rng: random.Random) -> GraphBuilder:
    """Two chains of ``32*scale`` triples each, interleaved by id (A_i, B_i, A_i+1, ...);
    a rung op(A_i) -> op(B_i). Sizes cycle 1..2048 so both live buffers fit L1."""
    g = GraphBuilder()
    last_a = last_b = None
    for i in range(CHAIN_TRIPLES_PER_SCALE // 2 * max(1, scale)):
        size = 1 + i % (L1_SIZES // 2)
        _a, va, last_a = _chain_triple(g, size, "L1", "MTE2", "COPY_IN", rng.randint(1, 200), last_a)
        _b, vb, last_b = _chain_triple(g, size, "L1", "VECTOR", "ADD", rng.randint(1, 200), last_b)
        g.edges.append([va, vb])
    return g


FAMILIES: dict[str, Callable[[int, random.Random], GraphBuilder]] = {
    "matmul": _matmul,
    "fa": _fa,
    "conv": _conv,
    "random": _random,
    "chain": _chain,
    "ladder": _ladder,
}


# The largest graph generate writes: twice the 2M-node chain the guide reports solving (4.3 GB
# at --effort fast). Building it holds about 1 KB a node (960,000 chain nodes: 0.96 GB peak),
# so about 4 GB at the cap; a larger --scale is refused before anything is built
MAX_GENERATED_NODES = 4_000_000

# the node count of each family at scale s: exact for the structured ones (counted from their
# builders above), an upper bound for random (at most one new buffer per operation)
_FAMILY_NODES: dict[str, Callable[[int], int]] = {
    "matmul": lambda s: 56 * s**3 + 36 * s**2,
    "fa": lambda s: 128 * s**2 + 26 * s,
    "conv": lambda s: 68 * s**2 + 11 * s,
    "random": lambda s: 60 * s,
    "chain": lambda s: 3 * CHAIN_TRIPLES_PER_SCALE * s,
    "ladder": lambda s: 3 * CHAIN_TRIPLES_PER_SCALE * s,
}


def family_nodes(family: str, scale: int) -> int:
    """How many nodes ``family`` has at ``scale`` (an upper bound for ``random``), computed
    without building it."""
    return _FAMILY_NODES[family](scale)


def check_generate_args(family: Any, scale: Any, seed: Any) -> None:
    """:class:`~dansched.errors.ArgumentError` (one line) for an unknown family, a scale
    or seed out of range (:mod:`dansched.checks`), or a scale whose graph would pass
    :data:`MAX_GENERATED_NODES` (the message gives the largest scale that fits)."""
    check_choice(family, FAMILIES, "family")
    SCALE.check(scale, "scale")
    GENERATE_SEED.check(seed, "seed")
    if family_nodes(family, scale) > MAX_GENERATED_NODES:
        lo, hi = 1, scale  # the largest scale within the cap: the counts grow with the scale
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if family_nodes(family, mid) <= MAX_GENERATED_NODES else (lo, mid - 1)
        raise ArgumentError(
            f"scale {scale}: {family} would have more than {MAX_GENERATED_NODES:,} nodes "
            f"(the largest graph generate writes); the largest scale of {family} is {lo:,}"
        )


def generate(family: str, scale: int = 1, seed: int = 0) -> tuple[list[dict[str, Any]], list[list[int]]]:
    """Contest node records and edges of ``family`` at ``scale`` (>= 1) from ``seed``
    (:func:`check_generate_args` first)."""
    check_generate_args(family, scale, seed)
    return FAMILIES[family](scale, random.Random(f"{family}:{scale}:{seed}")).records()


def generate_file(family: str, scale: int, seed: int, out: str | Path) -> Instance:
    """Write ``family`` at ``scale`` from ``seed`` to ``out`` (contest JSON, or the CSV pair
    when ``out`` is ``<case>_Nodes.csv``) and return the instance, checked before writing."""
    check_generate_args(family, scale, seed)
    out = Path(check_path(out, "generate_file: out"))
    csv_pair = out.suffix.lower() == ".csv"
    for target in [out] + ([out.with_name(out.name.replace("_Nodes.csv", "_Edges.csv"))] if csv_pair else []):
        check_output_file(target)  # before the work
    nodes, edges = generate(family, scale, seed)
    inst = instance_from_records(instance_name(out), nodes, edges)  # the generator's output must load
    if csv_pair:
        write_csv_pair(inst, out.parent)
    else:
        atomic_write_text(out, json.dumps({"Nodes": nodes, "Edges": edges}, separators=(",", ":")) + "\n")
    return inst
