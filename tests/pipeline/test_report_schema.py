"""The JSON Schema of ``<case>_report.json`` (dansched/data/report.schema.json) describes what
``dansched solve`` writes for each problem, and rejects reports that break it."""

from __future__ import annotations

import json

import pytest
from helpers import SHIPPED, report_schema_errors, run_cli


@pytest.mark.parametrize(
    "problem", [pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow), 3]
)
def test_solve_reports_match_the_schema(monkeypatch, capsys, tmp_path, problem):
    code, _, err = run_cli(
        monkeypatch, capsys, "solve", SHIPPED / "fa_s2.json", "--problem", problem, "--out", tmp_path
    )
    assert code == 0, err
    (path,) = tmp_path.glob("*_report.json")
    assert report_schema_errors(path) == []
    report = json.loads(path.read_text())
    assert report["problem"] == problem
    # the schema is not vacuous: a report without its problem-3 parts, or with a stray key, is refused
    broken = dict(report, problem=3) if problem == 2 else dict(report, stray=1)
    path.write_text(json.dumps(broken))
    assert report_schema_errors(path)
    path.write_text(json.dumps(report))
