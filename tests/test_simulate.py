"""Hand-computed evaluator and cycle-simulator cases (docs/rules.md, sections 3-9).

Every figure asserted here is derived by hand in the comments next to it from
the rules of docs/rules.md, not copied from the code's output.
"""

from __future__ import annotations

import pytest
from helpers import (
    SPILL_ONCE_EDGES,
    SPILL_ONCE_NODES,
    SPILL_TWICE_ORDER,
    SPILL_TWICE_PLAN,
    alloc,
    free,
    hw_file,
    op,
    spill_twice_instance,
)

from dansched.hardware import load_hardware
from dansched.instance import instance_from_records, load_instance
from dansched.plan import Plan
from dansched.simulate import evaluate, max_v_stay, simulate_timing, spill_node_ids

# ---------------------------------------------------------------------------------
# docs/rules.md, section 9: the Exp example
# ---------------------------------------------------------------------------------


def test_exp_example_problem1(exp_path):
    inst = load_instance(exp_path)
    ev = evaluate(inst, Plan(order=tuple(range(7))))
    assert ev.valid and ev.problem == 1 and ev.errors == []
    # V_stay: +5 (b0), +5 (b1) -> 10, then -5, -5
    assert ev.max_v_stay == 10


def test_exp_example_layout_fits_ub_of_10(exp_path, tmp_path):
    inst = load_instance(exp_path, load_hardware(hw_file(tmp_path, UB=10)))
    ev = evaluate(inst, Plan(order=tuple(range(7)), offsets=((0, 0), (1, 5))))
    assert ev.valid, ev.errors
    assert ev.max_v_stay == 10 and ev.physical_peak == 10
    assert ev.extra_traffic == 0 and ev.spill_count == 0
    # strictly serial: COPY_IN [0,15) on MTE2, EXP [15,45) on VECTOR, COPY_OUT [45,60) on MTE3
    assert (ev.start[1], ev.end[1]) == (0, 15)
    assert (ev.start[3], ev.end[3]) == (15, 45)
    assert (ev.start[5], ev.end[5]) == (45, 60)
    assert ev.makespan == 60
    assert ev.graph.reuse_edges == [] and ev.graph.spill_edges == []


def test_drop_detail_keeps_the_verdict_and_metrics(exp_path, tmp_path):
    inst = load_instance(exp_path, load_hardware(hw_file(tmp_path, UB=10)))
    ev = evaluate(inst, Plan(order=tuple(range(7)), offsets=((0, 0), (1, 5))))
    before = ev.to_dict()
    ev.drop_detail()
    assert ev.graph is None and ev.start is None and ev.end is None
    assert ev.to_dict() == before and ev.valid and ev.makespan == 60


def test_exp_example_does_not_fit_ub_of_9_at_those_offsets(exp_path, tmp_path):
    # EXP uses both 5-unit buffers at once: 10 > 9 is an input error, not a plan error
    from dansched.errors import InstanceError

    with pytest.raises(InstanceError, match=r"node 3 \(EXP\).*UB need 10.*holds 9"):
        load_instance(exp_path, load_hardware(hw_file(tmp_path, UB=9)))


def test_exp_example_overlapping_offsets_rejected(exp_path, tmp_path):
    inst = load_instance(exp_path, load_hardware(hw_file(tmp_path, UB=10)))
    ev = evaluate(inst, Plan(order=tuple(range(7)), offsets=((0, 0), (1, 4))))
    assert not ev.valid
    assert ev.error_counts == {"overlap": 1}
    assert "buffer 1 at [4, 9)" in ev.errors[0].message and "buffer 0 at [0, 5)" in ev.errors[0].message
    assert ev.errors[0].position == 2  # ALLOC b1 is the third node of the schedule


def test_exp_example_offset_past_capacity_rejected(exp_path, tmp_path):
    inst = load_instance(exp_path, load_hardware(hw_file(tmp_path, UB=10)))
    ev = evaluate(inst, Plan(order=tuple(range(7)), offsets=((0, 0), (1, 6))))
    assert not ev.valid and ev.error_counts == {"capacity": 1}
    assert "buffer 1 at [6, 11) lies outside UB (capacity 10)" in ev.errors[0].message


