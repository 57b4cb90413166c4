"""Small random instances shared by the tests and the benchmark scripts (one home, so
neither imports the other through ``sys.path``).

- :func:`random_dag`: a small well-formed instance with reuse, long-lived buffers and
  L0 scratch buffers whose id order is L0-legal (a problem-1 order exists);
- :func:`small_random_records`: the largest prefix of ``generate("random", 1, seed)``
  with at most ``max_nodes`` nodes (for the exact models), and :func:`audit_instance`,
  that prefix under the tightest capacities its operations allow (:func:`tight_hardware`);
- :func:`renumbered`: the same graph under a seeded permutation of its node ids (a
  generated family's id order is L0-legal; under another numbering Stage 1's greedy
  passes may get stuck, while an L0-legal order still exists).
"""

from __future__ import annotations

import random
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from .generate import generate
from .hardware import Hardware, load_hardware
from .instance import Instance, instance_from_records

__all__ = [
    "alloc_record",
    "free_record",
    "op_record",
    "random_dag",
    "small_random_records",
    "tight_capacities",
    "tight_toml",
    "tight_hardware",
    "audit_instance",
    "renumbered",
]


def alloc_record(v: int, b: int, size: int, tier: str) -> dict[str, Any]:
    """The contest record of an ALLOC node."""
    return {"Id": v, "Op": "ALLOC", "BufId": b, "Size": size, "Type": tier}


def free_record(v: int, b: int, size: int, tier: str) -> dict[str, Any]:
    """The contest record of a FREE node."""
    return {"Id": v, "Op": "FREE", "BufId": b, "Size": size, "Type": tier}


def op_record(v: int, name: str, pipe: str, cycles: int, bufs: list[int]) -> dict[str, Any]:
    """The contest record of an operation node."""
    return {"Id": v, "Op": name, "Pipe": pipe, "Cycles": cycles, "Bufs": bufs}


def random_dag(seed: int, n_ops: int = 12):
    """A small random well-formed instance with reuse, long-lived buffers and L0
    scratch buffers; its id order is L0-legal, so a problem-1 order exists."""
    rng = random.Random(seed)
    nodes: list[dict] = []
    edges: list[list[int]] = []
    info: dict[int, tuple[int, int, str]] = {}  # buf -> (alloc node, size, tier)
    users: dict[int, list[int]] = {}
    nb = 0

    def alloc(size: int, tier: str) -> int:
        nonlocal nb
        b, nb = nb, nb + 1
        nodes.append(alloc_record(len(nodes), b, size, tier))
        info[b] = (len(nodes) - 1, size, tier)
        users[b] = []
        return b

    def free(b: int) -> None:
        a, size, tier = info[b]
        v = len(nodes)
        nodes.append(free_record(v, b, size, tier))
        edges.extend([[a, v]] + [[u, v] for u in users[b]])

    live: list[tuple[int, int, int]] = []  # (buf, producer, uses left)
    carry_l0 = None
    for _ in range(n_ops):
        bufs, after = [], []
        for _k in range(rng.randint(0, 2)):
            if live:
                b, prod, _left = live[rng.randrange(len(live))]
                if b not in bufs:
                    bufs.append(b)
                    after.append(prod)
        if carry_l0 is not None:
            bufs.append(carry_l0)
            scratch = carry_l0
        elif rng.random() < 0.4:
            scratch = alloc(rng.choice([16, 32]), "L0A")
            bufs.append(scratch)
        else:
            scratch = None
        out = alloc(rng.choice([8, 16, 32, 64]), rng.choice(["UB", "L1"]))
        bufs.append(out)
        v = len(nodes)
        nodes.append(op_record(v, "OP", rng.choice(["VECTOR", "CUBE", "MTE2"]), rng.randint(1, 20), bufs))
        for b in bufs:
            edges.append([info[b][0], v])
            users[b].append(v)
        edges.extend([p, v] for p in after)
        keep = []
        for b, prod, left in live:
            left -= b in bufs
            if left <= 0:
                free(b)
            else:
                keep.append((b, prod, left))
        live = keep + [(out, v, rng.randint(1, 3))]
        if scratch is not None and carry_l0 is None and rng.random() < 0.3:
            carry_l0 = scratch
        else:
            if scratch is not None:
                free(scratch)
            carry_l0 = None
    if carry_l0 is not None:
        free(carry_l0)
    for b, _p, _left in live:
        free(b)
    return instance_from_records(f"rand{seed}", nodes, edges)


