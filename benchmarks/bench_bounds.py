"""Benchmark: lower bounds over all orders on the official cases.

Per case, each maxV_stay bound of :func:`dansched.models.bounds.peak_bounds.peak_bounds`
(forced liveness / first-free peeling, the product-pattern grid, the contracted
block-order relaxation -- run here on its own, with no floor, so every case shows what it
reaches; ``bound`` solves only the windows that can beat the others --, the exact DP where
the graph is small) with its method and seconds, against the peak of dansched's problem-1
plan; then the traffic bounds over all orders (the forced-live sets of
:func:`dansched.models.bounds.traffic_global.global_traffic_bound`, then each bound of
:func:`dansched.models.bounds.traffic_orders.all_orders_traffic_bounds` at the default budget, and
the segment bound's fine sweep of ``--effort max``), with their reason when 0, against the
extra traffic of dansched's problem-2 plan; then the makespan floors over every plan (the
traffic-forced one included) and the floor of the plans carrying the problem-2 plan's
traffic; then, against dansched's problem-3 plan, the makespan floors of each scope before
and after the heads and tails that respect the pipes (:func:`floors_row`). Every plan is judged by
:func:`dansched.simulate.evaluate` inside ``solve``. The gap is
``(plan - bound) / plan``; "proven optimal" when it is 0.

Usage::

    python benchmarks/bench_bounds.py [CASE ...] [--official DIR] [--no-plans]

Prints Markdown and writes ``benchmarks/results/bench_bounds.md``. Seconds are wall
clock on whatever machine runs it (say how loaded it was when quoting them).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from dansched.errors import ExactModelTooLarge, NoLegalOrderError  # noqa: E402
from dansched.instance import load_instance  # noqa: E402
from dansched.models.bounds.bound import gap  # noqa: E402
from dansched.models.bounds.floors import (  # noqa: E402
    INSTANCE_SCOPE,
    PLAN_SCOPE,
    makespan_floor_at_traffic,
    makespan_floors,
    spill_in_load,
)
from dansched.models.bounds.peak import peak_lower_bound  # noqa: E402
from dansched.models.bounds.peak_contracted import contracted_peak_bound  # noqa: E402
from dansched.models.bounds.peak_product import product_peak_bound  # noqa: E402
from dansched.models.bounds.traffic_global import global_traffic_bound  # noqa: E402
from dansched.models.bounds.traffic_orders import all_orders_traffic_bounds  # noqa: E402
from dansched.models.exact.order import exact_min_peak  # noqa: E402
from dansched.params import BoundParams  # noqa: E402
from dansched.pipeline import SolveOptions, effort_options, run_pipeline  # noqa: E402
from dansched.pipeline.options import FINE_SEGMENT_STEPS  # noqa: E402

CASES = ["Conv_Case0", "FlashAttention_Case0", "FlashAttention_Case1", "Matmul_Case0", "Matmul_Case1"]
EXACT_MAX_NODES = 80


def _timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


def _exact(inst):
    if inst.n > EXACT_MAX_NODES:
        return None
    try:
        return exact_min_peak(inst, max_states=200_000)
    except (ExactModelTooLarge, NoLegalOrderError, ValueError):
        return None


def _pct(g) -> str:
    return "-" if g is None else f"{100 * g:.1f}%"


def bench_case(path: Path, plans: bool) -> list[str]:
    inst = load_instance(path)
    name = path.stem
    p1 = p2 = None
    if plans:
        p1, t1 = _timed(run_pipeline, inst, SolveOptions(problem=1))
        p2, t2 = _timed(run_pipeline, inst, SolveOptions(problem=2))
    peak = p1.evaluation.max_v_stay if p1 else None
    traffic = p2.evaluation.extra_traffic if p2 else None
    rows = []
    methods = (
        ("forced liveness", peak_lower_bound),
        ("product pattern", product_peak_bound),
        ("contracted relaxation", contracted_peak_bound),
    )
    for label, fn in methods:
        b, s = _timed(fn, inst)
        rows.append((label, b.value, b.method, s))
    ex, s = _timed(_exact, inst)
    if ex is not None:
        rows.append(("exact DP", ex.peak, f"exact minimum-peak order ({ex.states:,} down-sets)", s))
    out = []
    best = max(v for _, v, _, _ in rows)
    for label, value, method, s in rows:
        mark = " **best**" if value == best else ""
        opt = " (proven optimal)" if peak is not None and value == peak else ""
        out.append(
            f"| {name} | maxV_stay | {label}{mark} | {value:,} | {s:.2f} | "
            f"{'-' if peak is None else f'{peak:,}'} | {_pct(gap(peak, value))}{opt} | {method} |"
        )
    tb, s = _timed(global_traffic_bound, inst)
    out.append(
        f"| {name} | extra traffic | forced-live sets (before the bounds below) | {tb.value:,} | {s:.2f} | "
        f"{'-' if traffic is None else f'{traffic:,}'} | {_pct(gap(traffic, tb.value))} | {tb.method} |"
    )
    labels = ("per tier (forced-live, least peak)", "product-grid segments", "live lines")
    for effort, params in (("default", BoundParams()), ("max", BoundParams(segment_steps=FINE_SEGMENT_STEPS))):
        bounds, s = _timed(all_orders_traffic_bounds, inst, params)
        best = max(b.value for b in bounds)
        for label, b in zip(labels, bounds):
            if effort == "max" and label != "product-grid segments":
                continue
            mark = " **best**" if b.value == best and best > 0 else ""
            out.append(
                f"| {name} | extra traffic | {label} ({effort}){mark} | {b.value:,} | {s:.2f} | "
                f"{'-' if traffic is None else f'{traffic:,}'} | {_pct(gap(traffic, b.value))} | {b.method} |"
            )
    floors = makespan_floors(inst, forced_traffic=max(b.value for b in all_orders_traffic_bounds(inst)))
    for key in ("instance", "head_body_tail_instance", "traffic_forced"):
        f, _scope = floors.named()[key]
        out.append(f"| {name} | makespan | floor {key} (every plan) | {f.value:,} | - | - | - | {f.method} |")
    if traffic is not None:
        at = makespan_floor_at_traffic(inst, traffic, floors)
        out.append(
            f"| {name} | makespan | floor at the plan's traffic {traffic:,} (plans with at least it) | "
            f"{at.value:,} | - | - | - | {at.method} |"
        )
    return out


def _old_traffic_floor(inst, traffic: int, old_floors) -> int:
    """The floor at ``traffic`` as it was before the spill-in pipe's head-body-tail floor: the
    largest of the instance floors (``old_floors``) and that pipe's load plus its SPILL_IN
    cycles."""
    p = inst.hw.pipes.index(inst.hw.spill_in_pipe)
    load = int(inst.cycles[inst.pipe == p].sum())
    return max(old_floors.instance.value, old_floors.head_body_tail_instance.value, load + spill_in_load(inst, traffic))


def floors_row(path: Path) -> str:
    """One row of the floors table: dansched's problem-3 plan (``solve``'s default) beside the
    makespan floors of every plan, of the plans carrying at least its traffic, of its memory
    behaviour and of its re-addressings, before (heads and tails from longest paths:
    ``head_set_limit=0``; the spill-in floor its load alone) and after (heads and tails that
    respect the pipes, the spill-in pipe's head-body-tail floor), each with its gap, and the
    seconds the floors take now."""
    inst = load_instance(path)
    res = run_pipeline(inst, effort_options("default", problem=3))
    ev, order = res.evaluation, res.plan.order
    forced = max(b.value for b in all_orders_traffic_bounds(inst))
    args = (inst, ev.graph, order, forced, ev.extra_traffic)
    old = makespan_floors(*args, params=BoundParams(head_set_limit=0))
    new, s = _timed(lambda: makespan_floors(*args))
    mk = ev.makespan
    old_traffic = _old_traffic_floor(inst, ev.extra_traffic, old)

    def cell(before: int, after: int) -> str:
        return f"{before:,} ({_pct(gap(mk, before))}) -> {after:,} ({_pct(gap(mk, after))})"

    best = new.best(INSTANCE_SCOPE)[1]
    rooms = new.addresses.value if new.addresses is not None else mk
    return (
        f"| {path.stem} | {mk:,} | {cell(old.best(INSTANCE_SCOPE)[1].value, best.value)} | "
        f"{cell(old_traffic, new.traffic.value)} | {cell(old.best(PLAN_SCOPE)[1].value, new.best(PLAN_SCOPE)[1].value)} | "
        f"{rooms:,} ({mk - rooms:,}) | {s:.2f} |"
    )


def bound_command_row(path: Path) -> str:
    """``dansched bound CASE --json`` with its default budget, timed as a user runs it
    (a fresh process: imports, one problem-3 solve, the audits). The target is at
    most 60 s per official case."""
    t = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "dansched.cli", "bound", str(path), "--json"], capture_output=True, text=True, cwd=REPO
    )
    s = time.perf_counter() - t
    if run.returncode != 0:
        return f"| {path.stem} | {s:.1f} | failed: {run.stderr.strip().splitlines()[-1:]} | | |"
    rep = json.loads(run.stdout)
    tr = rep["extra_traffic"]
    return (
        f"| {path.stem} | {s:.1f} | {rep['max_v_stay']['value']:,} / {rep['max_v_stay']['plan_value']:,} | "
        f"{tr['value']:,} / {tr['plan_value']:,} ({tr.get('cpsat_status', '-')}) | "
        f"{rep['makespan']['value']:,} / {rep['makespan']['plan_value']:,} ({rep['makespan']['scope']}) |"
    )


def _each_case(args, row) -> list[str]:
    """``row(path)`` for each case of ``args`` whose file is there, each printed as it comes."""
    out = []
    for case in args.cases:
        p = Path(args.official) / f"{case}.json"
        if p.is_file():
            out.append(row(p))
            print(out[-1], file=sys.stderr, flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", default=CASES)
    ap.add_argument("--official", default=str(REPO.parent / "shared" / "instances" / "official"))
    ap.add_argument("--no-plans", action="store_true", help="skip solving (no plan values or gaps)")
    ap.add_argument("--no-command", action="store_true", help="skip timing `dansched bound` on each case")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "bench_bounds.md"))
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    lines = [
        "# Lower bounds over all orders (official cases)",
        "",
        "Generated by `python3 benchmarks/bench_bounds.py`. Peak bounds are for problem 1 "
        "(maxV_stay under the L0 rule), against dansched's problem-1 plan; the traffic bounds "
        "hold for every order, against dansched's problem-2 plan (seconds: all three bounds together). Seconds are wall clock; "
        "the contracted relaxation runs with no floor here (in `dansched bound` it solves only "
        "windows that can beat the other bounds, at most ~1.3 s per official case).",
        "",
        "| case | metric | bound | value | s | plan | gap | method |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for case in args.cases:
        p = Path(args.official) / f"{case}.json"
        if not p.is_file():
            print(f"skipping {case}: {p} not found", file=sys.stderr)
            continue
        got = bench_case(p, not args.no_plans)
        lines += got
        print("\n".join(got), file=sys.stderr, flush=True)
    if not args.no_plans:
        lines += [
            "",
            "## Makespan floors before and after heads and tails that respect the pipes",
            "",
            "Per case, dansched's problem-3 plan (`dansched solve`'s default) and its makespan "
            "floors, each with the plan's gap to it, before -> after. Before: heads and tails "
            "from longest paths (`BoundParams(head_set_limit=0)`), the floor at a traffic the "
            "spill-in pipe's load plus its SPILL_IN cycles; after: heads and tails that respect "
            "the pipes (`models/bounds/heads.py`, `head_set_limit` 256), the spill-in pipe's "
            "head-body-tail floor with those cycles. *Every plan*: the best floor of scope "
            "global; *this traffic+*: of every plan carrying at least the plan's traffic; "
            "*this memory*: of the plan's memory behaviour (its augmented DAG); *re-addressing*: "
            "the plan retimed without its address-reuse edges (a floor for every other "
            "placement of its buffers) and, in brackets, what its rooms cost. Seconds: the "
            "floors now (instance and plan, one call), wall clock.",
            "",
            "| case | plan | every plan | this traffic+ | this memory | re-addressing (rooms cost) | floors s |",
            "|---|---:|---|---|---|---:|---:|",
        ]
        lines += _each_case(args, floors_row)
    if not args.no_command:
        lines += [
            "",
            "## `dansched bound` with its default budget (target: at most 60 s per case)",
            "",
            "Wall seconds of `dansched bound CASE --json` in a fresh process (one problem-3 solve, "
            "whose Stage-1 order is the problem-1 plan, then the audits); each cell is bound / plan, "
            "the makespan's with the scope of its best floor (`fixed memory behaviour`: this plan's "
            "spills and reuse edges only).",
            "",
            "| case | wall s | maxV_stay | extra traffic, fixed order (placement model) | makespan |",
            "|---|---:|---:|---:|---:|",
        ]
        lines += _each_case(args, bound_command_row)
    loads = ", ".join(f"{x:.2f}" for x in load_before + os.getloadavg())
    lines += ["", f"Load average (1, 5, 15 min) when the run started, then when it ended: {loads}."]
    text = "\n".join(lines) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
