"""Problem 3 as one search (dansched.pipeline.problem3): one traffic budget, candidates from
named sources, one screen each, the full Stage 3 on the best few, the fastest kept."""

from __future__ import annotations

import pytest
from helpers import SHIPPED
from hypothesis import given, settings
from hypothesis import strategies as st

from dansched.budget import TrafficBudget
from dansched.hardware import load_hardware
from dansched.instance import load_instance
from dansched.params import EffortParams, MemoryWindowParams
from dansched.pipeline import SolveOptions, effort_options, run_pipeline
from dansched.pipeline.problem3.sources.candidates import SOURCES, SourceContext
from dansched.pipeline.run import _stage1, _stage2
from dansched.simulate import evaluate

SLACKS = (0, 12.5, 50)


def oracle_allowance(traffic: int, slack: str) -> int:
    """floor(traffic * (100 + slack) / 100) in integers, the slack given as a decimal string."""
    whole, _, frac = slack.partition(".")
    scale = 10 ** len(frac)
    num = int(whole or "0") * scale + int(frac or "0")
    return traffic * (100 * scale + num) // (100 * scale)


@settings(max_examples=300, deadline=None)
@given(
    traffic=st.integers(0, 10**7),
    whole=st.integers(0, 300),
    frac=st.text("0123456789", max_size=3),
    delta=st.integers(-3, 3),
)
def test_budget_admits_exactly_the_traffic_within_the_allowance(traffic, whole, frac, delta):
    text = f"{whole}.{frac}" if frac else str(whole)
    want = oracle_allowance(traffic, text)
    for slack in (text, float(text)) + ((whole,) if not frac.strip("0") else ()):
        budget = TrafficBudget.of(traffic, slack)
        assert budget.allowance == want, slack
        assert budget.admits(want + delta) == (delta <= 0)


def test_budget_of_the_known_disagreement():
    """At traffic 25 and slack 16, 25 * 1.16 is 28.999... in floating point: the exact
    allowance is 29, so a plan of traffic 29 is admitted."""
    assert TrafficBudget.of(25, 16).allowance == 29 and TrafficBudget.of(25, 16.0).admits(29)
    with pytest.raises(ValueError, match="finite number >= 0"):
        TrafficBudget.of(25, float("nan"))


@pytest.fixture(scope="module")
def tight(tmp_path_factory):
    """conv_s2 with L1 cut to 1024 units: Stage 2 spills, candidates differ in traffic."""
    toml = tmp_path_factory.mktemp("hw") / "tight.toml"
    toml.write_text("[tiers]\nL1 = 1024\n")
    return load_instance(SHIPPED / "conv_s2.json", load_hardware(toml))


ALONE = EffortParams(rivals=())  # the loop alone: the rivals are tests/pipeline/problem3/test_rivals.py's


@pytest.fixture(scope="module")
def solved(tight):
    return {slack: run_pipeline(tight, SolveOptions(problem=3, traffic_slack=slack, effort=ALONE)) for slack in SLACKS}


@pytest.mark.parametrize("slack", SLACKS)
def test_every_path_screens_exactly_the_candidates_within_the_budget(solved, slack):
    res = solved[slack]
    report = res.report.to_dict()
    base = report["stages"]["dlr"]["extra_traffic"]
    allowance = oracle_allowance(base, str(slack))
    assert report["traffic_budget"] == {"base": base, "slack_percent": slack, "allowance": allowance}
    rows = report["candidates"]
    assert rows[0]["traffic"] == base and rows[0]["source"] in ("dlr", "order-search")
    for row in rows:
        if row.get("same_as") is None:
            assert (row["screened"] is not None) == (row["traffic"] <= allowance), row
    assert res.evaluation.extra_traffic <= allowance


