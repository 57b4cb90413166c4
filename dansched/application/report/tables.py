"""Terminal tables (rich) for evaluations and bounds. Text taken from input (case names,
paths, violation messages naming Ops) goes through :func:`~dansched.application.report.text.markup_safe`.

Every table is readable at 80 columns and when piped (rich then lays out for 80 columns,
or ``$COLUMNS``): cells are short figures and words, one line each; long text (how a
bound was obtained) is listed below the table under the row's number, wrapped with a
hanging indent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...instance import Instance
from ...simulate import UNKNOWN_NODE, Evaluation, Violation
from .text import markup_safe, no_trailing_spaces, printable, wrapped

__all__ = [
    "print_evaluation",
    "print_bounds",
    "print_frontier",
    "plan_kind",
    "compact_table",
    "print_table",
    "print_notes",
]


def plan_kind(ev: Evaluation) -> str:
    """What was judged: a problem-1 order, or a full plan (judged for problems 2 and 3)."""
    return "problem-1 order" if ev.problem == 1 else "full plan (problems 2 and 3)"


def _console(console: Console | None) -> Console:
    """``console``, or one on stdout that writes no trailing spaces (rich pads cells)."""
    import sys

    return console or Console(file=no_trailing_spaces(sys.stdout), emoji=False, highlight=False)


def compact_table(title: str | None = None) -> Table:
    """A table of short cells: a rule under the header, no vertical borders, two spaces
    between columns (what every table here uses, so that it fits 80 columns)."""
    return Table(
        title=None if title is None else markup_safe(title),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        show_edge=False,
    )


def print_table(
    header: Sequence[str], body: Sequence[Sequence[str]], title: str | None = None, console: Console | None = None
) -> None:
    """A :func:`compact_table` of text cells: the first column left, the others (figures)
    right-justified."""
    table = compact_table(title)
    for k, col in enumerate(header):
        table.add_column(markup_safe(col), justify="left" if k == 0 else "right", no_wrap=True)
    for row in body:
        table.add_row(*(markup_safe(c) for c in row))
    _console(console).print(table)


def print_notes(console: Console, notes: Sequence[tuple[str, str]]) -> None:
    """``(label, text)`` lines under a table: the label, then the text wrapped at the
    console's width with a hanging indent (so a long method reads as one paragraph)."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(overflow="fold")
    for label, text in notes:
        grid.add_row(Text(printable(label)), Text(printable(text)))
    console.print(grid)


def print_evaluation(
    inst: Instance,
    ev: Evaluation,
    notes: Sequence[str] = (),
    console: Console | None = None,
    violations: bool = True,
) -> None:
    """The verdict, then the first violations (the unknown-node ones in one line: they
    share a cause; none without ``violations``, when a note explains them all) and
    ``notes`` (what explains them, once), then the metrics table: an invalid plan's figures
    under ``value (invalid plan)``, ``-`` for those its files do not define, and a line
    saying why a full plan has no makespan (:attr:`~dansched.simulate.Evaluation.timing_defined`)."""
    console = _console(console)
    word = "valid" if ev.valid else "invalid"
    count = "" if ev.valid else f" ({ev.error_count} violation(s))"
    _print_wrapped(
        console, f"{inst.name}: {plan_kind(ev)} is {word}{count}", f"is {word}", "green" if ev.valid else "red"
    )
    _print_violations(console, ev, violations)
    for note in notes:
        _print_wrapped(console, f"  note: {note}", indent="    ")
    table = compact_table()
    table.add_column("metric")
    table.add_column(f"value {ev.figures_label}".rstrip(), justify="right")
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
    if ev.problem != 1 and not ev.timing_defined:
        console.print(f"no makespan: {_why_no_timing(ev)}")


def _why_no_timing(ev: Evaluation) -> str:
    """Why a full plan has no timing, from its violations."""
    if {UNKNOWN_NODE, "duplicate-node", "missing-node"} & ev.error_counts.keys():
        return "the schedule is not a permutation of the plan's nodes"
    if "not-topological" in ev.error_counts:
        return "the order runs a node before one it depends on"
    return "the memory or spill file cannot be read"


def _print_wrapped(console: Console, text: str, marked: str = "", style: str = "", indent: str = "  ") -> None:
    """``text`` (from input: escaped) wrapped between words at the console's width, the
    lines after the first indented by ``indent``; the first ``marked`` in its first line
    drawn in ``style``."""
    lines = wrapped(printable(text), console.width, indent)
    first = markup_safe(lines[0])
    if marked and style:
        safe = markup_safe(printable(marked))
        first = first.replace(safe, f"[{style}]{safe}[/{style}]", 1)
    console.print(first, highlight=False, soft_wrap=True)
    for line in lines[1:]:
        console.print(markup_safe(line), highlight=False, soft_wrap=True)


