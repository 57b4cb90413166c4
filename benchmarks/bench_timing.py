"""Benchmark: problem-3 makespan against its floors at three traffic allowances.

For each official case (``../shared/instances/official/*.json``, else
``instances/*.json``; or the files given), runs the full pipeline for problem 3
(``dansched.pipeline.run_pipeline(inst, SolveOptions(problem=3, traffic_slack=S))``) at
``--traffic-slack`` 0, 20 and 100, judges the plan with the shared evaluator and
writes, per (case, slack): makespan, traffic, the three floors of
:mod:`dansched.models.bounds.floors` with the makespan's distance above each
(``+x%`` = makespan / floor - 1):

- *instance*: max(busiest pipe, longest path) on the instance DAG (every plan);
- *plan*: the same on the plan's augmented DAG, spill tasks included;
- *hbt*: the head-body-tail (one-machine, Jackson preemptive) floor on the plan's
  augmented DAG; the per-pipe bound named in the method;

then the Stage-3 runs, the candidate source of the kept plan, the makespan search's
improving repairs (``repair xN -C``: N new best plans, C cycles saved; ``applied A/T``:
repairs that applied of those tried) and the wall seconds
of the solve (measured on a shared machine: contention inflates them).

Usage::

    python benchmarks/bench_timing.py [CASES...] [--slacks 0,20,100] [--efforts fast,default,max]
                                      [--exact-window W] [--exact-window-mode fixed|memory]
                                      [--bench BENCH_JSON] [--out FILE]

Prints Markdown and writes it to ``benchmarks/results/bench_timing.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from dansched.application.report.waits import busiest_pipe, pipe_waits
from dansched.instance import load_instance
from dansched.models.bounds.floors import INSTANCE_SCOPE, makespan_floors
from dansched.pipeline import effort_options, run_pipeline
from dansched.pipeline.problem3.search.driver import MOVES
from dansched.simulate import evaluate

ROOT = Path(__file__).resolve().parent.parent
OFFICIAL = ROOT.parent / "shared" / "instances" / "official"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "bench_timing.md"


def default_cases() -> list[Path]:
    found = sorted(OFFICIAL.glob("*.json")) if OFFICIAL.is_dir() else []
    return found or sorted((ROOT / "instances").glob("*.json"))


def above(value: int, floor: int) -> str:
    """``+x.x%``: how far ``value`` lies above ``floor``."""
    return "n/a" if floor <= 0 else f"+{100.0 * (value - floor) / floor:.1f}%"


def measure(path: Path, slack: float, exact_window: int, mode: str, effort: str = "default") -> dict[str, Any]:
    """One (case, slack) row: solve, judge, floors, the candidate that won and the Stage-3 runs."""
    inst = load_instance(path)
    t0 = time.perf_counter()
    res = run_pipeline(
        inst,
        effort_options(effort, problem=3, traffic_slack=slack, exact_window=exact_window, exact_window_mode=mode),
    )
    seconds = time.perf_counter() - t0
    ev = evaluate(inst, res.plan)
    if not ev.valid:
        raise SystemExit(f"{inst.name}: the pipeline's plan is invalid: {ev.errors[:1]}")
    report = res.report.to_dict()
    f = makespan_floors(inst, ev.graph, res.plan.order)
    best_name, best = f.best()
    global_name, global_floor = f.best(INSTANCE_SCOPE)
    kept = next(c for c in report["candidates"] if c["kept"])
    waits = pipe_waits(inst, res.plan, ev, busiest_pipe(inst, ev))
    return {
        "waits": waits,
        "case": inst.name,
        "slack": slack,
        "effort": effort,
        "makespan": ev.makespan,
        "traffic": ev.extra_traffic,
        "p2_traffic": report["traffic_budget"]["base"],  # the problem-2 plan of the same run
        "runs": report["stages"]["cpe"]["runs"],
        "candidates": len(report["candidates"]),
        "kept_source": kept["source"],
        "kept_detail": kept["detail"],
        "search": search_gains(report),
        "instance": f.instance,
        "plan": f.plan,
        "hbt": f.head_body_tail,
        "global": global_floor,
        "global_name": global_name,
        "best": best_name,
        "best_value": best.value,
        "seconds": seconds,
    }


def search_gains(report: dict[str, Any]) -> str:
    """The makespan search's improving repairs over its rounds: ``repair xN -C`` (N new best
    plans saving C cycles in all), then ``applied A/T`` (repairs that applied of those
    tried), or ``-`` when the search did not run."""
    total: dict[str, list[int]] = {}
    tried = applied = 0
    rounds = report.get("search", [])
    for rnd in rounds:
        for name, row in rnd.get("operators", {}).items():
            if name not in MOVES:  # a destroy operator: its counts repeat the repairs'
                continue
            tried += int(row["tried"])
            applied += int(row["applied"])
            if row["improved"]:
                t = total.setdefault(name, [0, 0])
                t[0] += int(row["improved"])
                t[1] += int(row["saved"])
    if not rounds:
        return "-"
    gains = ", ".join(f"{m} x{n} -{c:,}" for m, (n, c) in sorted(total.items())) or "no gain"
    return f"{gains}; applied {applied}/{tried}"


def cell(value: int, b) -> str:
    return f"{b.value:,} ({above(value, b.value)})"


def table(rows: list[dict[str, Any]]) -> list[str]:
    head = [
        "case",
        "effort",
        "slack %",
        "makespan",
        "traffic",
        "p2 traffic",
        "global floor",
        "plan floor",
        "hbt floor",
        "Stage-3 runs",
        "kept source",
        "search gains",
        "wall s",
    ]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * 3 + ["---:"] * 7 + ["---", "---", "---:"]) + "|"]
    for r in rows:
        m = r["makespan"]
        out.append(
            "| "
            + " | ".join(
                [
                    r["case"],
                    r["effort"],
                    f"{r['slack']:g}",
                    f"{m:,}",
                    f"{r['traffic']:,}",
                    f"{r['p2_traffic']:,}",
                    cell(m, r["global"]),
                    cell(m, r["plan"]),
                    cell(m, r["hbt"]),
                    f"{r['runs']} of {r['candidates']}",
                    f"{r['kept_source']} ({r['kept_detail']})" if r["kept_detail"] else r["kept_source"],
                    r["search"],
                    f"{r['seconds']:.1f}",
                ]
            )
            + " |"
        )
    return out


def source_wins(rows: list[dict[str, Any]]) -> list[str]:
    """How often each candidate source made the kept plan, per effort."""
    out = []
    for effort in dict.fromkeys(r["effort"] for r in rows):
        mine = [r for r in rows if r["effort"] == effort]
        wins: dict[str, int] = {}
        for r in mine:
            wins[r["kept_source"]] = wins.get(r["kept_source"], 0) + 1
        ranked = sorted(wins.items(), key=lambda kv: (-kv[1], kv[0]))
        out.append(f"- {effort}: " + ", ".join(f"`{k}` {v} of {len(mine)}" for k, v in ranked))
    return out


def floor_methods(rows: list[dict[str, Any]]) -> list[str]:
    """Which pipe or path sets each floor, per case (slack 0 row)."""
    out = []
    for r in rows:
        if r["slack"] == rows[0]["slack"]:
            out.append(
                f"- {r['case']}: instance: {r['instance'].method}; plan: {r['plan'].method}; hbt: {r['hbt'].method}"
            )
    return out


def what_holds(rows: list[dict[str, Any]]) -> list[str]:
    """Per case (slack-0 row): the busiest pipe's idle cycles and the two largest waits
    behind them (:mod:`dansched.application.report.waits`; ``dansched trace`` prints the same)."""
    out = []
    for r in rows:
        if r["slack"] != rows[0]["slack"]:
            continue
        w = r["waits"]
        top = "; ".join(f"{x.cycles:,} cycles in {x.gaps:,} gap(s) on `{x.describe()}`" for x in w.waits[:2])
        out.append(
            f"- {r['case']}: {w.pipe} carries {w.load:,} cycles and idles {w.idle:,} before its last task "
            f"(tail {w.tail:,}); largest waits: {top or 'none'}"
        )
    return out


def fastest_bench_methods(rows: list[dict[str, Any]], bench_json: Path) -> list[str]:
    """Per case, the largest slack's makespan beside the fastest valid method of a ``dansched
    bench`` run (``bench_json``) whose traffic is at most twice that plan's."""
    if not bench_json.is_file():
        return []
    bench = json.loads(bench_json.read_text())
    out = [
        "| case | slack % | makespan | traffic | fastest bench method within 2x traffic | its makespan | its traffic |",
        "|---|---:|---:|---:|---|---:|---:|",
    ]
    top = max(r["slack"] for r in rows)
    for r in rows:
        if r["slack"] != top:
            continue
        cands = [
            b
            for b in bench
            if b["instance"] == r["case"]
            and b.get("valid")
            and b.get("makespan") is not None
            and b.get("method") != "dan"
            and (b.get("extra_traffic") or 0) <= 2 * max(r["traffic"], 1)
        ]
        if not cands:
            continue
        b = min(cands, key=lambda b: (b["makespan"], b["method"]))
        out.append(
            f"| {r['case']} | {top:g} | {r['makespan']:,} | {r['traffic']:,} | {b['method']} | {b['makespan']:,} | "
            f"{b['extra_traffic']:,} |"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", type=Path)
    ap.add_argument("--slacks", default="0,20,100")
    ap.add_argument("--exact-window", type=int, default=0)
    ap.add_argument("--exact-window-mode", default="fixed", choices=("fixed", "memory"))
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--efforts", default="default", help="comma-separated efforts (fast, default, max)")
    ap.add_argument(
        "--bench",
        type=Path,
        default=ROOT / "benchmarks" / "results" / "bench" / "bench.json",
        help="a dansched bench run to compare the largest slack with",
    )
    args = ap.parse_args(argv)
    slacks = [float(s) for s in args.slacks.split(",") if s.strip()]
    cases = args.cases or default_cases()
    efforts = [e.strip() for e in args.efforts.split(",") if e.strip()]
    rows = []
    for path in cases:
        for effort in efforts:
            for slack in slacks:
                r = measure(path, slack, args.exact_window, args.exact_window_mode, effort)
                print(
                    f"{r['case']} {effort} slack {slack:g}: makespan {r['makespan']:,} traffic {r['traffic']:,} "
                    f"global floor {r['global'].value:,} {r['runs']} Stage-3 runs {r['seconds']:.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
                rows.append(r)
    reference = "default" if "default" in efforts else efforts[-1]
    ref_rows = [r for r in rows if r["effort"] == reference]
    opts = (
        f"`--problem 3`, exact window {args.exact_window} ({args.exact_window_mode})"
        if args.exact_window
        else "`--problem 3`"
    )
    lines = (
        [
            "# Problem-3 makespan against its floors",
            "",
            f"`python3 benchmarks/bench_timing.py {' '.join(p.name for p in args.cases)} --efforts {args.efforts} "
            f"--slacks {args.slacks}` — {opts}. Each floor is a proven lower bound (`dansched.models.bounds.floors`); "
            "`(+x%)` is the makespan's distance above it. The *global floor* holds for every plan of the instance "
            "(the best of the busiest pipe, the longest path and the head-body-tail bound on the instance DAG); "
            "the *plan* and *hbt* floors hold for the plan's own memory behaviour. *Stage-3 runs* counts the full "
            "Stage-3 runs of the candidates made; *kept source* is the candidate source of the final plan; "
            "*search gains* the makespan search's improving moves (`move xN -C`: N new best plans saving C "
            "cycles). The lists below the table use the "
            f"`{reference}` rows. Wall "
            f"seconds on a {platform.machine()} machine (Python {platform.python_version()}).",
            "",
        ]
        + table(rows)
        + ["", "Candidate sources of the kept plans:", ""]
        + source_wins(rows)
        + ["", "Where each floor comes from (slack-0 plans):", ""]
        + floor_methods(ref_rows)
        + [""]
    )
    lines += (
        [
            "What keeps each plan above its floor (slack-0 plans): the busiest pipe's idle time and the binding "
            "constraints behind it (`link:pipe` = the kind of constraint and the pipe of the task waited for, "
            "followed back three links):",
            "",
        ]
        + what_holds(ref_rows)
        + [""]
    )
    versus = fastest_bench_methods(ref_rows, args.bench)
    if len(versus) > 2:  # a header and at least one row
        lines += (
            [
                f"Against the other methods of `{args.bench.relative_to(ROOT) if args.bench.is_relative_to(ROOT) else args.bench}` "
                "(their rows as last run; `dan` excluded):",
                "",
            ]
            + versus
            + [""]
        )
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
