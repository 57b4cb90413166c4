"""A solve that runs out of memory ends in one line saying what the graph needs
(dansched/pipeline/memory.py), exit status 1, nothing written; a sweep cell that does is
a row that a rerun retries (tests/application/test_sweep.py)."""

from __future__ import annotations

import sys

import pytest
from helpers import SHIPPED, run_cli

from dansched.instance import load_instance
from dansched.pipeline.memory import BASE_BYTES, BYTES_PER_ELEMENT, memory_needed


@pytest.fixture
def skeleton_runs_out(monkeypatch):
    """Stage 3's memory skeleton raises MemoryError, wherever it was imported by name."""

    def no_memory(*_a, **_k):
        raise MemoryError

    patched = 0
    for name, module in list(sys.modules.items()):
        if name.startswith("dansched.") and callable(getattr(module, "memory_skeleton", None)):
            monkeypatch.setattr(module, "memory_skeleton", no_memory)
            patched += 1
    assert patched, "no module holds memory_skeleton: the pipeline was restructured, update this fixture"


@pytest.mark.parametrize("command", ["solve", "bound"])
def test_out_of_memory_in_the_skeleton_is_one_line_with_what_the_graph_needs(
    command, skeleton_runs_out, monkeypatch, capsys, tmp_path
):
    path = SHIPPED / "random_s5.json"
    inst = load_instance(path)
    args = [command, path, "--quiet"] + (["--out", tmp_path / "out"] if command == "solve" else [])
    code, out, err = run_cli(monkeypatch, capsys, *args)
    lines = err.strip().splitlines()
    assert code == 1 and out == "" and len(lines) == 1, err
    gib = memory_needed(inst.n, inst.num_edges) / 2**30
    assert f"{inst.n:,} nodes and {inst.num_edges:,} edges needs about {gib:.1f} GiB" in lines[0]
    assert not (tmp_path / "out").exists()


def test_the_estimate_grows_by_one_kib_per_node_and_edge():
    assert memory_needed(0, 0) == BASE_BYTES
    assert memory_needed(1000, 500) - memory_needed(0, 0) == 1500 * BYTES_PER_ELEMENT == 1500 * 1024