def _print_violations(console: Console, ev: Evaluation, violations: bool) -> None:
    """The first violations, cause first (the order's, then residency's, then the
    addresses': :attr:`~dansched.simulate.Violation.cause_key`), a line each wrapped at the
    console's width (the unknown-node ones in one), and how many more of each kind."""
    shown = 0
    errors = sorted(ev.errors, key=lambda e: e.cause_key)
    unknown = [e for e in errors if e.kind == UNKNOWN_NODE]
    for e in errors if violations else ():
        if e.kind == UNKNOWN_NODE and e is not unknown[0]:
            continue
        where = "" if e.position is None else f" (position {e.position})"
        label = e.kind
        if e.kind == UNKNOWN_NODE:
            count = ev.error_counts.get(UNKNOWN_NODE, len(unknown))
            label, where, shown = f"{e.kind} x{count}", f" (first at position {e.position})", shown + count - 1
        _print_wrapped(console, f"  {label}{where}: {e.message}", label, "red", indent="      ")
        shown += 1
    if violations and ev.error_count > shown:
        kinds = sorted(ev.error_counts.items(), key=lambda kc: Violation(kc[0], "").cause_key[0])
        _print_wrapped(
            console,
            f"  ... and {ev.error_count - shown} more: " + ", ".join(f"{k} {c}" for k, c in kinds),
            indent="    ",
        )


# the bound rows' scopes, as the table shows them (the method lines below say the rest)
SCOPE_CELLS = {
    "global": "all plans",
    "fixed order": "this order",
    "fixed memory behaviour": "this memory",
    "plans with at least this traffic": "this traffic+",
    "fixed order and spills": "these spills",
}


def _bound_rows(rows: dict[str, Any] | list[dict[str, Any]]) -> list[tuple[str, list[str], dict[str, Any]]]:
    """``(metric, how each agreeing method reads, row)`` per table row, one per distinct bound
    (metric, scope, value and plan value): ``audit``'s list of rows, or ``bound``'s report
    (metric -> best row; the makespan's best is one of its floors, so the floors by name
    stand for it). Rows that give the same bound are one, every method that gives it named."""
    if isinstance(rows, list):
        listed = [(r["metric"], str(r.get("floor", "best")), r) for r in rows]
    else:
        floors = {k: f for k, f in rows.get("makespan_floors", {}).items() if isinstance(f, dict)}
        listed = [
            (k.removesuffix("_all_orders"), "best", v)
            for k, v in rows.items()
            if k not in ("makespan_floors", "not_bounded") and not (k == "makespan" and floors)
        ]
        best = rows.get("makespan", {})
        for name, f in floors.items():
            row = dict(f, plan_value=best.get("plan_value"), plan=best.get("plan"), optimal=bool(f.get("optimal")))
            listed.append(("makespan", f"floor {name}", row))
    groups: dict[tuple[str, int, str, Any], tuple[str, list[str], dict[str, Any]]] = {}
    for metric, which, b in listed:
        key = (metric, b["value"], b["scope"], b.get("plan_value"))
        how = f"{which}: {b['method']}" if which != "best" else str(b["method"])
        if "rooms_cost" in b:
            how += f"; this plan's rooms cost {b['rooms_cost']:,} cycles"
        if key not in groups:
            groups[key] = (metric, [how], b)
        elif how not in groups[key][1]:
            groups[key][1].append(how)
    return list(groups.values())


def agreeing(hows: list[str]) -> str:
    """How a bound was obtained, for a row one or more methods give: the method, or ``N
    methods agree: (1) ...; (2) ...``."""
    if len(hows) == 1:
        return hows[0]
    return f"{len(hows)} methods agree: " + "; ".join(f"({k}) {h}" for k, h in enumerate(hows, start=1))


def _plans_line(listed: list[tuple[str, list[str], dict[str, Any]]]) -> str | None:
    """``plan column: METRICS: PLAN; ...``: what plan each metric's plan value is of."""
    by_plan: dict[str, list[str]] = {}
    for metric, _, b in listed:
        if b.get("plan"):
            names = by_plan.setdefault(str(b["plan"]), [])
            if metric not in names:
                names.append(metric)
    if not by_plan:
        return None
    if len(by_plan) == 1:
        return f"plan column: {next(iter(by_plan))}"
    return "plan column: " + "; ".join(f"{', '.join(m)}: {p}" for p, m in by_plan.items())


