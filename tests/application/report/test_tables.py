"""The terminal tables read well in an 80-column terminal and when piped: no line is wider
than 80 characters, every table row is one line (the long method text is listed below the
table, wrapped), and the rows are those of the data.

The commands run with ``COLUMNS=80`` and stdout captured (not a terminal), as a
newcomer's terminal or a log file meets them; the widest figures come from rows built
here (eight-digit values and a method of a few hundred characters), printed by the same
function."""

from __future__ import annotations

import io
import json
import re

import pytest
from helpers import SHIPPED, run_cli
from rich.console import Console

import dansched
from dansched.application.report.tables import print_bounds

WIDTH = 80
ROW = re.compile(r"^\s*(\d+)\s{2}")  # a numbered table row or method line


def _lines(text: str) -> list[str]:
    lines = text.splitlines()
    widest = max(len(line) for line in lines)
    assert widest <= WIDTH, f"a line of {widest} characters:\n" + "\n".join(line for line in lines if len(line) > WIDTH)
    return lines


def _table_rows(lines: list[str]) -> list[str]:
    """The lines between the header rule and the methods' heading."""
    start = next(i for i, line in enumerate(lines) if set(line.strip()) == {"─"})
    end = lines.index("how each bound was obtained:")
    return lines[start + 1 : end]


def _check_bounds_text(text: str, rows: int) -> None:
    lines = _lines(text)
    table = _table_rows(lines)
    assert [int(ROW.match(line).group(1)) for line in table] == list(range(1, rows + 1))  # one line each
    methods = lines[lines.index("how each bound was obtained:") + 1 :]
    numbered = [int(m.group(1)) for line in methods if (m := ROW.match(line))]
    assert numbered == list(range(1, rows + 1))


@pytest.fixture(scope="module")
def plan_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tables") / "plan"
    dansched.solve(dansched.load_instance(SHIPPED / "Exp.json"), out=folder)
    return folder


def _run(monkeypatch, capsys, *args) -> str:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    return out


def test_audit_at_80_columns(monkeypatch, capsys, plan_folder):
    args = ("audit", SHIPPED / "Exp.json", "--plan", plan_folder, "--quiet", "--time-limit", "1")
    rows = json.loads(_run(monkeypatch, capsys, *args, "--json"))["bounds"]
    distinct = {(r["metric"], r["value"], r["scope"], r["plan_value"]): r for r in rows}  # one row per distinct bound
    assert len(distinct) < len(rows)  # Exp: several bounds agree (every makespan floor is 60)
    text = _run(monkeypatch, capsys, *args)
    _check_bounds_text(text, len(distinct))
    assert "methods agree: (1) " in " ".join(text.split())
    assert len(text.splitlines()) <= 4 * len(rows)  # fa_s2's 7 rows were 71 lines with the methods in cells


def test_bound_at_80_columns(monkeypatch, capsys):
    args = ("bound", SHIPPED / "Exp.json", "--quiet", "--time-limit", "1")
    report = json.loads(_run(monkeypatch, capsys, *args, "--json"))
    # one row per distinct bound (metric, scope, value): the makespan's best is one of its floors,
    # listed once (by name), with every floor that gives the same value in the same scope
    rows = len([k for k in report if k not in ("makespan", "makespan_floors", "not_bounded")])
    floors = [v for v in report["makespan_floors"].values() if isinstance(v, dict)]
    assert any((f["value"], f["method"]) == (report["makespan"]["value"], report["makespan"]["method"]) for f in floors)
    rows += len({(f["scope"], f["value"]) for f in floors})
    text = _run(monkeypatch, capsys, *args)
    _check_bounds_text(text, rows)
    # the plan column says what plan it is of: Stage 1's order for the peak, solve's plan for the rest
    head = " ".join(text.split("#  metric")[0].split())
    assert "max_v_stay: the Stage-1 (MPAS) order of dansched solve (problem 3, effort default)" in head
    assert "extra_traffic, makespan: the plan of dansched solve (problem 3, effort default)" in head


def test_wide_figures_and_long_methods_stay_within_80_columns():
    method = "a bound whose method is told at length, " * 8
    rows = [
        dict(
            metric=m,
            value=12_345_678,
            method=method,
            optimal=False,
            scope=scope,
            plan_value=98_765_432,
            gap=0.875,
            stage="CPE",
            strength="lower bound",
        )
        for m, scope in [
            ("max_v_stay", "global"),
            ("extra_traffic", "fixed order"),
            ("makespan", "fixed memory behaviour"),
        ]
    ]
    out = io.StringIO()
    print_bounds("case: audit of a folder with a long name " * 3, rows, Console(file=out, width=WIDTH))
    _check_bounds_text(out.getvalue(), len(rows))
    assert "98,765,432" in out.getvalue() and "12,345,678" in out.getvalue()  # figures are never cut


def test_agreeing_bounds_are_one_row_naming_each_method():
    """Three traffic bounds of 0 over all orders and two makespan floors of 28,315 for every
    plan are one row each, the methods named under it; the floor of 28,315 for the plans
    carrying this traffic and the floor of 25,600 are rows of their own (another scope,
    another value): four rows, not seven."""

    def row(metric, value, method, scope, plan_value, **extra):
        return dict(metric=metric, value=value, method=method, optimal=value == plan_value, scope=scope,
                    plan_value=plan_value, gap=0.1, stage="CPE", strength="lower bound", **extra)  # fmt: skip

    rows = [
        row("extra_traffic", 0, "per tier: 0", "global", 3584),
        row("extra_traffic", 0, "segments: no grid", "global", 3584),
        row("extra_traffic", 0, "live lines: no grid", "global", 3584),
        row("makespan", 25_600, "busiest pipe", "global", 29_804, floor="instance"),
        row("makespan", 28_315, "heads that respect the pipes", "global", 29_804, floor="head_body_tail_instance"),
        row("makespan", 28_315, "traffic forced 0", "global", 29_804, floor="traffic_forced"),
        row("makespan", 28_315, "at least 3,584 bytes", "plans with at least this traffic", 29_804, floor="traffic"),
    ]
    out = io.StringIO()
    print_bounds("case: audit", rows, Console(file=out, width=WIDTH))
    text = out.getvalue()
    _check_bounds_text(text, 4)
    flat = " ".join(text.split())
    assert "3 methods agree: (1) per tier: 0; (2) segments: no grid; (3) live lines: no grid" in flat
    assert (
        "2 methods agree: (1) head_body_tail_instance: heads that respect the pipes; "
        "(2) traffic_forced: traffic forced 0" in flat
    )
    assert "traffic: at least 3,584 bytes" in flat and "instance: busiest pipe" in flat


def test_info_and_evaluate_at_80_columns(monkeypatch, capsys, plan_folder):
    """info (every Op, pipe and tier row one line) and a plan's evaluation."""
    for args in (
        ("info", SHIPPED / "conv_s2.json"),
        ("info", SHIPPED / "fa_s2.json"),
        ("evaluate", SHIPPED / "Exp.json", "--plan", plan_folder),
    ):
        lines = _lines(_run(monkeypatch, capsys, *args))
        assert all("│" not in line for line in lines)  # no boxed cells that wrap inside their borders
