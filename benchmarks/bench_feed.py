"""Benchmark: CPE's "loads fed by need" list schedule, off and on, through the whole pipeline.

For each official case (``../shared/instances/official/*.json``, else ``instances/*.json``;
or the files given), each effort and each traffic slack, solves problem 3 twice, as
``dansched solve CASE [--effort E] [--traffic-slack S]`` does
(``run_pipeline(inst, effort_options(E, problem=3, traffic_slack=S, cpe=...))``): *off*
with ``CpeParams(feed_by_need=())`` (CPE compares only its non-delay list schedules) and
*on* with the default ``CpeParams()`` (one more: the active mode on the data-movement
pipes, urgency from a backward pass; ``dansched.stages.cpe.refine.feed_by_need``), which
the ``default`` and ``max`` presets use (``fast`` leaves the rule out: there *on* forces it). Each
plan is judged by the shared evaluator. Per row: makespan and traffic off and on, the
change, the median wall seconds of ``--repeat`` solves each (the two interleaved, so both
see the same load) and the 1-minute load average (``uptime``) before the first solve of
the row; then, per case, the busiest pipe's waits off and on (:mod:`dansched.application.report.waits`,
what ``dansched trace CASE --plan DIR`` prints) and its largest idle gaps.

Usage::

    python benchmarks/bench_feed.py [CASES...] [--efforts default] [--slacks 0,20]
                                    [--repeat 1] [--out FILE]

Prints Markdown and writes it to ``benchmarks/results/bench_feed.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from dansched.application.report.waits import busiest_pipe, format_waits, pipe_waits
from dansched.instance import Instance, load_instance
from dansched.kernels.warm import warm
from dansched.params import CpeParams
from dansched.pipeline import effort_options, run_pipeline
from dansched.plan import Plan
from dansched.simulate import Evaluation, evaluate

ROOT = Path(__file__).resolve().parent.parent
OFFICIAL = ROOT.parent / "shared" / "instances" / "official"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "bench_feed.md"
MODES = {"off": CpeParams(feed_by_need=()), "on": CpeParams()}


def default_cases() -> list[Path]:
    found = sorted(OFFICIAL.glob("*.json")) if OFFICIAL.is_dir() else []
    return found or sorted((ROOT / "instances").glob("*.json"))


def solve(inst: Instance, effort: str, slack: float, cpe: CpeParams) -> tuple[Plan, Evaluation, float, str]:
    """One solve: the plan, its evaluation, the wall seconds and the final CPE's ``found_by``."""
    t0 = time.perf_counter()
    res = run_pipeline(inst, effort_options(effort, problem=3, traffic_slack=slack, cpe=cpe))
    seconds = time.perf_counter() - t0
    ev = evaluate(inst, res.plan)
    if not ev.valid:
        raise SystemExit(f"{inst.name}: the pipeline's plan is invalid: {ev.errors[:1]}")
    return res.plan, ev, seconds, str(res.report.to_dict()["stages"]["cpe"]["found_by"])


def largest_gaps(inst: Instance, plan: Plan, ev: Evaluation, pipe: str, top: int = 3) -> str:
    """The ``top`` largest idle gaps of ``pipe`` after its first task: cycles, the time, the
    task that waits."""
    timing = ev.timing
    assert timing is not None
    g, p = timing.graph, inst.hw.pipes.index(pipe)
    gaps: list[tuple[int, int, int]] = []
    free = None
    for v in plan.order:
        if g.pipe[v] != p:
            continue
        if free is not None and timing.start[v] > free:
            gaps.append((timing.start[v] - free, free, v))
        free = timing.end[v]
    gaps.sort(key=lambda x: (-x[0], x[1]))
    name = inst.op
    return ", ".join(f"{c:,} at {t:,} before {name[v] if v < inst.n else 'a spill'} {v}" for c, t, v in gaps[:top])


