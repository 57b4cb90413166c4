"""Benchmark Stage 1 (MPAS) on the official cases and on small graphs with known optima.

For each official case: maxV_stay and seconds of the literal paper rule
(``mpas-paper``), of the production greedy alone (``mpas-greedy``) and of the
production variant (``mpas``, greedy restarts + local search), the winning
restart, the best public figure (``../shared/anchors.json``), the peak lower
bound with its method and the gap. Every order is judged by the shared evaluator
(a rejected order aborts the run). Then small random graphs: MPAS against the
exact down-set DP optimum of :mod:`dansched.models.exact.order`.

Stage time is the median of ``--repeat`` runs (default 3; Matmul_Case1 is the
one with a target: under 5 s). Usage::

    python benchmarks/bench_mpas.py [--repeat 3] [--cases Conv_Case0 ...] [--skip-paper]

Prints Markdown and writes ``benchmarks/results/bench_mpas.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

from dansched.generate import generate
from dansched.instance import instance_from_records, load_instance
from dansched.models.bounds.peak import peak_lower_bound
from dansched.models.exact.order import exact_min_peak
from dansched.plan import Plan
from dansched.simulate import evaluate
from dansched.stages.mpas.stage import mpas_order
from dansched.testing import random_dag  # the random well-formed DAG builder the tests use

REPO = Path(__file__).resolve().parents[1]
OFFICIAL = REPO.parent / "shared" / "instances" / "official"
ANCHORS = REPO.parent / "shared" / "anchors.json"
RESULTS = REPO / "benchmarks" / "results" / "bench_mpas.md"
CASES = ["Conv_Case0", "FlashAttention_Case0", "FlashAttention_Case1", "Matmul_Case0", "Matmul_Case1"]
TARGETS = {
    "Conv_Case0": 6912,
    "FlashAttention_Case0": 4498,
    "FlashAttention_Case1": 7586,
    "Matmul_Case0": 9216,
    "Matmul_Case1": 34816,
}


def _run(inst, variant: str, repeat: int):
    times, res = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = mpas_order(inst, variant)
        times.append(time.perf_counter() - t0)
    ev = evaluate(inst, Plan(order=tuple(res.order)))
    if not ev.valid or ev.max_v_stay != res.max_v_stay:
        sys.exit(f"{inst.name} {variant}: the evaluator rejects the order: {ev.errors[:1]}")
    return res, statistics.median(times)


def _gap(value: int, bound: int) -> str:
    return f"{(value - bound) / value:.1%}" if value else "0%"


def official_table(cases: list[str], repeat: int, paper: bool) -> list[str]:
    anchors = json.loads(ANCHORS.read_text())["cases"] if ANCHORS.is_file() else {}
    head = [
        "case",
        "nodes",
        "best public",
        "target",
        "mpas-paper",
        "mpas-greedy",
        "mpas",
        "winner",
        "meets target",
        "lower bound",
        "gap",
        "mpas s",
    ]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes = []
    for case in cases:
        path = OFFICIAL / f"{case}.json"
        if not path.is_file():
            notes.append(f"- {case}: instance not found at {path}, skipped")
            continue
        inst = load_instance(path)
        pap = _run(inst, "mpas-paper", 1)[0] if paper else None
        gre, tg = _run(inst, "mpas-greedy", 1)
        res, t = _run(inst, "mpas", repeat)
        lb = peak_lower_bound(inst)
        target = TARGETS.get(case)
        public = anchors.get(case, {}).get("p1")
        rows.append(
            "| "
            + " | ".join(
                [
                    case,
                    f"{inst.n:,}",
                    f"{public:,}" if public else "-",
                    f"{target:,}" if target else "-",
                    f"{pap.max_v_stay:,} ({pap.seconds:.2f} s)" if pap else "-",
                    f"{gre.max_v_stay:,} ({tg:.2f} s)",
                    f"**{res.max_v_stay:,}**",
                    res.variant,
                    "yes" if target is None or res.max_v_stay <= target else "NO",
                    f"{lb.value:,}",
                    _gap(res.max_v_stay, lb.value),
                    f"{t:.2f}",
                ]
            )
            + " |"
        )
        notes.append(f"- {case}: bound method: {lb.method}; restarts {res.restarts}")
    return rows + [""] + notes


def small_table(seeds: int) -> list[str]:
    graphs = [(f"random_dag(seed={s}, 12 ops)", random_dag(s, n_ops=12)) for s in range(seeds)]
    graphs += [
        (f"generate({f!r}, 1, {s})", instance_from_records(f"{f}{s}", *generate(f, scale=1, seed=s)))
        for f, s in [("matmul", 0), ("conv", 0), ("random", 0), ("random", 3)]
    ]
    rows = [
        "| graph | nodes | exact optimum | mpas | mpas-paper | lower bound | DP states |",
        "|---|---|---|---|---|---|---|",
    ]
    hits = 0
    for name, inst in graphs:
        ex = exact_min_peak(inst)
        got = mpas_order(inst).max_v_stay
        pap = mpas_order(inst, "mpas-paper").max_v_stay
        hits += got == ex.peak
        rows.append(
            f"| {name} | {inst.n} | {ex.peak} | {got} | {pap} | {peak_lower_bound(inst).value} | {ex.states:,} |"
        )
    rows.append("")
    rows.append(f"MPAS reaches the exact optimum on {hits} of {len(graphs)} small graphs.")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", nargs="*", default=CASES)
    ap.add_argument("--skip-paper", action="store_true", help="do not run the literal variant")
    ap.add_argument("--small", type=int, default=8, help="random small graphs checked against the exact DP")
    args = ap.parse_args()
    out = [
        "# bench_mpas",
        "",
        "Stage 1 (MPAS), problem 1: maxV_stay over L1+UB with the L0 rule enforced;",
        "every order below is accepted by `dansched.simulate.evaluate`.",
        "",
        "## Official cases",
        "",
    ]
    out += official_table(args.cases, args.repeat, not args.skip_paper)
    out += ["", "## Small graphs against the exact optimum", ""]
    out += small_table(args.small)
    out += [
        "",
        f"Machine: Python {platform.python_version()}, {platform.machine()}; "
        f"`mpas s` is the median of {args.repeat} runs (target on Matmul_Case1: < 5 s).",
    ]
    text = "\n".join(out) + "\n"
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text)


if __name__ == "__main__":
    main()
