"""Shared test fixtures (plain helpers are in ``tests/helpers.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import SHIPPED


@pytest.fixture
def exp_path() -> Path:
    return SHIPPED / "Exp.json"


@pytest.fixture(scope="session", autouse=True)
def every_report_the_suite_writes_matches_the_schema(tmp_path_factory):
    """After the whole run, every ``<case>_report.json`` under the session's temporary
    folders (what solves in tests wrote, in process or in subprocesses) is checked against
    the JSON Schema in dansched/data/report.schema.json; a report a test wrote by hand to
    break a folder on purpose carries no ``problem`` and is not a solve's report."""
    yield
    from helpers import report_schema_errors

    bad = []
    for path in sorted(tmp_path_factory.getbasetemp().rglob("*_report.json")):
        errors = report_schema_errors(path)
        if errors:
            bad.append(f"{path}: {errors[0]}")
    assert not bad, f"{len(bad)} report(s) break the schema; first: {bad[0]}"
