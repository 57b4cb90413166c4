"""Benchmark: Stage-2 victim rules on the problem-2 plan's order, then Stage 3.

For each official case, the order of its problem-2 plan (spill nodes dropped) is scanned
again by the linear scan (online best fit, greedy eviction) with each victim rule:
``score`` (Eqs. 27-31, the default), ``eager`` (plain farthest-next-use, Eq. 26),
``min-reload`` with its timing tie-breaks (:class:`dansched.stages.dlr.victim.MinReload`;
``min-reload-ahead``: the running operations' buffers last) and evict ahead of need
(:class:`dansched.stages.dlr.victim.AheadOfNeed`: ``ahead-eager``, ``ahead-score``,
``ahead-min-reload``, the base rule among the buffers no running operation holds).
Each plan is judged by the shared evaluator, then Stage 3 runs on it
(:func:`dansched.pipeline.problem3.stage3.run.stage3`, 6 rounds). The table gives traffic,
spills, makespan before and after Stage 3, and the scan's seconds (the least of three, wall
and CPU: the machine is shared, so the load average is printed too); a second table gives
each rule's makespan after Stage 3 and traffic against ``score``'s.

Each rule runs with two room rules (where a placed or reloaded buffer goes,
:mod:`dansched.rooms`): best fit (Eq. 24), and *earliest released*: among the free ranges
that fit, the room whose last occupant left earliest (by position).

Usage::

    python benchmarks/bench_victim.py [--cases Matmul_Case0 ...] [--plans DIR] [--rounds 6]

``--plans DIR`` reads the problem-2 plans from ``DIR/<case>/`` (as ``dansched solve CASE
--problem 2 --out DIR/<case>`` writes them) instead of solving problem 2 here. Prints
Markdown and writes it to ``benchmarks/results/bench_victim.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

from dansched.application.solution import solve
from dansched.instance import Instance, load_instance
from dansched.params import Stage3Params
from dansched.pipeline.options import SolveOptions
from dansched.pipeline.problem3.stage3.run import stage3
from dansched.plan import plan_from_indices, read_plan_dir
from dansched.simulate import evaluate
from dansched.stages.dlr.scan import ScanResult, linear_scan
from dansched.stages.dlr.victim import MinReload, VictimRule

REPO = Path(__file__).resolve().parents[1]
OFFICIAL = REPO.parent / "shared" / "instances" / "official"
RESULTS = REPO / "benchmarks" / "results" / "bench_victim.md"
CASES = ["Conv_Case0", "FlashAttention_Case0", "FlashAttention_Case1", "Matmul_Case0", "Matmul_Case1"]
RULES: list[str | VictimRule] = [
    "score",
    "eager",
    "min-reload",
    MinReload("idle"),
    "min-reload-ahead",
    "ahead-eager",
    "ahead-score",
    "ahead-min-reload",
]


ROOMS = {"best fit": "best-fit", "earliest released": "earliest-released"}


def scan(inst: Instance, order: list[int], rule: str | VictimRule, room: str) -> ScanResult:
    """The paper's placement (online, greedy eviction) with ``rule`` and the room rule ``room``."""
    return linear_scan(inst, order, rule=rule, room=ROOMS[room])


def problem2_order(inst: Instance, case: str, plans: Path | None) -> list[int]:
    """The problem-2 plan's order without its spill nodes."""
    if plans is not None:
        plan = read_plan_dir(plans / case, case)
    else:
        plan = solve(inst, SolveOptions(problem=2), bounds=False).plan
    return [v for v in plan.order if v < inst.n]


def run_case(case: str, plans: Path | None, rounds: int) -> list[dict[str, object]]:
    """One row per room and rule: traffic, spills, makespans, seconds."""
    inst = load_instance(OFFICIAL / f"{case}.json")
    order = problem2_order(inst, case, plans)
    rows: list[dict[str, object]] = []
    for room in ("best fit", "earliest released"):
        for rule in RULES:
            scan(inst, order, rule, room)  # first run: compiled code loaded
            wall = cpu = float("inf")
            for _ in range(3):
                w, c = time.perf_counter(), time.process_time()
                res = scan(inst, order, rule, room)
                wall, cpu = min(wall, time.perf_counter() - w), min(cpu, time.process_time() - c)
            plan = plan_from_indices(inst, res.sequence, res.offsets, res.spills())
            ev = evaluate(inst, plan)
            name = rule if isinstance(rule, str) else rule.name
            assert ev.valid, (case, room, name, [e.message for e in ev.errors[:3]])
            assert ev.extra_traffic == res.traffic
            t3 = time.perf_counter()
            s3 = stage3(inst, plan, ev, Stage3Params(rounds=rounds))
            t3 = time.perf_counter() - t3
            assert s3.evaluation.valid and s3.evaluation.extra_traffic == res.traffic
            rows.append(
                {
                    "case": case,
                    "room": room,
                    "rule": name,
                    "traffic": res.traffic,
                    "spills": res.spill_count,
                    "stage2": ev.makespan,
                    "stage3": s3.makespan,
                    "wall": wall,
                    "cpu": cpu,
                    "t3": t3,
                }
            )
            print(_row(rows[-1]), flush=True)
    return rows


def _row(r: dict[str, object]) -> str:
    return (
        f"| {r['case']} | {r['room']} | {r['rule']} | {r['traffic']:,} | {r['spills']} | {r['stage2']:,} | "
        f"{r['stage3']:,} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['t3']:.0f} |"
    )


def _change(new: int, old: int) -> str:
    return f"{100.0 * (new - old) / old:+.1f}%"


def summary(rows: list[dict[str, object]]) -> list[str]:
    """Per case and room, each rule's makespan after Stage 3 and traffic against ``score``'s."""
    rules = [r if isinstance(r, str) else r.name for r in RULES]
    out = [
        "## After Stage 3, against `score` (same order, same room)",
        "",
        "| case | room | " + " | ".join(f"{r}: makespan (traffic)" for r in rules[1:]) + " |",
        "| --- | --- |" + " ---: |" * (len(rules) - 1),
    ]
    by = {(r["case"], r["room"], r["rule"]): r for r in rows}
    for case, room in dict.fromkeys((r["case"], r["room"]) for r in rows):
        base = by[(case, room, rules[0])]
        cells = []
        for rule in rules[1:]:
            r = by[(case, room, rule)]
            cells.append(
                f"{_change(int(r['stage3']), int(base['stage3']))} ({_change(int(r['traffic']), int(base['traffic']))})"
            )
        out.append(f"| {case} | {room} | " + " | ".join(cells) + " |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="*", default=CASES)
    ap.add_argument("--plans", type=Path, default=None)
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    load = os.getloadavg()[0]
    lines = [
        "# Stage-2 victim rules on the problem-2 order, then Stage 3",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} cores, "
        f"load average {load:.1f} at the start. Order: the problem-2 plan's, spill nodes dropped. "
        f"Scan: online best fit (or the earliest-released room), greedy eviction; seconds of the "
        f"least of three scans after a first (wall, CPU). Stage 3: {args.rounds} rounds. Every plan is valid "
        f"and Stage 3 keeps its traffic.",
        "",
        "| case | room | rule | traffic | spills | makespan (Stage 2) | makespan (Stage 3) | scan s | scan CPU s "
        "| Stage 3 s |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    print("\n".join(lines), flush=True)
    rows = [row for case in args.cases for row in run_case(case, args.plans, args.rounds)]
    lines += [_row(r) for r in rows]
    lines += ["", *summary(rows)]
    lines.append("")
    lines.append(f"Load average {os.getloadavg()[0]:.1f} at the end.")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