def measure(path: Path, effort: str, slack: float, repeat: int) -> dict[str, Any]:
    inst = load_instance(path)
    row: dict[str, Any] = {"case": inst.name, "effort": effort, "slack": slack, "load": os.getloadavg()[0]}
    seconds: dict[str, list[float]] = {m: [] for m in MODES}
    for _ in range(repeat):
        for mode, cpe in MODES.items():
            plan, ev, sec, found_by = solve(inst, effort, slack, cpe)
            seconds[mode].append(sec)
            pipe = busiest_pipe(inst, ev)
            row[mode] = {
                "makespan": ev.makespan,
                "traffic": ev.extra_traffic,
                "found_by": found_by,
                "waits": pipe_waits(inst, plan, ev, pipe),
                "gaps": largest_gaps(inst, plan, ev, pipe),
            }
            if row[mode].get("plan") not in (None, plan):
                raise SystemExit(f"{inst.name}: two solves with the same options differ")
            row[mode]["plan"] = plan
    for mode in MODES:
        row[mode]["seconds"] = statistics.median(seconds[mode])
    row["load_after"] = os.getloadavg()[0]
    return row


def change(off: int, on: int) -> str:
    return "0" if on == off else f"{on - off:+,} ({100.0 * (on - off) / off:+.2f}%)"


def table(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "| case | effort | slack % | makespan off | makespan on | change | traffic off | traffic on "
        "| s off | s on | load |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        off, on = r["off"], r["on"]
        out.append(
            f"| {r['case']} | {r['effort']} | {r['slack']:g} | {off['makespan']:,} | {on['makespan']:,} "
            f"| {change(off['makespan'], on['makespan'])} | {off['traffic']:,} | {on['traffic']:,} "
            f"| {off['seconds']:.1f} | {on['seconds']:.1f} | {r['load']:.1f} to {r['load_after']:.1f} |"
        )
    return out


def waits(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for r in rows:
        out.append(f"- {r['case']}, {r['effort']}, slack {r['slack']:g}:")
        for mode in MODES:
            lines = format_waits(r[mode]["waits"])
            out.append(f"  - {mode}: " + "; ".join(x.strip() for x in lines))
            out.append(f"    largest gaps: {r[mode]['gaps'] or 'none'}; the final CPE: {r[mode]['found_by']}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", type=Path)
    ap.add_argument("--efforts", default="default", help="comma-separated efforts (fast, default, max)")
    ap.add_argument("--slacks", default="0,20")
    ap.add_argument("--repeat", type=int, default=1, help="solves per mode and row (the median seconds)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    cases = args.cases or default_cases()
    slacks = [float(x) for x in args.slacks.split(",")]
    efforts = args.efforts.split(",")
    warm()  # the kernels and the solvers loaded once, so that no row pays for it
    solve(load_instance(ROOT / "instances" / "matmul_s2.json"), "fast", 0.0, MODES["on"])
    rows = []
    for path in cases:
        for effort in efforts:
            for slack in slacks:
                rows.append(measure(path, effort, slack, args.repeat))
                print(table(rows[-1:])[-1], file=sys.stderr)
    cmd = " ".join(["python3 benchmarks/bench_feed.py", *sys.argv[1:]] if argv is None else argv)
    lines = [
        "# Loads fed by need: CPE's active-mode list schedule, off and on",
        "",
        f"`{cmd}`. *Off*: `CpeParams(feed_by_need=())`, CPE compares its non-delay list schedules "
        "only (as before the rule); *on*: the default `CpeParams()`, one more list schedule in which "
        "the data-movement pipes run in the active mode (Giffler and Thompson's conflict set, "
        "urgency: the latest start of a backward pass). Whole pipeline, problem 3, every plan judged "
        "by the shared evaluator; the makespan search, the polish and the rounds run in both. The "
        "`fast` preset ships with the rule off: its *off* column is `dansched solve --effort fast`, its "
        "*on* column the rule forced on. "
        f"Wall seconds: median of {args.repeat} solve(s) per mode, the two interleaved, on a "
        f"{platform.machine()} machine with {os.cpu_count()} cores shared with other jobs (Python "
        f"{platform.python_version()}); *load*: the 1-minute load average before and after the row.",
        "",
        *table(rows),
        "",
        "The busiest pipe of each plan, its waits (what `dansched trace CASE --plan DIR` prints) and its "
        "largest idle gaps after its first task:",
        "",
        *waits(rows),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
