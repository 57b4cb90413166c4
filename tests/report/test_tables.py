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
from dansched.report.tables import print_bounds

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
    rows = list({(r["metric"], r["value"], r["method"], r["scope"]): r for r in rows}.values())  # distinct bounds
    text = _run(monkeypatch, capsys, *args)
    _check_bounds_text(text, len(rows))
    assert len(text.splitlines()) <= 4 * len(rows)  # fa_s2's 7 rows were 71 lines with the methods in cells


def test_bound_at_80_columns(monkeypatch, capsys):
    args = ("bound", SHIPPED / "Exp.json", "--quiet", "--time-limit", "1")
    report = json.loads(_run(monkeypatch, capsys, *args, "--json"))
    # one row per distinct bound: the makespan's best is one of its floors, listed once (by name)
    rows = len([k for k in report if k not in ("makespan", "makespan_floors", "not_bounded")])
    floors = [v for v in report["makespan_floors"].values() if isinstance(v, dict)]
    assert any((f["value"], f["method"]) == (report["makespan"]["value"], report["makespan"]["method"]) for f in floors)
    rows += len(floors)
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


def test_info_and_evaluate_at_80_columns(monkeypatch, capsys, plan_folder):
    """info (every Op, pipe and tier row one line) and a plan's evaluation."""
    for args in (
        ("info", SHIPPED / "conv_s2.json"),
        ("info", SHIPPED / "fa_s2.json"),
        ("evaluate", SHIPPED / "Exp.json", "--plan", plan_folder),
    ):
        lines = _lines(_run(monkeypatch, capsys, *args))
        assert all("│" not in line for line in lines)  # no boxed cells that wrap inside their borders
