"""Contest plan files (docs/rules.md, section 5): exact format, parsing errors, and write -> read -> evaluate round trips."""

from __future__ import annotations

import contextlib
import os
import threading

import pytest
from helpers import SHIPPED, SPILL_TWICE_PLAN, official_path, run_cli, spill_twice_instance

from dansched.application.judge import evaluate_files
from dansched.errors import PlanFormatError
from dansched.generate import generate
from dansched.hardware import load_hardware
from dansched.instance import instance_from_records, load_instance
from dansched.plan import (
    Plan,
    contest_paths,
    plan_from_indices,
    plan_limits,
    read_memory,
    read_plan_dir,
    read_schedule,
    read_spill,
    write_plan,
)
from dansched.simulate import evaluate


def figures(ev):
    return (
        ev.valid,
        ev.error_counts,
        ev.max_v_stay,
        ev.physical_peak,
        ev.extra_traffic,
        ev.spill_count,
        ev.makespan,
        ev.start,
        ev.end,
    )


def test_write_plan_problem1_writes_only_the_schedule(tmp_path):
    written = write_plan(Plan(order=(2, 0, 1)), tmp_path, "c")
    assert written == [tmp_path / "c_schedule.txt"]
    assert (tmp_path / "c_schedule.txt").read_text() == "2\n0\n1\n"
    assert not (tmp_path / "c_memory.txt").exists() and not (tmp_path / "c_spill.txt").exists()
    assert read_plan_dir(tmp_path, "c") == Plan(order=(2, 0, 1))


def test_write_plan_full_plan_exact_text(tmp_path):
    plan = Plan(order=(0, 3, 1, 2), offsets=((7, 16), (3, 0)), spills=((7, 32), (3, 8), (7, 0)))
    write_plan(plan, tmp_path, "c")
    paths = contest_paths(tmp_path, "c")
    assert paths["schedule"].read_text() == "0\n3\n1\n2\n"
    assert paths["memory"].read_text() == "3:0\n7:16\n"  # every buffer, by BufId
    assert paths["spill"].read_text() == "7:32\n3:8\n7:0\n"  # spill order kept
    back = read_plan_dir(tmp_path, "c")
    assert back.order == plan.order and back.spills == plan.spills
    assert sorted(back.offsets) == sorted(plan.offsets) and back.problem == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c_memory.txt", "c_schedule.txt", "c_spill.txt"]


def test_no_spill_means_an_empty_spill_file(tmp_path):
    write_plan(Plan(order=(0,), offsets=((1, 0),)), tmp_path, "c")
    assert (tmp_path / "c_spill.txt").read_text() == ""
    assert read_plan_dir(tmp_path, "c").spills == ()


def test_memory_without_spill_file_reads_as_no_spills(tmp_path):
    (tmp_path / "c_schedule.txt").write_text("0\n")
    (tmp_path / "c_memory.txt").write_text("1:0\n")
    assert read_plan_dir(tmp_path, "c") == Plan(order=(0,), offsets=((1, 0),), spills=())


def test_readers_tolerate_blank_lines_and_spaces(tmp_path):
    p = tmp_path / "s.txt"
    p.write_text("\n 3 \n\n1\r\n 0\n\n")
    assert read_schedule(p) == (3, 1, 0)
    p.write_text("1: 5\n\n 2 :0 \n")
    assert read_memory(p) == ((1, 5), (2, 0))
    assert read_spill(p) == ((1, 5), (2, 0))


@pytest.mark.parametrize(
    "reader,text,pattern",
    [
        (read_schedule, "0\n1\nx\n", r"s.txt:3: a node id must be an integer, got 'x'"),
        (read_schedule, "0\n1.5\n", r"s.txt:2: a node id must be an integer"),
        (read_schedule, "0 1\n", r"s.txt:1: a node id must be an integer"),
        (read_memory, "1:0\n2\n", r"s.txt:2: expected 'BufId:Offset', got '2'"),
        (read_memory, "1:0:3\n", r"s.txt:1: expected 'BufId:Offset'"),
        (read_memory, "a:0\n", r"s.txt:1: BufId must be an integer, got 'a'"),
        (read_memory, "1:\n", r"s.txt:1: Offset must be an integer, got ''"),
        (read_spill, "1;4\n", r"s.txt:1: expected 'BufId:NewOffset'"),
        (read_spill, "1:four\n", r"s.txt:1: NewOffset must be an integer"),
    ],
)
def test_malformed_plan_files(tmp_path, reader, text, pattern):
    p = tmp_path / "s.txt"
    p.write_text(text)
    with pytest.raises(PlanFormatError, match=pattern):
        reader(p)


