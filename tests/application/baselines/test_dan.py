"""The DAN-Scheduler rows and ablations (dansched.application.baselines.dan). On Exp, whose makespan is
60 by hand (docs/rules.md, section 9: COPY_IN 15, EXP 30, COPY_OUT 15 in a chain), every row's
plan passes the shared evaluator at 60 and reports, stage by stage, the figures the evaluator
measures; each ablation runs the pipeline with exactly what it names changed."""

from __future__ import annotations

import pytest
from helpers import SHIPPED

from dansched.application.baselines import dan
from dansched.instance import load_instance
from dansched.pipeline.problem3.sources.candidates import SOURCES
from dansched.simulate import evaluate

ROWS = ("dan", "dan_no_cpe", "lru", "mpas_paper", "dan_memory_windows", "dan_no_time_driven", "dan_no_other_rules")


@pytest.fixture(scope="module")
def exp():
    return load_instance(SHIPPED / "Exp.json")


@pytest.mark.parametrize("row", ROWS)
def test_every_row_on_exp_reaches_the_hand_computed_makespan(exp, row):
    got = getattr(dan, row)(exp, 10.0)
    ev = evaluate(exp, got.plan)
    assert ev.valid and ev.makespan == 60
    stages = got.info["stages"]
    last = stages["cpe"] if row != "dan_no_cpe" else stages["dlr"]
    assert (last["makespan"], last["extra_traffic"], last["spill_count"]) == (60, ev.extra_traffic, ev.spill_count)
    assert ("cpe" in stages) == (row != "dan_no_cpe")
    assert set(got.info["stage_seconds"]) == set(stages)
    assert stages["dlr"]["victim_rule"] == ("lru" if row == "lru" else "score")
    assert (stages["mpas"]["variant"] == "mpas-paper") == (row == "mpas_paper")


def test_each_ablation_changes_what_it_names(exp, monkeypatch):
    seen = {}
    real = dan.run_pipeline

    def spy(inst, opts):
        seen[current] = opts
        return real(inst, opts)

    monkeypatch.setattr(dan, "run_pipeline", spy)
    for current in ROWS:
        getattr(dan, current)(exp, 7.0)
    base = seen["dan"]
    assert (base.problem, base.effort_name, base.time_limit, base.sources) == (3, "default", 7.0, tuple(SOURCES))
    assert seen["dan_no_cpe"].problem == 2 and seen["lru"].victim == "lru"
    assert seen["mpas_paper"].variant == "mpas-paper"
    windows = seen["dan_memory_windows"]
    assert windows.exact_window == 64 and windows.polish.after_every_run
    # the ablations and the rivals run no rival of their own; dan runs both rivals
    assert base.effort.rivals == ("memory-windows", "algorithm-1")
    assert all(opts.effort.rivals == () for row, opts in seen.items() if row != "dan")
    assert seen["dan_no_time_driven"].sources == tuple(s for s in SOURCES if "time-driven" not in s)
    assert seen["dan_no_other_rules"].sources == tuple(
        s for s in SOURCES if s not in ("victim-rules", "algorithm-1-order")
    )
    for row, opts in seen.items():  # nothing else moves
        changed = {
            f
            for f in ("problem", "victim", "variant", "exact_window", "polish", "effort")
            if getattr(opts, f) != getattr(base, f)
        }
        expected = {
            "dan": set(),
            "dan_no_cpe": {"problem", "effort"},
            "lru": {"victim", "effort"},
            "mpas_paper": {"variant", "effort"},
            "dan_memory_windows": {"exact_window", "polish", "effort"},
            "dan_no_time_driven": {"effort"},
            "dan_no_other_rules": {"effort"},
        }[row]
        assert changed == expected, row
