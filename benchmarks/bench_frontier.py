"""Benchmark: problem 3's traffic-makespan frontier and its fixed allowances on the official cases.

For each case (``../shared/instances/official/*.json``, or the files given) it runs, as whole
processes of ``dansched solve`` (so the seconds are what a user waits, the compile cache
warm): ``--effort fast`` (and ``--effort fast --frontier``), the default effort (slack 0),
``--traffic-slack 10``, ``--traffic-slack 20`` and ``--frontier`` (the default effort, the
frontier up to ``EffortParams.frontier_slack``). Every plan written, each frontier point's
folder included, is judged again by the shared evaluator (``dansched.simulate.evaluate``)
before its figures are used. It writes:

- a summary: the makespan at slack 0, 10 and 20 against its target, and the seconds of each
  run with the frontier's ratio to the default's (the load average beside them);
- dominance: for each checked plan the issue published (a plan made by hand from an earlier
  frontier's, judged by an independent evaluator), the frontier's point with no more traffic
  and no more makespan, or a miss;
- per case, the frontier's table (traffic, over the problem-2 plan's, makespan, busiest pipe
  and its load, the floor for that traffic, the gap, where the point came from), the waits
  behind the busiest pipe's idle cycles of the slack-0 plan and of the knee
  (:mod:`dansched.application.report.waits`), what holds each point more than 3 % above its floor (its
  largest waits), and how the walk ended;
- the cycles gained per added spill by each kind of walk step (consecutive frontier points
  whose heavier one the walk made: the makespan gained over the spills added).

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
from collections import defaultdict
from pathlib import Path
from typing import Any

from dansched.application.report.waits import busiest_pipe_name, pipe_waits
from dansched.instance import load_instance
from dansched.plan import read_plan_dir
from dansched.simulate import evaluate

ROOT = Path(__file__).resolve().parent.parent
OFFICIAL = ROOT.parent / "shared" / "instances" / "official"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "bench_frontier.md"

# the targets of the issue that asked for a frontier no checked plan beats (makespan, cycles):
# slack 0, slack 10, slack 20
TARGETS = {
    "Conv_Case0": (438_000, 428_000, 408_000),
    "FlashAttention_Case0": (29_400, 29_400, 29_400),
    "FlashAttention_Case1": (134_000, 124_000, 116_000),
    "Matmul_Case0": (88_500, 88_000, 88_000),
    "Matmul_Case1": (1_000_000, 946_342, 946_342),
}
# the checked plans that issue published (traffic, makespan): the frontier must dominate each
CHECKED = {
    "Conv_Case0": [(51_072, 430_439), (58_752, 408_881), (63_360, 395_414)],
    "FlashAttention_Case1": [(32_320, 136_327)],
    "Matmul_Case1": [(238_080, 984_295)],
}
RUNS = {
    "fast": ("--effort", "fast"),
    "fast_frontier": ("--effort", "fast", "--frontier"),
    "default": (),
    "slack10": ("--traffic-slack", "10"),
    "slack20": ("--traffic-slack", "20"),
    "frontier": ("--frontier",),
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


def judged(inst: Any, folder: Path) -> tuple[Any, Any]:
    """The plan of ``folder`` judged again by the shared evaluator (must be valid)."""
    plan = read_plan_dir(folder, inst.name)
    ev = evaluate(inst, plan)
    if not ev.valid:
        raise SystemExit(f"{folder}: invalid plan: {ev.first_violation()}")
    return plan, ev


def waits_line(inst: Any, plan: Any, ev: Any, top: int = 3) -> str:
    w = pipe_waits(inst, plan, ev, busiest_pipe_name(inst, ev))
    parts = "; ".join(f"{x.cycles:,} in {x.gaps:,} gap(s) on `{x.describe()}`" for x in w.waits[:top])
    return f"{w.pipe} busy {w.load:,}, idle {w.idle:,} before its last task, tail {w.tail:,}: {parts}"


def case_rows(path: Path, repeat: int) -> dict[str, Any]:
    inst = load_instance(path)
    name = inst.name
    row: dict[str, Any] = {"case": name, "load_before": load()}
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for key, args in RUNS.items():
            secs = []
            for _ in range(repeat if key == "fast" else 1):
                s, summary = run(path, t / key, *args)
                secs.append(s)
            secs.sort()
            row[f"{key}_seconds"] = secs[len(secs) // 2]
            plan, ev = judged(inst, t / key)
            row[key] = (int(ev.extra_traffic), int(ev.makespan))
            if key == "default":
                row["waits"] = waits_line(inst, plan, ev)
            if key.endswith("frontier"):
                report = json.loads((t / key / f"{name}_report.json").read_text())
                row[f"{key}_walk"] = report["walk"]
                points = []
                for p in summary["frontier"]:
                    pplan, pev = judged(inst, t / key / f"{name}_frontier" / f"traffic-{p['traffic']}")
                    assert (pev.makespan, pev.extra_traffic) == (p["makespan"], p["traffic"]), p
                    held = waits_line(inst, pplan, pev, top=2) if p["gap"] is not None and p["gap"] > 0.03 else ""
                    points.append(p | {"spills": int(pev.spill_count), "held": held})
                row[f"{key}_points"] = points
    row["load_after"] = load()
    return row


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.1f}%"


def cell(figures: tuple[int, int], target: int | None) -> str:
    traffic, makespan = figures
    mark = "" if target is None else (" ok" if makespan <= target else " **miss**")
    return f"{makespan:,} @ {traffic:,} ({'-' if target is None else f'{target:,}'}{mark})"


def dominating(points: list[dict[str, Any]], traffic: int, makespan: int) -> dict[str, Any] | None:
    """The lightest frontier point with no more traffic and no more makespan."""
    good = [p for p in points if p["traffic"] <= traffic and p["makespan"] <= makespan]
    return min(good, key=lambda p: (p["traffic"], p["makespan"])) if good else None


def step_gains(rows: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[int, int, int]]:
    """Per case and kind of walk step: (steps, cycles gained, spills added) over consecutive
    frontier points whose heavier one a walk step made."""
    out: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        points = r["frontier_points"]
        for a, b in zip(points, points[1:]):
            if not b["source"].startswith("gap-hiding walk"):
                continue
            kind = b["source"].split(": ", 1)[1].split(",", 1)[0]
            got = out[r["case"], kind]
            got[0] += 1
            got[1] += a["makespan"] - b["makespan"]
            got[2] += b["spills"] - a["spills"]
    return {k: (v[0], v[1], v[2]) for k, v in out.items()}


def render(rows: list[dict[str, Any]]) -> str:
    lines = ["# bench_frontier", ""]
    lines.append(
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores (shared: load shown "
        "per case). Every plan, each frontier point's folder included, judged again by the shared evaluator. "
        "`dansched solve` runs as whole processes."
    )
    lines += ["", "## Fixed allowances and seconds", ""]
    lines.append(
        "| case | slack 0 (target) | slack 10 (target) | slack 20 (target) | fast s | default s | "
        "frontier s | frontier / default | fast frontier points | load |"
    )
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        t0, t10, t20 = TARGETS.get(r["case"], (None, None, None))
        lines.append(
            f"| {r['case']} | {cell(r['default'], t0)} | {cell(r['slack10'], t10)} | {cell(r['slack20'], t20)} | "
            f"{r['fast_seconds']:.1f} | {r['default_seconds']:.1f} | {r['frontier_seconds']:.1f} | "
            f"{r['frontier_seconds'] / r['default_seconds']:.2f}x | {len(r['fast_frontier_points'])} "
            f"({r['fast_frontier_walk']['end']}) | {r['load_before']:.1f} / {r['load_after']:.1f} |"
        )
    lines += ["", "## Dominance over the checked plans", ""]
    lines.append("| case | checked plan | frontier point with no more traffic, no more makespan |")
    lines.append("|---|---:|---|")
    for r in rows:
        for traffic, makespan in CHECKED.get(r["case"], []):
            p = dominating(r["frontier_points"], traffic, makespan)
            got = f"{p['makespan']:,} @ {p['traffic']:,} ok" if p else "**miss**"
            lines.append(f"| {r['case']} | {makespan:,} @ {traffic:,} | {got} |")
    lines += ["", "## Cycles gained per added spill, by walk step", ""]
    lines.append("| case | step | steps | cycles gained | spills added | cycles per spill |")
    lines.append("|---|---|---:|---:|---:|---:|")
    for (case, kind), (steps, cycles, spills) in sorted(step_gains(rows).items()):
        per = f"{cycles / spills:,.0f}" if spills > 0 else "- (no spill added)"
        lines.append(f"| {case} | {kind} | {steps} | {cycles:,} | {spills} | {per} |")
    for r in rows:
        lines += ["", f"## {r['case']} (load {r['load_before']:.1f} before, {r['load_after']:.1f} after)", ""]
        lines.append("| # | traffic | over p2 | makespan | busiest pipe | floor | gap | from |")
        lines.append("|---|---:|---:|---:|---|---:|---:|---|")
        for i, p in enumerate(r["frontier_points"], start=1):
            lines.append(
                f"| {i}{' (knee)' if p['knee'] else ''} | {p['traffic']:,} | {pct(p['over_problem2'])} | "
                f"{p['makespan']:,} | {p['busiest_pipe']} {p['busiest_load']:,} | {p['floor']['value']:,} | "
                f"{pct(p['gap'])} | {p['source']} |"
            )
        walk = r["frontier_walk"]
        lines += ["", f"- the walk: {walk['steps']} step(s), {walk['work']:,} node-visits, ended: {walk['end']}."]
        lines.append(f"- slack-0 plan: {r['waits']}.")
        held = [(i, p) for i, p in enumerate(r["frontier_points"], start=1) if p["held"]]
        for i, p in held[:3] + (held[-1:] if len(held) > 3 else []):
            lines.append(f"- point {i} ({pct(p['gap'])} above its floor): {p['held']}.")
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