def small_random_records(seed: int, max_nodes: int = 40) -> tuple[list[dict[str, Any]], list[list[int]]]:
    """The largest prefix of ``generate("random", 1, seed)`` by operations (with the
    ALLOC/FREE of their buffers) that has at most ``max_nodes`` nodes, renumbered
    ``0..n-1`` in the original id order (module docstring)."""
    nodes, edges = generate("random", 1, seed)
    ops = [r["Id"] for r in nodes if r["Op"] not in ("ALLOC", "FREE")]
    alloc_of = {r["BufId"]: r["Id"] for r in nodes if r["Op"] == "ALLOC"}
    free_of = {r["BufId"]: r["Id"] for r in nodes if r["Op"] == "FREE"}
    kept: set[int] | None = None
    for k in range(1, len(ops) + 1):
        bufs = {b for v in ops[:k] for b in nodes[v]["Bufs"]}
        if k + 2 * len(bufs) > max_nodes:
            break
        kept = set(ops[:k]) | {alloc_of[b] for b in bufs} | {free_of[b] for b in bufs}
    if kept is None:
        raise ValueError(f"seed {seed}: even one operation needs more than {max_nodes} nodes")
    new = {v: i for i, v in enumerate(sorted(kept))}
    recs = [dict(nodes[v], Id=new[v]) for v in sorted(kept)]
    return recs, [[new[u], new[w]] for u, w in edges if u in new and w in new]


def tight_capacities(nodes: list[dict[str, Any]]) -> dict[str, int]:
    """Per tier used by some operation: the largest sum of one operation's buffer sizes there."""
    info = {r["BufId"]: (r["Size"], r["Type"]) for r in nodes if r["Op"] == "ALLOC"}
    caps: dict[str, int] = defaultdict(int)
    for r in nodes:
        if r["Op"] in ("ALLOC", "FREE"):
            continue
        per: dict[str, int] = defaultdict(int)
        for b in set(r["Bufs"]):
            size, tier = info[b]
            per[tier] += size
        for tier, total in per.items():
            caps[tier] = max(caps[tier], total)
    return dict(caps)


def tight_toml(nodes: list[dict[str, Any]]) -> str:
    """A hardware override file setting only the capacities of :func:`tight_capacities`."""
    return "[tiers]\n" + "".join(f"{t} = {c}\n" for t, c in sorted(tight_capacities(nodes).items()))


def tight_hardware(nodes: list[dict[str, Any]]) -> Hardware:
    """The default model overridden by :func:`tight_toml`, read as ``--hw FILE`` reads it."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "tight.toml"
        path.write_text(tight_toml(nodes))
        return load_hardware(path)


def audit_instance(seed: int, max_nodes: int = 40) -> Instance:
    """:func:`small_random_records` under :func:`tight_hardware`: a small instance that spills."""
    nodes, edges = small_random_records(seed, max_nodes)
    return instance_from_records(f"random-s{seed}", nodes, edges, tight_hardware(nodes))


def renumbered(
    nodes: list[dict[str, Any]], edges: list[list[int]], seed: int
) -> tuple[list[dict[str, Any]], list[list[int]]]:
    """The graph of ``nodes`` and ``edges`` with its node ids permuted by a seeded shuffle
    (records listed in the new id order): the same instance under another numbering."""
    perm = list(range(len(nodes)))
    random.Random(seed).shuffle(perm)
    records = sorted((dict(r, Id=perm[r["Id"]]) for r in nodes), key=lambda r: r["Id"])
    return records, [[perm[u], perm[w]] for u, w in edges]
