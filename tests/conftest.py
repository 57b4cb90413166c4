"""Shared test fixtures: paths to the shipped and official instances."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "instances"
OFFICIAL = REPO.parent / "shared" / "instances" / "official"
OFFICIAL_CASES = ["Conv_Case0", "FlashAttention_Case0", "FlashAttention_Case1", "Matmul_Case0", "Matmul_Case1"]


def official_path(case: str) -> Path:
    """Path of an official contest case; skips the test cleanly when it is absent."""
    p = OFFICIAL / f"{case}.json"
    if not p.is_file():
        pytest.skip(f"official instance {case} not available at {OFFICIAL}")
    return p


@pytest.fixture
def exp_path() -> Path:
    return SHIPPED / "Exp.json"
