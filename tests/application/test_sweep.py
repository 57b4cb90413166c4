"""``dansched sweep``: grid, rows, resume, failing cells, bad input, and the
same rows from every executor (local pool, local Dask cluster, a Dask worker killed
mid-sweep)."""

from __future__ import annotations

import csv
import json
import os
import signal
import sys

import pytest
from helpers import SHIPPED

from dansched.application import executor as E
from dansched.application import sweep as S
from dansched.application.report.sweep import tier_figure
from dansched.cli import main
from dansched.errors import Interrupted
from dansched.generate import generate
from dansched.hardware import load_hardware
from dansched.instance import load_instance
from dansched.pipeline import SolveOptions, run_pipeline

SETS = ["L1=100,300,4096", "UB=300,1024"]  # random scale 1 has an L1 buffer of 219: L1=100 cannot hold it


@pytest.fixture(scope="module")
def instances(tmp_path_factory):
    """Exp (docs/rules.md, section 9) and a 44-node generated random graph."""
    d = tmp_path_factory.mktemp("inst")
    nodes, edges = generate("random", 1, 0)
    (d / "rand1.json").write_text(json.dumps({"Nodes": nodes, "Edges": edges}))
    (d / "Exp.json").write_bytes((SHIPPED / "Exp.json").read_bytes())
    return [d / "rand1.json", d / "Exp.json"]


@pytest.fixture(scope="module")
def inline(instances, tmp_path_factory):
    """The reference: every cell run in this process."""
    out = tmp_path_factory.mktemp("inline")
    return S.sweep(instances, SETS, out=out, executor=E.ExecutorOptions(jobs=1)), out


