"""Text from input files never reaches the terminal raw: newlines, carriage returns, NUL,
escape sequences and bidirectional controls in Op names, pipe names and paths are shown
as escapes, so an error stays one line and nothing recolours or moves the terminal."""

from __future__ import annotations

import json
import os

import pytest
from helpers import exp_records, run_cli, run_proc_cli

from dansched.application.report.text import markup_safe, printable

HOSTILE = "EV\nIL\x1b[31m\r\x00\u202e[bold]"
RAW = ("\x1b", "\r", "\x00", "\u202e")


@pytest.mark.parametrize(
    "text, shown",
    [
        ("plain ASCII", "plain ASCII"),
        ("é 中 ✓ tab\there", "é 中 ✓ tab\\there"),
        ("a\nb\r\nc", "a\\nb\\r\\nc"),
        ("\x1b[2J\x1b]0;title\x07", "\\x1b[2J\\x1b]0;title\\x07"),
        ("nul\x00del\x7fc1\x9b", "nul\\x00del\\x7fc1\\x9b"),
        ("bidi\u202eevil\u2066x\u2028y", "bidi\\u202eevil\\u2066x\\u2028y"),
    ],
)
def test_printable_escapes_what_a_terminal_acts_on(text, shown):
    assert printable(text) == shown


def test_markup_safe_escapes_rich_markup_too():
    assert markup_safe("[red]x\n") == "\\[red]x\\n"


def write_hostile(tmp_path, pipe: str = "MTE2"):
    nodes, edges = exp_records()
    nodes[1]["Op"] = HOSTILE  # COPY_IN
    nodes[1]["Cycles"] = -1  # costs 1 cycle, with a warning naming the Op
    nodes[1]["Pipe"] = pipe
    path = tmp_path / "evil.json"
    path.write_text(json.dumps({"Nodes": nodes, "Edges": edges}))
    return path


def assert_clean(text: str) -> None:
    for c in RAW:
        assert c not in text, repr(text)


def test_an_error_naming_a_hostile_op_and_pipe_is_one_escaped_line(tmp_path):
    proc = run_proc_cli("info", write_hostile(tmp_path, pipe="NO\nPE\x1b[0m"))
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dansched: error: ")
    assert "EV\\nIL\\x1b[31m\\r\\x00\\u202e[bold]" in lines[0]  # the warning, folded in, escaped
    assert_clean(proc.stderr)


def test_a_warning_and_the_tables_show_a_hostile_op_escaped(monkeypatch, capsys, tmp_path):
    path = write_hostile(tmp_path)
    code, out, err = run_cli(monkeypatch, capsys, "info", path)
    assert code == 0
    assert err.splitlines() == [
        "dansched: warning: evil: 1 operation node(s) have missing or invalid Cycles and cost 1 cycle "
        "(EV\\nIL\\x1b[31m\\r\\x00\\u202e[bold]: 1)"
    ]
    assert "EV\\nIL\\x1b[31m\\r\\x00\\u202e[bold]" in out  # the op-mix table: escaped, markup shown as text
    assert_clean(out)


def test_a_path_with_a_newline_stays_on_one_line(tmp_path):
    proc = run_proc_cli("evaluate", tmp_path / "x\ny\x1b[2J.json", "--schedule", tmp_path / "s.txt")
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert proc.stderr.startswith("dansched: error: ") and "x\\ny\\x1b[2J.json: no such file" in proc.stderr
    assert_clean(proc.stderr)


def test_solve_summary_escapes_the_case_name(monkeypatch, capsys, tmp_path):
    nodes, edges = exp_records()
    path = tmp_path / "ca\rse.json"
    path.write_text(json.dumps({"Nodes": nodes, "Edges": edges}))
    code, out, err = run_cli(monkeypatch, capsys, "solve", path, "--out", tmp_path / "o\x1b", "--quiet")
    assert code == 0, err
    assert out.startswith("ca\\rse: makespan 60") and "max_v_stay 10 (logical" in out
    assert "o\\x1b:" in out and "ca\\rse_schedule.txt" in out
    assert_clean(out)


# ---- file names that are not UTF-8 (their undecodable bytes are lone surrogates) -------------

ODD = os.fsdecode(b"case\xff")  # 'case\udcff': what Python makes of the byte 0xff in a file name


@pytest.fixture
def odd_instance(tmp_path):
    """Exp under a file name that is not UTF-8, in a folder whose name is not either."""
    folder = tmp_path / os.fsdecode(b"dir\xfe")
    folder.mkdir()
    path = folder / f"{ODD}.json"
    nodes, edges = exp_records()
    path.write_text(json.dumps({"Nodes": nodes, "Edges": edges}))
    return path


def test_printable_shows_an_undecodable_byte_as_an_escape():
    assert printable(ODD) == "case\\udcff" and printable("\ud800") == "\\ud800"


@pytest.mark.parametrize("command", ["solve", "sweep", "bench", "trace --png", "info --png"])
def test_a_non_utf8_file_name_works_and_every_file_is_utf8(command, odd_instance, monkeypatch, capsys, tmp_path):
    out = tmp_path / "out"
    args = {
        "solve": ["solve", odd_instance, "--html", "--trace", "--quiet", "--out", out],
        "sweep": ["sweep", odd_instance, "--set", "UB=4,1024", "--jobs", "1", "--quiet", "--out", out],
        "bench": ["bench", odd_instance, "--methods", "base", "--quiet", "--out", out],
        "trace --png": ["trace", odd_instance, "--plan", out, "--png", out / f"{ODD}.png"],
        "info --png": ["info", odd_instance, "--png", out / f"{ODD}.png"],
    }[command]
    if command == "trace --png":
        assert run_cli(monkeypatch, capsys, "solve", odd_instance, "--quiet", "--out", out)[0] == 0
    code, stdout, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    assert "\udcff" not in stdout + err  # shown as the escape, never raw
    written = [p for p in out.rglob("*") if p.is_file()]
    assert written
    for p in written:
        if p.suffix in (".txt", ".json", ".jsonl", ".csv", ".md", ".html"):
            p.read_bytes().decode("utf-8")  # valid UTF-8: the name is escaped inside
        elif p.suffix == ".png":
            assert p.read_bytes().startswith(b"\x89PNG")
