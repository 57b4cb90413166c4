"""Terminal tables (rich) for evaluations and bounds. Text taken from input (case names,
paths, violation messages naming Ops) goes through :func:`~dansched.report.text.markup_safe`."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from ..instance import Instance
from ..simulate import Evaluation
from .text import markup_safe

__all__ = ["print_evaluation", "print_bounds", "plan_kind"]


def plan_kind(ev: Evaluation) -> str:
    """What was judged: a problem-1 order, or a full plan (judged for problems 2 and 3)."""
    return "problem-1 order" if ev.problem == 1 else "full plan (problems 2 and 3)"


def _console(console: Console | None) -> Console:
    return console or Console(emoji=False, highlight=False)


def print_evaluation(inst: Instance, ev: Evaluation, console: Console | None = None) -> None:
    """A metrics table, then the first violations (if any)."""
    console = _console(console)
    verdict = "[green]valid[/green]" if ev.valid else f"[red]invalid[/red] ({ev.error_count} violation(s))"
    console.print(f"{markup_safe(inst.name)}: {plan_kind(ev)} is {verdict}", soft_wrap=True)
    table = Table()
    table.add_column("metric")
    table.add_column("value", justify="right")
    rows = [("maxV_stay (L1+UB, logical)", ev.max_v_stay)]
    if ev.problem != 1:
        rows += [
            ("physical peak (L1+UB)", ev.physical_peak),
            ("extra traffic", ev.extra_traffic),
            ("spill count", ev.spill_count),
            ("makespan (cycles)", ev.makespan),
        ]
    for name, value in rows:
        table.add_row(name, "-" if value is None else f"{value:,}")
    console.print(table)
    for e in ev.errors:
        where = "" if e.position is None else f" (position {e.position})"
        console.print(f"  [red]{e.kind}[/red]{where}: {markup_safe(e.message)}", highlight=False, soft_wrap=True)
    shown = len(ev.errors)
    if ev.error_count > shown:
        console.print(
            f"  ... and {ev.error_count - shown} more: "
            + ", ".join(f"{k} {c}" for k, c in sorted(ev.error_counts.items()))
        )


def _row_name(r: dict[str, Any]) -> str:
    """Table label of one audit row: metric, floor name (makespan floors) and scope."""
    floor = f" {r['floor']}" if "floor" in r else ""
    return f"{r['metric']}{floor} ({r['scope']})"


def print_bounds(title: str, rows: dict[str, Any] | list[dict[str, Any]], console: Console | None = None) -> None:
    """One table of bounds: ``rows`` is ``bound``'s report (metric -> best row, with
    ``makespan_floors`` shown as rows of their own and ``not_bounded`` as lines under the
    table) or ``audit``'s list of rows."""
    console = _console(console)
    not_bounded: dict[str, str] = {}
    if isinstance(rows, list):
        named = {_row_name(r): r for r in rows}
    else:
        named = {k: v for k, v in rows.items() if k not in ("makespan_floors", "not_bounded")}
        not_bounded = rows.get("not_bounded", {})
        plan_value = named.get("makespan", {}).get("plan_value")
        for name, f in rows.get("makespan_floors", {}).items():
            if isinstance(f, dict):
                named[f"makespan floor {name} ({f['scope']})"] = dict(f, plan_value=plan_value, optimal=False)
    table = Table(title=markup_safe(title), title_justify="left")
    for col in ("metric", "plan", "bound", "gap", "strength", "method", "optimal"):
        table.add_column(col, justify="right" if col in ("plan", "bound", "gap") else "left")
    for k, b in named.items():
        plan_value = b.get("plan_value")
        g = b.get("gap")
        table.add_row(
            markup_safe(k),
            "-" if plan_value is None else f"{plan_value:,}",
            f"{b['value']:,}",
            "-" if g is None else f"{100 * g:.1f}%",
            b.get("strength", "-"),
            markup_safe(b["method"]),
            "yes" if b["optimal"] else "not proven",
        )
    console.print(table)
    for what, why in not_bounded.items():
        console.print(f"not bounded: {markup_safe(what)}: {markup_safe(why)}", soft_wrap=True)
