"""The documentation stays true to the code: the command reference is generated from the
CLI and must be current, every option of every command is in it, the README is a short
front page whose set-up commands are the ones CI runs, and no page cites issue numbers."""

from __future__ import annotations

import importlib.util
import re

import typer.main
from helpers import REPO

from dansched.cli import app

DOCS = REPO / "docs"


def make_cli_md():
    spec = importlib.util.spec_from_file_location("make_cli_md", DOCS / "make_cli_md.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_command_reference_is_current():
    """docs/cli.md is what docs/make_cli_md.py writes now (rerun it after changing an option)."""
    assert (DOCS / "cli.md").read_text() == make_cli_md().cli_markdown(), "run python3 docs/make_cli_md.py"


def test_every_command_and_option_is_in_the_reference():
    text = (DOCS / "cli.md").read_text()
    group = typer.main.get_command(app)
    for name, command in group.commands.items():
        assert f"## `dansched {name}`" in text, name
        section = text.split(f"## `dansched {name}`", 1)[1].split("\n## ", 1)[0]
        for param in command.params:
            for opt in param.opts:
                if opt.startswith("--"):
                    assert f"`{opt}" in section, (name, opt)
    for opt in ("--variant", "--victim", "--freq-ghz", "--seed", "--hw"):  # once missing from the synopses
        assert f"`{opt}" in text.split("## `dansched solve`", 1)[1].split("\n## ", 1)[0]
    bench = text.split("## `dansched bench`", 1)[1].split("\n## ", 1)[0]
    assert "`--time-limit" in bench and "`--quiet" in bench


def test_the_readme_is_a_short_front_page_with_the_set_up_commands():
    readme = (REPO / "README.md").read_text()
    words = len(re.sub(r"```.*?```", "", readme, flags=re.S).split())
    assert words <= 1000, f"README.md has {words} words outside code blocks: move details to docs/"
    blocks = re.findall(r"```\n(.*?)```", readme, flags=re.S)
    set_up = [b for b in blocks if "pip install" in b]
    # exactly two set-up commands: the main job's lean install with a first solve, then the tests
    assert set_up == [
        "pip install -e . && dansched warm && dansched solve instances/matmul_s2.json\n",
        "pip install -e '.[test]' && python3 -m pytest -q\n",
    ]
    assert "docs/view_fa0.png" in readme and "_view.html" in readme
    ci = (REPO / ".ci" / "run").read_text()
    assert "-e '.[test,lint]'" in ci and "python3 -m pytest -q" in ci  # what the tests need (and lint)


def test_the_main_install_is_lean_and_the_test_extra_holds_the_rest():
    """What ``dansched solve`` needs is the plain install; Dask, the browser driver and the
    test tools are extras, and the README's test command installs all of them."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    needed = {re.split(r"[<>=\[]", d)[0] for d in project["dependencies"]}
    assert not needed & {"dask", "playwright", "pytest", "hypothesis", "jsonschema", "matplotlib"}
    extras = project["optional-dependencies"]
    assert "dansched[plot,dist,view]" in extras["test"]
    assert {"plot", "dist", "view"} <= set(extras)


def test_no_page_cites_issue_numbers():
    pages = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
    for page in pages:
        text = page.read_text()
        assert not re.search(r"\bissues? #?\d+", text, re.I), page.name
        assert "SPEC section" not in text, page.name


def test_the_default_run_keeps_an_end_to_end_solve_of_a_real_contest_graph():
    """What the README says of the default run: one official case is solved end to end in it."""
    import test_determinism

    marks = getattr(test_determinism.test_official_end_to_end_flashattention_case0, "pytestmark", [])
    assert not [m for m in marks if m.name == "slow"]


def _exit_paragraph(text: str) -> str:
    """The paragraph of ``text`` that states the exit statuses."""
    for block in re.split(r"\n\s*\n", text):
        if re.search(r"[Ee]xit (status|codes) everywhere|exit\s+status 0", block):
            return " ".join(block.split())
    raise AssertionError("no exit-status paragraph")


def test_exit_status_1_keeps_host_memory_and_the_scratchpads_apart(tmp_path):
    """Every statement of the exit statuses (README, guide, command reference, the CLI's
    own docstring) names host memory (RAM) for a solve that runs out of it and says a
    graph that does not fit the scratchpad tiers is bad input; and the code agrees: a
    buffer larger than its tier (Exp's 5-unit buffers on a UB of 4) is exit 2."""
    from helpers import run_proc_cli

    import dansched.cli

    texts = {
        "README.md": (REPO / "README.md").read_text(),
        "docs/guide.md": (DOCS / "guide.md").read_text(),
        "docs/cli.md": (DOCS / "cli.md").read_text(),
        "dansched/cli.py": dansched.cli.__doc__ or "",
    }
    for where, text in texts.items():
        paragraph = _exit_paragraph(text)
        assert "not enough memory" not in paragraph, where
        assert "host memory" in paragraph and "RAM" in paragraph, (where, paragraph)
        assert "scratchpad tiers" in paragraph and "bad input" in paragraph, (where, paragraph)
    hw = tmp_path / "ub4.toml"
    hw.write_text("[tiers]\nUB = 4\n")
    proc = run_proc_cli("solve", REPO / "instances" / "Exp.json", "--hw", hw, "--out", tmp_path / "out")
    assert proc.returncode == 2 and "larger than" in proc.stderr, proc.stderr


def test_the_guide_says_what_solve_json_prints(tmp_path):
    """`solve --json` prints `files` as a list of paths, as the guide says."""
    import json

    from helpers import run_proc_cli

    guide = " ".join((DOCS / "guide.md").read_text().split())
    assert "files as one object" not in guide and "`files`, the list of the paths it wrote" in guide
    out = tmp_path / "out"
    proc = run_proc_cli("solve", REPO / "instances" / "Exp.json", "--out", out, "--json", "--quiet", "--effort", "fast")
    assert proc.returncode == 0, proc.stderr
    files = json.loads(proc.stdout)["files"]
    assert isinstance(files, list) and sorted(files) == sorted(str(p) for p in out.iterdir())


def test_every_file_a_readme_command_names_exists_from_the_checkout_root():
    """The README's commands run as copied from the checkout root: each file they name (an
    instance, a script) is there, the contest graphs under ../shared/instances/official/ when
    that folder is (the README says where they live); no bare case name."""
    readme = (REPO / "README.md").read_text()
    commands = re.findall(r"`((?:dansched|python3) [^`\n]+)`", readme) + [
        line
        for block in re.findall(r"```\n(.*?)```", readme, flags=re.S)
        for line in block.splitlines()
        if line.startswith(("dansched ", "python3 ", "pip "))  # a command, not what one prints
    ]
    named = [w for c in commands for w in c.split() if re.search(r"\.(json|py|csv|toml)$", w)]
    assert any("FlashAttention_Case0.json" in w for w in named) and any(w.endswith(".py") for w in named)
    official = REPO.parent / "shared" / "instances" / "official"
    for word in named:
        if word.startswith("../shared/") and not official.is_dir():
            continue  # the contest graphs are not in this checkout's neighbourhood
        assert "/" in word and (REPO / word).is_file(), word


def test_the_picture_scripts_say_what_they_lack_in_one_line_before_any_solve(tmp_path):
    """Without chromium on PATH, docs/view_screenshot.py stops at once (no solve), one line,
    exit 2; docs/frontier_picture.py given a missing instance too."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PATH": str(tmp_path)}  # no chromium here
    got = subprocess.run(
        [sys.executable, str(DOCS / "view_screenshot.py")], capture_output=True, text=True, env=env, timeout=60
    )
    assert got.returncode == 2 and got.stdout == "", got
    assert got.stderr.startswith("view_screenshot: ") and len(got.stderr.splitlines()) == 1, got.stderr
    got = subprocess.run(
        [sys.executable, str(DOCS / "frontier_picture.py"), "--instance", str(tmp_path / "none.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert got.returncode == 2 and got.stderr.startswith("frontier_picture: ") and len(got.stderr.splitlines()) == 1
