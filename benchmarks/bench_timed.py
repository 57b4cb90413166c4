"""Benchmark: problem-3 makespan with the time-driven Stage-2 producer.

For each official case and each ``--traffic-slack`` (0, 20, 100 by default) it runs
the full pipeline (``dansched solve --problem 3``) and reports the makespan against
the issue-14 baseline and target, the traffic against the allowance (problem-2
traffic of the same run times 1 + slack/100), which Stage-2 producer won
(``stages.timed.winner``: a time-driven trial, or DLR), the best time-driven plan
before CPE and the run's seconds. Every figure is the shared evaluator's.

With ``--reports DIR`` it reads ``DIR/m_<case>_s<slack>/<case>_report.json`` (runs
made beforehand, e.g. one CLI process per case) instead of solving. Usage::

    python benchmarks/bench_timed.py [--cases Matmul_Case0 ...] [--slacks 0 20 100] [--reports DIR]

Prints Markdown and writes it to ``benchmarks/results/bench_timed.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OFFICIAL = REPO.parent / "shared" / "instances" / "official"
RESULTS = REPO / "benchmarks" / "results" / "bench_timed.md"
CASES = ["Conv_Case0", "FlashAttention_Case0", "FlashAttention_Case1", "Matmul_Case0", "Matmul_Case1"]
BASELINE = {  # problem 3, slack 0, before this producer
    "Conv_Case0": 447_780,
    "FlashAttention_Case0": 31_227,
    "FlashAttention_Case1": 138_773,
    "Matmul_Case0": 100_945,
    "Matmul_Case1": 1_039_892,
}
TARGETS = {  # targets by slack (slack 100: the fastest bench method within 2x traffic, see BENCHMARKS.md)
    0: {
        "Conv_Case0": 410_000,
        "FlashAttention_Case0": 28_500,
        "FlashAttention_Case1": 125_000,
        "Matmul_Case0": 92_000,
        "Matmul_Case1": 990_000,
    },
    20: {
        "Conv_Case0": 400_000,
        "FlashAttention_Case0": 28_000,
        "FlashAttention_Case1": 120_000,
        "Matmul_Case0": 88_000,
        "Matmul_Case1": 950_000,
    },
    100: {"Conv_Case0": 398_913},
}


def solve_report(case: str, slack: float) -> dict:
    from dansched.instance import load_instance
    from dansched.pipeline import SolveOptions, run_pipeline

    inst = load_instance(OFFICIAL / f"{case}.json")
    t0 = time.perf_counter()
    res = run_pipeline(inst, SolveOptions(problem=3, traffic_slack=slack))
    rep = dict(res.report)
    rep["seconds_total"] = round(time.perf_counter() - t0, 1)
    return rep


def row(case: str, slack: float, rep: dict) -> str:
    timed = rep["stages"].get("timed", {})
    made = [t for t in timed.get("tried", []) if "makespan" in t and t["traffic"] <= timed.get("allowance", -1)]
    best = min((t["makespan"] for t in made), default=None)
    target = TARGETS.get(int(slack), {}).get(case)
    mk = rep["makespan"]
    met = "" if target is None else ("yes" if mk <= target else "no")
    secs = rep.get("seconds_total", sum(s.get("seconds", 0) for s in rep["stages"].values() if isinstance(s, dict)))
    return (
        f"| {case} | {slack:g} | {BASELINE[case]:,} | {mk:,} | {'' if target is None else f'{target:,}'} | {met} | "
        f"{rep['extra_traffic']:,} / {timed.get('allowance', 0):,} | {timed.get('winner') or 'DLR'} | "
        f"{'' if best is None else f'{best:,}'} | {secs:.0f} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", nargs="*", default=CASES)
    ap.add_argument("--slacks", nargs="*", type=float, default=[0, 20, 100])
    ap.add_argument("--reports", type=Path, default=None)
    args = ap.parse_args()
    lines = [
        "# Problem 3 with the time-driven Stage-2 producer",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}. Baseline: before this producer (slack 0).",
        "",
        "| case | slack % | baseline | makespan | target | met | traffic / allowance | Stage 2 won by | best timed before CPE | s |",
        "| --- | ---: | ---: | ---: | ---: | --- | ---: | --- | ---: | ---: |",
    ]
    for case in args.cases:
        if args.reports is None and not (OFFICIAL / f"{case}.json").is_file():
            continue
        for slack in args.slacks:
            if args.reports is not None:
                p = args.reports / f"m_{case}_s{slack:g}" / f"{case}_report.json"
                if not p.is_file():
                    continue
                rep = json.loads(p.read_text())
            else:
                rep = solve_report(case, slack)
            lines.append(row(case, slack, rep))
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text)


if __name__ == "__main__":
    main()
