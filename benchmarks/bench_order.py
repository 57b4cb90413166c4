"""Benchmark: Stage 2's order search for traffic on the official cases.

For each case, the problem-2 plan of the pipeline without the order search
(``SolveOptions(problem=2, order_search=None)``: MPAS then DLR, *before*) and with it
(``SolveOptions(problem=2)``, *after*): extra traffic, spill count, the producer that
won (``dlr``, ``wave``, ``exact`` or ``lns``), whether it is proven optimal, what the
exact order windows did (*lns*: traffic they started from -> reached, windows solved /
improved, CP-SAT deterministic seconds), and the wall seconds of each solve. With ``--problem3 CASES`` the same for problem 3 (traffic and
makespan) on those cases. Every plan is judged by :func:`dansched.simulate.evaluate`.

Usage::

    python benchmarks/bench_order.py [CASES...] [--problem3 Matmul_Case0,Matmul_Case1]

Prints Markdown and writes it to ``benchmarks/results/bench_order.md``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path
from typing import Any

from dansched.instance import load_instance
from dansched.pipeline import SolveOptions, run_pipeline

REPO = Path(__file__).resolve().parents[1]
# ../shared next to the repository (as tests/conftest.py expects), or two levels up from a worktree
OFFICIAL = next(
    (
        p
        for p in (
            REPO.parent / "shared" / "instances" / "official",
            REPO.parent.parent / "shared" / "instances" / "official",
        )
        if p.is_dir()
    ),
    REPO.parent / "shared" / "instances" / "official",
)
RESULTS = REPO / "benchmarks" / "results" / "bench_order.md"
CASES = ["Conv_Case0", "FlashAttention_Case0", "FlashAttention_Case1", "Matmul_Case0", "Matmul_Case1"]


def run(inst, problem: int, search: bool) -> dict[str, Any]:
    opts = SolveOptions(problem=problem) if search else SolveOptions(problem=problem, order_search=None)
    t0 = time.perf_counter()
    res = run_pipeline(inst, opts)
    seconds = time.perf_counter() - t0
    ev = res.evaluation
    if not ev.valid:
        raise SystemExit(f"{inst.name}: the evaluator rejects the plan")
    dlr = res.report.to_dict()["stages"]["dlr"]
    return {
        "traffic": int(ev.extra_traffic),
        "spills": int(ev.spill_count),
        "makespan": int(ev.makespan),
        "producer": dlr.get("producer", "dlr"),
        "proven": dlr.get("proven_optimal"),
        "bound": dlr.get("bound"),
        "detail": dlr.get("order_search", {}).get("wave", {}).get("sweep", ""),
        "lns": dlr.get("order_search", {}).get("lns", {}),
        "seconds": seconds,
    }


def _lns(info: dict[str, Any]) -> str:
    """The order windows' cell: skipped (why), or traffic from -> to, windows solved / improved, det. seconds."""
    if not info:
        return "-"
    if "skipped" in info:
        return f"skipped ({info['skipped']})"
    return (
        f"{info['traffic_before']:,} -> {info['traffic']:,}, {info['windows']} / {info['improved']} windows,"
        f" {info['deterministic_time']:.1f} det-s"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", default=CASES)
    ap.add_argument("--dir", type=Path, default=OFFICIAL)
    ap.add_argument("--problem3", default="", help="comma-separated cases also solved for problem 3")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    p3_cases = [c for c in args.problem3.split(",") if c]
    rows: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    rows3: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for case in args.cases:
        inst = load_instance(args.dir / f"{case}.json")
        before, after = run(inst, 2, False), run(inst, 2, True)
        rows.append((case, before, after))
        print(f"{case}: {before['traffic']} -> {after['traffic']} ({after['producer']})", file=sys.stderr, flush=True)
        if case in p3_cases:
            b3, a3 = run(inst, 3, False), run(inst, 3, True)
            rows3.append((case, b3, a3))
            print(
                f"{case} p3: {b3['traffic']}/{b3['makespan']} -> {a3['traffic']}/{a3['makespan']}",
                file=sys.stderr,
                flush=True,
            )
    out = [
        "# bench_order",
        "",
        "Stage 2's order search (`dansched.stages.dlr.order_search`: exact joint model on small graphs, wave /",
        "sweep search on blocked reductions, exact order windows `lns` of `dansched.stages.dlr.window_lns`)",
        "on the official cases. *before*: `SolveOptions(problem=2,",
        "order_search=None)` (MPAS then DLR); *after*: `SolveOptions(problem=2)`. Every plan was accepted by",
        "`dansched.simulate.evaluate`. *proven*: the plan's traffic meets a proven lower bound (0, or the",
        "joint model's optimum on small graphs).",
        "",
        f"- Machine: {platform.machine()}, Python {platform.python_version()}; the host was shared with other",
        "  jobs (2 cores, several concurrent runs), so seconds are inflated and only indicative.",
        "",
        "## Problem 2",
        "",
        "| case | traffic before | traffic after | spills before | spills after | producer | sweep | lns |"
        " proven | s before | s after |",
        "|---|---:|---:|---:|---:|---|---|---|---|---:|---:|",
    ]
    for case, b, a in rows:
        out.append(
            f"| {case} | {b['traffic']:,} | {a['traffic']:,} | {b['spills']:,} | {a['spills']:,} | {a['producer']} |"
            f" {a['detail'] or '-'} | {_lns(a['lns'])} | {'yes' if a['proven'] else 'no'} | {b['seconds']:.1f} |"
            f" {a['seconds']:.1f} |"
        )
    if rows3:
        out += [
            "",
            "## Problem 3 (inherits the Stage-2 plan)",
            "",
            "| case | traffic before | traffic after | makespan before | makespan after | s before | s after |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for case, b, a in rows3:
            out.append(
                f"| {case} | {b['traffic']:,} | {a['traffic']:,} | {b['makespan']:,} | {a['makespan']:,} |"
                f" {b['seconds']:.1f} | {a['seconds']:.1f} |"
            )
    text = "\n".join(out) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
