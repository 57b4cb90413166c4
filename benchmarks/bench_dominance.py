"""Benchmark: is the default plan ever beaten by another method's plan that carries no more
traffic? (Problem 3 must never lose to the plan of one of its own parts.)

For generated graphs (the families of ``dansched generate``, a few scales and seeds, on the
default core and on one with L1 = 1024, UB = 256), every bench method (``dansched.application.baselines``) is
run and judged by the shared evaluator; a row is a *loss* when a method's valid plan has
at most ``dan``'s extra traffic and a smaller makespan. The table lists every instance
with ``dan``'s figures, the best rival within its traffic, and the losses.

Usage::

    python benchmarks/bench_dominance.py [--families random,conv,matmul,fa] [--scales 1,2]
                                         [--seeds 0,1,2] [--methods LIST] [--out FILE]

Prints Markdown and writes it to ``benchmarks/results/bench_dominance.md``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

from dansched.application.baselines import METHODS
from dansched.application.bench import run_job
from dansched.generate import generate
from dansched.instance import instance_from_records, write_json

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "bench_dominance.md"
TIGHT = "[tiers]\nL1 = 1024\nUB = 256\n"


def _instances(
    folder: Path, families: list[str], scales: list[int], seeds: list[int]
) -> list[tuple[Path, Path | None]]:
    """Every generated graph that fits the core (default and tight) as a JSON file."""
    from dansched.errors import InstanceError
    from dansched.hardware import load_hardware

    tight = folder / "tight.toml"
    tight.write_text(TIGHT)
    out: list[tuple[Path, Path | None]] = []
    for fam in families:
        for scale in scales:
            for seed in seeds:
                nodes, edges = generate(fam, scale, seed)
                for hw in (None, tight):
                    name = f"{fam}_s{scale}_r{seed}" + ("_tight" if hw else "")
                    try:
                        inst = instance_from_records(name, nodes, edges, load_hardware(hw) if hw else None)
                    except InstanceError:
                        continue
                    path = folder / f"{name}.json"
                    write_json(inst, path)
                    out.append((path, hw))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--families", default="random,conv,matmul,fa")
    ap.add_argument("--scales", default="1,2")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--methods", default=",".join(m for m in METHODS if m != "dan"))
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()
    rivals = [m for m in args.methods.split(",") if m]
    lines = [
        "# bench_dominance",
        "",
        "Is `dan` (the default effort) beaten by a method whose valid plan carries no more extra traffic?",
        f"Generated graphs: families {args.families}, scales {args.scales}, seeds {args.seeds}, on the default "
        "core and on one with L1 = 1024, UB = 256 (`_tight`). Every plan judged by the shared evaluator.",
        "",
        "| instance | dan makespan | dan traffic | best rival within that traffic | its makespan | losses |",
        "|---|---:|---:|---|---:|---|",
    ]
    losses = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for path, hw in _instances(
            Path(tmp),
            args.families.split(","),
            [int(s) for s in args.scales.split(",")],
            [int(s) for s in args.seeds.split(",")],
        ):
            hw_path = str(hw) if hw else None
            dan = run_job(str(path), "dan", args.time_limit, hw_path)
            if not dan["valid"]:
                lines.append(f"| {path.stem} | invalid | | | | {dan['error']} |")
                losses += 1
                continue
            rows = [run_job(str(path), m, args.time_limit, hw_path) for m in rivals]
            within = [r for r in rows if r["valid"] and r["extra_traffic"] <= dan["extra_traffic"]]
            best = min(within, key=lambda r: (r["makespan"], r["method"]), default=None)
            lost = [f"{r['method']} {r['makespan']:,}" for r in within if r["makespan"] < dan["makespan"]]
            losses += len(lost)
            lines.append(
                f"| {path.stem} | {dan['makespan']:,} | {dan['extra_traffic']:,} | "
                f"{best['method'] if best else '-'} | {best['makespan']:,} | {', '.join(lost) or 'none'} |"
                if best
                else f"| {path.stem} | {dan['makespan']:,} | {dan['extra_traffic']:,} | - | - | none |"
            )
            print(lines[-1], file=sys.stderr, flush=True)
    lines += [
        "",
        f"Losses: {losses}. {time.perf_counter() - t0:.0f} s on {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.machine()}.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
