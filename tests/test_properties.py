"""Property tests (hypothesis): random small well-formed DAGs with random valid plans.

Each generated case carries its own, independent derivation of what the
evaluator must say: the segments of every buffer, the spill edges of
docs/rules.md, section 5.4, the address-reuse edges (from the most recent occupant of each
address), and the timing computed with reuse edges from *all* earlier
occupants (which docs/rules.md, section 6.2, says gives the same timing). Valid plans must be
accepted with exactly those figures; each single mutation of a valid plan must
be rejected with a message naming the violation.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import ALPHA, BETA, CAP, PEAK, SETTINGS, SINGLE, TIERS, Case, cases, hw  # noqa: F401  (hw is a fixture)

from dansched.hardware import load_hardware
from dansched.instance import instance_from_records, write_json
from dansched.plan import Plan, write_plan
from dansched.simulate import evaluate


def expected_figures(case: Case) -> dict:
    n, rec = case.n, case.rec
    pos = {v: i for i, v in enumerate(case.order)}
    backed = {b for r in case.nodes if r["Op"] == "COPY_IN" for b in r["Bufs"]}
    size = {r["BufId"]: r["Size"] for r in case.nodes if r["Op"] == "ALLOC"}
    alloc_of = {r["BufId"]: r["Id"] for r in case.nodes if r["Op"] == "ALLOC"}
    free_of = {r["BufId"]: r["Id"] for r in case.nodes if r["Op"] == "FREE"}
    users = {b: [r["Id"] for r in case.nodes if "Bufs" in r and b in r["Bufs"]] for b in size}
    # spill edges (docs/rules.md, section 5.4)
    spill_edges = set()
    earlier: dict[int, list[int]] = {}
    for k, (b, _) in enumerate(case.spills):
        o, i = n + 2 * k, n + 2 * k + 1
        spill_edges |= {(alloc_of[b], o), (o, i), (i, free_of[b])}
        for u in users[b] + earlier.get(b, []):
            spill_edges.add((u, o) if pos[u] < pos[o] else (i, u))
        earlier.setdefault(b, []).extend([o, i])
    # reuse edges: from the most recent earlier occupant of each address, and from all of them
    recent, every = set(), set()
    for s in case.segments:
        for a in range(s.off, s.off + s.size):
            prev = [
                r for r in case.segments if r.tier == s.tier and r.end_pos < s.start_pos and r.off <= a < r.off + r.size
            ]
            for r in prev:
                every.add((r.end_event, s.start_event))
            if prev:
                recent.add((max(prev, key=lambda r: r.end_pos).end_event, s.start_event))
    # timing with the original edges, spill edges and every earlier occupant's reuse edge
    total = n + 2 * len(case.spills)
    preds = {v: set() for v in range(total)}
    for u, w in list(case.edges) + list(spill_edges) + list(every):
        preds[w].add(u)
    pipe, cycles = {}, {}
    for v in range(total):
        if v < n:
            r = rec[v]
            pipe[v] = r.get("Pipe")
            cycles[v] = r.get("Cycles", 0)
        else:
            k, is_in = divmod(v - n, 2)
            b = case.spills[k][0]
            pipe[v] = "MTE2" if is_in else "MTE3"
            cycles[v] = 0 if (not is_in and b in backed) else ALPHA + BETA * size[b]
    start, end, pipe_end = {}, {}, {}
    for v in case.order:
        t = max([end[u] for u in preds[v]], default=0)
        if pipe[v] is not None:
            t = max(t, pipe_end.get(pipe[v], 0))
            pipe_end[pipe[v]] = t + cycles[v]
        start[v], end[v] = t, t + cycles[v]
    # peaks
    v_stay = best_v = 0
    for v in case.order:
        r = rec.get(v) if v < n else None
        if r and r["Op"] in ("ALLOC", "FREE") and r["Type"] in PEAK:
            v_stay += r["Size"] if r["Op"] == "ALLOC" else -r["Size"]
            best_v = max(best_v, v_stay)
    phys = 0
    for i in range(len(case.order)):
        phys = max(phys, sum(s.size for s in case.segments if s.tier in PEAK and s.start_pos <= i < s.end_pos))
    return {
        "spill_edges": spill_edges,
        "reuse_edges": recent,
        "start": [start[v] for v in range(total)],
        "makespan": max(end.values(), default=0),
        "max_v_stay": best_v,
        "physical_peak": phys,
        "extra_traffic": sum(size[b] * (1 if b in backed else 2) for b, _ in case.spills),
        "spill_count": len(case.spills),
    }


# ---------------------------------------------------------------------------------
# valid plans are accepted, with the independently derived figures
# ---------------------------------------------------------------------------------


@SETTINGS
@given(case=cases())
def test_random_valid_plans_are_accepted(hw, case):
    inst = instance_from_records("prop", case.nodes, case.edges, hw)
    ev = evaluate(inst, case.plan())
    assert ev.valid, ev.errors
    assert ev.errors == [] and ev.error_counts == {}
    exp = expected_figures(case)
    assert set(ev.graph.spill_edges) == exp["spill_edges"]
    assert set(ev.graph.reuse_edges) == exp["reuse_edges"]
    # most-recent-occupant edges give the same timing as every-earlier-occupant edges
    assert ev.start == exp["start"]
    assert ev.makespan == exp["makespan"]
    for k in ("max_v_stay", "physical_peak", "extra_traffic", "spill_count"):
        assert getattr(ev, k) == exp[k], k


@SETTINGS
@given(case=cases(tiers=["L0A", "L0B", "L1"], max_spills=0))
def test_random_problem1_orders(hw, case):
    inst = instance_from_records("prop", case.nodes, case.edges, hw)
    ev = evaluate(inst, Plan(order=tuple(case.base_order)))
    exp = expected_figures(case)
    assert ev.max_v_stay == exp["max_v_stay"]
    # L0 single residency: count ALLOCs made while another buffer of the tier is live
    live = {t: set() for t in SINGLE}
    count = 0
    for v in case.base_order:
        r = case.rec[v]
        if r["Op"] in ("ALLOC", "FREE") and r["Type"] in SINGLE:
            if r["Op"] == "ALLOC":
                count += bool(live[r["Type"]])
                live[r["Type"]].add(r["BufId"])
            else:
                live[r["Type"]].discard(r["BufId"])
    assert ev.error_counts == ({"l0-single-residency": count} if count else {})
    assert ev.valid == (count == 0)


# ---------------------------------------------------------------------------------
# single mutations are rejected, naming the violation
# ---------------------------------------------------------------------------------


def swap_dependent(case: Case, data) -> tuple[Plan, str, str]:
    u, w = data.draw(st.sampled_from(case.edges))
    order = list(case.order)
    i, j = order.index(u), order.index(w)
    order[i], order[j] = order[j], order[i]
    return (
        replace(case.plan(), order=tuple(order)),
        "not-topological",
        rf"^edge {u} -> {w}: node {w} \(.*\) runs before node {u} \(",
    )


def overlap_resident(case: Case, data) -> tuple[Plan, str, str]:
    first = {}
    for s in case.segments:
        first.setdefault(s.buf, s)
    pairs = [
        (b, c)
        for b, sb in first.items()
        for c, sc in first.items()
        if b != c and sb.tier == sc.tier and sb.start_pos < sc.start_pos < sb.end_pos
    ]
    assume(pairs)
    b, c = data.draw(st.sampled_from(pairs))
    offsets = dict(case.offsets)
    offsets[c] = offsets[b]
    plan = replace(case.plan(), offsets=tuple(sorted(offsets.items())))
    return (
        plan,
        "overlap",
        rf"^buffer {c} at \[{offsets[b]}, \d+\) in {first[b].tier} overlaps resident buffer {b} at \[{offsets[b]}, ",
    )


def offset_past_capacity(case: Case, data) -> tuple[Plan, str, str]:
    b = data.draw(st.sampled_from(sorted(case.offsets)))
    size = next(s.size for s in case.segments if s.buf == b)
    tier = next(s.tier for s in case.segments if s.buf == b)
    off = data.draw(st.one_of(st.integers(CAP - size + 1, CAP + 50), st.integers(-50, -1)))
    offsets = dict(case.offsets)
    offsets[b] = off
    plan = replace(case.plan(), offsets=tuple(sorted(offsets.items())))
    return plan, "capacity", rf"^buffer {b} at \[{off}, {off + size}\) lies outside {tier} \(capacity {CAP}\)"


def drop_node(case: Case, data) -> tuple[Plan, str, str]:
    i = data.draw(st.integers(0, len(case.order) - 1))
    v = case.order[i]
    order = case.order[:i] + case.order[i + 1 :]
    return replace(case.plan(), order=tuple(order)), "missing-node", rf"^node {v} \(.*\) is not in the schedule$"


def duplicate_spill_id(case: Case, data) -> tuple[Plan, str, str]:
    assume(case.spills)
    v = data.draw(st.integers(case.n, case.n + 2 * len(case.spills) - 1))
    at = data.draw(st.integers(0, len(case.order)))
    order = case.order[:at] + [v] + case.order[at:]
    what = "SPILL_OUT" if (v - case.n) % 2 == 0 else "SPILL_IN"
    return (
        replace(case.plan(), order=tuple(order)),
        "duplicate-node",
        rf"^node {v} \({what} buffer \d+\) is scheduled twice",
    )


def duplicate_spill_line(case: Case, data) -> tuple[Plan, str, str]:
    assume(case.spills)
    k = data.draw(st.integers(0, len(case.spills) - 1))
    plan = replace(case.plan(), spills=tuple(case.spills) + (case.spills[k],))
    out_id = case.n + 2 * len(case.spills)
    return plan, "missing-node", rf"^node {out_id} \(SPILL_OUT buffer {case.spills[k][0]}\) is not in the schedule$"


MUTATIONS = [
    swap_dependent,
    overlap_resident,
    offset_past_capacity,
    drop_node,
    duplicate_spill_id,
    duplicate_spill_line,
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.__name__ for m in MUTATIONS])
@SETTINGS
@given(data=st.data())
def test_single_mutations_are_rejected(hw, mutation, data):
    tiers = ["UB", "L0A"] if mutation is overlap_resident else TIERS
    case = data.draw(cases(tiers=tiers, min_buffers=2 if mutation is overlap_resident else 1, max_spills=4))
    inst = instance_from_records("prop", case.nodes, case.edges, hw)
    assert evaluate(inst, case.plan()).valid
    plan, kind, pattern = mutation(case, data)
    ev = evaluate(inst, plan)
    assert not ev.valid
    assert kind in ev.error_counts, ev.error_counts
    assert any(e.kind == kind and re.search(pattern, e.message) for e in ev.errors), (pattern, ev.errors)


# ---------------------------------------------------------------------------------
# the same mutations through the real command line: exit status 1
# ---------------------------------------------------------------------------------


CLI_MUTATIONS = [
    # name, how the plan changes, the violation kind, text its message holds
    ("swap dependent nodes", "order: ALLOC X (0) and COPY_IN (1) swapped", "not-topological", "edge 0 -> 1"),
    (
        "overlap resident buffers",
        "offsets: Y at 4",
        "overlap",
        "buffer 1 at [4, 10) in UB overlaps resident buffer 0 at [0, 8)",
    ),
    ("offset past capacity", "offsets: Z at 1", "capacity", "buffer 2 at [1, 17) lies outside UB (capacity 16)"),
    ("drop a node", "order: FILL (5) left out", "missing-node", "node 5 (FILL) is not in the schedule"),
    (
        "duplicate a spill id",
        "order: SPILL_OUT Y (12) twice",
        "duplicate-node",
        "node 12 (SPILL_OUT buffer 1) is scheduled twice",
    ),
]


def _mutate_cli_plan(plan: Plan, which: int) -> Plan:
    order = list(plan.order)  # (0, 1, 2, 3, 10, 12, 4, 5, 6, 11, 13, 7, 8, 9)
    if which == 0:
        order[0], order[1] = order[1], order[0]
        return replace(plan, order=tuple(order))
    if which == 1:
        return replace(plan, offsets=((0, 0), (1, 4), (2, 0)))
    if which == 2:
        return replace(plan, offsets=((0, 0), (1, 8), (2, 1)))
    if which == 3:
        return replace(plan, order=tuple(v for v in order if v != 5))
    return replace(plan, order=tuple(order + [12]))


@pytest.fixture(scope="module")
def cli_case(tmp_path_factory):
    """The spill-once hand case of test_simulate (UB of 16: X, Y co-resident, both spilled), on disk."""
    from helpers import SPILL_ONCE_EDGES, SPILL_ONCE_NODES

    d = tmp_path_factory.mktemp("cli")
    (d / "hw.toml").write_text("[tiers]\nUB = 16\n")
    inst = instance_from_records("spill1", SPILL_ONCE_NODES, SPILL_ONCE_EDGES, load_hardware(d / "hw.toml"))
    write_json(inst, d / "spill1.json")
    plan = Plan(
        order=(0, 1, 2, 3, 10, 12, 4, 5, 6, 11, 13, 7, 8, 9), offsets=((0, 0), (1, 8), (2, 0)), spills=((0, 8), (1, 0))
    )
    return d, inst, plan


def _cli(d: Path, plan: Plan, name: str) -> subprocess.CompletedProcess:
    out = d / name
    write_plan(plan, out, "spill1")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "dansched.cli",
            "evaluate",
            str(d / "spill1.json"),
            "--schedule",
            str(out / "spill1_schedule.txt"),
            "--memory",
            str(out / "spill1_memory.txt"),
            "--spill",
            str(out / "spill1_spill.txt"),
            "--hw",
            str(d / "hw.toml"),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_accepts_the_valid_plan(cli_case):
    d, _, plan = cli_case
    proc = _cli(d, plan, "valid")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["makespan"] == 565  # derived in test_simulate


@pytest.mark.parametrize("which", range(len(CLI_MUTATIONS)), ids=[m[0] for m in CLI_MUTATIONS])
def test_cli_rejects_single_mutations_with_exit_1(cli_case, which):
    d, inst, plan = cli_case
    _, _, kind, text = CLI_MUTATIONS[which]
    bad = _mutate_cli_plan(plan, which)
    proc = _cli(d, bad, f"m{which}")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    got = json.loads(proc.stdout)
    assert got["valid"] is False and kind in got["error_counts"]
    assert any(e["kind"] == kind and text in e["message"] for e in got["errors"]), got["errors"]