# ---------------------------------------------------------------------------------
# Spills: a backed and an unbacked buffer spilled once
# ---------------------------------------------------------------------------------


def test_backed_and_unbacked_buffer_spilled_once(tmp_path):
    inst = instance_from_records("spill1", SPILL_ONCE_NODES, SPILL_ONCE_EDGES, load_hardware(hw_file(tmp_path, UB=16)))
    assert list(inst.buf_backed) == [True, False, False]
    # N = 10: spill 1 (X, index 0) -> SPILL_OUT 10, SPILL_IN 11; spill 2 (Y, index 1) -> 12, 13
    assert spill_node_ids(10, 0) == (10, 11) and spill_node_ids(10, 1) == (12, 13)
    order = (0, 1, 2, 3, 10, 12, 4, 5, 6, 11, 13, 7, 8, 9)
    plan = Plan(order=order, offsets=((0, 0), (1, 8), (2, 0)), spills=((0, 8), (1, 0)))
    ev = evaluate(inst, plan)
    assert ev.valid, ev.errors
    g = ev.graph

    # cycles: SPILL_OUT X = 0 (backed), SPILL_IN X = 2*8+150 = 166; Y: 2*6+150 = 162 both ways
    assert g.cycles[10:14] == [0, 166, 162, 162]
    # pipes: SPILL_OUT on MTE3, SPILL_IN on MTE2
    hw = inst.hw
    assert g.pipe[10:14] == [hw.pipe_index("MTE3"), hw.pipe_index("MTE2")] * 2
    # traffic: X backed -> 8, Y -> 2*6 = 12
    assert ev.extra_traffic == 20 and ev.spill_count == 2

    # spill edges: ALLOC->OUT, OUT->IN, IN->FREE, then users: COPY_IN runs before
    # SPILL_OUT X (-> edge to 10), ADD after SPILL_IN X (edge from 11); same for Y
    assert set(g.spill_edges) == {
        (0, 10),
        (10, 11),
        (11, 8),
        (1, 10),
        (11, 7),
        (2, 12),
        (12, 13),
        (13, 9),
        (3, 12),
        (13, 7),
    }
    # reuse: Z at [0,16) after X [0,8) ended by 10 and Y [8,14) ended by 12;
    # X back at [8,16) and Y back at [0,6), both last held by Z (ended by FREE 6)
    assert set(g.reuse_edges) == {(10, 4), (12, 4), (6, 11), (6, 13)}
    for u, w in g.spill_edges + g.reuse_edges:
        assert u in g.preds[w]

    # timing by hand (start, end):
    expected = {
        0: (0, 0),  # ALLOC X
        1: (0, 20),  # COPY_IN on MTE2
        2: (0, 0),  # ALLOC Y
        3: (0, 30),  # VEC1 on VECTOR
        10: (20, 20),  # SPILL_OUT X: after COPY_IN (20), 0 cycles on MTE3
        12: (30, 192),  # SPILL_OUT Y: after VEC1 (30), MTE3 free at 20 -> 30+162
        4: (192, 192),  # ALLOC Z: reuse edges from 10 (20) and 12 (192)
        5: (192, 197),  # FILL on VECTOR (free at 30)
        6: (197, 197),  # FREE Z
        11: (197, 363),  # SPILL_IN X: after FREE Z (197); MTE2 free at 20 -> 197+166
        13: (363, 525),  # SPILL_IN Y: after FREE Z, but MTE2 busy until 363 -> 363+162
        7: (525, 565),  # ADD after both SPILL_INs
        8: (565, 565),
        9: (565, 565),
    }
    for v, (s, e) in expected.items():
        assert (ev.start[v], ev.end[v]) == (s, e), v
    assert ev.makespan == 565
    # logical V_stay: 8, 14, 30 (Z allocated while X, Y are logically live), then down
    assert ev.max_v_stay == 30
    # physical: X+Y = 14 resident, both spilled, Z alone = 16, then X+Y again
    assert ev.physical_peak == 16