def test_the_polish_keeps_the_traffic_and_never_slows_the_kept_plan(tight, solved):
    """Step 6 against the same solve without it: the polished plan is valid, carries the
    same traffic and spills, ends no later, and the report says how many windows ran."""
    res = solved[0]
    bare = run_pipeline(tight, SolveOptions(problem=3, polish=MemoryWindowParams(windows=0), effort=ALONE))
    ev, ev0 = evaluate(tight, res.plan), evaluate(tight, bare.plan)
    assert ev.valid and ev0.valid
    assert (ev.extra_traffic, ev.spill_count) == (ev0.extra_traffic, ev0.spill_count)
    assert ev.makespan <= ev0.makespan
    windows = res.report.to_dict()["stages"]["cpe"]["exact_windows"]
    assert windows["mode"] == "memory" and 1 <= windows["windows"] <= SolveOptions().polish.windows
    assert "exact_windows" not in bare.report.to_dict()["stages"]["cpe"]


@pytest.mark.parametrize("slack", SLACKS)
def test_the_fastest_finalist_is_kept_and_is_the_final_plan(tight, solved, slack):
    res = solved[slack]
    ev = evaluate(tight, res.plan)
    assert ev.valid and ev.makespan == res.evaluation.makespan
    rows = res.report.to_dict()["candidates"]
    finalists = [r for r in rows if r["makespan"] is not None]
    kept = [r for r in rows if r["kept"]]
    assert len(kept) == 1 and kept[0] in finalists
    assert kept[0]["makespan"] == ev.makespan == min(r["makespan"] for r in finalists)
    assert kept[0]["traffic"] == ev.extra_traffic
    assert rows[0] in finalists  # the problem-2 plan always gets the full Stage 3
    assert len(finalists) == res.report.cpe.runs <= _finalist_runs(tight) + len(SolveOptions().search)
    # a finalist's full Stage 3 never ends above its screen (Stage 3 starts from that order)
    assert all(r["makespan"] <= r["screened"] for r in finalists)


def _leaders_then_rest(rows, indices):
    """The candidates ``indices`` in the order the docs give finalists: the best screened of
    each source in the order of their screens, then the best screened of the rest."""
    others = sorted((rows[i]["screened"], rows[i]["traffic"], i) for i in indices)
    leaders, seen = [], set()
    for key in others:
        if rows[key[2]]["source"] not in seen:
            seen.add(rows[key[2]]["source"])
            leaders.append(key)
    return [i for *_, i in sorted(leaders) + [k for k in others if k not in leaders]]


@pytest.mark.parametrize("slack", SLACKS)
def test_finalists_are_the_problem2_plan_then_each_sources_best_screened(tight, solved, slack):
    """At the problem-2 plan's traffic: that plan, then the leaders of the admitted
    candidates up to the finalist runs; at each higher allowance (the traffic of each
    admitted candidate, up to the budget), ``level_runs`` of the candidates it newly admits
    that screen at most ``level_margin`` above the plan kept below, chosen alike (docs:
    problem 3's steps 4-5; the plan kept below is the fastest of the allowances planned at
    before, walk steps at the same traffic included)."""
    report = solved[slack].report.to_dict()
    rows = report["candidates"]
    base, top = report["traffic_budget"]["base"], report["traffic_budget"]["allowance"]
    derived = ("makespan-search", "gap-hiding walk")
    stage2 = [i for i, r in enumerate(rows) if r["source"] not in derived]
    screened = [i for i in stage2 if i and rows[i]["screened"] is not None]
    levels = sorted({base} | {rows[i]["traffic"] for i in screened if rows[i]["traffic"] <= top})
    planned = report["allowances"]
    effort = EffortParams()

    want: set[int] = set()
    below = -1
    for k, level in enumerate(levels):
        fresh = [i for i in screened if below < rows[i]["traffic"] <= level]
        if k == 0:
            want |= set(_leaders_then_rest(rows, fresh)[: _finalist_runs(tight) - 1])
        else:
            before = [
                a for a in planned if a["allowance"] < level or (a["allowance"] == level and a["outcome"] == "walked")
            ]
            kept = min(a["makespan"] for a in before)
            worth = [i for i in fresh if rows[i]["screened"] < kept * (1 + effort.level_margin)]
            want |= set(_leaders_then_rest(rows, worth)[: effort.level_runs])
        below = level
    got = {i for i in stage2 if i and rows[i]["makespan"] is not None}
    assert got == want


