"""Benchmark: problem-3 makespan against graph size on the generated families, per effort.

Problem 3's work is set by ``--effort`` (``dansched.pipeline.EFFORTS``) as budgets that scale
with the graph, never by switches on its size, so the makespan's distance to the floor
valid for every plan should change smoothly with size: no step where a mechanism turns on
or off (the old gates sat at 20,000 and 100,000 nodes). For each family (``matmul``,
``fa``, ``random``) and scale this solves problem 3 at each effort, judges the plan with the
shared evaluator and records the nodes, the makespan, the global floor (the best of the
busiest pipe, the longest path and the head-body-tail bound on the instance DAG,
``dansched.models.bounds.floors``), their ratio, the traffic, the Stage-3 runs, the candidate
source of the kept plan and the seconds.

Usage::

    python benchmarks/bench_effort.py [--families matmul,fa,random] [--efforts fast,default]
                                      [--matmul 2,3,4,5,6,7,8] [--fa 2,4,6,8,10,12] [--random 40,100,200,400,800]
                                      [--out FILE] [--png FILE]

Prints Markdown and writes it to ``benchmarks/results/bench_effort.md`` (and a picture of
ratio against nodes to ``benchmarks/results/bench_effort.png``).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path
from typing import Any

from bench_timing import source_wins  # the same tally, run from benchmarks/ as a script

from dansched.generate import generate
from dansched.instance import instance_from_records
from dansched.models.bounds.floors import INSTANCE_SCOPE, makespan_floors
from dansched.pipeline import effort_options, run_pipeline
from dansched.simulate import evaluate

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "bench_effort.md"
DEFAULT_SCALES = {"matmul": "2,3,4,5,6,7,8", "fa": "2,4,6,8,10,12", "random": "40,100,200,400,800"}
OLD_GATES = (20_000, 100_000)


def measure(family: str, scale: int, effort: str) -> dict[str, Any]:
    nodes, edges = generate(family, scale, 0)
    inst = instance_from_records(f"{family}_s{scale}", nodes, edges)
    t0 = time.perf_counter()
    res = run_pipeline(inst, effort_options(effort, problem=3))
    seconds = time.perf_counter() - t0
    ev = evaluate(inst, res.plan)
    if not ev.valid:
        raise SystemExit(f"{inst.name}: the pipeline's plan is invalid: {ev.errors[:1]}")
    floor = makespan_floors(inst).best(INSTANCE_SCOPE)[1].value
    report = res.report.to_dict()
    return {
        "family": family,
        "scale": scale,
        "effort": effort,
        "nodes": inst.n,
        "makespan": int(ev.makespan or 0),
        "floor": int(floor),
        "ratio": (ev.makespan or 0) / max(1, floor),
        "traffic": int(ev.extra_traffic or 0),
        "runs": report["stages"]["cpe"]["runs"],
        "kept_source": next(c["source"] for c in report["candidates"] if c["kept"]),
        "seconds": seconds,
    }


def table(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "| family | scale | nodes | effort | makespan | global floor | makespan / floor | traffic | Stage-3 runs "
        "| kept source | s |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['family']} | {r['scale']} | {r['nodes']:,} | {r['effort']} | {r['makespan']:,} | {r['floor']:,} | "
            f"{r['ratio']:.3f} | {r['traffic']:,} | {r['runs']} | {r['kept_source']} | {r['seconds']:.1f} |"
        )
    return out


def picture(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for family in sorted({r["family"] for r in rows}):
        for effort in sorted({r["effort"] for r in rows}):
            pts = sorted((r["nodes"], r["ratio"]) for r in rows if r["family"] == family and r["effort"] == effort)
            if pts:
                ax.plot(*zip(*pts), marker="o", label=f"{family} ({effort})")
    for gate in OLD_GATES:
        ax.axvline(gate, color="grey", linestyle=":", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("nodes (dotted: the old size gates)")
    ax.set_ylabel("makespan / global floor")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", default="matmul,fa,random")
    ap.add_argument("--efforts", default="fast,default")
    for family, scales in DEFAULT_SCALES.items():
        ap.add_argument(f"--{family}", default=scales, help=f"scales of the {family} family")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--png", type=Path, default=DEFAULT_OUT.with_suffix(".png"))
    args = ap.parse_args(argv)
    rows = []
    for family in [f.strip() for f in args.families.split(",") if f.strip()]:
        for scale in [int(s) for s in getattr(args, family).split(",") if s.strip()]:
            for effort in [e.strip() for e in args.efforts.split(",") if e.strip()]:
                r = measure(family, scale, effort)
                print(
                    f"{family} s{scale} {effort}: {r['nodes']:,} nodes, makespan {r['makespan']:,} "
                    f"({r['ratio']:.3f} x floor) {r['seconds']:.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
                rows.append(r)
    lines = [
        "# Problem-3 makespan against graph size (generated families)",
        "",
        f"`python3 benchmarks/bench_effort.py --families {args.families} --efforts {args.efforts}` — every plan judged "
        "by the evaluator; *global floor*: the best floor valid for every plan of the instance. The work of each "
        "effort scales with the graph, with no size gate, so the ratio should move smoothly with the size (the old "
        f"gates sat at {OLD_GATES[0]:,} and {OLD_GATES[1]:,} nodes). {platform.machine()}, Python "
        f"{platform.python_version()}.",
        "",
        *table(rows),
        "",
        "Candidate sources of the kept plans:",
        "",
        *source_wins(rows),
        "",
        f"![makespan / floor against nodes]({args.png.name})",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    picture(rows, args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