def test_spill_in_before_spill_out_space_is_free_is_rejected(tmp_path):
    """Same plan, but Z allocated before Y is spilled out: Z overlaps Y."""
    inst = instance_from_records("spill1", SPILL_ONCE_NODES, SPILL_ONCE_EDGES, load_hardware(hw_file(tmp_path, UB=16)))
    order = (0, 1, 2, 3, 10, 4, 12, 5, 6, 11, 13, 7, 8, 9)
    ev = evaluate(inst, Plan(order=order, offsets=((0, 0), (1, 8), (2, 0)), spills=((0, 8), (1, 0))))
    assert not ev.valid
    assert ev.error_counts.get("overlap") == 1
    assert "buffer 2 at [0, 16) in UB overlaps resident buffer 1 at [8, 14)" in ev.errors[0].message


def test_user_between_spill_out_and_spill_in_is_rejected(tmp_path):
    inst = instance_from_records("spill1", SPILL_ONCE_NODES, SPILL_ONCE_EDGES, load_hardware(hw_file(tmp_path, UB=16)))
    # ADD (7) moved between SPILL_OUT Y (12) and SPILL_IN Y (13): Y is not resident,
    # and the spill edge SPILL_IN Y -> ADD is broken
    order = (0, 1, 2, 3, 10, 12, 4, 5, 6, 11, 7, 13, 8, 9)
    ev = evaluate(inst, Plan(order=order, offsets=((0, 0), (1, 8), (2, 0)), spills=((0, 8), (1, 0))))
    assert not ev.valid
    kinds = {e.kind for e in ev.errors}
    assert {"not-resident", "not-topological"} <= kinds
    msgs = " | ".join(e.message for e in ev.errors)
    assert "node 7 (ADD) uses buffer 1, which is not resident" in msgs
    assert "edge 13 -> 7" in msgs


# ---------------------------------------------------------------------------------
# Spills: one buffer spilled twice, to different offsets
# ---------------------------------------------------------------------------------


def test_buffer_spilled_twice_to_different_offsets(tmp_path):
    inst = spill_twice_instance(tmp_path)
    ev = evaluate(inst, SPILL_TWICE_PLAN)
    assert ev.valid, ev.errors
    g = ev.graph
    # N = 11: spill 1 -> 11 (OUT), 12 (IN); spill 2 -> 13, 14; each 2*4+150 = 158 cycles
    assert g.cycles[11:15] == [158] * 4
    assert ev.extra_traffic == 16 and ev.spill_count == 2
    assert g.spill_buf == [0, 0]
    assert set(g.spill_edges) == {
        # spill 1: MAKE before, USE1 and USE2 after
        (0, 11),
        (11, 12),
        (12, 4),
        (1, 11),
        (12, 2),
        (12, 3),
        # spill 2: MAKE, USE1 and spill 1's nodes before, USE2 after
        (0, 13),
        (13, 14),
        (14, 4),
        (1, 13),
        (2, 13),
        (11, 13),
        (12, 13),
        (14, 3),
    }
    # reuse: P [0,8) after W's first segment [0,4) (ended by 11); W back at [4,8) after
    # P (FREE 7); Q [0,8): [0,4) last held by P (7), [4,8) by W's second segment (13);
    # W back at [0,4) after Q (FREE 10)
    assert set(g.reuse_edges) == {(11, 5), (7, 12), (7, 8), (13, 8), (10, 14)}
    expected = {
        1: (0, 10),  # MAKE
        11: (10, 168),  # SPILL_OUT 1 after MAKE
        5: (168, 168),  # ALLOC P after SPILL_OUT 1
        6: (168, 171),  # P1 on CUBE
        7: (171, 171),
        12: (171, 329),  # SPILL_IN 1 after FREE P
        2: (329, 339),  # USE1
        13: (339, 497),  # SPILL_OUT 2 after USE1; MTE3 free since 168
        8: (497, 497),  # ALLOC Q after SPILL_OUT 2
        9: (497, 500),
        10: (500, 500),
        14: (500, 658),  # SPILL_IN 2 after FREE Q; MTE2 free since 329
        3: (658, 668),  # USE2
        4: (668, 668),  # FREE W
    }
    for v, (s, e) in expected.items():
        assert (ev.start[v], ev.end[v]) == (s, e), v
    assert ev.makespan == 668
    assert ev.max_v_stay == 12  # W + P, then W + Q (logical)
    assert ev.physical_peak == 8


