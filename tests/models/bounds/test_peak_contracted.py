"""The contracted block-order relaxation (``models/bounds/peak_contracted.py``) must stay a lower
bound on the minimum maxV_stay over every order:

- its value at the block order induced by any valid order is at most that order's peak
  (the lemma of the module docstring, checked window by window);
- the bound, with every window size, is at most the exact optimum (the DP of
  ``models/exact/order.py``) on random block graphs and generated families;
- it is not vacuous: it reaches the optimum where forced liveness does not;
- on the official graphs (slow) it stays at or below dansched's problem-1 plans.
"""

from __future__ import annotations

import random

import pytest
from helpers import OFFICIAL_CASES, official_path
from hypothesis import given
from strategies import SETTINGS, instances

from dansched.errors import ExactModelInapplicable, ExactModelTooLarge, NoLegalOrderError
from dansched.generate import GraphBuilder, generate
from dansched.graph import build_mpas_graph
from dansched.instance import KIND_ALLOC, KIND_FREE, instance_from_records, load_instance
from dansched.models.bounds.peak import peak_lower_bound
from dansched.models.bounds.peak_bounds import best_peak_bound
from dansched.models.bounds.peak_contracted import block_windows, contracted_peak_bound, relaxed_peak
from dansched.models.exact.order import exact_min_peak
from dansched.params import BoundParams
from dansched.pipeline import SolveOptions, run_pipeline
from dansched.plan import Plan
from dansched.simulate import evaluate


def _block_graph(seed: int):
    """Random small graph of single-residency blocks: each block is an L0A/L0B buffer used
    by a CONV (optionally after a MOVE of an L1 weight, optionally with an L0C accumulator
    through a second CONV), reading and writing random L1/UB buffers, with random
    operation edges and a few operations outside every block."""
    rng = random.Random(seed)
    g = GraphBuilder()
    data = [g.alloc(rng.randint(1, 20), rng.choice(["L1", "L1", "UB"])) for _ in range(rng.randint(2, 6))]
    used: dict[int, int] = {b: 0 for b in data}
    ops: list[int] = []
    for _ in range(rng.randint(2, 5)):
        x = g.alloc(rng.choice([8, 16]), rng.choice(["L0A", "L0B"]))
        bufs = [x] + rng.sample(data, rng.randint(1, min(3, len(data))))
        after = [o for o in ops if rng.random() < 0.25]
        if rng.random() < 0.4:
            w = g.alloc(rng.randint(1, 20), "L1")
            ci = g.op("COPY_IN", "MTE2", 5, [w])
            after.append(g.op("MOVE", "MTE1", 3, [x, w], after=[ci]))
            g.free(w)
        v = g.op("CONV", "CUBE", 5, bufs, after=after)
        if rng.random() < 0.3:
            c = g.alloc(32, "L0C")
            other = rng.choice(data)
            v = g.op("CONV", "CUBE", 5, [x, c, other], after=[v])
            bufs.append(other)
            g.op("COPY_OUT", "FIXP", 4, [c], after=[v])
            g.free(c)
        g.free(x)
        for b in bufs[1:]:
            used[b] += 1
        ops.append(v)
    for b in data:
        if not used[b] or rng.random() < 0.2:
            ops.append(g.op("VEC", "VECTOR", 4, [b], after=[o for o in ops if rng.random() < 0.3]))
    for b in data:
        g.free(b)
    return instance_from_records(f"blocks-{seed}", *g.records())


def _dense_layers(n: int = 3, layers: int = 2, s_in: int = 8, s_tmp: int = 16, s_out: int = 8):
    """``layers`` dense layers of ``n`` tiles: output ``j`` accumulates every input into an
    L1 temporary, one single-residency (L0B) buffer per step, and writes its output at the
    last step (the shape of the official Conv graph's last layers)."""
    g = GraphBuilder()
    cur = []
    for _ in range(n):
        b = g.alloc(s_in, "L1")
        cur.append((b, g.op("COPY_IN", "MTE2", 5, [b])))
    for _ in range(layers):
        nxt = []
        left = {b: n for b, _ in cur}
        for _ in range(n):
            t = g.alloc(s_tmp, "L1")
            prev, out = None, None
            for k, (ib, ic) in enumerate(cur):
                x = g.alloc(4, "L0B")
                bufs = [t, ib, x]
                if k == n - 1:
                    out = g.alloc(s_out, "L1")
                    bufs = [out] + bufs
                prev = g.op("CONV", "CUBE", 5, bufs, after=[ic] + ([prev] if prev is not None else []))
                g.free(x)
                left[ib] -= 1
                if not left[ib]:
                    g.free(ib)
            g.free(t)
            nxt.append((out, prev))
        cur = nxt
    for b, c in cur:
        g.op("COPY_OUT", "FIXP", 4, [b], after=[c])
        g.free(b)
    return instance_from_records(f"dense{n}x{layers}", *g.records())


def _exact(inst, max_states=400_000):
    try:
        return exact_min_peak(inst, max_states=max_states).peak
    except (ExactModelTooLarge, ExactModelInapplicable, NoLegalOrderError):
        return None