def print_bounds(title: str, rows: dict[str, Any] | list[dict[str, Any]], console: Console | None = None) -> None:
    """A line naming the plan of the plan column, then one table of bounds, a row per
    distinct bound (metric, scope, plan, bound, gap, strength, optimal), then how each
    bound was obtained under the row's number (every method that gives it), and
    ``not_bounded`` as lines of its own: ``rows`` is ``bound``'s report (metric -> best
    row, with ``makespan_floors`` shown as rows of their own) or ``audit``'s list of rows.
    Scopes: *all plans* (``global``), *this order* (``fixed order``: plans with this plan's
    order), *this memory* (``fixed memory behaviour``: this plan's spills and reuse), *this
    traffic+* (plans carrying at least this plan's traffic), *these spills* (``fixed order
    and spills``: this plan's order and spills at any addresses: what its rooms cost).
    Strength: the kind of bound (``exact``, ``lower bound``, ``conditional``:
    docs/guide.md)."""
    console = _console(console)
    not_bounded: dict[str, str] = rows.get("not_bounded", {}) if isinstance(rows, dict) else {}
    listed = _bound_rows(rows)
    console.print(markup_safe(title), highlight=False)
    plans = _plans_line(listed)
    if plans is not None:
        for line in wrapped(printable(plans), console.width):
            console.print(markup_safe(line), highlight=False)
    table = compact_table()
    for col in ("#", "metric", "scope", "plan", "bound", "gap", "strength", "optimal"):
        table.add_column(col, justify="right" if col in ("#", "plan", "bound", "gap") else "left", no_wrap=True)
    methods = []
    for i, (metric, hows, b) in enumerate(listed, start=1):
        plan_value = b.get("plan_value")
        g = b.get("gap")
        table.add_row(
            str(i),
            markup_safe(metric),
            SCOPE_CELLS.get(b["scope"], markup_safe(b["scope"])),
            "-" if plan_value is None else f"{plan_value:,}",
            f"{b['value']:,}",
            "-" if g is None else f"{100 * g:.1f}%",
            b.get("strength", "-"),
            "yes" if b["optimal"] else "-",
        )
        methods.append((str(i), agreeing(hows)))
    console.print(table)
    console.print("how each bound was obtained:", highlight=False)
    print_notes(console, methods)
    for what, why in not_bounded.items():
        for line in wrapped(printable(f"not bounded: {what}: {why}"), console.width):
            console.print(markup_safe(line), highlight=False)


def print_frontier(rows: list[dict[str, Any]], folders: list[str], console: Console | None = None) -> None:
    """The traffic-makespan frontier (the report's ``frontier`` rows, lightest first): per
    point its traffic, the share over the problem-2 plan's, the makespan, the busiest pipe
    and its load, the floor for that traffic, the gap to it and whether the floor proves
    the point optimal (no plan carrying that much traffic is faster), the knee marked; then
    each point's plan folder under the row's number (``folders``, one per row), and what
    the columns mean (:data:`FRONTIER_LEGEND`)."""
    console = _console(console)
    table = compact_table("traffic-makespan frontier (knee: *)")
    for col in ("#", "traffic", "over p2", "makespan", "busiest pipe", "floor", "gap", "optimal"):
        table.add_column(col, justify="left" if col in ("busiest pipe", "optimal") else "right", no_wrap=True)
    for i, r in enumerate(rows, start=1):
        over = r["over_problem2"]
        table.add_row(
            f"{i}{'*' if r['knee'] else ''}",
            f"{r['traffic']:,}",
            "-" if over is None else f"{100 * over:+.1f}%",
            f"{r['makespan']:,}",
            f"{markup_safe(r['busiest_pipe'])} {r['busiest_load']:,}",
            f"{r['floor']['value']:,}",
            "-" if r["gap"] is None else f"{100 * r['gap']:.1f}%",
            "yes" if r.get("optimal") else "-",
        )
    console.print(table)
    notes = [
        (f"{i}{'*' if r['knee'] else ''}", f"{folder} (from {r['source']})")
        for i, (r, folder) in enumerate(zip(rows, folders), start=1)
    ]
    if notes:
        print_notes(console, notes)
    for line in wrapped(FRONTIER_LEGEND, console.width):
        console.print(markup_safe(line), highlight=False)


# what the frontier table's columns mean (README.md, "The traffic-makespan frontier")
FRONTIER_LEGEND = (
    "over p2: traffic above the problem-2 plan's; floor: a makespan no plan carrying that "
    "traffic can beat; gap: the makespan's distance to it; optimal: the floor meets the "
    "makespan; *: the knee, the lightest point within 1% of the fastest"
)