def test_residency_segments_of_a_buffer_spilled_twice_by_hand(tmp_path):
    """W (index 0, 4 units) is resident from its ALLOC to spill 1's SPILL_OUT, from that
    spill's SPILL_IN to spill 2's SPILL_OUT, and from spill 2's SPILL_IN to its FREE; P and
    Q (8 units) once each; in the order their starting events run (docs/rules.md, residency)."""
    inst = spill_twice_instance(tmp_path)
    ev = evaluate(inst, SPILL_TWICE_PLAN)
    rows = [(s.buf, s.offset, s.size, s.start, s.end, s.start_node, s.end_node, s.spill) for s in ev.segments()]
    assert rows == [
        (0, 0, 4, 0, 2, 0, 11, -1),  # W: ALLOC at position 0 .. SPILL_OUT 1 (node 11) at 2
        (1, 0, 8, 3, 5, 5, 7, -1),  # P
        (0, 4, 4, 6, 8, 12, 13, 0),  # W back at 4 by SPILL_IN 1 (node 12) .. SPILL_OUT 2 (node 13)
        (2, 0, 8, 9, 11, 8, 10, -1),  # Q
        (0, 0, 4, 12, 14, 14, 4, 1),  # W back at 0 by SPILL_IN 2 (node 14) .. its FREE (node 4)
    ]
    assert {s.tier for s in ev.segments()} == {inst.hw.tier_index("UB")}
    ev.drop_detail()
    with pytest.raises(ValueError, match="no residency"):
        ev.segments()


def test_second_spill_in_at_occupied_offset_rejected(tmp_path):
    inst = spill_twice_instance(tmp_path)
    # FREE Q (10) moved after SPILL_IN 2 (14): W comes back at [0,4) while Q holds [0,8)
    order = (0, 1, 11, 5, 6, 7, 12, 2, 13, 8, 9, 14, 3, 10, 4)
    ev = evaluate(inst, Plan(order=order, offsets=SPILL_TWICE_PLAN.offsets, spills=SPILL_TWICE_PLAN.spills))
    assert not ev.valid
    assert ev.error_counts["overlap"] == 1
    assert "buffer 10 at [0, 4) in UB overlaps resident buffer 30 at [0, 8)" in ev.errors[0].message


def test_spill_in_without_spill_out_first_rejected(tmp_path):
    inst = spill_twice_instance(tmp_path)
    order = (0, 1, 12, 11, 5, 6, 7, 2, 13, 8, 9, 10, 14, 3, 4)
    ev = evaluate(inst, Plan(order=order, offsets=SPILL_TWICE_PLAN.offsets, spills=SPILL_TWICE_PLAN.spills))
    assert not ev.valid
    assert "bad-spill" in ev.error_counts
    assert any(
        "node 12 (SPILL_IN buffer 10) spills in a buffer that is already resident" in e.message for e in ev.errors
    )


def test_spill_naming_unknown_buffer_rejected(tmp_path):
    inst = spill_twice_instance(tmp_path)
    ev = evaluate(inst, Plan(order=SPILL_TWICE_ORDER, offsets=SPILL_TWICE_PLAN.offsets, spills=((10, 4), (99, 0))))
    assert not ev.valid and ev.error_counts == {"bad-spill": 1}
    assert "spill 2 names buffer 99" in ev.errors[0].message


