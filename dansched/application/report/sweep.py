"""The sweep's tables and figures (``dansched sweep``, :mod:`dansched.application.sweep`), from its rows
(one JSON object per cell: the instance, every tier's capacity, the problem, the options,
validity, the figures of :data:`RESULT_METRICS`, the seconds, the error):

- :func:`sweep_csv`: ``sweep.csv``, one line per cell;
- :func:`sweep_markdown`: ``sweep.md``, per instance and swept tier the smallest capacity
  from which traffic stays 0, and the makespan at each point;
- :func:`cell_table`: the rows as short cells, for the terminal;
- :func:`tier_figure` and :func:`tier_png_bytes`: ``sweep_<TIER>.png``, makespan and
  traffic against a tier's capacity, one line per instance (needs matplotlib).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .text import printable

__all__ = [
    "RESULT_METRICS",
    "swept_tiers",
    "sweep_csv",
    "sweep_markdown",
    "zero_traffic_from",
    "point_label",
    "cell_table",
    "tier_figure",
    "tier_png_bytes",
]

RESULT_METRICS = ("max_v_stay", "extra_traffic", "spill_count", "makespan")  # the figures of a row


def swept_tiers(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Tiers whose capacity takes more than one value among ``rows`` (in tier order)."""
    if not rows:
        return []
    tiers = list(rows[0]["capacity"])
    return [t for t in tiers if len({r["capacity"].get(t) for r in rows}) > 1]


def sweep_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """One line per row: instance, hash, every tier's capacity, problem, options, figures."""
    tiers = list(rows[0]["capacity"]) if rows else []
    opts = sorted({k for r in rows for k in r["options"]})
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["instance", "instance_hash", *tiers, "problem", *opts, "valid", *RESULT_METRICS, "seconds", "error"])
    for r in rows:
        w.writerow(
            [
                r["instance"],
                r["instance_hash"],
                *(r["capacity"].get(t, "") for t in tiers),
                r["problem"],
                *(r["options"].get(k, "") for k in opts),
                str(bool(r["valid"])).lower(),
                *("" if r.get(k) is None else r[k] for k in RESULT_METRICS),
                "" if r.get("seconds") is None else r["seconds"],
                r.get("error") or "",
            ]
        )
    return buf.getvalue()


def _instances(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["instance"] for r in rows))


def _slice(rows: Sequence[Mapping[str, Any]], tier: str, swept: Sequence[str]) -> list[Mapping[str, Any]]:
    """The rows where every swept tier other than ``tier`` is at its largest value."""
    top = {t: max(r["capacity"][t] for r in rows) for t in swept if t != tier}
    return [r for r in rows if all(r["capacity"][t] == v for t, v in top.items())]


def zero_traffic_from(rows: Sequence[Mapping[str, Any]], tier: str) -> int | None:
    """The smallest capacity of ``tier`` from which every valid row of ``rows`` (one
    instance, one slice) has zero extra traffic and every larger point is valid too;
    ``None`` when even the largest point spills."""
    pts = sorted(rows, key=lambda r: r["capacity"][tier])
    best = None
    for r in reversed(pts):
        if not (r["valid"] and r.get("extra_traffic") == 0):
            break
        best = r["capacity"][tier]
    return best


def point_label(cap: Mapping[str, int], swept: Sequence[str]) -> str:
    return ", ".join(f"{t}={cap[t]:,}" for t in swept) or "base hardware"


def sweep_markdown(rows: Sequence[Mapping[str, Any]], png_note: str | None = None, lost: int = 0) -> str:
    """The Markdown summary described in the module docstring."""
    lines = ["# dansched sweep", ""]
    if not rows:
        return "\n".join(lines + ["No cell finished.", ""])
    swept = swept_tiers(rows)
    insts = _instances(rows)
    problem = rows[0]["problem"]
    lines += [
        f"{len(rows)} cells: {len(insts)} instance(s) x {len({json.dumps(r['capacity'], sort_keys=True) for r in rows})} "
        f"hardware point(s), problem {problem}, options {json.dumps(rows[0]['options'], sort_keys=True)}. "
        "Every plan was judged by the shared evaluator.",
        "",
    ]
    base = {t: v for t, v in rows[0]["capacity"].items() if t not in swept}
    lines += [f"Fixed tiers: {', '.join(f'{t}={v:,}' for t, v in base.items())}.", ""]
    if swept and problem != 1:
        lines += [
            "## Smallest capacity from which extra traffic is 0",
            "",
            "Per swept tier, the other swept tiers at their largest value; `none`: traffic is not 0 "
            "even at the largest value (or that point failed).",
            "",
        ]
        lines += _md_table(
            ["Instance"] + swept,
            [
                [i]
                + [
                    _fmt(zero_traffic_from(_slice([r for r in rows if r["instance"] == i], t, swept), t), "none")
                    for t in swept
                ]
                for i in insts
            ],
        )
    metric = "makespan" if problem != 1 else "max_v_stay"
    title = "Makespan (extra traffic in parentheses when not 0)" if problem != 1 else "Peak maxV_stay"
    lines += [f"## {title} at each point", ""]
    by = {(r["instance"], json.dumps(r["capacity"], sort_keys=True)): r for r in rows}
    points = list(dict.fromkeys(json.dumps(r["capacity"], sort_keys=True) for r in rows))
    body = []
    for pkey in points:
        cells = []
        for i in insts:
            r = by.get((i, pkey))
            if r is None:
                cells.append("-")
            elif not r["valid"]:
                cells.append("failed")
            else:
                t = r.get("extra_traffic")
                cells.append(f"{r[metric]:,}" + (f" ({t:,})" if problem != 1 and t else ""))
        body.append([point_label(json.loads(pkey), swept)] + cells)
    lines += _md_table(["Point"] + insts, body)
    bad = [r for r in rows if not r["valid"]]
    if bad or lost:
        lines += ["## Failed cells", ""]
        lines += [f"- {r['instance']} at {point_label(r['capacity'], swept)}: {r['error']}" for r in bad]
        if lost:
            lines.append(f"- {lost} cell(s) could not be run by the executor; rerun the same command to retry them")
        lines.append("")
    if png_note:
        lines += [png_note, ""]
    return "\n".join(lines)