def test_missing_or_binary_plan_files(tmp_path):
    with pytest.raises(PlanFormatError, match="no such file"):
        read_schedule(tmp_path / "absent.txt")
    with pytest.raises(PlanFormatError, match="no such file"):
        read_plan_dir(tmp_path, "nothing")
    p = tmp_path / "b.txt"
    p.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(PlanFormatError, match="cannot read"):
        read_memory(p)


# ---- plan files read for an instance: streams, bounded by what a plan of it can hold --------


@pytest.fixture(scope="module")
def exp():
    return load_instance(SHIPPED / "Exp.json")


def test_the_bounds_of_a_plan_of_exp(exp):
    """Exp (instances/Exp.json): 7 nodes; buffer 0 used by nodes 1 and 3, buffer 1 by 3
    and 5: 3 gaps between needs each (ALLOC, two users, FREE), 4 spills per gap would be
    24, fewer than the 1,024 entries any file may hold: 1,024 spills, 7 + 2,048 ids, and
    1,024 offsets (Exp has 2 buffers)."""
    most = plan_limits(exp)
    assert (most.schedule.entries, most.memory.entries, most.spill.entries) == (2055, 1024, 1024)
    big = instance_from_records("big", *generate("chain", 2, 0))  # 128 buffers, one user each: 256 gaps
    assert plan_limits(big).spill.entries == 4 * 256


@pytest.mark.parametrize("line", [b"0\n", b"\n", b"   7  \r\n", b"3:0\n"], ids=["ids", "blank", "spaces", "pairs"])
@pytest.mark.parametrize("which", ["schedule", "memory", "spill"])
def test_an_endless_plan_file_is_refused_at_its_bound(exp, tmp_path, line, which):
    """A named pipe fed forever: the reader must stop on its own, at the first entry past
    what a plan of Exp can hold or at the first character past the file's bound, whatever
    the lines are (a reader that kept the file would never finish)."""
    fifo = tmp_path / "plan.txt"
    os.mkfifo(fifo)

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), open(fifo, "wb") as fh:
            while True:
                fh.write(line * 1024)

    threading.Thread(target=feed, daemon=True).start()
    good = tmp_path / "good.txt"
    good.write_text("0\n")
    files = {"schedule": good, "memory": good, "spill": good} | {which: fifo}
    if which != "schedule":
        (tmp_path / "m.txt").write_text("0:0\n1:8\n")
        files["memory"] = fifo if which == "memory" else tmp_path / "m.txt"
    expected = "of this instance can (hold|be)|more than 64|must be an integer|expected 'BufId"
    with pytest.raises(PlanFormatError, match=expected):
        evaluate_files(exp, files["schedule"], files["memory"], files["spill"] if which == "spill" else None)