def test_memory_file_problems_rejected(tmp_path):
    inst = spill_twice_instance(tmp_path)
    ev = evaluate(
        inst,
        Plan(order=SPILL_TWICE_ORDER, offsets=((10, 0), (20, 0), (20, 0), (77, 0)), spills=SPILL_TWICE_PLAN.spills),
    )
    assert not ev.valid
    msgs = [e.message for e in ev.errors]
    assert ev.error_counts == {"bad-offset": 3}
    assert any("buffer 20 more than one offset" in m for m in msgs)
    assert any("buffer 77, which does not exist" in m for m in msgs)
    assert any("buffer 30 has no offset" in m for m in msgs)


# ---------------------------------------------------------------------------------
# Address-reuse edges
# ---------------------------------------------------------------------------------

# UB holds 10; every operation is on its own pipe and no edge links two buffers,
# so only address-reuse edges order them in time.
REUSE_NODES = [
    alloc(0, 0, 10),
    op(1, "OPA", "MTE2", 100, [0]),
    free(2, 0, 10),  # A at [0,10)
    alloc(3, 1, 5),
    op(4, "OPB", "VECTOR", 30, [1]),
    free(5, 1, 5),  # B at [0,5)
    alloc(6, 2, 5),
    op(7, "OPC", "MTE3", 20, [2]),
    free(8, 2, 5),  # C at [5,10)
    alloc(9, 3, 10),
    op(10, "OPD", "CUBE", 5, [3]),
    free(11, 3, 10),  # D at [0,10)
]
REUSE_EDGES = [[0, 1], [1, 2], [3, 4], [4, 5], [6, 7], [7, 8], [9, 10], [10, 11]]


def test_reuse_edges_come_from_the_most_recent_occupant_of_each_address(tmp_path):
    inst = instance_from_records("reuse", REUSE_NODES, REUSE_EDGES, load_hardware(hw_file(tmp_path, UB=10)))
    plan = Plan(order=tuple(range(12)), offsets=((0, 0), (1, 0), (2, 5), (3, 0)))
    ev = evaluate(inst, plan)
    assert ev.valid, ev.errors
    # B [0,5) and C [5,10) both reuse A's space (FREE A = 2); D [0,10) reuses B's
    # half (FREE B = 5) and C's half (FREE C = 8). A's FREE is no longer the most
    # recent occupant of any of D's addresses.
    assert sorted(ev.graph.reuse_edges) == [(2, 3), (2, 6), (5, 9), (8, 9)]
    # OPA [0,100); FREE A 100; B: ALLOC 100, OPB [100,130), FREE 130;
    # C: ALLOC 100 (its addresses were A's, not B's), OPC [100,120), FREE 120;
    # D: ALLOC at max(130, 120) = 130, OPD [130,135).
    assert (ev.start[4], ev.end[4]) == (100, 130)
    assert (ev.start[7], ev.end[7]) == (100, 120)  # a tier-wide "last FREE" rule would give 130
    assert (ev.start[10], ev.end[10]) == (130, 135)  # a first-occupant rule (A only) would give 100
    assert ev.makespan == 135
    assert ev.physical_peak == 10