def cell_table(rows: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The rows as a table of short cells (header, body): instance, each swept tier's
    capacity, the figures (a failed cell: ``failed`` and nothing else; its reason is in
    ``sweep.md``)."""
    swept = swept_tiers(rows)
    header = ["instance", *swept, "maxV_stay", "traffic", "spills", "makespan"]
    body = []
    for r in rows:
        caps = [f"{r['capacity'][t]:,}" for t in swept]
        if not r["valid"]:
            body.append([r["instance"], *caps, "failed", "", "", ""])
            continue
        body.append([r["instance"], *caps, *(_fmt(r.get(k), "-") for k in RESULT_METRICS)])
    return header, body


def _fmt(v: int | None, none: str) -> str:
    return none if v is None else f"{v:,}"


def _md_table(header: Sequence[str], body: Iterable[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in body]
    return out + [""]


# one look per instance, so that lines over the same points stay visible: hollow markers
# of falling size and different dashes (the first instance drawn largest, underneath)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", ":", "-.")


def tier_figure(rows: Sequence[Mapping[str, Any]], tier: str) -> Any:
    """The matplotlib figure of :func:`tier_png_bytes`: makespan and extra traffic
    (problem 1: peak) against ``tier``'s capacity, one line per instance, the other swept
    tiers at their largest value. Every axis starts at 0 (figures are never negative) and
    an axis whose figures are all 0 runs to 1, with integer ticks."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    swept = swept_tiers(rows)
    part = _slice(rows, tier, swept)
    problem = rows[0]["problem"]
    metrics = (
        [("makespan", "makespan (cycles)"), ("extra_traffic", "extra DDR traffic")]
        if problem != 1
        else [("max_v_stay", "peak maxV_stay")]
    )
    fig = Figure(figsize=(6.0 * len(metrics), 4.2), dpi=100)
    FigureCanvasAgg(fig)
    others = ", ".join(f"{t}={max(r['capacity'][t] for r in rows):,}" for t in swept if t != tier)
    insts = _instances(part)
    for k, (metric, label) in enumerate(metrics):
        ax = fig.add_subplot(1, len(metrics), k + 1)
        top = 0
        for j, inst in enumerate(insts):
            pts = sorted(
                (r["capacity"][tier], r[metric])
                for r in part
                if r["instance"] == inst and r["valid"] and r.get(metric) is not None
            )
            if pts:
                top = max(top, max(y for _, y in pts))
                ax.plot(
                    [x for x, _ in pts],
                    [y for _, y in pts],
                    marker=MARKERS[j % len(MARKERS)],
                    markersize=max(3.0, 9.0 - 1.5 * j),
                    fillstyle="none",
                    linestyle=LINESTYLES[j % len(LINESTYLES)],
                    label=printable(inst),  # matplotlib cannot draw a file name's undecodable bytes
                )
        ax.set_ylim(bottom=0, top=None if top > 0 else 1)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(f"{tier} capacity")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        if k == 0 and ax.get_lines():  # no valid point: no line, no legend (matplotlib would warn)
            ax.legend(fontsize="small")
    fig.suptitle(f"dansched sweep over {tier}" + (f" ({others})" if others else ""))
    fig.tight_layout()
    return fig


def tier_png_bytes(rows: Sequence[Mapping[str, Any]], tier: str) -> bytes:
    """:func:`tier_figure` as PNG bytes (matplotlib, Agg)."""
    buf = io.BytesIO()
    tier_figure(rows, tier).savefig(buf, format="png")
    return buf.getvalue()
