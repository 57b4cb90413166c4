"""Hypothesis strategies shared by the property tests: random small well-formed DAGs
(:func:`instances`) with random valid plans (:func:`cases`), each carrying its own
derivation of the segments a valid plan must have, and the ``hw`` fixture of
their hardware (every tier ``CAP`` units)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from dansched.hardware import load_hardware
from dansched.plan import Plan

CAP = 512  # every tier of the property-test hardware
TIERS = ["L1", "UB", "L0A", "L0B", "L0C"]
PEAK = {"L1", "UB"}
SINGLE = {"L0A", "L0B", "L0C"}
PIPES = ["MTE1", "MTE2", "MTE3", "FIXP", "CUBE", "VECTOR"]
OPS = ["COPY_IN", "MOVE", "MATMUL", "VEC", "COPY_OUT"]
ALPHA, BETA = 150, 2

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def hw(tmp_path_factory):
    p = tmp_path_factory.mktemp("hw") / "props.toml"
    p.write_text("[tiers]\n" + "".join(f"{t} = {CAP}\n" for t in TIERS))
    return load_hardware(p)


@dataclass
class Seg:
    buf: int  # BufId
    tier: str
    off: int
    size: int
    start_event: int
    start_pos: int
    end_event: int = -1
    end_pos: int = -1


@dataclass
class Case:
    nodes: list[dict]
    edges: list[tuple[int, int]]
    n: int
    order: list[int]  # original and spill ids
    offsets: dict[int, int]  # BufId -> first offset
    spills: list[tuple[int, int]]  # (BufId, NewOffset), spill order
    segments: list[Seg] = field(default_factory=list)
    base_order: list[int] = field(default_factory=list)  # the order without spill ids

    def plan(self) -> Plan:
        return Plan(order=tuple(self.order), offsets=tuple(sorted(self.offsets.items())), spills=tuple(self.spills))

    @property
    def rec(self) -> dict[int, dict]:
        return {r["Id"]: r for r in self.nodes}


def _random_topological_order(n: int, edges, rnd: random.Random) -> list[int]:
    succ = {v: [] for v in range(n)}
    indeg = [0] * n
    for u, w in edges:
        succ[u].append(w)
        indeg[w] += 1
    ready = sorted(v for v in range(n) if indeg[v] == 0)
    order = []
    while ready:
        v = ready.pop(rnd.randrange(len(ready)))
        order.append(v)
        for w in succ[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    assert len(order) == n
    return order


@st.composite
def instances(draw, tiers=TIERS, min_buffers=1):
    """Contest node records and edges: buffers with ALLOC/FREE, operations using them, random op-op edges.
    Ids are a random permutation, BufIds random and sparse."""
    nb = draw(st.integers(min_buffers, 5))
    bids = draw(st.lists(st.integers(0, 60), min_size=nb, max_size=nb, unique=True))
    btier = [draw(st.sampled_from(tiers)) for _ in range(nb)]
    bsize = [draw(st.integers(1, 24)) for _ in range(nb)]
    nops = draw(st.integers(1, 6))
    ops = [
        (
            draw(st.sampled_from(OPS)),
            draw(st.sampled_from(PIPES)),
            draw(st.integers(0, 40)),
            draw(st.lists(st.integers(0, nb - 1), max_size=3, unique=True)),
        )
        for _ in range(nops)
    ]
    items = [("A", b) for b in range(nb)] + [("O", j) for j in range(nops)] + [("F", b) for b in range(nb)]
    perm = draw(st.permutations(range(len(items))))
    nid = dict(zip(items, perm))
    nodes = []
    for kind, x in items:
        if kind == "O":
            name, pipe, cycles, used = ops[x]
            nodes.append(
                {"Id": nid[(kind, x)], "Op": name, "Pipe": pipe, "Cycles": cycles, "Bufs": [bids[b] for b in used]}
            )
        else:
            nodes.append(
                {
                    "Id": nid[(kind, x)],
                    "Op": "ALLOC" if kind == "A" else "FREE",
                    "BufId": bids[x],
                    "Size": bsize[x],
                    "Type": btier[x],
                }
            )
    edges = set()
    for b in range(nb):
        edges.add((nid[("A", b)], nid[("F", b)]))
    for j, (_, _, _, used) in enumerate(ops):
        for b in used:
            edges.add((nid[("A", b)], nid[("O", j)]))
            edges.add((nid[("O", j)], nid[("F", b)]))
    for i in range(nops):
        for j in range(i + 1, nops):
            if draw(st.booleans()):
                edges.add((nid[("O", i)], nid[("O", j)]))
    return nodes, sorted(edges)


@st.composite
def cases(draw, tiers=TIERS, min_buffers=1, max_spills=4):
    """A valid plan: random topological order, spills inserted between consecutive
    events of a buffer, and a random non-overlapping layout that reuses addresses."""
    nodes, edges = draw(instances(tiers, min_buffers))
    rnd = draw(st.randoms(use_true_random=False))
    n = len(nodes)
    rec = {r["Id"]: r for r in nodes}
    base = _random_topological_order(n, edges, rnd)
    pos = {v: i for i, v in enumerate(base)}
    users: dict[int, list[int]] = {}
    alloc_of, free_of = {}, {}
    for r in nodes:
        if r["Op"] == "ALLOC":
            alloc_of[r["BufId"]] = r["Id"]
        elif r["Op"] == "FREE":
            free_of[r["BufId"]] = r["Id"]
        else:
            for b in r["Bufs"]:
                users.setdefault(b, []).append(r["Id"])
    # spills: (BufId, insert SPILL_OUT after base position p_out, SPILL_IN after p_in)
    specs = []
    for b in sorted(alloc_of):
        events = sorted([pos[alloc_of[b]], pos[free_of[b]]] + [pos[u] for u in users.get(b, [])])
        for lo, hi in zip(events, events[1:]):
            if len(specs) < max_spills and rnd.random() < 0.35:
                p_out = rnd.randint(lo, hi - 1)
                specs.append((b, p_out, rnd.randint(p_out, hi - 1)))
    rnd.shuffle(specs)  # the spill list order need not follow the schedule
    keyed = [((i, 0, 0.0, 0), v) for i, v in enumerate(base)]
    for k, (_b, p_out, p_in) in enumerate(specs):
        r_out = rnd.random()
        keyed.append(((p_out, 1, r_out, 0), n + 2 * k))
        keyed.append(((p_in, 1, r_out if p_in == p_out else rnd.random(), 1), n + 2 * k + 1))
    order = [v for _, v in sorted(keyed)]
    # layout: walk the order, place every segment at a random free offset
    size_of = {b: rec[a]["Size"] for b, a in alloc_of.items()}
    tier_of = {b: rec[a]["Type"] for b, a in alloc_of.items()}
    open_seg: dict[int, Seg] = {}
    segments: list[Seg] = []
    offsets: dict[int, int] = {}
    spill_off = [0] * len(specs)

    def place(b: int, event: int, i: int) -> int:
        t, s = tier_of[b], size_of[b]
        resident = [(g.off, g.off + g.size) for g in open_seg.values() if g.tier == t]
        # free offsets next to resident segments, where earlier segments began or ended,
        # and a few anywhere below them, so that new segments straddle several old ones
        old = [(g.off, g.off + g.size) for g in segments if g.tier == t]
        cands = {0} | {e for _, e in resident} | {x for o in old for x in o}
        top = max([e for _, e in old], default=0)
        cands |= {rnd.randint(0, top) for _ in range(3)}
        fits = [c for c in sorted(cands) if c + s <= CAP and all(c + s <= lo or c >= hi for lo, hi in resident)]
        off = rnd.choice(fits)
        g = Seg(b, t, off, s, event, i)
        open_seg[b] = g
        segments.append(g)
        return off

    def close(b: int, event: int, i: int) -> None:
        g = open_seg.pop(b)
        g.end_event, g.end_pos = event, i

    for i, v in enumerate(order):
        if v < n:
            r = rec[v]
            if r["Op"] == "ALLOC":
                offsets[r["BufId"]] = place(r["BufId"], v, i)
            elif r["Op"] == "FREE":
                close(r["BufId"], v, i)
        else:
            k, is_in = divmod(v - n, 2)
            b = specs[k][0]
            if is_in:
                spill_off[k] = place(b, v, i)
            else:
                close(b, v, i)
    assert not open_seg
    spills = [(b, spill_off[k]) for k, (b, _, _) in enumerate(specs)]
    return Case(nodes, list(edges), n, order, offsets, spills, segments, base)


# ---------------------------------------------------------------------------------
# independent derivation of the evaluator's answer
# ---------------------------------------------------------------------------------
