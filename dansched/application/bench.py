"""``dansched bench``: the paper's comparison and ablations, reproduced side by side.

:func:`bench` is the library call behind the command: it checks its inputs and the
output folder first (bad input: :class:`~dansched.errors.InputError`), runs the
jobs and writes the tables.

:func:`run_bench` runs every (instance, method) job — methods from
:data:`dansched.application.baselines.METHODS` — in parallel processes, judges every plan with
the shared evaluator (:func:`dansched.simulate.evaluate`) and returns one row per
job. A method that raises or returns an invalid plan gives a row with
``valid=False`` and the error; it never stops the bench.

:func:`write_bench` writes ``bench.json`` (the rows), ``bench.csv`` (flat columns)
and ``bench.md`` (:func:`bench_markdown`), laid out like the seed paper's
evaluation:

- *Table 2*: each method's four metrics (peak ``maxV_stay`` over L1+UB, extra DDR
  traffic, spill count, makespan) as ratios to ``base``, and the row "Delta vs best
  external": ``dan`` against the best of :data:`dansched.application.baselines.EXTERNAL`;
- absolute figures per instance and metric, with the best public figures of
  ``../shared/anchors.json`` (p1, p2, p3) in their own column for official cases;
- *Table 4* (cost-aware vs LRU victim rule: ``dan`` vs ``lru``), *Table 5*
  (``dan-no-cpe`` vs ``dan``), *Figure 11* as a table (``dan``'s seconds per stage),
  seconds per method, and every cell where ``dan`` is not the best.

Rows are sorted by (instance as given, method as registered); apart from the
``seconds`` figures the output is a function of the inputs.
"""

from __future__ import annotations

import csv
import io
import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from ..checks import JOBS, TIME_LIMIT
from ..errors import InputError
from ..hardware import load_hardware
from ..instance import instance_name, load_instance
from ..params import Progress
from ..plan import atomic_write_files, check_output_file
from ..simulate import evaluate
from .baselines import EXTERNAL, METHODS
from .executor import ExecutorOptions, run_tasks

__all__ = [
    "METRICS",
    "METRIC_TITLES",
    "official_dir",
    "shipped_dir",
    "anchors_path",
    "load_anchors",
    "default_instances",
    "run_job",
    "run_bench",
    "bench",
    "BENCH_FILES",
    "bench_markdown",
    "bench_csv",
    "write_bench",
    "not_best_cells",
]

METRICS = ("max_v_stay", "extra_traffic", "spill_count", "makespan")
METRIC_TITLES = {
    "max_v_stay": "Peak (maxV_stay)",
    "physical_peak": "Physical peak",
    "extra_traffic": "Extra DDR traffic",
    "spill_count": "Spill count",
    "makespan": "Makespan",
}
ROW_METRICS = ("max_v_stay", "physical_peak", "extra_traffic", "spill_count", "makespan")
STAGE_ORDER = ("mpas", "dlr", "relayout", "cpe")  # pipeline order of the stages in a report
ANCHOR_KEY = {"max_v_stay": "p1", "extra_traffic": "p2", "makespan": "p3"}
_REPO = Path(__file__).resolve().parents[1]  # the checkout holding the package (editable install)


def _shared_candidates(*parts: str) -> list[Path]:
    """``<repo>/../shared/<parts>`` relative to the package's checkout, then to the cwd."""
    return [_REPO.parent / "shared" / Path(*parts), Path.cwd().parent / "shared" / Path(*parts)]


def official_dir() -> Path | None:
    """``<repo>/../shared/instances/official`` (repo: the package's checkout, else the
    current directory) when it exists, else ``None``."""
    for p in _shared_candidates("instances", "official"):
        if p.is_dir():
            return p
    return None


def shipped_dir() -> Path | None:
    """The project's own ``instances/`` folder (package checkout, else the cwd)."""
    for p in (_REPO / "instances", Path.cwd() / "instances"):
        if p.is_dir():
            return p
    return None


def anchors_path() -> Path | None:
    """``<repo>/../shared/anchors.json`` (as :func:`official_dir`), or ``None``."""
    for p in _shared_candidates("anchors.json"):
        if p.is_file():
            return p
    return None


