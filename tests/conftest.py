"""Shared test fixtures (plain helpers are in ``tests/helpers.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import SHIPPED

from dansched.kernels.warm import warm


def pytest_configure(config: pytest.Config) -> None:
    """Compile the kernels once, in the main process, before pytest-xdist starts its workers:
    with an empty cache (a fresh clone) the workers then load the machine code instead of
    each compiling it at the same time. numba writes each cache file to a temporary name and
    renames it into place, so concurrent compiles would be safe, only slower."""
    if not hasattr(config, "workerinput"):
        warm()


@pytest.fixture
def exp_path() -> Path:
    return SHIPPED / "Exp.json"


@pytest.fixture(scope="session", autouse=True)
def every_report_the_suite_writes_matches_the_schema(tmp_path_factory):
    """After the whole run, every ``<case>_report.json`` under the session's temporary
    folders (what solves in tests wrote, in process or in subprocesses) is checked against
    the JSON Schema in dansched/data/report.schema.json; a report a test wrote by hand to
    break a folder on purpose carries no ``problem`` and is not a solve's report; a path that is
    not a regular file (tests/application/test_output_targets.py) is no report either."""
    yield
    from helpers import report_schema_errors

    bad = []
    for path in sorted(tmp_path_factory.getbasetemp().rglob("*_report.json")):
        if not path.is_file():  # a named pipe or a device a test put in a report's place
            continue
        errors = report_schema_errors(path)
        if errors:
            bad.append(f"{path}: {errors[0]}")
    assert not bad, f"{len(bad)} report(s) break the schema; first: {bad[0]}"
