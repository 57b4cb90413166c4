"""The traffic bounds over all orders and the traffic floors on hand-computed cases."""

from __future__ import annotations

import tempfile
from pathlib import Path

from helpers import official_path

from dansched.generate import GraphBuilder
from dansched.hardware import load_hardware
from dansched.instance import load_instance
from dansched.models.bounds.floors import makespan_floor_at_traffic, makespan_floors, spill_in_load
from dansched.models.bounds.traffic_grid import find_product_grid, live_lines_traffic_bound
from dansched.models.bounds.traffic_orders import best_traffic_bound
from dansched.models.bounds.traffic_tiers import tier_peak_traffic_bound
from tests.traffic_oracle import least_traffic


def _three_pairs():
    """Three UB buffers of 4 bytes (UB holds 8), each made by one operation, then used in
    pairs: whichever is freed first, the other two were allocated before (each pair's
    operation needs both), so 12 bytes are live then; no COPY_IN backs them."""
    g = GraphBuilder()
    a, b, c = (g.alloc(4, "UB") for _ in range(3))
    made = [g.op("MAKE", "VECTOR", 1, [x]) for x in (a, b, c)]
    g.op("AB", "VECTOR", 1, [a, b], after=[made[0], made[1]])
    g.op("AC", "VECTOR", 1, [a, c], after=[made[0], made[2]])
    g.op("BC", "VECTOR", 1, [b, c], after=[made[1], made[2]])
    for x in (a, b, c):
        g.free(x)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "hw.toml"
        path.write_text("[tiers]\nUB = 8\n")
        return g.build("pairs", load_hardware(path))


def test_tier_peak_bound_by_hand_and_tight():
    inst = _three_pairs()
    # the least UB peak is 12 > 8: 4 bytes in an open spill, an unbacked 4-byte buffer: 8 of traffic
    b = tier_peak_traffic_bound(inst)
    assert b.value == 8 and "UB 8" in b.method
    assert least_traffic(inst) == 8  # one spill of one buffer is enough: the bound is the optimum
    assert best_traffic_bound(inst)[0].value == 8


def test_spill_in_load_by_hand(exp_path):
    inst = load_instance(exp_path)  # b0 (5, backed by the COPY_IN), b1 (5, not backed)
    # 15 bytes of traffic: at least ceil(15 / 10) = 2 spills (the largest carries 10) and
    # ceil(15 * 5 / 10) = 8 bytes spilled in: 2 * 8 + 150 * 2 = 316 cycles of SPILL_IN
    assert spill_in_load(inst, 15) == 316
    assert spill_in_load(inst, 0) == 0
    assert [spill_in_load(inst, t) for t in range(0, 40)] == sorted(spill_in_load(inst, t) for t in range(0, 40))
    # MTE2 runs the COPY_IN (15) and 316 more: 331 > the instance floors (60)
    at = makespan_floor_at_traffic(inst, 15)
    assert at.value == 15 + 316 and "MTE2" in at.method
    floors = makespan_floors(inst, forced_traffic=0, plan_traffic=15)
    # no traffic forced: the spill-in pipe's 15 cycles are below the instance floor (60)
    assert floors.traffic_forced is not None and floors.traffic_forced.value == 60
    d = floors.to_dict(400)
    assert d["traffic_floor"] == "traffic" and d["traffic"]["value"] == 331
    assert d["global_floor"] in ("instance", "head_body_tail_instance")


def test_live_lines_on_matmul_case0_by_hand():
    inst = load_instance(official_path("Matmul_Case0"))
    grid = find_product_grid(inst)
    assert grid is not None and grid.shape == (8, 8, 8) and grid.cell_tier == "L0C"
    # L0C holds 2 cells of 256, L0B 2 carriers, L1 32 tiles of 128 (backed). With s
    # accumulator spills, 8 - 2 - s columns of 8 tiles stay live, less 2 carried:
    # s = 0: 46 tiles, 14 past L1 -> 1,792; s = 1: 38 -> 768 + 512 = 1,280; s = 2: 30 fit -> 1,024
    b = live_lines_traffic_bound(inst, grid=grid)
    assert b.value == 1024 and "2 accumulator spill" in b.method
