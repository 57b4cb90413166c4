"""Every output of ``dansched solve`` is checked before the work (docs/guide.md): an
unwritable ``--out`` (under a regular file; on ``/proc``, which refuses even root) ends
the run with exit 2 and one line, before the instance is read or the pipeline runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import SHIPPED, run_cli

import dansched.application.solution
import dansched.cli

EXP = SHIPPED / "Exp.json"


@pytest.fixture
def no_work(monkeypatch) -> list[str]:
    """Records any attempt to read the instance or run the pipeline (none may happen)."""
    calls: list[str] = []

    def refuse(what: str):
        def f(*_a, **_k):
            calls.append(what)
            raise AssertionError(f"{what} ran before the outputs were checked")

        return f

    monkeypatch.setattr(dansched.cli, "load_inputs", refuse("load_inputs"))
    monkeypatch.setattr(dansched.application.solution, "run_pipeline", refuse("run_pipeline"))
    return calls


def unwritable(tmp_path: Path, where: str) -> Path:
    if where == "under a file":
        f = tmp_path / "file"
        f.write_text("not a folder\n")
        return f / "sub"
    if not Path("/proc/self").is_dir():
        pytest.skip("no /proc here")
    return Path("/proc/dansched-nope/out")


@pytest.mark.parametrize("where", ["under a file", "/proc"])
@pytest.mark.parametrize(
    "extra",
    [[], ["--html"], ["--trace"], ["--frontier"]],
    ids=["folder", "html", "trace", "frontier"],
)
def test_unwritable_out_refused_before_the_work(monkeypatch, capsys, tmp_path, no_work, where, extra):
    out = unwritable(tmp_path, where)
    code, stdout, stderr = run_cli(monkeypatch, capsys, "solve", EXP, "--out", out, *extra)
    assert code == 2
    assert stdout == ""
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dansched: error: ") and "cannot write" in lines[0]
    assert no_work == []


def test_frontier_folder_that_is_a_file_refused_before_the_work(monkeypatch, capsys, tmp_path, no_work):
    (tmp_path / "Exp_frontier").write_text("a file where the frontier's folders go\n")
    code, _, stderr = run_cli(monkeypatch, capsys, "solve", EXP, "--out", tmp_path, "--frontier")
    assert code == 2
    assert len(stderr.splitlines()) == 1 and "Exp_frontier" in stderr
    assert no_work == []