def test_a_file_past_the_bound_is_one_line_and_exit_2_before_it_is_read(exp, tmp_path, monkeypatch, capsys):
    """A schedule of Exp with one id more than any plan of Exp holds (line 2,056), and a
    regular file longer than any (its size is enough: nothing is read)."""
    sched = tmp_path / "s.txt"
    sched.write_text("0\n" * 2056)
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", SHIPPED / "Exp.json", "--schedule", sched)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert f"{sched}:2056: more entries than a plan of this instance can hold (at most 2,055" in err
    sched.write_bytes(b"\n" * (2055 * 64 + 4096 + 1))
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", SHIPPED / "Exp.json", "--schedule", sched)
    assert code == 2 and f"{sched}: 135,617 bytes, longer than a plan file of this instance can be" in err
    sched.write_text("0\n" * 2055)  # as many ids as a plan of Exp can hold: judged (duplicates: invalid)
    code, _, _ = run_cli(monkeypatch, capsys, "evaluate", SHIPPED / "Exp.json", "--schedule", sched)
    assert code == 1


def test_plan_from_indices_uses_buffer_ids(tmp_path):
    inst = spill_twice_instance(tmp_path)  # BufIds 10, 20, 30 at indices 0, 1, 2
    plan = plan_from_indices(inst, [0, 1], [0, 4, 0], [(0, 4), (2, 1)])
    assert plan.offsets == ((10, 0), (20, 4), (30, 0))
    assert plan.spills == ((10, 4), (30, 1))
    assert plan_from_indices(inst, [0]).problem == 1


def test_round_trip_of_a_spilling_plan(tmp_path):
    inst = spill_twice_instance(tmp_path)
    before = evaluate(inst, SPILL_TWICE_PLAN)
    assert before.valid and before.spill_count == 2
    write_plan(SPILL_TWICE_PLAN, tmp_path / "out", "spill2")
    back = read_plan_dir(tmp_path / "out", "spill2")
    after = evaluate(inst, back)
    assert figures(after) == figures(before)


def test_round_trip_of_an_invalid_plan_keeps_its_violations(tmp_path):
    inst = spill_twice_instance(tmp_path)
    bad = Plan(order=SPILL_TWICE_PLAN.order[::-1], offsets=SPILL_TWICE_PLAN.offsets, spills=SPILL_TWICE_PLAN.spills)
    before = evaluate(inst, bad)
    assert not before.valid
    write_plan(bad, tmp_path, "x")
    after = evaluate(inst, read_plan_dir(tmp_path, "x"))
    assert figures(after) == figures(before)
    assert [e.to_dict() for e in after.errors] == [e.to_dict() for e in before.errors]


def _voluntary_spill_plan(inst, max_spills):
    """Id order, each buffer in its own region (capacity = the tier's total size), and a
    spill of every multi-user buffer between its first two users, back at its own offset."""
    order = list(range(inst.n))
    pos = {v: i for i, v in enumerate(order)}
    offsets, used = [], {}
    for b in range(inst.num_buffers):
        t = int(inst.buf_tier[b])
        offsets.append(used.get(t, 0))
        used[t] = used.get(t, 0) + int(inst.buf_size[b])
    spills = []
    inserts = []  # (position after which to insert, serial, node id)
    for b in range(inst.num_buffers):
        users = sorted(inst.users(b).tolist(), key=pos.__getitem__)
        if len(users) < 2 or len(spills) >= max_spills:
            continue
        k = len(spills)
        spills.append((b, offsets[b]))
        inserts += [(pos[users[0]], 2 * k, inst.n + 2 * k), (pos[users[0]], 2 * k + 1, inst.n + 2 * k + 1)]
    keyed = [((i, -1, 0), v) for i, v in enumerate(order)] + [((p, 0, s), v) for p, s, v in inserts]
    final = [v for _, v in sorted(keyed)]
    return final, offsets, spills, used


def test_round_trip_of_an_official_case_with_spills(tmp_path):
    base = load_instance(official_path("Matmul_Case0"))
    # generous hardware: each tier holds every buffer of that tier at once
    totals = {}
    for b in range(base.num_buffers):
        name = base.hw.tiers[base.buf_tier[b]]
        totals[name] = totals.get(name, 0) + int(base.buf_size[b])
    hw_path = tmp_path / "big.toml"
    hw_path.write_text("[tiers]\n" + "".join(f"{k} = {v}\n" for k, v in totals.items()))
    inst = load_instance(official_path("Matmul_Case0"), load_hardware(hw_path))
    order, offsets, spills, _ = _voluntary_spill_plan(inst, max_spills=60)
    plan = plan_from_indices(inst, order, offsets, spills)
    before = evaluate(inst, plan)
    assert before.valid, before.errors[:3]
    assert before.spill_count == 60
    # traffic by hand: Size for a buffer a COPY_IN fills, 2*Size otherwise
    expected = sum(int(inst.buf_size[b]) * (1 if inst.buf_backed[b] else 2) for b, _ in spills)
    assert before.extra_traffic == expected
    write_plan(plan, tmp_path / "plan", inst.name)
    after = evaluate(inst, read_plan_dir(tmp_path / "plan", inst.name))
    assert figures(after) == figures(before)


def test_round_trip_of_an_official_problem1_order(tmp_path):
    inst = load_instance(official_path("Conv_Case0"))
    plan = Plan(order=tuple(range(inst.n)))
    before = evaluate(inst, plan)
    write_plan(plan, tmp_path, inst.name)
    after = evaluate(inst, read_plan_dir(tmp_path, inst.name))
    assert figures(after) == figures(before) and after.problem == 1