def _random_orders(inst, rng: random.Random, tries: int):
    """Valid problem-1 orders: random topological orders of the Stage-1 graph that never
    open a second buffer of a single-residency tier (a try that gets stuck is dropped),
    each with its evaluated maxV_stay."""
    g = build_mpas_graph(inst, check_l0=False)
    single = {inst.hw.tier_index(t) for t in inst.hw.single_residency_tiers}
    tier = inst.buf_tier.tolist()
    for _ in range(tries):
        indeg = [len(p) for p in g.preds]
        ready = [v for v in range(g.n) if not indeg[v]]
        busy: set[int] = set()
        order = []
        while ready:
            ok = [v for v in ready if not (g.kind[v] == KIND_ALLOC and tier[g.node_buf[v]] in busy)]
            if not ok:
                break
            v = ok[rng.randrange(len(ok))]
            ready.remove(v)
            order.append(v)
            if g.kind[v] in (KIND_ALLOC, KIND_FREE) and tier[g.node_buf[v]] in single:
                (busy.add if g.kind[v] == KIND_ALLOC else busy.discard)(tier[g.node_buf[v]])
            for w in g.succs[v]:
                indeg[w] -= 1
                if not indeg[w]:
                    ready.append(w)
        if len(order) < g.n:
            continue
        ev = evaluate(inst, Plan(order=tuple(order)))
        assert ev.valid, ev.errors
        yield order, ev.max_v_stay


def _induced(w, order) -> list[int]:
    pos = {v: i for i, v in enumerate(order)}
    return sorted(range(w.n), key=lambda k: min(pos[v] for v in w.nodes[k]))


@pytest.mark.parametrize("seed", range(40))
def test_relaxed_value_below_every_valid_order(seed):
    """The lemma: for a valid order, each window's relaxed value at the induced block order
    is at most the order's maxV_stay."""
    inst = _block_graph(seed)
    g = build_mpas_graph(inst, check_l0=False)
    rng = random.Random(seed)
    checked = 0
    for order, peak in _random_orders(inst, rng, 30):
        for tier in inst.hw.single_residency_tiers:
            for size in (1, 2, 3, 64):
                for w in block_windows(inst, g, tier, size, 10**9):
                    assert relaxed_peak(w, _induced(w, order)) <= peak, (inst.name, tier, size)
                    checked += 1
    if checked == 0:
        pytest.skip("no valid random order drawn")


@pytest.mark.parametrize("seed", range(60))
def test_bound_below_exact_on_block_graphs(seed):
    inst = _block_graph(seed)
    opt = _exact(inst)
    if opt is None:
        pytest.skip("no L0-legal order, or too large for the DP")
    for window in (2, 3, 32):
        b = contracted_peak_bound(inst, params=BoundParams(contracted_window=window))
        assert b.value <= opt, (inst.name, window, b)


@given(instances())
@SETTINGS
def test_bound_below_exact_on_hypothesis_graphs(graph):
    nodes, edges = graph
    inst = instance_from_records("h", nodes, [list(e) for e in edges])
    opt = _exact(inst)
    if opt is None:
        return
    for window in (1, 2, 8):
        assert contracted_peak_bound(inst, params=BoundParams(contracted_window=window)).value <= opt


@pytest.mark.parametrize("fam,seed", [("random", 0), ("random", 1), ("random", 2), ("conv", 0), ("conv", 1)])
def test_bound_below_exact_on_generated(fam, seed):
    inst = instance_from_records(f"{fam}-{seed}", *generate(fam, scale=1, seed=seed))
    opt = _exact(inst, max_states=200_000)
    if opt is None:
        pytest.skip("out of the DP's reach")
    for window in (4, 32):
        assert contracted_peak_bound(inst, params=BoundParams(contracted_window=window)).value <= opt


@pytest.mark.parametrize("n,layers", [(2, 2), (3, 2), (3, 3)])
def test_dense_layers_reach_the_optimum(n, layers):
    """On dense layers the relaxation is solved exactly and meets the DP's optimum, above
    what forced liveness proves."""
    inst = _dense_layers(n, layers)
    opt = _exact(inst, max_states=2_000_000)
    assert opt is not None
    b = contracted_peak_bound(inst)
    assert b.value <= opt
    if n == 3:
        assert b.value == opt
        assert b.value > peak_lower_bound(inst).value
        assert "solved exactly" in b.method


def test_floor_skips_windows_that_cannot_beat_it():
    inst = _dense_layers(3, 2)
    full = contracted_peak_bound(inst)
    assert contracted_peak_bound(inst, floor=full.value + 10**6).value == 0


def test_bound_is_deterministic():
    inst = _dense_layers(3, 3)
    assert contracted_peak_bound(inst) == contracted_peak_bound(inst)


def test_best_peak_bound_names_the_contracted_relaxation():
    inst = _dense_layers(3, 3)
    best, allb = best_peak_bound(inst)
    assert any("contracted" in b.method for b in allb)
    assert best.value >= max(b.value for b in allb)


def test_params_validated():
    with pytest.raises(ValueError):
        BoundParams(contracted_window=0)
    with pytest.raises(ValueError):
        BoundParams(contracted_total_ms=-1)


# ---- official graphs (slow) ----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("case", OFFICIAL_CASES)
def test_official_contracted_below_plans(case):
    inst = load_instance(official_path(case))
    p1 = run_pipeline(inst, SolveOptions(problem=1))
    b = contracted_peak_bound(inst)
    assert b.value <= p1.evaluation.max_v_stay, (case, b)
    if case.startswith("Conv"):
        assert b.value > peak_lower_bound(inst).value  # above forced liveness