def _stable(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def _jsonl(out):
    return [json.loads(line) for line in (out / "sweep.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_rows_match_a_direct_solve_and_failures_are_recorded(inline, instances):
    result, out = inline
    assert len(result.rows) == 2 * 3 * 2 and result.ran == 12 and not result.lost
    rows = {(r["instance"], r["capacity"]["L1"], r["capacity"]["UB"]): r for r in result.rows}
    hw = load_hardware()
    for (name, l1, _ub), r in rows.items():
        assert set(r["capacity"]) == set(hw.tiers) and r["problem"] == 3 and r["seconds"] is not None
        assert r["instance_hash"] == S.content_hash(next(p for p in instances if p.stem == name))
        if name == "rand1" and l1 == 100:  # the instance does not fit the hardware: a recorded failure
            assert not r["valid"] and "larger than tier L1 (100)" in r["error"]
            continue
        assert r["valid"] and r["error"] is None
    # one valid cell against a direct solve on the same hardware point
    r = rows[("rand1", 300, 300)]
    point = load_hardware()
    table = point.to_dict()
    table["tiers"].update(L1=300, UB=300)
    from dansched.hardware import hardware_from_table

    inst = load_instance(instances[0], hardware_from_table(table))
    ev = run_pipeline(inst, SolveOptions(problem=3)).evaluation
    assert ev.valid
    assert (r["max_v_stay"], r["extra_traffic"], r["spill_count"], r["makespan"]) == (
        ev.max_v_stay,
        ev.extra_traffic,
        ev.spill_count,
        ev.makespan,
    )
    # the files
    assert len(_jsonl(out)) == 12
    with open(out / "sweep.csv") as fh:
        table_rows = list(csv.DictReader(fh))
    assert [t["instance"] for t in table_rows] == ["rand1"] * 6 + ["Exp"] * 6
    assert table_rows[0]["L1"] == "100" and table_rows[0]["valid"] == "false"
    md = (out / "sweep.md").read_text()
    assert "Smallest capacity from which extra traffic is 0" in md and "Failed cells" in md
    pytest.importorskip("matplotlib")
    assert (out / "sweep_L1.png").stat().st_size > 0 and (out / "sweep_UB.png").stat().st_size > 0


def test_a_point_the_instance_does_not_fit_is_a_failed_cell(instances, tmp_path):
    res = S.sweep(instances[1:], ["UB=4,1024"], out=tmp_path, executor=E.ExecutorOptions(jobs=1))
    by_ub = {r["capacity"]["UB"]: r for r in res.rows}
    assert not by_ub[4]["valid"] and "larger than tier UB (4)" in by_ub[4]["error"]
    assert by_ub[1024]["valid"] and by_ub[1024]["makespan"] == 60  # docs/rules.md, section 9


def test_resume_skips_recorded_cells(instances, tmp_path):
    ex = E.ExecutorOptions(jobs=1)
    first = S.sweep(instances[1:], ["UB=10,1024"], out=tmp_path, executor=ex)
    assert (first.ran, first.skipped) == (2, 0)
    again = S.sweep(instances[1:], ["UB=10,1024"], out=tmp_path, executor=ex)
    assert (again.ran, again.skipped) == (0, 2) and _stable(again.rows) == _stable(first.rows)
    assert len(_jsonl(tmp_path)) == 2
    # a line cut short by a crash is ignored (its cell runs again) and does not glue onto the next row
    with open(tmp_path / "sweep.jsonl", "a") as fh:
        fh.write('{"instance": "Exp", "instance_h')
    more = S.sweep(instances[1:], ["UB=10,16,1024"], out=tmp_path, executor=ex)
    assert (more.ran, more.skipped) == (1, 2)
    assert [r["capacity"]["UB"] for r in more.rows] == [10, 16, 1024]
    assert len(S.read_done(tmp_path / "sweep.jsonl")) == 3
    # other options are other cells
    slack = S.sweep(instances[1:], ["UB=10"], traffic_slack=5.0, out=tmp_path, executor=ex)
    assert slack.ran == 1


@pytest.mark.slow
def test_local_pool_gives_the_inline_rows(inline, instances, tmp_path):
    res = S.sweep(instances, SETS, out=tmp_path, executor=E.ExecutorOptions(jobs=2))
    assert _stable(res.rows) == _stable(inline[0].rows)


def _cli(monkeypatch, capsys, *args):
    """``dansched sweep ARGS`` through the console entry point, in-process: (exit status,
    stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["dansched", "sweep", *map(str, args)])
    with pytest.raises(SystemExit) as info:
        main()
    out, err = capsys.readouterr()
    return info.value.code or 0, out.replace("\n  ", " "), err  # a summary wrapped at 80 columns: one line again


@pytest.mark.parametrize(
    "args, says",
    [
        (["--set", "L9=1,2"], "unknown tier 'L9'"),
        (["--set", "UBB=512"], "--set 'UBB=512': unknown tier 'UBB': did you mean UB?"),
        (["--set", "L1=1024,big"], "'big' is not an integer"),
        (["--set", "L1=1.5"], "is not an integer"),
        (["--set", "L1"], "expected TIER=V1,V2"),
        (["--set", "L1=1", "--set", "L1=2"], "twice"),
        (["--set", "UB=0,4,1024"], "--set 'UB=0,4,1024': capacity of tier UB must be a positive integer, got 0"),
        (["--scheduler", "tcp://127.0.0.1:1", "--dask-workers", "2"], "not both"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(args, says, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    code, _, err = _cli(monkeypatch, capsys, SHIPPED / "Exp.json", *args, "--out", out)
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_no_instances_found_exits_2(tmp_path, monkeypatch, capsys):
    (tmp_path / "empty").mkdir()
    for pattern in (tmp_path / "empty", tmp_path / "*.json", tmp_path / "missing.json"):
        code, _, err = _cli(monkeypatch, capsys, pattern, "--out", tmp_path / "out")
        assert code == 2 and len(err.strip().splitlines()) == 1 and "no" in err, err
    assert not (tmp_path / "out").exists()


def test_cli_runs_a_sweep_and_resumes(instances, tmp_path, monkeypatch, capsys):
    """The summary is a result: the table of cells and the summary line on stdout;
    stderr holds progress alone (none here: a short run, the heartbeat every 5 s)."""
    args = (instances[1], "--set", "UB=10,1024", "--jobs", "1", "--out", tmp_path)
    code, out, err = _cli(monkeypatch, capsys, *args)
    assert code == 0 and err == "", err
    lines = out.splitlines()
    assert lines[0].split() == ["instance", "UB", "maxV_stay", "traffic", "spills", "makespan"]
    rows = [line.split() for line in lines[2:-1]]
    assert [r[:2] for r in rows] == [[instances[1].stem, "10"], [instances[1].stem, "1,024"]]
    assert "2 cells (0 already done, 2 run, 0 failed)" in lines[-1]
    code, out, err = _cli(monkeypatch, capsys, *args)
    assert code == 0 and err == "" and "2 cells (2 already done, 0 run" in out.splitlines()[-1]


def test_dask_options_without_dask_say_how_to_install(monkeypatch, instances, tmp_path):
    monkeypatch.setattr(E, "dask_available", lambda: False)
    for ex in (E.ExecutorOptions(dask_workers=2), E.ExecutorOptions(scheduler="tcp://127.0.0.1:8786")):
        with pytest.raises(S.SweepInputError, match=r"pip install -e '\.\[dist\]'"):
            S.sweep(instances, SETS, out=tmp_path / "out", executor=ex)
    assert not (tmp_path / "out").exists()


# ---- Dask ---------------------------------------------------------------------------------


def _need_dask():
    if not E.dask_available():
        pytest.skip("dask[distributed] is not installed (pip install -e '.[dist]')")


@pytest.mark.slow
def test_local_dask_cluster_gives_the_inline_rows(inline, instances, tmp_path):
    _need_dask()
    res = S.sweep(instances, SETS, out=tmp_path, executor=E.ExecutorOptions(dask_workers=2))
    assert not res.lost and _stable(res.rows) == _stable(inline[0].rows)


@pytest.mark.slow
def test_killed_dask_worker_loses_no_cell(inline, instances, tmp_path):
    _need_dask()
    import logging

    from distributed import Client, LocalCluster

    killed: list[str] = []
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.CRITICAL,
        ) as cluster,
        Client(cluster) as client,
    ):
        pids = client.run(os.getpid)

        def kill_a_busy_worker(_row):
            if killed:
                return
            busy = [(w, keys) for w, keys in client.processing().items() if keys]
            if busy:  # a worker holding a cell right now: SIGKILL it (its nanny starts a new one)
                w, keys = busy[0]
                os.kill(pids[w], signal.SIGKILL)
                killed.extend(str(k) for k in keys)

        res = S.sweep(
            instances,
            SETS,
            out=tmp_path,
            executor=E.ExecutorOptions(scheduler=cluster.scheduler_address),
            on_row=kill_a_busy_worker,
        )
    assert killed, "no worker was busy when the first cell finished"
    assert not res.lost and res.ran == 12
    assert _stable(res.rows) == _stable(inline[0].rows)
    assert len(_jsonl(tmp_path)) == 12


@pytest.mark.slow
def test_interrupt_keeps_finished_cells(inline, instances, tmp_path):
    def stop(_row):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        S.sweep(instances, SETS, out=tmp_path, executor=E.ExecutorOptions(jobs=2), on_row=stop)
    assert len(_jsonl(tmp_path)) == 1  # the row written before the interrupt
    rest = S.sweep(instances, SETS, out=tmp_path, executor=E.ExecutorOptions(jobs=2))
    assert (rest.skipped, rest.ran) == (1, 11) and _stable(rest.rows) == _stable(inline[0].rows)


def test_cli_interrupt_exits_130_with_one_line(monkeypatch, capsys, tmp_path):
    def interrupted(*_a, **_k):  # what the command line's signal policy raises at a Ctrl-C
        raise Interrupted(signal.SIGINT)

    monkeypatch.setattr(S, "sweep", interrupted)
    code, _, err = _cli(monkeypatch, capsys, SHIPPED / "Exp.json", "--out", tmp_path)
    assert code == 130 and err == "dansched: interrupted (nothing written)\n", err


def test_the_plot_of_all_zero_traffic_has_a_sane_axis_and_every_line_shows():
    """Two instances with the same figures at every point (traffic 0 everywhere): the
    traffic axis runs 0..1, not -0.04..0.04, and the two lines differ in marker, size
    and dashes, so the second does not hide the first."""
    pytest.importorskip("matplotlib")
    rows = [
        {"instance": inst, "problem": 3, "valid": True, "capacity": {"UB": ub}, "makespan": 60, "extra_traffic": 0}
        for inst in ("a", "b")
        for ub in (512, 1024)
    ]
    makespan_ax, traffic_ax = tier_figure(rows, "UB").axes
    assert traffic_ax.get_ylim() == (0.0, 1.0)
    assert makespan_ax.get_ylim()[0] == 0.0 and makespan_ax.get_ylim()[1] > 60
    a, b = traffic_ax.get_lines()
    assert list(a.get_ydata()) == list(b.get_ydata()) == [0, 0]
    assert (a.get_marker(), a.get_linestyle()) != (b.get_marker(), b.get_linestyle())
    assert a.get_markersize() > b.get_markersize()


# ---- resume: transient failures run again ------------------------------------------------


def test_resume_retries_a_cell_that_ran_out_of_memory_but_not_a_deterministic_failure(instances, tmp_path, monkeypatch):
    """A cell that failed for a reason that may pass next time (out of memory here) runs
    again on resume; one that failed on its input (UB=4 cannot hold Exp's buffers) does not,
    unless --retry-failed asks for every failed cell."""
    ex = E.ExecutorOptions(jobs=1)
    real = S.run_pipeline

    def out_of_memory(inst, opts):
        if inst.hw.capacity["UB"] == 1024:
            raise MemoryError("Unable to allocate 3.07 GiB")
        return real(inst, opts)

    monkeypatch.setattr(S, "run_pipeline", out_of_memory)
    first = S.sweep(instances[1:], ["UB=4,1024"], out=tmp_path, executor=ex)
    by_ub = {r["capacity"]["UB"]: r for r in first.rows}
    assert by_ub[1024]["transient"] and "out of memory" in by_ub[1024]["error"]
    assert not by_ub[4]["valid"] and not by_ub[4]["transient"]
    monkeypatch.setattr(S, "run_pipeline", real)
    again = S.sweep(instances[1:], ["UB=4,1024"], out=tmp_path, executor=ex)
    assert (again.ran, again.retried, again.skipped) == (1, 1, 1)
    assert {r["capacity"]["UB"]: r["valid"] for r in again.rows} == {4: False, 1024: True}
    assert S.sweep(instances[1:], ["UB=4,1024"], out=tmp_path, executor=ex).ran == 0
    every = S.sweep(instances[1:], ["UB=4,1024"], out=tmp_path, executor=ex, retry_failed=True)
    assert (every.ran, every.retried) == (1, 1) and len(_jsonl(tmp_path)) == 4


def test_a_row_recorded_before_rows_said_transient_is_read_from_its_error():
    row = {"valid": False, "error": "MemoryError: Unable to allocate 3.07 EiB"}
    assert S.is_transient(row) and S.is_transient({**row, "error": "OSError: [Errno 28] No space left on device"})
    assert not S.is_transient({**row, "error": "buffer 3: larger than tier UB (4)"})
    assert not S.is_transient({**row, "error": "KeyError: 5"}) and not S.is_transient({**row, "valid": True})


def test_cli_resume_says_how_many_cells_it_retried(instances, tmp_path, monkeypatch, capsys):
    args = (instances[1], "--set", "UB=1024", "--jobs", "1", "--out", tmp_path)
    code, _, _ = _cli(monkeypatch, capsys, *args)
    rows = _jsonl(tmp_path)
    rows[0].update(valid=False, error="MemoryError: Unable to allocate 3.07 GiB", transient=True)
    (tmp_path / "sweep.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, _ = _cli(monkeypatch, capsys, *args)
    assert code == 0 and "1 cells (0 already done, 1 run (1 retried), 0 failed)" in out, out


def test_an_import_that_failed_for_want_of_memory_is_transient_and_a_missing_module_is_not():
    mapped = ImportError("/usr/lib/x.so: failed to map segment from shared object")
    assert S.transient_error(mapped) and S.transient_error(SystemError("returned NULL without setting an exception"))
    assert not S.transient_error(ImportError("No module named 'nope'")) and not S.transient_error(KeyError(5))
