"""Stage 3's relayout keeps address state per range (free segments, release times), so its
cost follows the buffers, not the tiers' capacities. The free list is checked against a
per-address brute force (a Python list with one cell per address: what the relayout held
before), on random operation sequences (the release map: tests/test_addresses.py); the
relayout itself on tiers of 2**41 units against the evaluator."""

from __future__ import annotations

import tracemalloc

from hypothesis import given
from hypothesis import strategies as st
from strategies import SETTINGS
from test_addresses import runs

from dansched.addresses import free_ranges
from dansched.generate import generate
from dansched.hardware import load_hardware
from dansched.instance import instance_from_records
from dansched.pipeline.problem3.stage3.relayout import move_late_segments, relayout_for_timing
from dansched.simulate import evaluate
from dansched.stages.dlr.freelist import FreeList
from dansched.stages.dlr.stage import dlr_plan


@SETTINGS
@given(st.integers(1, 40), st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 12)), max_size=25))
def test_free_list_answers_like_a_per_address_array(cap, moves):
    """Random takes (of a random free window, when one is long enough) and releases (of a
    random taken segment): segments(), is_free() and free_ranges() against the cells."""
    fl = FreeList(cap)
    free = [True] * cap
    taken: list[tuple[int, int]] = []
    for pick, size in moves:
        fits = [(lo, hi) for lo, hi in runs(free) if hi - lo >= size]
        if taken and (pick % 3 == 0 or not fits):
            off, s = taken.pop(pick % len(taken))
            fl.release(off, s)
            free[off : off + s] = [True] * s
        elif fits:
            lo, hi = fits[pick % len(fits)]
            off = lo + pick % (hi - lo - size + 1)
            fl.take(off, size)
            free[off : off + size] = [False] * size
            taken.append((off, size))
        assert fl.segments() == runs(free)
        assert free_ranges(cap, taken) == runs(free)
        for off in range(-1, cap + 1):
            for s in (1, 2, 5):
                inside = 0 <= off and off + s <= cap
                assert fl.is_free(off, s) == (inside and all(free[off : off + s])), (off, s)


def test_relayout_on_tiers_of_2_41_units_costs_what_its_buffers_cost(tmp_path):
    """A generated conv graph with every Size and capacity times 2**32 (UB: 2**41 units; spill
    cost per unit 0 so times stay small): both timing rounds run in well under a megabyte
    (one cell per address would take terabytes), and the faster plans they return are
    valid for the evaluator, with the Stage-2 plan's traffic and spills."""
    k = 2**32
    nodes, edges = generate("conv", 1, 4)
    for rec in nodes:
        if "Size" in rec:
            rec["Size"] *= k
    caps = {"L1": 2048, "UB": 512, "L0A": 256, "L0B": 256, "L0C": 512}
    text = "[tiers]\n" + "".join(f"{t} = {c * k}\n" for t, c in caps.items()) + "[spill]\ncycles_per_unit = 0\n"
    (tmp_path / "hw.toml").write_text(text)
    inst = instance_from_records("conv", nodes, edges, load_hardware(tmp_path / "hw.toml"))
    s2 = dlr_plan(inst, list(range(inst.n)))
    assert s2.evaluation.valid
    tracemalloc.start()
    got = [relayout_for_timing(inst, s2.plan, s2.evaluation), move_late_segments(inst, s2.plan, s2.evaluation)]
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2**20
    assert any(r is not None for r in got)
    for r in got:
        if r is not None:
            ev = evaluate(inst, r[0])
            assert ev.valid and ev.makespan == r[1].makespan < s2.evaluation.makespan
            assert (ev.extra_traffic, ev.spill_count) == (s2.evaluation.extra_traffic, s2.evaluation.spill_count)
