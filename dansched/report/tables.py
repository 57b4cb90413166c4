"""Terminal tables (rich) for evaluations and reports."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..instance import Instance
from ..simulate import Evaluation

__all__ = ["print_evaluation"]


def print_evaluation(inst: Instance, ev: Evaluation, console: Console | None = None) -> None:
    """A metrics table, then the first violations (if any)."""
    console = console or Console()
    verdict = "[green]valid[/green]" if ev.valid else f"[red]invalid[/red] ({ev.error_count} violation(s))"
    table = Table(title=f"{inst.name}: problem-{ev.problem} plan is {verdict}", title_justify="left")
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
        console.print(f"  [red]{e.kind}[/red]{where}: {e.message}", highlight=False)
    shown = len(ev.errors)
    if ev.error_count > shown:
        console.print(
            f"  ... and {ev.error_count - shown} more: "
            + ", ".join(f"{k} {c}" for k, c in sorted(ev.error_counts.items()))
        )
