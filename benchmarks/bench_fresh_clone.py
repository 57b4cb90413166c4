"""What a newcomer's first hour costs, measured on a fresh clone: the README's set-up
figures (``benchmarks/results/fresh_clone.json``, quoted by README.md through
``benchmarks/make_doc_figures.py``).

Clones the repository (its committed HEAD) into a new folder, with the official graphs
beside it (``../shared`` linked to ``--shared``, as the tests expect), makes a new virtual
environment and times, one after another: the README's first command (``pip install -e
.``, ``dansched warm``, which compiles the kernels into numba's cache, then ``dansched solve
instances/matmul_s2.json``), then its second (``pip install -e '.[test]'``, then ``python3
-m pytest -q``). The test run has ``PYTHONDONTWRITEBYTECODE=1``, as CI runs it. It records the wall
seconds of each step, the size of the environment after the main install, the number of
tests run and the load average around the run (the machine is shared with other jobs: say
so when quoting). ``--busy N`` runs N busy loops (one core each) beside the whole run, the
check that the default test run passes on a loaded machine; its record goes to
``fresh_clone_busy.json``.

Usage::

    python3 benchmarks/bench_fresh_clone.py [--shared ../shared] [--work /tmp/fresh] [--busy 2]
    python3 benchmarks/make_doc_figures.py    # then the README quotes the new figures
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
BUSY_LOOP = "while True:\n    pass\n"


def timed(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, check: bool = True) -> tuple[float, str]:
    """Wall seconds of ``cmd`` and its output (stdout then stderr); exits on failure when
    ``check`` (a test run that fails is recorded, with its summary line)."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if check and proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return seconds, proc.stdout + proc.stderr


def folder_mb(path: Path) -> int:
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()) / 2**20)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared", help="folder holding instances/official")
    ap.add_argument("--work", type=Path, help="folder for the clone and the environment (default: a new temporary one)")
    ap.add_argument("--note", default="", help="what else to say of the conditions (e.g. pip's download cache warm)")
    ap.add_argument("--busy", type=int, default=0, help="busy loops (one core each) beside the whole run")
    args = ap.parse_args(argv)
    if args.busy < 0:
        ap.error("--busy must be at least 0")
    out = RESULTS / ("fresh_clone_busy.json" if args.busy else "fresh_clone.json")
    work = args.work or Path(tempfile.mkdtemp(prefix="dansched-fresh-"))
    work.mkdir(parents=True, exist_ok=True)
    clone, venv = work / "dansched", work / "venv"
    for p in (clone, venv, work / "shared"):
        if p.is_symlink() or p.is_file():
            p.unlink()
        elif p.exists():
            shutil.rmtree(p)
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    if args.shared.is_dir():
        (work / "shared").symlink_to(args.shared.resolve())
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = dict(os.environ, PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    env.pop("PYTHONPATH", None)
    # as on a user's machine: Python may write its bytecode caches (a sandbox that forbids it
    # makes every process compile numpy, SciPy, OR-Tools and numba from source again)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    loops = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(args.busy)]
    try:
        return _run(args, clone, venv, env, out)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def _run(args: argparse.Namespace, clone: Path, venv: Path, env: dict[str, str], out: Path) -> int:
    """The timed steps, once the clone and the environment's folder are ready."""
    load_before = os.getloadavg()
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    install, _ = timed([*pip, "-e", "."], clone, env)
    size = folder_mb(venv)
    warm, _ = timed([str(venv / "bin" / "dansched"), "warm"], clone, env)
    solve, _ = timed([str(venv / "bin" / "dansched"), "solve", "instances/matmul_s2.json"], clone, env)
    test_install, _ = timed([*pip, "-e", ".[test]"], clone, env)
    ci_env = dict(env, PYTHONDONTWRITEBYTECODE="1")  # as CI runs the tests
    tests, log = timed(
        [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"], clone, ci_env, False
    )
    load_after = os.getloadavg()
    passed = re.search(r"(\d+) passed", log)
    failed = re.search(r"(\d+) failed", log)
    cores = os.cpu_count()
    record = {
        "commit": subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True
        ).stdout.strip(),
        "date": time.strftime("%Y-%m-%d"),
        "machine": (
            f"{cores} cores ({platform.machine()}, Python {platform.python_version()}) shared with other jobs "
            f"(load average {load_before[0]:.1f} before, {load_after[0]:.1f} after)"
            + (f", {args.busy} busy loop{'s' if args.busy > 1 else ''} beside it" if args.busy else "")
            + (f", {args.note}" if args.note else "")
        ),
        "busy_loops": args.busy,
        "test_env": "PYTHONDONTWRITEBYTECODE=1",
        "install_seconds": round(install, 1),
        "install_mb": size,
        "warm_seconds": round(warm, 1),
        "solve_seconds": round(solve, 1),
        "test_install_seconds": round(test_install, 1),
        "test_seconds": round(tests, 1),
        "tests": int(passed.group(1)) if passed else 0,
        "failed": int(failed.group(1)) if failed else 0,
        "test_summary": log.strip().splitlines()[-1],
    }
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
