"""``dansched view``: the self-contained HTML page of a plan.

The data tests run everywhere; the browser tests drive headless Chromium through
Playwright and skip, with one reason, when either is missing."""

from __future__ import annotations

import json
import re
import shutil
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from helpers import SHIPPED
from view_instances import backed_spills_instance

from dansched.application.report.trace import TraceError, buffer_segments, timed_tasks
from dansched.application.report.view import (
    DATA_TOKEN,
    WAIT_KINDS,
    binding_predecessors,
    build_view_data,
    view_html,
)
from dansched.hardware import load_hardware
from dansched.instance import load_instance
from dansched.params import OrderSearchParams
from dansched.pipeline import SolveOptions, run_pipeline
from dansched.plan import Plan, write_plan
from dansched.plan_folder import read_report
from dansched.simulate import evaluate, simulate_timing

EXP_PLAN = Plan(order=tuple(range(7)), offsets=((0, 0), (1, 5)))
TIGHT_HW = "[tiers]\nL1 = 2048\nUB = 256\n"  # random_s5 spills under it


def run_cli(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    from dansched.cli import main

    monkeypatch.setattr(sys, "argv", ["dansched", *map(str, args)])
    with pytest.raises(SystemExit) as exc:
        main()
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def page_data(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="dansched-data">(.*?)</script>', html, re.S)
    assert m, "no inline data element"
    return json.loads(m.group(1))


@pytest.fixture(scope="module")
def spilled(tmp_path_factory):
    """random_s5 under a tight hardware model, problem 2: a small timed plan with spills."""
    folder = tmp_path_factory.mktemp("view")
    hw_file = folder / "tight.toml"
    hw_file.write_text(TIGHT_HW)
    inst = load_instance(SHIPPED / "random_s5.json", load_hardware(hw_file))
    # the order windows find a plan without spills here, so they stay off: this fixture wants spills
    result = run_pipeline(inst, SolveOptions(problem=2, order_search=OrderSearchParams(lns=False)))
    assert result.evaluation.valid and result.evaluation.spill_count > 0
    write_plan(result.plan, folder, inst.name, report=json.dumps(result.report.to_dict()) + "\n")
    return inst, result.plan, result.evaluation, folder, hw_file


# ---- the edge each node waited on -------------------------------------------------------


def test_binding_predecessor_on_exp_is_the_data_edge(exp_path):
    inst = load_instance(exp_path)
    ev = evaluate(inst, EXP_PLAN)
    g = ev.graph
    w = binding_predecessors(EXP_PLAN.order, g.preds, g.pipe, ev.start, ev.end)
    assert (w.node[1], WAIT_KINDS[w.kind[1]]) == (-1, "")  # COPY_IN starts at 0
    assert (w.node[3], WAIT_KINDS[w.kind[3]], w.task[3]) == (1, "data", 1)  # EXP waits for COPY_IN
    assert (w.node[5], WAIT_KINDS[w.kind[5]]) == (3, "data")


def test_binding_predecessor_pipe_reuse_and_cache_chain():
    # 0: task on pipe 0 (10 cycles); 1: task on pipe 0, no edge -> waits on the pipe;
    # 2: cache node after 1 (reuse edge); 3: task on pipe 1 after the cache node.
    preds = [[], [], [1], [2]]
    pipe, cycles = [0, 0, -1, 1], [10, 5, 0, 7]
    order = [0, 1, 2, 3]
    start, end, _ = simulate_timing(order, preds, pipe, cycles)
    w = binding_predecessors(order, preds, pipe, start, end, reuse_edges=[(1, 2)])
    assert (w.node[1], WAIT_KINDS[w.kind[1]]) == (0, "pipe")
    assert (w.node[2], WAIT_KINDS[w.kind[2]]) == (1, "reuse")
    assert (w.node[3], WAIT_KINDS[w.kind[3]], w.task[3]) == (2, "data", 1)


def test_every_wait_explains_the_start(spilled):
    inst, plan, ev, *_ = spilled
    g = ev.graph
    w = binding_predecessors(plan.order, g.preds, g.pipe, ev.start, ev.end, g.spill_edges, g.reuse_edges)
    prev: dict[int, int] = {}
    kinds = set()
    for v in plan.order:
        if ev.start[v] == 0:
            assert w.node[v] == -1
        else:
            u = w.node[v]
            assert u >= 0 and ev.end[u] == ev.start[v]
            assert u in g.preds[v] or (WAIT_KINDS[w.kind[v]] == "pipe" and prev.get(g.pipe[v]) == u)
            kinds.add(WAIT_KINDS[w.kind[v]])
        if g.pipe[v] >= 0:
            prev[g.pipe[v]] = v
    assert "data" in kinds


# ---- page data and file ------------------------------------------------------------------


def test_view_data_matches_the_trace_tasks_and_segments(spilled):
    inst, plan, ev, *_ = spilled
    data = build_view_data(inst, plan, ev)
    tasks = timed_tasks(inst, plan, ev)
    segs = buffer_segments(inst, plan, ev)
    t, s = data["tasks"], data["segments"]
    assert len(t["id"]) == len(tasks) and len(s["buf"]) == len(segs)
    starts, acc, last = {}, 0, -1
    for i, node in enumerate(t["id"]):
        if t["pipe"][i] != last:
            acc, last = 0, t["pipe"][i]
        acc += t["startDelta"][i]
        starts[node] = (acc, acc + t["dur"][i])
    assert starts == {x.node: (x.start, x.end) for x in tasks}
    # every buffer use points at a segment of that buffer that covers the task in time
    for i in range(len(t["id"])):
        a, e = starts[t["id"][i]]
        for j in range(t["bufPtr"][i], t["bufPtr"][i + 1]):
            k = t["segs"][j]
            assert s["buf"][k] == t["bufs"][j] and s["start"][k] <= a and e <= s["end"][k]
    assert sum(1 for x in s["seg"] if x > 0) == ev.spill_count


def test_view_html_is_self_contained_and_escapes_data():
    html = view_html({"case": "</script><b>", "x": [1, 2]})
    assert DATA_TOKEN not in html
    assert page_data(html)["case"] == "</script><b>"
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", html)


def test_cli_view_writes_the_page_with_the_report(spilled, monkeypatch, capsys, tmp_path):
    inst, plan, ev, folder, hw_file = spilled
    out = tmp_path / "page.html"
    rc, stdout, err = run_cli(
        monkeypatch, capsys, "view", SHIPPED / "random_s5.json", "--plan", folder, "--hw", hw_file, "--out", out
    )
    assert rc == 0, err
    data = page_data(out.read_text())
    assert data["metrics"]["makespan"] == ev.makespan and data["report"] == read_report(folder, inst.name)
    assert data["stats"]["total_duration"] == pytest.approx(ev.makespan / 1000)


def test_cli_view_of_a_problem1_plan_is_bad_input(exp_path, monkeypatch, capsys, tmp_path):
    write_plan(Plan(order=tuple(range(7))), tmp_path, "Exp")
    rc, _, err = run_cli(monkeypatch, capsys, "view", exp_path, "--plan", tmp_path)
    assert rc == 2 and err.count("\n") == 1 and "problem-1" in err


def test_cli_view_of_an_invalid_plan_exits_1(exp_path, monkeypatch, capsys, tmp_path):
    write_plan(Plan(order=tuple(range(7)), offsets=((0, 0), (1, 0))), tmp_path, "Exp")  # both buffers at 0
    rc, _, err = run_cli(monkeypatch, capsys, "view", exp_path, "--plan", tmp_path)
    assert rc == 1 and "invalid" in err and not (tmp_path / "Exp_view.html").exists()


def test_cli_solve_html_writes_the_view(exp_path, monkeypatch, capsys, tmp_path):
    rc, _, err = run_cli(
        monkeypatch, capsys, "solve", exp_path, "--problem", "3", "--out", tmp_path, "--html", "--quiet"
    )
    assert rc == 0, err
    data = page_data((tmp_path / "Exp_view.html").read_text())
    assert data["metrics"]["makespan"] == 60 and data["report"]["makespan"] == 60
    rc, _, err = run_cli(monkeypatch, capsys, "solve", exp_path, "--problem", "1", "--out", tmp_path, "--html")
    assert rc == 2 and "--html needs timing" in err


def test_build_view_data_needs_timing(exp_path):
    inst = load_instance(exp_path)
    with pytest.raises(TraceError):
        build_view_data(inst, Plan(order=tuple(range(7))), evaluate(inst, Plan(order=tuple(range(7)))))


# ---- in a real browser -------------------------------------------------------------------


def _browser_missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed"
    if shutil.which("chromium") is None:
        return "no chromium executable on PATH"
    return None


@pytest.fixture(scope="module")
def chromium():
    """One headless Chromium for the module (Playwright's sync API allows one driver at a time)."""
    missing = _browser_missing()
    if missing:
        pytest.skip(
            f"browser tests need headless Chromium and playwright (pip install -e '.[view]', apt-get install chromium): {missing}"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        yield browser
        browser.close()


def open_page(browser, path: Path, width: int = 1300, height: int = 1000):
    """(page, console errors) of ``path`` once its first draw has finished."""
    errors: list[str] = []
    page = browser.new_page(viewport={"width": width, "height": height})
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.resolve().as_uri())
    page.wait_for_selector("body[data-ready]", timeout=30000)
    return page, errors


@pytest.fixture(scope="module")
def browser_page(chromium, spilled, tmp_path_factory):
    from dansched.application.report.view import write_view

    inst, plan, ev, folder, _ = spilled
    path = write_view(
        inst, plan, ev, tmp_path_factory.mktemp("page") / "view.html", report=read_report(folder, inst.name)
    )
    page, errors = open_page(chromium, path)
    yield page, errors
    page.close()


def _zoom_to(page, start: int, end: int) -> None:
    pad = max(20, (end - start) * 2)
    page.evaluate("([a, b]) => window.dansched.setView(a, b)", [start - pad, end + pad])


def test_page_renders_without_console_errors(browser_page, tmp_path):
    page, errors = browser_page
    shot = tmp_path / "view.png"
    page.screenshot(path=str(shot), full_page=True)
    assert errors == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    assert float(page.get_attribute("body", "data-ready")) > 0


def test_hover_and_click_a_task_show_it_and_its_buffers(browser_page, spilled):
    page, errors = browser_page
    inst, plan, ev, *_ = spilled
    g = ev.graph
    waits = binding_predecessors(plan.order, g.preds, g.pipe, ev.start, ev.end, g.spill_edges, g.reuse_edges)
    task = next(
        t for t in timed_tasks(inst, plan, ev) if len(t.bufs) >= 2 and waits.node[t.node] >= 0 and t.end > t.start
    )
    _zoom_to(page, task.start, task.end)
    c = page.evaluate("id => window.dansched.taskCenter(id)", task.node)
    page.mouse.move(c["x"], c["y"])
    info = page.evaluate("window.dansched.hoverInfo()")
    assert (info["kind"], info["id"], info["op"], info["pipe"]) == ("task", task.node, task.op, task.pipe)
    assert (info["start"], info["end"], info["cycles"]) == (task.start, task.end, task.end - task.start)
    assert [b["buf"] for b in info["bufs"]] == list(task.bufs)
    assert (
        info["waited"]["node"] == waits.node[task.node] and info["waited"]["kind"] == WAIT_KINDS[waits.kind[task.node]]
    )
    assert str(task.node) in page.inner_text("#tip")
    page.mouse.click(c["x"], c["y"])
    hl = page.evaluate("window.dansched.highlighted()")
    expected = sorted((s.buf_id, s.segment) for s in buffer_segments(inst, plan, ev) if s.buf_id in task.bufs)
    assert sorted((s["buf"], s["segment"]) for s in hl["segments"]) == expected
    assert hl["tasks"] == [task.node]
    assert errors == []


def test_hover_and_click_a_spilled_in_segment_show_it_and_its_tasks(browser_page, spilled):
    page, errors = browser_page
    inst, plan, ev, *_ = spilled
    seg = next(s for s in buffer_segments(inst, plan, ev) if s.segment > 0)
    _zoom_to(page, seg.start, seg.end)
    c = page.evaluate("([b, k]) => window.dansched.segmentCenter(b, k)", [seg.buf_id, seg.segment])
    page.mouse.move(c["x"], c["y"])
    info = page.evaluate("window.dansched.hoverInfo()")
    assert info["kind"] == "segment" and (info["buf"], info["segment"]) == (seg.buf_id, seg.segment)
    assert (info["tier"], info["offset"], info["size"], info["start"], info["end"]) == (
        seg.tier,
        seg.offset,
        seg.size,
        seg.start,
        seg.end,
    )
    assert info["spilledIn"] is True
    # tasks that use this segment: between its SPILL_IN and its SPILL_OUT / FREE in the schedule
    b = inst.buffer_index(seg.buf_id)
    pos = {v: i for i, v in enumerate(plan.order)}
    ks = sorted((k for k, x in enumerate(ev.graph.spill_buf) if x == b), key=lambda k: pos[inst.n + 2 * k])
    lo = pos[inst.n + 2 * ks[seg.segment - 1] + 1]
    hi = pos[inst.n + 2 * ks[seg.segment]] if seg.segment < len(ks) else pos[int(inst.buf_free[b])]
    expected = sorted(t.node for t in timed_tasks(inst, plan, ev) if seg.buf_id in t.bufs and lo <= pos[t.node] <= hi)
    assert inst.n + 2 * ks[seg.segment - 1] + 1 in expected  # its SPILL_IN
    page.mouse.click(c["x"], c["y"])
    hl = page.evaluate("window.dansched.highlighted()")
    assert hl["tasks"] == expected
    assert [(s["buf"], s["segment"]) for s in hl["segments"]] == [(seg.buf_id, seg.segment)]
    assert errors == []


def test_wheel_zooms_and_drag_pans_the_shared_time_axis(browser_page):
    page, errors = browser_page
    makespan = page.evaluate("window.dansched.data.makespan")
    page.evaluate("m => window.dansched.setView(0, m)", makespan)
    box = page.locator("#timeline").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + 30
    page.mouse.move(x, y)
    page.mouse.wheel(0, -400)  # wheel up: zoom in around the pointer
    page.wait_for_timeout(100)
    v = page.evaluate("window.dansched.view()")
    assert v["t1"] - v["t0"] < 0.9 * makespan and v["t0"] > 0
    page.mouse.down()
    page.mouse.move(x - 200, y, steps=4)
    page.mouse.up()
    w = page.evaluate("window.dansched.view()")
    assert w["t0"] > v["t0"] and w["t1"] - w["t0"] == pytest.approx(v["t1"] - v["t0"])
    assert errors == []


def test_find_box_selects_and_zooms_to_a_node(browser_page, spilled):
    page, errors = browser_page
    inst, plan, ev, *_ = spilled
    task = timed_tasks(inst, plan, ev)[len(plan.order) // 4]
    page.fill("#find", str(task.node))
    page.press("#find", "Enter")
    assert page.evaluate("window.dansched.highlighted()")["tasks"] == [task.node]
    v = page.evaluate("window.dansched.view()")
    assert v["t0"] <= task.start and task.end <= v["t1"]
    assert f"node {task.node}" in page.inner_text("#sel")
    assert errors == []


def test_dense_lane_draws_merged_columns_and_says_so(chromium, tmp_path):
    """2,000 one-cycle tasks on one pipe: far more than pixel columns, so the timeline
    draws merged bars, and hovering one names how many tasks share its column."""
    from dansched.application.report.view import write_view
    from dansched.instance import instance_from_records

    k = 2000
    nodes = [{"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 8, "Type": "UB"}]
    nodes += [{"Id": i, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 1, "Bufs": [0]} for i in range(1, k + 1)]
    nodes.append({"Id": k + 1, "Op": "FREE", "BufId": 0, "Size": 8, "Type": "UB"})
    edges = [[i, i + 1] for i in range(k + 1)]
    inst = instance_from_records("dense", nodes, edges)
    plan = Plan(order=tuple(range(k + 2)), offsets=((0, 0),))
    ev = evaluate(inst, plan)
    assert ev.valid and ev.makespan == k
    path = write_view(inst, plan, ev, tmp_path / "dense.html")
    page, errors = open_page(chromium, path, width=900, height=700)
    c = page.evaluate("id => window.dansched.taskCenter(id)", k // 2)
    page.mouse.move(c["x"], c["y"])
    info = page.evaluate("window.dansched.hoverInfo()")
    tip = page.inner_text("#tip")
    page.close()
    assert errors == []
    assert info["kind"] == "task" and abs(info["id"] - k // 2) <= 10 and info["pipe"] == "VECTOR"
    assert re.search(r"\(\d+ tasks share this pixel column: zoom in\)", tip)


# ---- the page tells the truth at every zoom ----------------------------------------------


def canvas_pixels(page, canvas: int, x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    """RGB pixels (height, width, 3) of the box [x0, x1) x [y0, y1) of the page's
    ``canvas``-th canvas, in CSS pixels, as seen on the white page (alpha composited)."""
    w, h, data = page.evaluate(
        """([i, x0, y0, x1, y1]) => {
            const cv = document.querySelectorAll('canvas')[i], d = window.devicePixelRatio || 1;
            const img = cv.getContext('2d').getImageData(Math.round(x0 * d), Math.round(y0 * d),
                Math.round((x1 - x0) * d), Math.round((y1 - y0) * d));
            return [img.width, img.height, Array.from(img.data)];
        }""",
        [canvas, x0, y0, x1, y1],
    )
    rgba = np.array(data, dtype=np.float64).reshape(h, w, 4)
    alpha = rgba[:, :, 3:] / 255
    return np.rint(rgba[:, :, :3] * alpha + 255 * (1 - alpha)).astype(np.int32)


def coloured(px: np.ndarray) -> np.ndarray:
    """Pixels of a saturated colour (a task's fill or a tick), not white nor a grey grid line."""
    return (px.max(axis=2) - px.min(axis=2)) > 40


@pytest.fixture(scope="module")
def backed_page(chromium, tmp_path_factory):
    from dansched.application.report.view import write_view

    inst, plan, ev = backed_spills_instance(2000)
    outs = [v for v in plan.order if v >= inst.n and (v - inst.n) % 2 == 0]
    assert {ev.end[v] - ev.start[v] for v in outs} == {0}  # the evaluator's word: zero-cycle SPILL_OUTs
    path = write_view(inst, plan, ev, tmp_path_factory.mktemp("backed") / "view.html")
    page, errors = open_page(chromium, path, width=900, height=700)
    yield page, errors, inst, plan, ev
    page.close()


def test_zero_cycle_tasks_do_not_paint_their_lane(backed_page):
    """2,000 zero-cycle SPILL_OUTs on MTE3: the lane's body stays empty at full view (more
    tasks than twice the pixel columns: merged columns) and zoomed in (one shape per task);
    each is only a tick at the lane's foot."""
    page, errors, inst, plan, ev = backed_page
    first_out = inst.n  # the first SPILL_OUT
    lane = page.evaluate("window.dansched.lane('MTE3')")
    assert ev.spill_count > 2 * (lane["x1"] - lane["x0"])
    views = [(0, ev.makespan * 1.01), (ev.start[first_out] - 500, ev.start[first_out] + 1500)]
    for t0, t1 in views:
        page.evaluate("([a, b]) => window.dansched.setView(a, b)", [t0, t1])
        mte3, mte2 = page.evaluate("window.dansched.lane('MTE3')"), page.evaluate("window.dansched.lane('MTE2')")
        x1 = mte3["x0"] + 0.95 * (mte3["x1"] - mte3["x0"])  # clear of the makespan line
        body = canvas_pixels(page, 0, mte3["x0"], mte3["y0"], x1, mte3["markY0"] - 1)
        ticks = canvas_pixels(page, 0, mte3["x0"], mte3["markY0"], x1, mte3["y1"])
        spill_ins = canvas_pixels(page, 0, mte2["x0"], mte2["y0"], x1, mte2["markY0"] - 1)
        assert coloured(body).sum() == 0, (t0, t1)
        assert coloured(ticks).any(axis=0).sum() >= 2, (t0, t1)  # the SPILL_OUTs are marked
        assert coloured(spill_ins).mean() > 0.5, (t0, t1)  # MTE2's SPILL_INs, which take time, fill it
    c = page.evaluate("id => window.dansched.taskCenter(id)", first_out)
    info = page.evaluate("([x, y]) => window.dansched.hover(x, y)", [c["x"], c["y"]])
    assert (info["id"], info["op"], info["cycles"]) == (first_out, "SPILL_OUT", 0)
    assert errors == []


def _label_value(label: str) -> Decimal:
    scale = {"k": 10**3, "M": 10**6, "G": 10**9}
    text = label.replace(",", "")
    return Decimal(text[:-1]) * scale[text[-1]] if text[-1] in scale else Decimal(text)


def test_axis_labels_are_distinct_and_exact_at_every_zoom(backed_page):
    """Zooming in with the wheel down to the smallest span, and views far out on the axis:
    every tick has its own label, and the label reads back as the tick's time."""
    page, errors, *_ = backed_page
    page.evaluate("m => window.dansched.setView(0, m)", page.evaluate("window.dansched.data.makespan"))
    box = page.locator("#timeline").bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.05, box["y"] + 30)  # near t = 19k
    seen = []
    for _ in range(24):
        page.mouse.wheel(0, -300)
        page.wait_for_timeout(40)
        seen.append(page.evaluate("window.dansched.axisTicks()"))
    for t0, t1 in [(19_000, 19_012), (19_000_000_000, 19_000_001_000), (999_990, 1_000_090), (-40, 60)]:
        page.evaluate("([a, b]) => window.dansched.setView(a, b)", [t0, t1])
        seen.append(page.evaluate("window.dansched.axisTicks()"))
    assert page.evaluate("window.dansched.view()")["t1"] - page.evaluate("window.dansched.view()")["t0"] > 0
    for ticks in seen:
        labels = [t["label"] for t in ticks]
        assert len(ticks) >= 3 and len(set(labels)) == len(labels), labels
        assert all(_label_value(t["label"]) == t["t"] for t in ticks), labels
    assert errors == []


def test_bounds_table_has_a_row_per_makespan_floor_and_nothing_undefined(
    chromium, exp_path, monkeypatch, capsys, tmp_path
):
    rc, _, err = run_cli(
        monkeypatch, capsys, "solve", exp_path, "--problem", "3", "--out", tmp_path, "--html", "--quiet"
    )
    assert rc == 0, err
    report = json.loads((tmp_path / "Exp_report.json").read_text())
    floors = {k: v for k, v in report["bounds"]["makespan_floors"].items() if isinstance(v, dict)}
    assert floors
    page, errors = open_page(chromium, tmp_path / "Exp_view.html")
    rows = page.evaluate(
        """() => {
            const t = Array.from(document.querySelectorAll('#summary table')).find(t => t.caption.textContent === 'Bounds');
            return Array.from(t.querySelectorAll('tr'), r => Array.from(r.children, c => c.textContent));
        }"""
    )
    text = page.inner_text("#summary")
    page.close()
    assert errors == [] and "undefined" not in text and "NaN" not in text
    labels = {r[0]: r for r in rows[1:]}
    assert "makespan_floors" not in labels
    top = max(f["value"] for f in floors.values())
    tagged = []
    for name, f in floors.items():
        (row,) = [r for label, r in labels.items() if re.fullmatch(rf"makespan floor {name}( \(best[^)]*\))?", label)]
        assert row[1] == f"{f['value']:,}" and row[2] == f"{report['makespan']:,}"
        tagged += [f["value"]] if "(best" in row[0] else []
    assert top in tagged  # a floor of the largest value is marked best (ties: the first)
    assert len(rows) == 1 + len(floors) + sum(isinstance(v, dict) and "value" in v for v in report["bounds"].values())
    for metric in ("max_v_stay", "makespan"):
        assert labels[metric][1] == f"{report['bounds'][metric]['value']:,}"


def test_find_message_shows_beside_the_box_in_the_viewport(browser_page):
    page, errors = browser_page
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.fill("#find", "987654")
    page.press("#find", "Enter")
    msg, box = page.locator("#findMsg"), page.locator("#find").bounding_box()
    assert msg.is_visible() and "987654" in msg.inner_text() and "not found" in msg.inner_text()
    m, height = msg.bounding_box(), page.viewport_size["height"]
    assert 0 <= m["y"] and m["y"] + m["height"] <= height  # on screen, though the page is scrolled
    assert m["x"] >= box["x"] + box["width"] and m["y"] < box["y"] + box["height"] and box["y"] < m["y"] + m["height"]
    page.fill("#find", "x1")
    page.press("#find", "Enter")
    assert "node id" in msg.inner_text()
    page.evaluate("window.scrollTo(0, 0)")
    assert errors == []


def test_tiny_segments_are_drawn_with_a_visible_size_and_no_dark_lines(chromium, tmp_path):
    """30 buffers of 8 bytes resident together in a UB of 1 MiB: each is far below a pixel
    tall, yet each is drawn as a patch at least 3 pixels tall in its light colour, with no
    dark hairlines, and hovering it still names it."""
    from dansched.application.report.view import write_view
    from dansched.hardware import load_hardware
    from dansched.instance import instance_from_records

    k = 30
    nodes = [{"Id": i, "Op": "ALLOC", "BufId": i, "Size": 8, "Type": "UB"} for i in range(k)]
    nodes += [{"Id": k + i, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 10, "Bufs": [i]} for i in range(k)]
    nodes += [{"Id": 2 * k + i, "Op": "FREE", "BufId": i, "Size": 8, "Type": "UB"} for i in range(k)]
    edges = [[i, k] for i in range(k)] + [[k + i, k + i + 1] for i in range(k - 1)]
    edges += [[2 * k - 1, 2 * k + i] for i in range(k)] + [[k + i, 2 * k + i] for i in range(k)]
    hw = tmp_path / "hw.toml"
    hw.write_text("[tiers]\nUB = 1048576\n")
    inst = instance_from_records("tiny", nodes, edges, load_hardware(hw))
    plan = Plan(order=tuple(range(3 * k)), offsets=tuple((i, 8 * i) for i in range(k)))
    ev = evaluate(inst, plan)
    assert ev.valid
    page, errors = open_page(chromium, write_view(inst, plan, ev, tmp_path / "tiny.html"), width=1000, height=700)
    b = page.evaluate("window.dansched.segmentBox(15, 0)")
    xm = (b["x0"] + b["x1"]) / 2
    h = page.evaluate(f"document.querySelectorAll('canvas')[{b['canvas']}].clientHeight")
    px = canvas_pixels(page, b["canvas"], xm - 20, 0, xm + 20, h - 21)  # the plot, above the axis
    painted = (255 - px).max(axis=2) > 20  # anything but white (grid lines are lighter than that)
    assert painted.sum(axis=0).min() >= 3  # every column crosses a patch at least 3 pixels tall
    assert px[painted].mean(axis=1).min() > 150  # light fills only: no dark hairlines
    c = page.evaluate("window.dansched.segmentCenter(15, 0)")
    info = page.evaluate("([x, y]) => window.dansched.hover(x, y)", [c["x"], c["y"]])
    page.close()
    assert info["kind"] == "segment" and info["size"] == 8 and errors == []


# ---- figures past 2**53 --------------------------------------------------------------------


def huge_instance(tmp_path: Path, copy_cycles: int, add_cycles: int) -> Path:
    """Exp with the COPY_IN and EXP Cycles replaced (one on MTE2, one on VECTOR, in a chain)."""
    nodes = json.loads((SHIPPED / "Exp.json").read_text())
    nodes["Nodes"][1]["Cycles"] = copy_cycles
    nodes["Nodes"][3]["Cycles"] = add_cycles
    path = tmp_path / "Huge.json"
    path.write_text(json.dumps(nodes))
    return path


def test_solve_html_refuses_a_pipe_load_past_2_53_before_solving(monkeypatch, capsys, tmp_path):
    inst = huge_instance(tmp_path, 2**53, 30)  # MTE2 alone needs 2**53 cycles
    out = tmp_path / "out"
    rc, stdout, err = run_cli(monkeypatch, capsys, "solve", inst, "--out", out, "--html", "--quiet")
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "MTE2" in err and f"{2**53:,}" in err and "2**53" in err
    assert not out.exists()


def test_view_and_solve_html_refuse_a_makespan_past_2_53(monkeypatch, capsys, tmp_path):
    """Each pipe's load fits, but the chain COPY_IN -> EXP makes the makespan 2**53 + 2**51:
    the solve without a page succeeds; view and solve --html refuse in one line and write nothing."""
    inst = huge_instance(tmp_path, 2**52, 2**52 + 2**51)
    plan_dir = tmp_path / "plan"
    rc, _, err = run_cli(monkeypatch, capsys, "solve", inst, "--out", plan_dir, "--quiet")
    assert rc == 0, err
    report = json.loads((plan_dir / "Huge_report.json").read_text())
    assert report["makespan"] == 2**53 + 2**51 + 15  # COPY_IN, EXP, then the COPY_OUT's 15 cycles
    before = sorted(p.name for p in plan_dir.iterdir())
    rc, stdout, err = run_cli(monkeypatch, capsys, "view", inst, "--plan", plan_dir)
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err and "makespan" in err and stdout == ""
    assert sorted(p.name for p in plan_dir.iterdir()) == before
    out = tmp_path / "html"
    rc, _, err = run_cli(monkeypatch, capsys, "solve", inst, "--out", out, "--html", "--quiet")
    assert rc == 2 and err.count("\n") == 1 and "makespan" in err
    assert not out.exists() or not any(out.iterdir())


def test_check_view_range_names_the_figure(exp_path, tmp_path):
    from dansched.application.report.view import JS_SAFE_INTEGER, check_view_range
    from dansched.errors import InputError

    inst = load_instance(exp_path)
    check_view_range(inst, None, {"bounds": {"makespan": {"value": JS_SAFE_INTEGER}}})  # the largest exact one
    with pytest.raises(InputError, match=r"report\.bounds\.makespan\.value is 9,007,199,254,740,992"):
        check_view_range(inst, None, {"bounds": {"makespan": {"value": JS_SAFE_INTEGER + 1}}})
    hw = tmp_path / "hw.toml"
    hw.write_text(f"[tiers]\nUB = {2**60}\n")
    with pytest.raises(InputError, match="the capacity of UB is 1,152,921,504,606,846,976"):
        check_view_range(load_instance(exp_path, load_hardware(hw)))
    records = json.loads(exp_path.read_text())
    for rec in records["Nodes"]:  # BufId 1 -> 2**53
        if rec.get("BufId") == 1:
            rec["BufId"] = 2**53
        if "Bufs" in rec:
            rec["Bufs"] = [2**53 if b == 1 else b for b in rec["Bufs"]]
    huge = tmp_path / "HugeBuf.json"
    huge.write_text(json.dumps(records))
    with pytest.raises(InputError, match="a BufId is 9,007,199,254,740,992"):
        check_view_range(load_instance(huge))


@pytest.mark.slow  # a fresh interpreter and browser: about 10 s
def test_screenshot_script_solves_and_pictures_the_page(chromium, exp_path, tmp_path):
    """docs/view_screenshot.py, which regenerates the README's picture, on Exp: it solves
    (problem 3: makespan 60), shoots the page and says the makespan."""
    import os
    import subprocess

    from helpers import REPO

    png = tmp_path / "exp.png"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, str(REPO / "docs" / "view_screenshot.py"), "--instance", str(exp_path), "--out", str(png)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "makespan 60 cycles" in done.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_frontier_is_a_table_and_a_plot_with_the_floor_under_it(chromium, spilled, tmp_path):
    """A report with three frontier points (this plan's figures the second, the knee): the
    page draws a dot per point, left to right by traffic and lower for a shorter makespan,
    the floor under each, rings this plan, fills the knee, and lists them in a table."""
    from dansched.application.report.view import write_view

    inst, plan, ev, folder, _ = spilled
    report = read_report(folder, inst.name)
    mine = (int(ev.extra_traffic), int(ev.makespan))

    def point(traffic, makespan, floor, knee):
        return {
            "allowance": traffic,
            "traffic": traffic,
            "over_problem2": None,
            "makespan": makespan,
            "busiest_pipe": "MTE2",
            "busiest_load": floor,
            "floor": {"value": floor, "method": "by hand", "optimal": False},
            "gap": round((makespan - floor) / makespan, 6),
            "source": "by hand",
            "knee": knee,
        }

    report["frontier"] = [
        point(mine[0] // 2, mine[1] + 500, mine[1] - 900, False),
        point(mine[0], mine[1], mine[1] - 600, True),
        point(mine[0] * 2 + 10, mine[1] - 100, mine[1] - 300, False),
    ]
    page, errors = open_page(chromium, write_view(inst, plan, ev, tmp_path / "view.html", report=report))
    dots = page.evaluate("window.dansched.frontier()")
    assert errors == []
    assert [d["traffic"] for d in dots] == [p["traffic"] for p in report["frontier"]]
    xs, ys = [d["x"] for d in dots], [d["y"] for d in dots]
    assert xs == sorted(xs) and ys == sorted(ys)  # lighter to the left; the slower higher (svg y grows down)
    assert [d["knee"] for d in dots] == [False, True, False]
    assert [d["thisPlan"] for d in dots] == [False, True, False]
    assert page.locator("#frontier-plot circle").count() == 4  # three dots and this plan's ring
    assert page.locator("#frontier-plot polyline").count() == 2  # the points and the floor under them
    text = page.inner_text("#summary")
    assert "Frontier" in text and f"{mine[1]:,}" in text
    page.close()
