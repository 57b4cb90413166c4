"""The outputs of a solve behind one registry (:mod:`dansched.application.outputs`): an entry added
there, with its file name in the plan folder's table (:data:`dansched.plan_folder.FOLDER_SUFFIXES`),
flows through the pre-write checks, ``Solution.write`` and the folder's group without any
other code knowing it, and the rule of the outputs that need timing is the one rule
everywhere (the library and the command line). The registry and the table name the same
kinds, in the same order."""

from __future__ import annotations

import pytest
from helpers import SHIPPED, run_cli

import dansched.application.outputs as outputs
import dansched.application.solution
import dansched.plan_folder as plan_folder
from dansched.application.outputs import Output, chosen
from dansched.errors import InputError, OutputError, TraceError
from dansched.instance import load_instance
from dansched.pipeline import SolveOptions
from dansched.plan_folder import check_folder, folder_group

EXP = SHIPPED / "Exp.json"


@pytest.fixture
def with_fake_output(monkeypatch):
    """The registry with one more entry, placed before the report: a text file holding the
    plan's makespan, asked for with ``fake`` (its flag ``--fake``) and needing timing."""
    fake = Output(
        "fake",
        "the fake output",
        lambda given: f"makespan {given.evaluation.makespan}\n",
        flag="--fake",
        help="Also write <case>_fake.txt.",
        needs_timing=True,
    )
    registry = (*outputs.OUTPUTS[:-1], fake, outputs.OUTPUTS[-1])
    monkeypatch.setattr(outputs, "OUTPUTS", registry)
    monkeypatch.setitem(plan_folder.FOLDER_SUFFIXES, "fake", "_fake.txt")
    return fake


def test_the_registry_and_the_folder_table_name_the_same_kinds_in_order():
    assert [o.kind for o in outputs.OUTPUTS] == list(plan_folder.FOLDER_SUFFIXES)
    assert [o.suffix for o in outputs.OUTPUTS] == list(plan_folder.FOLDER_SUFFIXES.values())
    assert folder_group().order()[-1] == "report" and folder_group().fingerprinted == ("trace",)


def test_a_new_entry_is_written_with_the_group_and_replaced_with_it(tmp_path, with_fake_output):
    inst = load_instance(EXP)
    folder = tmp_path / "plan"
    sol = dansched.application.solution.solve(inst, SolveOptions(problem=3), out=folder, outputs=("fake",))
    names = [p.name for p in sol.written]
    # renamed in registry order, the report last; the makespan of Exp is 60 (docs/rules.md, section 9)
    assert names == ["Exp_schedule.txt", "Exp_memory.txt", "Exp_spill.txt", "Exp_fake.txt", "Exp_report.json"]
    assert (folder / "Exp_fake.txt").read_text() == "makespan 60\n"
    assert check_folder(folder, "Exp", folder_group()) is not None
    dansched.application.solution.solve(inst, SolveOptions(problem=3), out=folder)  # without it: the stale file goes
    assert not (folder / "Exp_fake.txt").exists()


def test_a_new_entry_is_checked_before_the_solve(tmp_path, monkeypatch, with_fake_output):
    """A folder in the place of the new file, or a problem-1 order, is refused before any
    work: the pipeline is never called."""

    def no_solve(*_a, **_k):
        raise AssertionError("the solve ran before the outputs were checked")

    monkeypatch.setattr(dansched.application.solution, "run_pipeline", no_solve)
    inst = load_instance(EXP)
    (tmp_path / "Exp_fake.txt").mkdir()
    with pytest.raises(OutputError, match="Exp_fake.txt: is a folder"):
        dansched.application.solution.solve(inst, SolveOptions(problem=3), out=tmp_path, outputs=("fake",))
    with pytest.raises(TraceError, match="--fake needs timing: solve problem 2 or 3"):
        dansched.application.solution.solve(inst, SolveOptions(problem=1), out=tmp_path / "p1", outputs=("fake",))


def test_the_timing_rule_is_one_rule_for_the_library_and_the_command_line(monkeypatch, capsys, tmp_path):
    with pytest.raises(TraceError) as lib:
        dansched.application.solution.solve(
            load_instance(EXP), SolveOptions(problem=1), out=tmp_path, outputs=("view",)
        )
    code, out, err = run_cli(monkeypatch, capsys, "solve", EXP, "--problem", "1", "--html", "--out", tmp_path / "c")
    assert code == 2 and out == "" and err == f"dansched: error: {lib.value}\n"
    assert not (tmp_path / "c").exists()


def test_every_optional_output_has_a_flag_and_the_rest_are_always_written():
    kinds = [o.kind for o in chosen()]
    assert kinds == ["schedule", "memory", "spill", "report"]
    assert [o.flag for o in outputs.optional_outputs()] == ["--trace", "--html"]
    with pytest.raises(InputError, match="unknown output .pdf."):
        chosen(["pdf"])


def test_an_unknown_output_names_the_one_meant():
    """``outputs=("html",)`` is the flag's name, not the kind: it suggests ``view``; a typo
    the closest kind."""
    with pytest.raises(InputError, match=r"unknown output 'html': did you mean 'view'\? \(--html writes it; known: "):
        chosen(["html"])
    with pytest.raises(InputError, match=r"unknown output 'trce': did you mean 'trace'\?"):
        chosen(["trce"])