def _finalist_runs(inst) -> int:
    """The finalists the default effort gives a graph at most (EffortParams: ``stage3_runs``
    less one per search round, or ``stage3_work`` node-visits of them on a small graph)."""
    opts = SolveOptions()
    return max(opts.effort.stage3_runs - len(opts.search), opts.effort.stage3_work // inst.n)


def test_identical_plans_are_screened_once(solved):
    for res in solved.values():
        rows = res.report.to_dict()["candidates"]
        for i, row in enumerate(rows):
            if row.get("same_as") is not None:
                first = rows[row["same_as"]]
                assert row["same_as"] < i and first.get("same_as") is None and row["traffic"] == first["traffic"]
                assert row["screened"] is None and row["makespan"] is None


def test_every_source_runs_by_default_and_an_unknown_one_is_refused():
    assert SolveOptions().sources == tuple(SOURCES) == effort_options("max").sources
    assert effort_options("fast").sources == ("dlr",)
    picked = SolveOptions(effort=EffortParams(sources=("time-driven", "dlr")))
    assert picked.sources == ("dlr", "time-driven")  # the registry's order
    with pytest.raises(ValueError, match="unknown source 'oracle'"):
        SolveOptions(effort=EffortParams(sources=("dlr", "oracle")))


def _context(inst, **opts):
    o = SolveOptions(problem=3, **opts)
    order1, _, _ = _stage1(inst, o)
    s2 = _stage2(inst, order1, o, lambda _m: None)
    budget = TrafficBudget.of(s2.evaluation.extra_traffic, 1000)
    return SourceContext(inst, order1, s2, budget, o.problem3)


def test_each_source_yields_evaluator_accepted_plans_named_by_what_made_them(tight):
    ctx = _context(tight)
    for name, source in SOURCES.items():
        for cand in source(ctx):
            ctx.made.append(cand)
            ev = evaluate(tight, cand.plan)
            assert ev.valid and ev.extra_traffic == cand.traffic and ev.makespan == cand.evaluation.makespan
            assert cand.source == name
    by = {}
    for c in ctx.made:
        by.setdefault(c.source, []).append(c.detail)
    assert by["victim-rules"] == list(SolveOptions().effort.victim_rules)
    assert by["algorithm-1-order"] == ["mpas-paper"]
    assert by["dlr-on-time-driven"] == [
        min((c for c in ctx.made if c.source == "time-driven"), key=lambda c: c.evaluation.makespan).detail
    ]
    assert len(by["dlr"]) <= SolveOptions().effort.dlr_variants


def test_an_ablation_keeps_its_own_victim_rule(tight):
    ctx = _context(tight, victim="lru")
    assert list(SOURCES["victim-rules"](ctx)) == [] and list(SOURCES["time-driven"](ctx)) == []
    assert [c.detail for c in SOURCES["algorithm-1-order"](ctx)] == ["mpas-paper"]
    paper = _context(tight, variant="mpas-paper")
    assert list(SOURCES["algorithm-1-order"](paper)) == []


def test_effort_fast_runs_each_stage_once(tight):
    res = run_pipeline(tight, effort_options("fast", problem=3))
    report = res.report.to_dict()
    assert evaluate(tight, res.plan).valid
    assert len(report["candidates"]) == 1 and report["candidates"][0]["kept"]
    assert report["stages"]["cpe"]["runs"] == 1 and report["search"] == []
    assert len(report["stages"].get("relayout", {}).get("steps", [])) <= effort_options("fast").effort.stage3_rounds
    assert report["effort"] == "fast" and report["stages"]["mpas"]["variant"].startswith("mpas[")
    dlr = report["stages"]["dlr"]
    assert dlr["placement"] in ("bestfit-greedy", "bestfit-window")
    assert "exact" not in dlr.get("order_search", {}) and "lns" not in dlr.get("order_search", {})


@pytest.mark.slow
@pytest.mark.parametrize("slack", [0, 20])
def test_official_flash_attention_stays_within_the_budget(slack):
    from helpers import official_path

    inst = load_instance(official_path("FlashAttention_Case0"))
    p2 = run_pipeline(inst, SolveOptions(problem=2)).evaluation.extra_traffic
    res = run_pipeline(inst, SolveOptions(problem=3, traffic_slack=slack))
    ev = evaluate(inst, res.plan)
    assert ev.valid and ev.makespan == res.evaluation.makespan
    assert ev.extra_traffic <= oracle_allowance(p2, str(slack))


def test_dlr_on_the_time_driven_order_skips_dlr_only_when_no_plan_of_that_order_fits():
    """The dlr-on-time-driven source: below the capacity-cover bound of the (tightened)
    order of the time-driven candidate, no candidate and no DLR run; at DLR's own traffic on
    that order, DLR's plan comes back, valid, with that traffic."""
    from helpers import generated, stage2_reference

    from dansched.models.bounds.traffic import traffic_lower_bound
    from dansched.params import DEFAULT_TRIALS
    from dansched.pipeline.problem3.sources.candidates import Candidate
    from dansched.pipeline.problem3.sources.timed import timed_schedule
    from dansched.stages.dlr.reorder import tighten_lifetimes
    from dansched.stages.dlr.stage import dlr_plan

    covers = []
    for family, scale, seed in (("matmul", 2, 0), ("conv", 2, 1), ("random", 2, 3)):
        inst = generated(family, scale, seed)
        s2, reference = stage2_reference(inst)
        plan = timed_schedule(inst, reference, DEFAULT_TRIALS[0])
        order = [v for v in plan.order if v < inst.n]
        cover = traffic_lower_bound(inst, tighten_lifetimes(inst, order)).value
        dlr = dlr_plan(inst, order, other_orders=False).evaluation.extra_traffic
        assert cover <= dlr  # the bound is sound for DLR's own plan of that order

        def made(allowance: int, inst=inst, reference=reference, s2=s2, plan=plan) -> list[Candidate]:
            ctx = SourceContext(inst, reference, s2, TrafficBudget(allowance), SolveOptions().problem3)
            ctx.made.append(Candidate(plan, evaluate(inst, plan), "time-driven", "t"))
            return list(SOURCES["dlr-on-time-driven"](ctx))

        (got,) = made(dlr)
        assert evaluate(inst, got.plan).valid and got.traffic == dlr and got.detail == "t"
        if cover > 0:
            assert made(cover - 1) == []
        covers.append(cover)
    assert max(covers) > 0  # the tight tiers make at least one order spill


def test_the_memory_windows_mode_is_decided_once_in_the_problem3_params():
    """The polish runs on the kept plan, or (``--exact-window-mode memory``) after every
    Stage-3 run instead, or not at all: exactly one of the two places holds the windows."""
    kept = effort_options("default").problem3
    assert kept.polish == MemoryWindowParams(30, wall_seconds=600.0) and kept.stage3.memory_windows is None
    every = effort_options("default", exact_window=16, exact_window_mode="memory", time_limit=10).problem3
    assert every.polish is None and every.stage3.memory_windows == MemoryWindowParams(
        5, 16, after_every_run=True, wall_seconds=10.0
    )
    assert every.stage3.exact_window == 16 and every.stage3.time_limit == 10
    off = SolveOptions(polish=MemoryWindowParams(0, after_every_run=True)).problem3
    assert off.polish is None and off.stage3.memory_windows is None
    fast = effort_options("fast", seed=7, traffic_slack=5).problem3
    assert (fast.seed, fast.stage3.seed, fast.traffic_slack, fast.sources, fast.search) == (7, 7, 5, ("dlr",), ())
    assert fast.stage3.rounds == effort_options("fast").effort.stage3_rounds == 2
