"""Problem 3 is never beaten by its rivals (dansched.pipeline.options.RIVALS) at no more traffic:
each rival run on its own (the benchmark rows ``dan-memory-windows`` and ``mpas-paper``) is the
oracle, judged by the evaluator."""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers import generated

from dansched.application.baselines.dan import rival_method
from dansched.pipeline import effort_options, run_pipeline
from dansched.pipeline.options import RIVALS
from dansched.simulate import evaluate
from dansched.testing import audit_instance


def _never_slower_than_a_rival(inst, effort: str = "default"):
    res = run_pipeline(inst, effort_options(effort, problem=3))
    ev = evaluate(inst, res.plan)
    assert ev.valid
    rows = [r for r in res.report.to_dict()["candidates"] if r["source"] == "rival"]
    assert [r["detail"] for r in rows] == list(RIVALS)
    allowance = res.report.budget.allowance
    for name, row in zip(RIVALS, rows):
        rival = evaluate(inst, rival_method(name)(inst).plan)
        assert rival.valid
        assert (row["traffic"], row["makespan"]) == (rival.extra_traffic, rival.makespan), name
        if rival.extra_traffic <= allowance:
            assert ev.makespan <= rival.makespan, name


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)])
def test_dan_is_never_slower_than_a_rival_at_no_more_traffic(seed):
    """On small instances that spill (a random prefix under the tightest capacities)."""
    _never_slower_than_a_rival(audit_instance(seed, max_nodes=30))


@pytest.mark.slow
@pytest.mark.parametrize("family", ["conv", "fa", "matmul", "random"])
def test_dan_is_never_slower_than_a_rival_on_generated_graphs(family):
    """On generated graphs under tight L1 and UB (the dominance benchmark's families), at
    ``max``, which runs the rivals up to 1,000 nodes."""
    _never_slower_than_a_rival(generated(family, 1, 1), "max")


def test_rivals_stay_out_beyond_their_work_budget():
    inst = audit_instance(0, max_nodes=30)
    opts = effort_options("default", problem=3)
    small = replace(opts.effort, rival_work=inst.n * len(RIVALS) - 1)
    res = run_pipeline(inst, replace(opts, effort=small))
    assert not [r for r in res.report.to_dict()["candidates"] if r["source"] == "rival"]
