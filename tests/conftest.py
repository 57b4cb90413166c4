"""Shared test fixtures (plain helpers are in ``tests/helpers.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import SHIPPED


@pytest.fixture
def exp_path() -> Path:
    return SHIPPED / "Exp.json"