def test_spill_out_frees_space_that_an_alloc_reuses(tmp_path):
    nodes = [
        alloc(0, 0, 10),  # A fills UB
        op(1, "PRODUCE", "VECTOR", 10, [0]),
        op(2, "CONSUME", "VECTOR", 10, [0]),
        free(3, 0, 10),
        alloc(4, 1, 10),  # B also fills UB
        op(5, "USEB", "CUBE", 7, [1]),
        free(6, 1, 10),
    ]
    edges = [[0, 1], [1, 2], [2, 3], [4, 5], [5, 6]]
    inst = instance_from_records("reuse2", nodes, edges, load_hardware(hw_file(tmp_path, UB=10)))
    # spill 1 of A: SPILL_OUT 7, SPILL_IN 8, back at offset 0
    order = (0, 1, 7, 4, 5, 6, 8, 2, 3)
    ev = evaluate(inst, Plan(order=order, offsets=((0, 0), (1, 0)), spills=((0, 0),)))
    assert ev.valid, ev.errors
    # B's ALLOC takes A's addresses after SPILL_OUT A; A comes back after FREE B
    assert sorted(ev.graph.reuse_edges) == [(6, 8), (7, 4)]
    assert 7 in ev.graph.preds[4]
    # PRODUCE [0,10); SPILL_OUT A (2*10+150 = 170 on MTE3) [10,180); ALLOC B 180;
    # USEB [180,187); FREE B 187; SPILL_IN A (170 on MTE2) [187,357); CONSUME [357,367)
    assert (ev.start[7], ev.end[7]) == (10, 180)
    assert ev.start[4] == 180
    assert (ev.start[5], ev.end[5]) == (180, 187)
    assert (ev.start[8], ev.end[8]) == (187, 357)
    assert (ev.start[2], ev.end[2]) == (357, 367)
    assert ev.makespan == 367
    assert ev.extra_traffic == 20 and ev.max_v_stay == 20 and ev.physical_peak == 10
    # without the spill, B cannot be placed while A is resident
    bad = evaluate(inst, Plan(order=(0, 1, 4, 5, 6, 2, 3), offsets=((0, 0), (1, 0))))
    assert not bad.valid and bad.error_counts == {"overlap": 1}


# ---------------------------------------------------------------------------------
# The cycle simulator on its own
# ---------------------------------------------------------------------------------


def test_simulate_timing_pipe_and_precedence():
    # nodes: 0 (pipe 0, 5), 1 (pipe 0, 3), 2 (pipe 1, 4, after 0), 3 (no pipe, after 1, 2)
    preds = [[], [], [0], [1, 2]]
    pipe = [0, 0, 1, -1]
    cycles = [5, 3, 4, 0]
    start, end, ms = simulate_timing([0, 1, 2, 3], preds, pipe, cycles)
    # 0: [0,5); 1 waits for pipe 0: [5,8); 2 after 0: [5,9); 3 after 1 and 2: 9
    assert start == [0, 5, 5, 9] and end == [5, 8, 9, 9] and ms == 9
    # schedule order decides the order on a pipe: 1 before 0 now
    start, end, ms = simulate_timing([1, 0, 2, 3], preds, pipe, cycles)
    assert start == [3, 0, 8, 12] and ms == 12


def test_max_v_stay_counts_only_peak_tiers():
    nodes = [
        alloc(0, 0, 7, "L1"),
        alloc(1, 1, 100, "L0A"),
        alloc(2, 2, 3, "UB"),
        free(3, 0, 7, "L1"),
        free(4, 1, 100, "L0A"),
        free(5, 2, 3, "UB"),
    ]
    inst = instance_from_records("mv", nodes, [])
    assert max_v_stay(inst, [0, 1, 2, 3, 4, 5]) == 10
    assert max_v_stay(inst, [0, 3, 1, 2, 4, 5]) == 7
    # spill ids (>= N) are ignored
    assert max_v_stay(inst, [0, 6, 7, 3, 1, 2, 4, 5]) == 7


# ---------------------------------------------------------------------------------
# Problem-1 orders
# ---------------------------------------------------------------------------------

L0_NODES = [
    alloc(0, 0, 64, "L0A"),
    alloc(1, 1, 64, "L0A"),
    alloc(2, 2, 64, "L0A"),
    free(3, 0, 64, "L0A"),
    free(4, 1, 64, "L0A"),
    free(5, 2, 64, "L0A"),
]
L0_EDGES = [[0, 3], [1, 4], [2, 5]]


