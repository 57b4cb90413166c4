"""The makespan search says how many moves it has made of its budget, and each start of
the search has its own label (docs/guide.md, *Progress*): a fake progress sink records
the messages of problem 3 on a small graph (no clock involved)."""

from __future__ import annotations

import re
from dataclasses import replace

from helpers import SHIPPED

from dansched.application.report.progress import same_step
from dansched.instance import load_instance
from dansched.pipeline import effort_options, run_pipeline

MOVES = re.compile(r"^(?P<label>.*Makespan search[^:]*): (?P<done>[\d,]+)/(?P<budget>[\d,]+) moves$")


def test_each_start_has_its_label_and_counts_its_moves():
    inst = load_instance(SHIPPED / "Exp.json")
    opts = effort_options("default", problem=3)
    opts = replace(opts, effort=replace(opts.effort, rivals=()))  # the loop alone
    said: list[str] = []
    run_pipeline(inst, opts, progress=said.append)
    counts: dict[str, list[int]] = {}
    budgets: dict[str, int] = {}
    for m in said:
        got = MOVES.match(m)
        if got:
            counts.setdefault(got["label"], []).append(int(got["done"].replace(",", "")))
            budgets[got["label"]] = int(got["budget"].replace(",", ""))
    assert counts, said
    labels = list(counts)
    assert len(labels) == len(set(labels))
    if len(labels) > 1:  # two starts: "start 1 of 2", "start 2 of 2", never one label twice
        assert [re.search(r"start (\d+) of (\d+)", label).groups() for label in labels] == [
            (str(k), str(len(labels))) for k in range(1, len(labels) + 1)
        ]
    for label, done in counts.items():
        assert done[0] == 0 and done == sorted(done), label  # counted up from 0 ...
        assert done[-1] == budgets[label] > 0, label  # ... to the budget
        assert len(set(done)) == len(done), label  # one start's count is never reset
    # a new count continues its step (its timer kept); a new start is a new step
    assert same_step(f"{labels[0]}: 10/200 moves", f"{labels[0]}: 20/200 moves")
    if len(labels) > 1:
        assert not same_step(f"{labels[0]}: 200/200 moves", f"{labels[1]}: 0/200 moves")