def load_anchors(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Best public figures per official case (``{}`` when the file is missing or unreadable)."""
    p = path or anchors_path()
    if p is None:
        return {}
    try:
        return dict(json.loads(p.read_text()).get("cases", {}))
    except (OSError, ValueError):
        return {}


def default_instances() -> list[Path]:
    """The official cases when :func:`official_dir` exists, else the shipped instances."""
    for d in (official_dir(), shipped_dir()):
        if d is not None:
            found = sorted(d.glob("*.json"))
            if found:
                return found
    return []


# ---- running -------------------------------------------------------------------------


def _instance_name(path: str) -> str:
    return instance_name(path)


def _jsonable(x: Any) -> Any:
    return json.loads(json.dumps(x, default=str))


def run_job(path: str, method: str, time_limit: float, hw_path: str | None = None) -> dict[str, Any]:
    """One (instance, method) row: load, run, judge. Never raises for a method's failure."""
    row: dict[str, Any] = {"instance": _instance_name(path), "method": method, "valid": False, "error": None}
    for k in ROW_METRICS:
        row[k] = None
    row.update(seconds=None, stage_seconds={}, info={})
    t0 = time.perf_counter()
    try:
        inst = load_instance(path, load_hardware(Path(hw_path)) if hw_path else None)
        t0 = time.perf_counter()
        res = METHODS[method](inst, time_limit)
        row["seconds"] = round(time.perf_counter() - t0, 3)
        ev = evaluate(inst, res.plan)
        info = dict(res.info)
        row["stage_seconds"] = _jsonable(info.pop("stage_seconds", {}))
        row["info"] = _jsonable(info)
        for k in ROW_METRICS:
            row[k] = getattr(ev, k)
        row["valid"] = bool(ev.valid and ev.problem == 2)
        if not ev.valid:
            first = ev.first_violation()
            row["error"] = f"invalid plan ({ev.error_count} violation(s)); first: {first}"
        elif ev.problem != 2:
            row["error"] = "the method returned an order without a layout"
    except Exception as exc:  # a method's crash is a row, not the bench's crash
        row["error"] = f"{type(exc).__name__}: {exc}"
        if row["seconds"] is None:
            row["seconds"] = round(time.perf_counter() - t0, 3)
    return row


def run_bench(
    instances: Sequence[str | Path],
    methods: Sequence[str],
    jobs: int = 1,
    time_limit: float = 60.0,
    hw_path: str | Path | None = None,
    progress: Progress | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Every (instance, method) row, sorted by instance (as given) then method (as given).

    ``jobs`` > 1 runs jobs in that many processes (largest instance files first);
    ``jobs == 1`` runs them here, one after another. ``progress(message)`` is told which
    job runs (in this process) or how many are done."""
    paths = [str(p) for p in dict.fromkeys(str(p) for p in instances)]
    hw = str(hw_path) if hw_path else None
    todo = [(p, m) for p in paths for m in methods]
    size = {p: (os.path.getsize(p) if os.path.exists(p) else 0) for p in paths}
    todo.sort(key=lambda pm: (-size[pm[0]], paths.index(pm[0]), list(methods).index(pm[1])))
    rows: list[dict[str, Any]] = []
    say = progress or (lambda _msg: None)

    def done(row: dict[str, Any]) -> None:
        rows.append(row)
        if on_row:
            on_row(row)
        say(f"bench: {len(rows)} of {len(todo)} jobs done (last: {row['instance']} {row['method']})")

    if jobs <= 1:  # in this process: name the job before it starts
        for k, (p, m) in enumerate(todo):
            say(f"bench: job {k + 1} of {len(todo)}: {_instance_name(p)} {m}")
            done(run_job(p, m, time_limit, hw))
    else:
        say(f"bench: 0 of {len(todo)} jobs done")
        tasks = [(p, m, time_limit, hw) for p, m in todo]
        with closing(run_tasks(run_job, tasks, ExecutorOptions(jobs=max(1, jobs)))) as results:
            for i, row, exc in results:
                if exc is not None:  # the worker process died
                    row = run_job_error(*todo[i], f"worker process failed: {type(exc).__name__}: {exc}")
                done(row)
    p_rank = {_instance_name(p): i for i, p in enumerate(paths)}
    m_rank = {m: i for i, m in enumerate(methods)}
    rows.sort(key=lambda r: (p_rank.get(r["instance"], len(p_rank)), m_rank.get(r["method"], len(m_rank))))
    return rows


def run_job_error(path: str, method: str, error: str) -> dict[str, Any]:
    """The row of a job whose process failed before it could report."""
    row: dict[str, Any] = {"instance": _instance_name(path), "method": method, "valid": False, "error": error}
    for k in ROW_METRICS:
        row[k] = None
    row.update(seconds=None, stage_seconds={}, info={})
    return row


# ---- tables --------------------------------------------------------------------------


def _index(rows: Iterable[dict[str, Any]]) -> tuple[list[str], list[str], dict[tuple[str, str], dict[str, Any]]]:
    instances: list[str] = []
    methods: list[str] = []
    by: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        if r["instance"] not in instances:
            instances.append(r["instance"])
        if r["method"] not in methods:
            methods.append(r["method"])
        by[(r["instance"], r["method"])] = r
    return instances, methods, by


def _value(row: dict[str, Any] | None, metric: str) -> int | None:
    if row is None or not row.get("valid"):
        return None
    return row.get(metric)


def _ratio(v: int | None, base: int | None) -> str:
    if v is None:
        return "invalid"
    if base is None:
        return "n/a"
    if base == 0:
        return "-" if v == 0 else "inf"
    return f"{v / base:.3f}"


def _int(v: Any) -> str:
    return "-" if v is None else f"{v:,}"


def _delta(dan: int | None, best: int | None) -> str:
    """Relative change of ``dan`` against ``best`` (negative: ``dan`` is better)."""
    if dan is None or best is None:
        return "n/a"
    if dan == best:
        return "0.0% (tie)"
    if best == 0:
        return f"+{dan:,} (best is 0)"
    pct = 100.0 * (dan - best) / best
    return f"{abs(pct):.1f}% ↓" if pct < 0 else f"{pct:.1f}% ↑ (worse)"


def _table(header: Sequence[str], body: Iterable[Sequence[str]], align_left: int = 1) -> list[str]:
    out = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" if i < align_left else "---:" for i in range(len(header))) + "|",
    ]
    out += ["| " + " | ".join(cells) + " |" for cells in body]
    return out


def _best_external(
    by, inst: str, metric: str, methods: Sequence[str], external: Sequence[str]
) -> tuple[int | None, list[str]]:
    got = {m: _value(by.get((inst, m)), metric) for m in external if m in methods}
    vals = {m: v for m, v in got.items() if v is not None}
    if not vals:
        return None, []
    best = min(vals.values())
    return best, [m for m, v in vals.items() if v == best]


def not_best_cells(rows: Sequence[dict[str, Any]], subject: str = "dan") -> list[dict[str, Any]]:
    """Every (instance, metric of :data:`METRICS`) where ``subject`` is beaten by another
    method of the bench: the better methods, their value and ``subject``'s."""
    instances, methods, by = _index(rows)
    out = []
    for inst in instances:
        mine = by.get((inst, subject))
        if mine is None:
            continue
        for metric in METRICS:
            v = _value(mine, metric)
            got = {m: _value(by.get((inst, m)), metric) for m in methods if m != subject}
            others = {m: x for m, x in got.items() if x is not None}
            if not others:
                continue
            best = min(others.values())
            if v is None or best < v:
                out.append(
                    {
                        "instance": inst,
                        "metric": metric,
                        "value": v,
                        "best": best,
                        "by": [m for m, x in others.items() if x == best],
                    }
                )
    return out


def _md_main_comparison(instances, methods, by) -> list[str]:
    """Paper Table 2's layout: every method's figures as ratios to ``base``, and ``dan``'s
    change against the best external method."""
    ext = [m for m in EXTERNAL if m in methods]
    ratio_methods = [m for m in methods if m != "base" and (m in EXTERNAL or m == "dan")]
    lines = ["## Main comparison (layout of the paper's Table 2): ratios to `base`", ""]
    body = []
    for inst in instances:
        base = by.get((inst, "base"))
        for i, m in enumerate(ratio_methods):
            r = by.get((inst, m))
            body.append([inst if i == 0 else "", m] + [_ratio(_value(r, k), _value(base, k)) for k in METRICS])
        if "dan" in methods:
            cells = []
            for k in METRICS:
                best, who = _best_external(by, inst, k, methods, ext)
                d = _delta(_value(by.get((inst, "dan")), k), best)
                cells.append(f"{d} vs {'/'.join(who) if len(who) <= 2 else f'{len(who)} methods'}" if who else d)
            body.append(["", "Δ vs best external"] + cells)
    lines += _table(["Workload", "Method"] + [f"{METRIC_TITLES[k]}/Base" for k in METRICS], body, 2)
    return lines + [
        "",
        f"External methods for the Δ row: {', '.join(ext) or 'none'} (`base` included). "
        "`-`: base and method both 0; `inf`: base 0, method not.",
        "",
    ]


def _md_absolute(instances, methods, by, anchors: dict[str, dict[str, Any]]) -> list[str]:
    """Absolute figures of every method, the best in bold, the best public figure beside."""
    lines = ["## Absolute figures (best public figures from `anchors.json` in their own column)", ""]
    body = []
    any_anchor = any(inst in anchors for inst in instances)
    for inst in instances:
        for i, k in enumerate(ROW_METRICS):
            vals = [_value(by.get((inst, m)), k) for m in methods]
            valid = [v for v in vals if v is not None]
            best = min(valid) if valid else None
            cells = [_cell(by.get((inst, m)), v, best) for v, m in zip(vals, methods)]
            row = [inst if i == 0 else "", METRIC_TITLES[k]] + cells
            if any_anchor:
                a = anchors.get(inst, {})
                key = ANCHOR_KEY.get(k)
                shown = _int(a.get(key)) if key and key in a else "-"
                if k == "makespan" and "p3_traffic" in a:
                    shown += f" (traffic {a['p3_traffic']:,})"
                row.append(shown)
            body.append(row)
    lines += _table(["Workload", "Metric"] + methods + (["best public"] if any_anchor else []), body, 2)
    return lines + [
        "",
        "Bold: the best of the methods run here. Best public: p1 (maxV_stay under the problem-1 rules, L0 rule included), p2 (traffic), p3 (makespan, with the traffic it carried)."
        if any_anchor
        else "Bold: the best of the methods run here.",
        "",
    ]


def _md_victim_rule(instances, by) -> list[str]:
    """Paper Table 4: the cost-aware victim rule against LRU."""
    lines = [
        "## Stage-2 victim rule (paper Table 4): cost-aware (`dan`) vs LRU (`lru`)",
        "",
        "Negative values: reductions relative to the LRU variant.",
        "",
    ]
    body = []
    for inst in instances:
        d, lru_row = by.get((inst, "dan")), by.get((inst, "lru"))
        body.append(
            [inst] + [_change(_value(d, k), _value(lru_row, k)) for k in ("extra_traffic", "spill_count", "makespan")]
        )
    return lines + _table(["Workload", "DDR change", "Spill-count change", "Makespan change"], body) + [""]


def _md_makespan_pair(instances, by, title: str, before: str, after: str, headers: Sequence[str]) -> list[str]:
    """One table of makespans: method ``before`` against method ``after``, and the cut."""
    lines = [title, ""]
    body = []
    for inst in instances:
        a, b = _value(by.get((inst, before)), "makespan"), _value(by.get((inst, after)), "makespan")
        cut = "n/a" if a is None or b is None or a == 0 else f"{100.0 * (a - b) / a:.1f}%"
        body.append([inst, _int(a), _int(b), cut])
    return lines + _table(["Workload", *headers, "Makespan ↓"], body) + [""]


MAKESPAN_PAIRS = (  # (title, method before, method after, column names): ablations shown when both ran
    ("## Stage 3 (paper Table 5): makespan without and with CPE", "dan-no-cpe", "dan", ("DAN w/o CPE", "DAN (full)")),
    (
        "## Time-driven candidate sources (ablation): makespan without and with them",
        "dan-no-time-driven",
        "dan",
        ("DAN w/o time-driven sources", "DAN (full)"),
    ),
    (
        "## Other victim rules and the Algorithm-1 order as candidates (ablation): makespan without and with them",
        "dan-no-other-rules",
        "dan",
        ("DAN w/o those sources", "DAN (full)"),
    ),
    (
        "## Memory-aware exact windows (ablation): makespan of `dan` and `dan-memory-windows`",
        "dan",
        "dan-memory-windows",
        ("DAN", "DAN + memory windows"),
    ),
)


def _md_stage_seconds(instances, by) -> list[str]:
    """Paper Figure 11: compile time per stage of ``dan``."""
    seen_stages = {s for inst in instances for s in (by.get((inst, "dan")) or {}).get("stage_seconds", {})}
    stage_names = [s for s in STAGE_ORDER if s in seen_stages] + sorted(seen_stages - set(STAGE_ORDER))
    lines = ["## Compile time per stage of `dan` (paper Figure 11), seconds", ""]
    body = []
    for inst in instances:
        ss = (by.get((inst, "dan")) or {}).get("stage_seconds", {})
        vals = [ss.get(s) for s in stage_names]
        total = sum(v for v in vals if v is not None)
        body.append([inst] + ["-" if v is None else f"{v:.2f}" for v in vals] + [f"{total:.2f}"])
    return lines + _table(["Workload"] + stage_names + ["total"], body) + [""]


def _md_method_seconds(instances, methods, by) -> list[str]:
    lines = ["## Seconds per method (wall clock of the method, evaluation excluded)", ""]
    body = [
        [inst]
        + [
            ("-" if (r := by.get((inst, m))) is None or r.get("seconds") is None else f"{r['seconds']:.1f}")
            for m in methods
        ]
        for inst in instances
    ]
    return lines + _table(["Workload"] + methods, body) + [""]


def _md_not_best(rows: Sequence[dict[str, Any]], by) -> list[str]:
    """Every cell where ``dan`` is beaten, by whom and by how much."""
    cells = not_best_cells(rows)
    lines = ["## Cells where `dan` is not the best", ""]
    if not cells:
        lines += ["None: `dan` is best or tied-best on every instance x metric cell.", ""]
    for c in cells:
        v = "invalid" if c["value"] is None else f"{c['value']:,}"
        extra = (
            "" if c["value"] is None or c["best"] == 0 else f" ({100.0 * (c['value'] - c['best']) / c['best']:+.1f}%)"
        )
        if c["metric"] == "max_v_stay":
            s1 = (
                (((by.get((c["instance"], "dan")) or {}).get("info") or {}).get("stages") or {})
                .get("mpas", {})
                .get("max_v_stay")
            )
            if s1 is not None:
                extra += f"; dan's Stage-1 order: {s1:,}"
        lines.append(
            f"- {c['instance']}, {METRIC_TITLES[c['metric']]}: dan {v}, best {c['best']:,} by {', '.join(c['by'])}{extra}"
        )
    return lines + [""]


def _md_failures(rows: Sequence[dict[str, Any]]) -> list[str]:
    bad = [r for r in rows if not r["valid"]]
    fallbacks = [r for r in rows if r["valid"] and r.get("info", {}).get("fallback")]
    if not (bad or fallbacks):
        return []
    lines = ["## Failures and fallbacks", ""]
    lines += [f"- {r['instance']} / {r['method']}: {r['error']}" for r in bad]
    lines += [f"- {r['instance']} / {r['method']}: fallback: {r['info']['fallback']}" for r in fallbacks]
    return lines + [""]


def bench_markdown(
    rows: Sequence[dict[str, Any]], anchors: dict[str, dict[str, Any]] | None = None, title: str = "dansched bench"
) -> str:
    """The Markdown report described in the module docstring, one section per table."""
    anchors = anchors or {}
    instances, methods, by = _index(rows)
    lines: list[str] = [f"# {title}", ""]
    lines += [
        "Every plan below was judged by the shared evaluator (`dansched.simulate.evaluate`);",
        "smaller is better everywhere. Peak is `maxV_stay` over L1+UB (the paper's M_max,",
        "logical: ALLOC to FREE); physical peak counts resident units (spilled buffers excluded).",
        "",
    ]
    lines += _md_main_comparison(instances, methods, by)
    lines += _md_absolute(instances, methods, by, anchors)
    if "dan" in methods and "lru" in methods:
        lines += _md_victim_rule(instances, by)
    for title, before, after, headers in MAKESPAN_PAIRS:
        if before in methods and after in methods:
            lines += _md_makespan_pair(instances, by, title, before, after, headers)
    if "dan" in methods:
        lines += _md_stage_seconds(instances, by)
    lines += _md_method_seconds(instances, methods, by)
    if "dan" in methods:
        lines += _md_not_best(rows, by)
    lines += _md_failures(rows)
    return "\n".join(lines)


def _cell(row: dict[str, Any] | None, v: int | None, best: int | None) -> str:
    """An absolute-table cell: bold when it is the best, ``invalid`` for a failed row."""
    if row is None:
        return "-"
    if not row.get("valid"):
        return "invalid"
    return f"**{_int(v)}**" if v is not None and v == best else _int(v)


def _change(v: int | None, ref: int | None) -> str:
    if v is None or ref is None:
        return "n/a"
    if ref == 0:
        return "0.0%" if v == 0 else f"+{v:,} (LRU 0)"
    return f"{100.0 * (v - ref) / ref:+.1f}%"


CSV_COLUMNS = (
    "instance",
    "method",
    "valid",
    "max_v_stay",
    "physical_peak",
    "extra_traffic",
    "spill_count",
    "makespan",
    "seconds",
    "stage_seconds",
    "note",
    "error",
)


def bench_csv(rows: Sequence[dict[str, Any]]) -> str:
    """One line per row; ``stage_seconds`` as ``name=seconds;...``; ``note``: a fallback."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in rows:
        stage = ";".join(f"{k}={v}" for k, v in (r.get("stage_seconds") or {}).items())
        note = (r.get("info") or {}).get("fallback", "")
        w.writerow(
            [r["instance"], r["method"], str(bool(r["valid"])).lower()]
            + ["" if r.get(k) is None else r[k] for k in ROW_METRICS]
            + ["" if r.get("seconds") is None else r["seconds"], stage, note, r.get("error") or ""]
        )
    return buf.getvalue()


BENCH_FILES = ("bench.json", "bench.csv", "bench.md")


def write_bench(
    rows: Sequence[dict[str, Any]], out: str | Path, anchors: dict[str, dict[str, Any]] | None = None
) -> list[Path]:
    """Write ``bench.json``, ``bench.csv`` and ``bench.md`` into ``out`` (all or nothing)."""
    d = Path(out)
    texts = [
        json.dumps(list(rows), indent=2) + "\n",
        bench_csv(rows),
        bench_markdown(rows, anchors if anchors is not None else load_anchors()),
    ]
    files = [(d / name, text) for name, text in zip(BENCH_FILES, texts)]
    atomic_write_files(files)
    return [p for p, _ in files]


def bench(
    instances: Sequence[str | Path] | None = None,
    methods: Sequence[str] | None = None,
    out: str | Path = "bench",
    jobs: int = 1,
    time_limit: float = 60.0,
    hw_path: str | Path | None = None,
    progress: Progress | None = None,
) -> tuple[list[dict[str, Any]], list[Path]]:
    """Check the inputs (methods of :data:`METHODS`, None: all; instances that exist,
    default :func:`default_instances`; the hardware file; the output folder), then
    :func:`run_bench` and :func:`write_bench`. Returns the rows and the files written."""
    jobs = JOBS.check(jobs, "--jobs")
    time_limit = TIME_LIMIT.check(time_limit, "--time-limit")
    chosen = list(METHODS) if methods is None else list(methods)
    unknown = [m for m in chosen if m not in METHODS]
    if unknown or not chosen:
        raise InputError(f"unknown method(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(METHODS)}")
    paths = [Path(p) for p in instances] if instances else default_instances()
    if not paths:
        raise InputError(
            f"no instances given and none found in {official_dir() or '../shared/instances/official'} or instances/"
        )
    for p in paths:
        if not p.is_file() and not (p.suffix.lower() == ".csv" and p.parent.is_dir()):
            raise InputError(f"{p}: no such instance file")
    if hw_path is not None:
        load_hardware(hw_path)  # a bad hardware file is bad input (exit 2), not n failed rows
    for name in BENCH_FILES:
        check_output_file(Path(out) / name)
    rows = run_bench(paths, chosen, jobs=jobs, time_limit=time_limit, hw_path=hw_path, progress=progress)
    return rows, write_bench(rows, out)