def test_l0_single_residency_every_allocation_over_a_live_buffer_is_reported():
    inst = instance_from_records("l0", L0_NODES, L0_EDGES)
    # A, B (A live), FREE B, C (A still live), FREE C, FREE A: two violations
    ev = evaluate(inst, Plan(order=(0, 1, 4, 2, 5, 3)))
    assert not ev.valid
    assert ev.error_counts == {"l0-single-residency": 2}
    assert [e.position for e in ev.errors] == [1, 3]
    assert "buffer 2 is allocated in L0A while buffer 0 is still live there" in ev.errors[1].message
    # one at a time: valid
    ok = evaluate(inst, Plan(order=(0, 3, 1, 4, 2, 5)))
    assert ok.valid and ok.max_v_stay == 0


def test_l0_rule_is_for_problem1_only(tmp_path):
    inst = instance_from_records("l0", L0_NODES, L0_EDGES)
    # the same three-at-once order is fine in problem 2 when the offsets are disjoint (L0A = 256)
    ev = evaluate(inst, Plan(order=(0, 1, 2, 3, 4, 5), offsets=((0, 0), (1, 64), (2, 128))))
    assert ev.valid and ev.physical_peak == 0  # L0A is not a peak tier
    assert ev.makespan == 0


def test_problem1_order_checks():
    inst = instance_from_records("l0", L0_NODES, L0_EDGES)
    ev = evaluate(inst, Plan(order=(3, 0, 4, 1, 2, 5)))
    assert not ev.valid
    assert ev.error_counts["not-topological"] == 2
    assert ev.error_counts["lifetime"] == 2
    assert "edge 0 -> 3" in ev.errors[0].message
    # spill ids do not belong in a problem-1 order
    ev = evaluate(inst, Plan(order=(0, 3, 1, 4, 2, 5, 6)))
    assert not ev.valid and ev.error_counts == {"unknown-node": 1}
    ev = evaluate(inst, Plan(order=(0, 3, 1, 4, 2, 2)))
    assert ev.error_counts == {"duplicate-node": 1, "missing-node": 1}
    assert "node 5 (FREE buffer 2) is not in the schedule" in [e.message for e in ev.errors]


def test_problem1_user_outside_lifetime(exp_path):
    inst = load_instance(exp_path)
    # COPY_IN (1) before ALLOC b0 (0) breaks edge 0 -> 1 and b0's lifetime
    ev = evaluate(inst, Plan(order=(1, 0, 2, 3, 4, 5, 6)))
    assert not ev.valid
    assert ev.error_counts == {"not-topological": 1, "not-resident": 1}


# ---------------------------------------------------------------------------------
# What an invalid plan still has: a timing only when its order keeps every edge
# ---------------------------------------------------------------------------------


def test_an_order_that_breaks_an_edge_has_no_timing(exp_path, tmp_path):
    """Swapping ALLOC b0 (0) and its user COPY_IN (1) breaks edge 0 -> 1: the plan has no
    timing (docs/rules.md, section 7), so no makespan, while the figures its files still
    define stay: maxV_stay +5 (b0), +5 (b1) -> 10, physical peak 10 (both resident after
    ALLOC b1), traffic 0 and no spill (the empty spill list)."""
    inst = load_instance(exp_path, load_hardware(hw_file(tmp_path, UB=10)))
    layout = {"offsets": ((0, 0), (1, 5)), "spills": ()}
    ok = evaluate(inst, Plan(order=(0, 1, 2, 3, 5, 6, 4), **layout))
    assert ok.valid and ok.timing_defined and ok.makespan == 60 and ok.figures_label == ""
    bad = evaluate(inst, Plan(order=(1, 0, 2, 3, 5, 6, 4), **layout))
    assert not bad.valid
    assert any(e.kind == "not-topological" and e.message.startswith("edge 0 -> 1:") for e in bad.errors)
    assert not bad.timing_defined and bad.figures_label == "(invalid plan)"
    assert bad.makespan is None and bad.start is None and bad.end is None and bad.timing is None
    assert (bad.max_v_stay, bad.physical_peak, bad.extra_traffic, bad.spill_count) == (10, 10, 0, 0)
    got = bad.to_dict()
    assert got["valid"] is False and got["makespan"] is None and got["timing_defined"] is False
    with pytest.raises(ValueError, match="no layout metrics"):
        _ = bad.metrics


