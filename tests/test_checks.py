"""Option ranges (dansched/checks.py): every numeric option is refused out of range with
one line naming it and the range, exit 2, before any work, on the command line and in
the library's constructors alike; the bounds are what the code behind them accepts."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from helpers import SHIPPED, run_cli

import dansched
from dansched import checks
from dansched.application.executor import ExecutorOptions
from dansched.application.sweep import SweepInputError, SweepOptions, parse_sets
from dansched.errors import ArgumentError, InputError

EXP = SHIPPED / "Exp.json"
BIG = str(10**26)

# (command line, the option named in the error, the range's words in the error)
REFUSED = [
    (["solve", EXP, "--seed", "2147483648"], "--seed", "from 0 to 2147483647"),
    (["solve", EXP, "--seed", "-1"], "--seed", "from 0 to 2147483647"),
    (["solve", EXP, "--time-limit", "inf"], "--time-limit", "from 0 to 1000000"),
    (["solve", EXP, "--time-limit", "nan"], "--time-limit", "from 0 to 1000000"),
    (["solve", EXP, "--time-limit", "1e308", "--exact-window", "8"], "--time-limit", "from 0 to 1000000"),
    (["solve", EXP, "--traffic-slack", "inf"], "--traffic-slack", "a number from 0 to 1000000"),
    (["solve", EXP, "--traffic-slack", "-1"], "--traffic-slack", "a number from 0 to 1000000"),
    (["solve", EXP, "--traffic-slack", "1e300"], "--traffic-slack", "a number from 0 to 1000000"),
    (["solve", EXP, "--exact-window", "100000"], "--exact-window", "from 0 to 1024"),
    (["solve", EXP, "--problem", "4"], "--problem", "from 1 to 3"),
    (["solve", EXP, "--html", "--freq-ghz", "inf"], "--freq-ghz", "from 0.001 to 1000"),
    (["solve", EXP, "--html", "--freq-ghz", "1e-320"], "--freq-ghz", "from 0.001 to 1000"),
    (["solve", EXP, "--trace", "--freq-ghz", "inf"], "--freq-ghz", "from 0.001 to 1000"),
    (["evaluate", EXP, "--schedule", EXP, "--freq-ghz", "0"], "--freq-ghz", "from 0.001 to 1000"),
    (["bound", EXP, "--time-limit", "inf"], "--time-limit", "from 0 to 1000000"),
    (["audit", EXP, "--plan", SHIPPED, "--seed", str(2**31)], "--seed", "from 0 to 2147483647"),
    (["view", EXP, "--plan", SHIPPED, "--freq-ghz", "nan"], "--freq-ghz", "from 0.001 to 1000"),
    (["trace", EXP, "--plan", SHIPPED, "--freq-ghz", "-1"], "--freq-ghz", "from 0.001 to 1000"),
    (["bench", EXP, "--methods", "base", "--time-limit", "inf"], "--time-limit", "from 0 to 1000000"),
    (["bench", EXP, "--methods", "base", "--jobs", "1000"], "--jobs", "from 1 to 64"),
    (["generate", "chain", "--scale", BIG, "--out", "{tmp}/g.json"], "--scale", "from 1 to 2**63 - 1"),
    (["generate", "chain", "--scale", "0", "--out", "{tmp}/g.json"], "--scale", "from 1 to 2**63 - 1"),
    (["generate", "chain", "--seed", BIG, "--out", "{tmp}/g.json"], "--seed", "from -2**63 to 2**63 - 1"),
    (["sweep", EXP, "--traffic-slack", "inf"], "--traffic-slack", "a number from 0 to 1000000"),
    (["sweep", EXP, "--dask-workers", str(10**20)], "--dask-workers", "from 1 to 64"),
    (["sweep", EXP, "--jobs", "0"], "--jobs", "from 1 to 64"),
    (["sweep", EXP, "--scheduler", "tcp://127.0.0.1:1", "--connect-timeout", "inf"], "--connect-timeout", "<= 3600"),
    (["sweep", EXP, "--scheduler", "tcp://127.0.0.1:1", "--handshake-timeout", "0"], "--handshake-timeout", "> 0"),
]


@pytest.mark.parametrize("args, option, words", REFUSED, ids=[" ".join(map(str, a[2:])) for a, _, _ in REFUSED])
def test_an_option_out_of_range_is_one_line_and_exit_2(args, option, words, monkeypatch, capsys, tmp_path):
    args = [str(a).format(tmp=tmp_path) for a in args]
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(monkeypatch, capsys, *args)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert option in lines[0] and words in lines[0] and "Traceback" not in err
    assert out == "" and list(tmp_path.iterdir()) == []  # refused before anything was read or written


def test_generate_refuses_a_graph_past_the_node_cap_and_names_the_largest_scale(monkeypatch, capsys, tmp_path):
    code, _, err = run_cli(monkeypatch, capsys, "generate", "matmul", "--scale", "1000", "--out", tmp_path / "g.json")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "4,000,000 nodes" in err, err
    largest = int(err.rsplit("largest scale of matmul is ", 1)[1].strip().replace(",", ""))
    # the oracle: the builder itself, at the largest scale named and one past it
    from dansched.generate import MAX_GENERATED_NODES, family_nodes, generate

    assert family_nodes("matmul", largest) <= MAX_GENERATED_NODES < family_nodes("matmul", largest + 1)
    for scale in (1, 2, 3):
        assert family_nodes("matmul", scale) == len(generate("matmul", scale, 0)[0])
    assert not (tmp_path / "g.json").exists()


@pytest.mark.parametrize("family", ["matmul", "fa", "conv", "random", "chain", "ladder"])
def test_the_node_count_of_each_family_is_what_the_builder_builds(family):
    from dansched.generate import family_nodes, generate

    for scale in (1, 2, 4):
        built = len(generate(family, scale, 0)[0])
        if family == "random":  # an upper bound: at most one new buffer per operation
            assert built <= family_nodes(family, scale)
        else:
            assert built == family_nodes(family, scale)


@pytest.mark.parametrize(
    "make, named",
    [
        (lambda: dansched.SolveOptions(seed=2**31), "SolveOptions.seed"),
        (lambda: dansched.SolveOptions(seed=-1), "SolveOptions.seed"),
        (lambda: dansched.SolveOptions(time_limit=10**400), "SolveOptions.time_limit"),
        (lambda: dansched.SolveOptions(time_limit=math.inf), "SolveOptions.time_limit"),
        (lambda: dansched.SolveOptions(traffic_slack=math.inf), "SolveOptions.traffic_slack"),
        (lambda: dansched.SolveOptions(exact_window=10**6), "SolveOptions.exact_window"),
        (lambda: dansched.DlrParams(max_tie_evaluations=0), "DlrParams.max_tie_evaluations"),
        (lambda: dansched.DlrParams(spill_plan_time_limit=10**8), "DlrParams.spill_plan_time_limit"),
        (lambda: dansched.CpeParams(local_work=2**63), "CpeParams.local_work"),
        (lambda: dansched.CoverBudget(safety_seconds=math.inf), "CoverBudget.safety_seconds"),
        (lambda: dansched.MemoryWindowParams(wall_seconds=math.inf), "MemoryWindowParams.wall_seconds"),
        (lambda: dansched.TimedParams(victim_tolerance=math.nan), "TimedParams.victim_tolerance"),
        (lambda: dansched.SearchParams(scores=(1.0, 1.0, 1.0, math.inf)), "SearchParams.scores[3]"),
        (lambda: dansched.SearchParams(decay=0.0), "SearchParams.decay"),  # the wheel's weights would all reach 0
        (lambda: dansched.SearchParams(iterations=2**64), "SearchParams.iterations"),
        (lambda: dansched.SolveOptions(search=(1,)), "SolveOptions.search"),
        (lambda: ExecutorOptions(jobs=65), "--jobs"),
        (lambda: ExecutorOptions(connect_timeout=0), "--connect-timeout"),
    ],
)
def test_the_library_refuses_the_same_values_on_construction(make, named):
    with pytest.raises(ArgumentError, match=named.replace("[", r"\[").replace("]", r"\]")) as info:
        make()
    assert isinstance(info.value, ValueError) and isinstance(info.value, InputError)
    assert len(str(info.value).splitlines()) == 1


def test_sweep_set_values_are_checked_like_hardware_file_values(tmp_path):
    """``--set UB=...`` refuses what ``[tiers] UB = ...`` in a --hw file refuses, with the
    same words (the one check: dansched.hardware.check_capacity)."""
    hw = dansched.load_hardware()
    for value in ("-1", "0", str(2**63)):
        toml = tmp_path / "hw.toml"
        toml.write_text(f"[tiers]\nUB = {value}\n")
        with pytest.raises(dansched.HardwareError) as from_file:
            dansched.load_hardware(toml)
        with pytest.raises(SweepInputError) as from_set:
            parse_sets([f"UB=1024,{value}"], hw)
        assert str(from_file.value).removeprefix(f"hardware: {toml}: ") in str(from_set.value)
    assert parse_sets(["UB=1,2"], hw) == {"UB": (1, 2)}
    with pytest.raises(SweepInputError, match="--traffic-slack must be a number from 0 to 1000000"):
        SweepOptions(traffic_slack=math.inf)


def test_the_bounds_are_what_the_code_behind_them_accepts():
    """The oracles are the libraries themselves: CP-SAT takes the largest seed and refuses
    one more; numpy's generator (the makespan search) refuses a negative seed; a timed wait
    takes the largest time limit."""
    from ortools.sat.python import cp_model

    params = cp_model.CpSolver().parameters
    params.random_seed = checks.SEED.high
    assert params.random_seed == checks.SEED.high
    with pytest.raises(TypeError):
        params.random_seed = checks.SEED.high + 1
    with pytest.raises(ValueError):
        np.random.default_rng(checks.SEED.low - 1)
    assert checks.TIME_LIMIT.high < threading.TIMEOUT_MAX and checks.TIME_LIMIT.high <= 4_294_967  # Windows' max
    assert not threading.Event().wait(timeout=min(1e-3, checks.TIME_LIMIT.high))


@pytest.mark.parametrize(
    "value, ok",
    [(0, True), (3, True), (4, False), (True, False), (np.int64(2), True), (2.0, False), ("2", False), (None, False)],
)
def test_an_integer_range_takes_integers_only(value, ok):
    """A numpy integer is kept as a Python int; None is refused unless the value is optional."""
    r = checks.Range(0, 3, integer=True)
    if ok:
        got = r.check(value, "x")
        assert got == value and type(got) is int
    else:
        with pytest.raises(ArgumentError, match="x must be an integer from 0 to 3"):
            r.check(value, "x")
    assert r.check(None, "x", optional=True) is None


# a constructor or call with one numeric argument, its name in the message, whether it takes integers only
AT_THE_DOOR = [
    (lambda v: dansched.SolveOptions(seed=v), "SolveOptions.seed", True),
    (lambda v: dansched.SolveOptions(time_limit=v), "SolveOptions.time_limit", False),
    (lambda v: dansched.SolveOptions(problem=v), "SolveOptions.problem", True),
    (lambda v: dansched.effort_options("fast", traffic_slack=v), "SolveOptions.traffic_slack", False),
    (lambda v: dansched.MpasParams(restart_work=v), "MpasParams.restart_work", True),
    (lambda v: dansched.GraphBuilder().alloc(v, "UB"), "GraphBuilder.alloc: size", True),
    (lambda v: dansched.GraphBuilder().op("ADD", "VECTOR", v, []), "GraphBuilder.op: cycles", True),
]


@pytest.mark.parametrize("value", [None, True, 2.5, math.nan, "1", np.array([1, 2])], ids=repr)
@pytest.mark.parametrize("make, name, integer", AT_THE_DOOR, ids=[n for _, n, _ in AT_THE_DOOR])
def test_none_bools_floats_nan_and_strings_are_refused_at_construction(make, name, integer, value):
    """None, a bool, a float where an integer is asked for, NaN or a string: ArgumentError
    naming the argument, when the object is made (not after the early stages ran)."""
    if isinstance(value, float) and value == 2.5 and not integer:
        assert make(value) is not None  # a number is asked for: 2.5 is one
        return
    with pytest.raises(ArgumentError, match=name.replace(".", r"\.")):
        make(value)


def test_generate_file_refuses_none_before_writing(tmp_path):
    for scale, seed in ((1, None), (None, 0), (True, 0), (1, 2.0)):
        with pytest.raises(ArgumentError, match="scale|seed"):
            dansched.generate_file("fa", scale, seed, tmp_path / "g.json")
    assert list(tmp_path.iterdir()) == []


def test_a_number_range_takes_finite_reals():
    r = checks.Range(0, 10, low_open=True)
    for bad in (0, -1, 10.5, math.inf, -math.inf, math.nan, "1", False):
        with pytest.raises(ArgumentError, match=r"x must be a number > 0 and <= 10, got"):
            r.check(bad, "x")
    assert r.check(np.float64(2.5), "x") == 2.5 and r.check(10, "x") == 10
    with pytest.raises(ArgumentError, match=r"got 100000000000\.\.\. \(401 digits\)"):
        checks.TIME_LIMIT.check(10**400, "t")  # a huge value is shown short, so the message stays one line
