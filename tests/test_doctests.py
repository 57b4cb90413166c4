"""The package's docstring examples run as tests: every module whose source holds a
``>>>`` example is imported and its examples checked with :mod:`doctest`."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "dansched"


def _modules_with_examples() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ">>> " not in path.read_text():
            continue
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append(".".join(parts))
    return out


MODULES = _modules_with_examples()


def test_examples_are_found():
    assert "dansched.graph" in MODULES and "dansched.simulate" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
