"""Benchmark: how long ``dansched solve`` takes, the whole process, as a user runs it.

For each official case (``../shared/instances/official/*.json``, else ``instances/*.json``;
or the files given) and each run kind, starts ``python3 -m dansched.cli solve CASE --quiet``
in a fresh process ``--repeat`` times and keeps the median wall seconds (start-up, loading,
planning, the report's bounds and writing the plan folder included). Run kinds:

- ``fast``: ``--effort fast``;
- ``default``: no effort option;
- ``slack20``: the default with ``--traffic-slack 20``; its ratio to ``default`` is printed.

Before the timed runs, one untimed ``dansched warm`` fills the compiled kernels' cache
(once per install, as the README's install command does) and one untimed solve of the
first case loads every module once; a ``first run`` column then gives a fast solve in a
fresh process right after ``warm``, against the fast median (the first-run rule: at most
1.5x a warm run). Every run's plan folder is compared with the first run's of the same
kind: a figure that changed between runs would be a determinism bug, and the benchmark
stops.

Usage::

    python benchmarks/bench_speed.py [CASES...] [--kinds fast,default,slack20] [--repeat 3]
                                     [--out FILE]

Prints Markdown and writes it to ``benchmarks/results/bench_speed.md``.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OFFICIAL = ROOT.parent / "shared" / "instances" / "official"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "bench_speed.md"
KINDS = {"fast": ["--effort", "fast"], "default": [], "slack20": ["--traffic-slack", "20"]}
CONTEST_FILES = ("schedule", "memory", "spill")


def default_cases() -> list[Path]:
    found = sorted(OFFICIAL.glob("*.json")) if OFFICIAL.is_dir() else []
    return found or sorted((ROOT / "instances").glob("*.json"))


def solve_seconds(case: Path, args: list[str], out: Path) -> float:
    """Wall seconds of one ``dansched solve`` process writing its plan folder to ``out``."""
    cmd = [sys.executable, "-m", "dansched.cli", "solve", str(case), *args, "--out", str(out), "--quiet"]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def same_plan(a: Path, b: Path, name: str) -> bool:
    return all(filecmp.cmp(a / f"{name}_{k}.txt", b / f"{name}_{k}.txt", shallow=False) for k in CONTEST_FILES)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases", nargs="*", type=Path)
    ap.add_argument("--kinds", default="fast,default,slack20")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    a = ap.parse_args(argv)
    cases = a.cases or default_cases()
    kinds = [k for k in a.kinds.split(",") if k]
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        ap.error(f"unknown kinds {unknown}; choose from {sorted(KINDS)}")
    env = dict(os.environ)
    subprocess.run(
        [sys.executable, "-m", "dansched.cli", "warm"], check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        first = solve_seconds(cases[0], KINDS["fast"], work / "first")
        for case in cases:
            name = case.stem
            medians: dict[str, float] = {}
            spread: dict[str, tuple[float, float]] = {}
            for kind in kinds:
                times = []
                for r in range(a.repeat):
                    out = work / f"{name}-{kind}-{r}"
                    times.append(solve_seconds(case, KINDS[kind], out))
                    if r and not same_plan(work / f"{name}-{kind}-0", out, name):
                        print(f"{name} {kind}: run {r} wrote a different plan than run 0", file=sys.stderr)
                        return 1
                medians[kind] = statistics.median(times)
                spread[kind] = (min(times), max(times))
                print(f"{name} {kind}: median {medians[kind]:.2f} s of {a.repeat}", file=sys.stderr, flush=True)
            rows.append((name, medians, spread))
    head = "| case | " + " | ".join(f"{k} s (min-max)" for k in kinds)
    head += " | slack20 / default |" if {"default", "slack20"} <= set(kinds) else " |"
    lines = [
        "# Whole-process solve times",
        "",
        f"`python3 benchmarks/bench_speed.py --kinds {','.join(kinds)} --repeat {a.repeat}`: the median wall "
        f"seconds of {a.repeat} runs of `python3 -m dansched.cli solve CASE --quiet` per run kind, each in a "
        "fresh process (start-up, loading, planning, the report's bounds and the plan folder included), after "
        "one `dansched warm`. Every repeat wrote the same plan folder. "
        f"{platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} cores.",
        "",
        head,
        "|---|" + "---:|" * (len(kinds) + (1 if {"default", "slack20"} <= set(kinds) else 0)),
    ]
    for name, med, spr in rows:
        cells = [f"{med[k]:.1f} ({spr[k][0]:.1f}-{spr[k][1]:.1f})" for k in kinds]
        if {"default", "slack20"} <= set(kinds):
            cells.append(f"{med['slack20'] / med['default']:.2f}x")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if "fast" in kinds:
        fast0 = rows[0][1]["fast"]
        lines += [
            "",
            f"First run after `dansched warm` ({rows[0][0]}, fast, a fresh process): {first:.1f} s, "
            f"{first / fast0:.2f}x the fast median ({fast0:.1f} s).",
        ]
    text = "\n".join(lines) + "\n"
    print(text)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
