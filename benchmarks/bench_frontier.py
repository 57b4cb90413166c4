"""Benchmark: problem 3's traffic-makespan frontier on the official cases.

For each case (``../shared/instances/official/*.json``, or the files given) it runs, as whole
processes of ``dansched solve`` (so the seconds are what a user waits, the compile cache
warm): ``--effort fast``, the default effort (slack 0), ``--traffic-slack 20``, and
``--frontier`` (the default effort, the frontier up to ``EffortParams.frontier_slack``). Every
plan written is judged again by the shared evaluator (``dansched.simulate.evaluate``) before
its figures are used. It writes:

- per case, the frontier's table (traffic, over the problem-2 plan's, makespan, busiest pipe
  and its load, the floor for that traffic, the gap, the knee), as ``solve --frontier``
  reports it;
- one summary table: the makespan at slack 0, the best frontier point within +10 % traffic,
  the makespan at slack 20, each against its target, and the seconds of each run with the
  frontier's ratio to the default's;
- for the slack-0 plan, the reload count against Belady's minimum for its own order
  (farthest-next-use on the same order, the problem-2 plan's spill nodes dropped, per tier,
  in units), and the waits behind its busiest pipe's idle cycles (:mod:`dansched.report.waits`).

Usage::

    python benchmarks/bench_frontier.py [CASES...] [--out FILE] [--repeat N]

Prints Markdown and writes it to ``benchmarks/results/bench_frontier.md``. The machine may be
shared: the load average before and after each case is printed beside its seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dansched.instance import load_instance
from dansched.plan import read_plan_dir
from dansched.report.waits import busiest_pipe_name, pipe_waits
from dansched.simulate import evaluate
from dansched.stages.dlr.scan import linear_scan

ROOT = Path(__file__).resolve().parent.parent
OFFICIAL = ROOT.parent / "shared" / "instances" / "official"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "bench_frontier.md"

# the targets of the issue that asked for the frontier (makespan, cycles): slack 0, best within +10 %, slack 20
TARGETS = {
    "Conv_Case0": (430_000, 405_000, 395_000),
    "FlashAttention_Case0": (29_300, 29_300, 29_300),
    "FlashAttention_Case1": (130_000, 118_000, 115_000),
    "Matmul_Case0": (88_000, 87_500, 87_500),
    "Matmul_Case1": (1_000_000, 946_342, 946_342),
}


def load() -> float:
    return os.getloadavg()[0]


def run(path: Path, out: Path, *args: str) -> tuple[float, dict[str, Any]]:
    """``dansched solve PATH --out OUT ARGS --json --quiet``: the wall seconds and the summary."""
    cmd = [sys.executable, "-m", "dansched.cli", "solve", str(path), "--out", str(out), "--json", "--quiet", *args]
    t0 = time.perf_counter()
    got = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    if got.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({got.returncode}): {got.stderr.strip()[-500:]}")
    return seconds, json.loads(got.stdout)


def judged(path: Path, folder: Path) -> Any:
    """The plan of ``folder`` judged again by the shared evaluator (must be valid)."""
    inst = load_instance(path)
    plan = read_plan_dir(folder, inst.name)
    ev = evaluate(inst, plan)
    if not ev.valid:
        raise SystemExit(f"{folder}: invalid plan: {ev.first_violation()}")
    return inst, plan, ev


def belady_reloads(inst: Any, plan: Any) -> tuple[int, int]:
    """(reloads of ``plan``, reloads of farthest-next-use on the same order): the plan's spill
    count against the scan with the ``eager`` rule (Eq. 26, Belady's) on its order."""
    order = [v for v in plan.order if v < inst.n]
    return len(plan.spills), linear_scan(inst, order, rule="eager", mode="units").spill_count


def case_rows(path: Path, repeat: int) -> dict[str, Any]:
    name = path.stem
    row: dict[str, Any] = {"case": name, "load_before": load()}
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        runs = {
            "fast": ("--effort", "fast"),
            "default": (),
            "slack20": ("--traffic-slack", "20"),
            "frontier": ("--frontier",),
        }
        for key, args in runs.items():
            secs = []
            for _ in range(repeat if key == "fast" else 1):
                s, summary = run(path, t / key, *args)
                secs.append(s)
            secs.sort()
            row[f"{key}_seconds"] = secs[len(secs) // 2]
            inst, plan, ev = judged(path, t / key)
            row[key] = int(ev.makespan)
            row[f"{key}_traffic"] = int(ev.extra_traffic)
            if key == "frontier":
                row["front"] = summary["frontier"]
                for point in summary["frontier"]:
                    _, _, pev = judged(path, t / key / f"{name}_frontier" / f"traffic-{point['traffic']}")
                    assert (pev.makespan, pev.extra_traffic) == (point["makespan"], point["traffic"]), point
            if key == "default":
                row["reloads"] = belady_reloads(inst, plan)
                w = pipe_waits(inst, plan, ev, busiest_pipe_name(inst, ev))
                row["waits"] = w
    row["load_after"] = load()
    base = row["front"][0]["traffic"] if row["front"] else 0
    within = [p for p in row["front"] if p["traffic"] <= base * 1.1]
    row["plus10"] = min(within, key=lambda p: p["makespan"]) if within else None
    return row


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.1f}%"


def render(rows: list[dict[str, Any]]) -> str:
    lines = ["# bench_frontier", ""]
    lines.append(
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores (shared: load shown "
        "per case). Every plan judged again by the shared evaluator. `dansched solve` runs as whole processes."
    )
    lines += ["", "## Summary", ""]
    lines.append(
        "| case | slack 0 (target) | best within +10 % (target) | slack 20 (target) | fast s | default s | "
        "slack 20 s | frontier s | frontier / default |"
    )
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        t0, t10, t20 = TARGETS.get(r["case"], (None, None, None))
        p10 = r["plus10"]

        def cell(value: int, target: int | None, traffic: int | None = None) -> str:
            mark = "" if target is None else (" ok" if value <= target else " **miss**")
            at = "" if traffic is None else f" @ {traffic:,}"
            return f"{value:,}{at} ({'-' if target is None else f'{target:,}'}{mark})"

        lines.append(
            f"| {r['case']} | {cell(r['default'], t0, r['default_traffic'])} | "
            f"{cell(p10['makespan'], t10, p10['traffic']) if p10 else '-'} | "
            f"{cell(r['slack20'], t20, r['slack20_traffic'])} | {r['fast_seconds']:.1f} | {r['default_seconds']:.1f} | "
            f"{r['slack20_seconds']:.1f} | {r['frontier_seconds']:.1f} | "
            f"{r['frontier_seconds'] / r['default_seconds']:.2f}x |"
        )
    for r in rows:
        lines += ["", f"## {r['case']} (load {r['load_before']:.1f} before, {r['load_after']:.1f} after)", ""]
        lines.append("| # | traffic | over p2 | makespan | busiest pipe | floor | gap | from |")
        lines.append("|---|---:|---:|---:|---|---:|---:|---|")
        for i, p in enumerate(r["front"], start=1):
            lines.append(
                f"| {i}{' (knee)' if p['knee'] else ''} | {p['traffic']:,} | {pct(p['over_problem2'])} | "
                f"{p['makespan']:,} | {p['busiest_pipe']} {p['busiest_load']:,} | {p['floor']['value']:,} | "
                f"{pct(p['gap'])} | {p['source']} |"
            )
        got, belady = r["reloads"]
        lines.append("")
        lines.append(f"- slack-0 plan: {got:,} reloads; farthest-next-use on its order: {belady:,}.")
        w = r["waits"]
        lines.append(
            f"- slack-0 plan: {w.pipe} busy {w.load:,}, idle {w.idle:,} before its last task, tail {w.tail:,}; "
            + "; ".join(f"{x.cycles:,} in {x.gaps:,} gap(s) on `{x.describe()}`" for x in w.waits[:4])
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="*", type=Path)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--repeat", type=int, default=3, help="runs of --effort fast per case (the median is kept)")
    args = ap.parse_args()
    cases = args.cases or sorted(OFFICIAL.glob("*.json"))
    rows = []
    for path in cases:
        print(f"{path.stem} ...", file=sys.stderr, flush=True)
        rows.append(case_rows(path, args.repeat))
    text = render(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