def test_an_invalid_plan_with_a_timing_keeps_its_makespan(exp_path, tmp_path):
    """b1 at [4, 9) overlaps b0 at [0, 5): invalid, but the order keeps every edge, so the
    plan has a timing: COPY_IN [0,15), EXP [15,45), COPY_OUT [45,60), makespan 60."""
    inst = load_instance(exp_path, load_hardware(hw_file(tmp_path, UB=10)))
    ev = evaluate(inst, Plan(order=tuple(range(7)), offsets=((0, 0), (1, 4))))
    assert not ev.valid and ev.error_counts == {"overlap": 1}
    assert ev.timing_defined and ev.makespan == 60 and ev.figures_label == "(invalid plan)"


def test_a_schedule_missing_a_line_keeps_the_spill_traffic(tmp_path):
    """The spill-once plan with its last FREE left out: not a permutation, so no timing, no
    maxV_stay, no physical peak; the spill list still defines the traffic (X backed 8,
    Y 2 * 6 = 12: 20) and the spill count (2)."""
    inst = instance_from_records("spill1", SPILL_ONCE_NODES, SPILL_ONCE_EDGES, load_hardware(hw_file(tmp_path, UB=16)))
    order = (0, 1, 2, 3, 10, 12, 4, 5, 6, 11, 13, 7, 8)  # FREE (9) left out
    ev = evaluate(inst, Plan(order=order, offsets=((0, 0), (1, 8), (2, 0)), spills=((0, 8), (1, 0))))
    assert not ev.valid and ev.error_counts == {"missing-node": 1}
    assert not ev.timing_defined and ev.makespan is None
    assert ev.max_v_stay is None and ev.physical_peak is None
    assert ev.extra_traffic == 20 and ev.spill_count == 2


def test_a_permutation_with_a_bad_memory_file_keeps_max_v_stay(exp_path, tmp_path):
    """b1 has no offset: the layout cannot be read (no timing, no physical peak), but the
    schedule is a permutation: maxV_stay 10 (+5, +5)."""
    inst = load_instance(exp_path, load_hardware(hw_file(tmp_path, UB=10)))
    ev = evaluate(inst, Plan(order=tuple(range(7)), offsets=((0, 0),)))
    assert not ev.valid and ev.error_counts == {"bad-offset": 1}
    assert ev.max_v_stay == 10 and ev.physical_peak is None and ev.makespan is None
    assert not ev.timing_defined


def test_repr_of_an_evaluation_is_one_short_line(exp_path, tmp_path):
    """The verdict and the key figures, no per-node arrays (the figures by hand: Exp)."""
    inst = load_instance(exp_path, load_hardware(hw_file(tmp_path, UB=10)))
    ev = evaluate(inst, Plan(order=tuple(range(7)), offsets=((0, 0), (1, 5))))
    assert repr(ev) == (
        "Evaluation(problem 2, valid, max_v_stay=10, extra_traffic=0, spill_count=0, makespan=60, physical_peak=10)"
    )
    bad = evaluate(inst, Plan(order=(1, 0, 2, 3, 4, 5, 6), offsets=((0, 0), (1, 5))))
    assert repr(bad).startswith("Evaluation(problem 2, invalid, 2 violation(s), max_v_stay=10,")
    assert "makespan=None" in repr(bad)


def test_metrics_is_a_property_with_max_v_stay(exp_path, tmp_path):
    """The typed view of a full plan's figures, read as an attribute (Exp by hand)."""
    inst = load_instance(exp_path, load_hardware(hw_file(tmp_path, UB=10)))
    ev = evaluate(inst, Plan(order=tuple(range(7)), offsets=((0, 0), (1, 5))))
    m = ev.metrics
    assert (m.extra_traffic, m.spill_count, m.makespan, m.physical_peak, m.max_v_stay) == (0, 0, 60, 10, 10)
    assert ev.timing.makespan == 60 and ev.timing.end[5] == 60
