"""Every plan of a tiny instance, judged by the shared evaluator: the oracle the makespan
floors are checked against, written apart from the code it checks.

:func:`every_plan` enumerates every spill list of at most ``max_spills`` spills (each a
buffer and a new offset), every order of the instance's nodes and those spill nodes that
keeps the instance's edges and each spill's chain (``ALLOC -> SPILL_OUT -> SPILL_IN ->
FREE``, a buffer's spills in list order), and every offset of every buffer, and yields
each plan the evaluator accepts (docs/rules.md, sections 5-7). Nothing is pruned by a
timing or memory argument, so the least makespan it finds is the optimum of the instance
among plans with at most that many spills, and a floor above it is wrong.

:func:`tiny_instance` draws the instances: two small UB buffers, three or four
operations on three pipes, a tight UB and cheap spills, so that spills and address reuse
change the timing.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterator
from itertools import product
from pathlib import Path

from dansched.generate import GraphBuilder
from dansched.hardware import load_hardware
from dansched.instance import Instance
from dansched.plan import Plan
from dansched.simulate import Evaluation, evaluate_fast


def tiny_instance(seed: int) -> Instance:
    """A random tiny instance (module docstring), its UB as tight as its operations allow
    or one unit looser, spills of ``Size + 2`` cycles: at most eight nodes."""
    rng = random.Random(seed)
    g = GraphBuilder()
    sizes = [rng.choice([1, 2]) for _ in range(2)]
    bufs = [g.alloc(s, "UB") for s in sizes]
    ops: list[int] = []
    working = 0
    for _ in range(rng.choice([3, 4])):
        use = sorted(rng.sample(bufs, rng.choice([1, 1, 2])))
        working = max(working, sum(sizes[b] for b in use))
        name, pipe = rng.choice([("COPY_IN", "MTE2"), ("VEC", "VECTOR"), ("MM", "CUBE")])
        after = [u for u in ops if rng.random() < 0.4]
        ops.append(g.op(name, pipe, rng.randint(1, 6), use, after=after))
    for b in bufs:
        g.free(b)
    cap = max(working, *sizes) + rng.choice([0, 1])
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "hw.toml"
        path.write_text(f"[tiers]\nUB = {cap}\n[spill]\nfixed_cycles = 2\ncycles_per_unit = 1\n")
        return g.build(f"tiny{seed}", load_hardware(path))


def _orders(n: int, before: list[int]) -> Iterator[tuple[int, ...]]:
    """Every order of nodes ``0..n-1`` in which each node comes after the nodes of the bit
    mask ``before[v]``."""
    seq: list[int] = []

    def walk(done: int) -> Iterator[tuple[int, ...]]:
        if len(seq) == n:
            yield tuple(seq)
            return
        for v in range(n):
            if not done >> v & 1 and before[v] & ~done == 0:
                seq.append(v)
                yield from walk(done | 1 << v)
                seq.pop()

    yield from walk(0)


def every_plan(inst: Instance, max_spills: int = 1) -> Iterator[tuple[Plan, Evaluation]]:
    """Every valid plan of ``inst`` with at most ``max_spills`` spills and its evaluation
    (module docstring)."""
    n, nb = inst.n, inst.num_buffers
    L = inst.lists()
    caps = [int(inst.hw.capacity[inst.hw.tiers[int(t)]]) for t in inst.buf_tier]
    sizes = inst.buf_size.tolist()
    room = [range(caps[b] - sizes[b] + 1) for b in range(nb)]
    for k in range(max_spills + 1):
        for victims in product(range(nb), repeat=k):
            before = [sum(1 << u for u in L.pred[v]) for v in range(n)] + [0] * (2 * k)
            last: dict[int, int] = {}
            for j, b in enumerate(victims):
                so, si = n + 2 * j, n + 2 * j + 1
                before[so] |= 1 << int(inst.buf_alloc[b])
                if b in last:
                    before[so] |= 1 << last[b]
                before[si] |= 1 << so
                before[int(inst.buf_free[b])] |= 1 << si
                last[b] = si
            orders = list(_orders(n + 2 * k, before))
            for offsets in product(*room):
                for new in product(*(room[b] for b in victims)):
                    for order in orders:
                        plan = Plan(
                            order=order,
                            offsets=tuple((int(inst.buf_id[b]), offsets[b]) for b in range(nb)),
                            spills=tuple((int(inst.buf_id[b]), new[j]) for j, b in enumerate(victims)),
                        )
                        ev = evaluate_fast(inst, plan)
                        if ev is not None and ev.valid:
                            yield plan, ev
