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


# --- cross-references: every :mod:, :func:, :class: and :data: target names a real object ---

ROLE = re.compile(r":(mod|func|class|data):`!?~?([^`<>]+?)`")


def _module_of(path) -> tuple[str, bool]:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    is_pkg = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_pkg else parts), is_pkg


def _resolves(dotted: str) -> bool:
    """Whether ``dotted`` names a module, or an attribute (a dataclass field included) of one."""
    parts = dotted.split(".")
    if importlib.util.find_spec(parts[0]) is None:
        return parts[0] != "dansched"  # an optional third-party package not installed here
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for name in parts[k:]:
            if hasattr(obj, name):
                obj = getattr(obj, name)
            elif name in getattr(obj, "__dataclass_fields__", {}) or name in getattr(obj, "__annotations__", {}):
                return name == parts[-1]
            else:
                return False
        return True
    return False


def _candidates(module: str, is_pkg: bool, target: str) -> list[str]:
    """Where a target written in ``module`` may point: itself when absolute; else (relative,
    or a bare name) inside the module, then its package and each package above."""
    if target.startswith("dansched"):
        return [target]
    name = target.lstrip(".")
    parts = module.split(".")
    scopes = [module] + [".".join(parts[:k]) for k in range(len(parts) - (0 if is_pkg else 1), 0, -1)]
    absolute = [target] if "." in target and not target.startswith(".") else []  # a third-party name
    return absolute + [f"{s}.{name}" for s in scopes]


def unresolved_references() -> list[str]:
    """The cross-references of the package's docstrings and of the pages (docs, README,
    benchmark scripts) that name nothing: a bare name in a page must be a function or
    constant of the benchmark script it sits in, or of some module of the package."""
    import ast

    package = sorted((REPO / "dansched").rglob("*.py"))
    modules = [_module_of(p)[0] for p in package]
    pages = [
        *sorted(DOCS.glob("*.md")),
        REPO / "README.md",
        REPO / "BENCHMARKS.md",
        *sorted((REPO / "benchmarks").glob("*.py")),
    ]
    bad = []
    for path in [*package, *pages]:
        text = path.read_text(encoding="utf-8")
        in_package = path in package
        module, is_pkg = _module_of(path) if in_package else ("", False)
        own = set()
        if path.suffix == ".py" and not in_package:
            own = {n.name for n in ast.parse(text).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
            own |= {
                t.id
                for n in ast.parse(text).body
                if isinstance(n, (ast.Assign, ast.AnnAssign))
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                if isinstance(t, ast.Name)
            }
        for m in ROLE.finditer(text):
            target = m.group(2).strip().removesuffix("()")
            if target in own:
                continue
            if in_package:
                ok = any(_resolves(c) for c in _candidates(module, is_pkg, target))
            elif target.startswith("dansched") or "." in target.lstrip("."):
                ok = _resolves(target) or any(_resolves(f"{mod}.{target.lstrip('.')}") for mod in modules)
            else:
                ok = any(_resolves(f"{mod}.{target}") for mod in modules)
            if not ok:
                bad.append(f"{path.relative_to(REPO)}:{text[: m.start()].count(chr(10)) + 1}: :{m.group(1)}:`{target}`")
    return bad


def test_every_cross_reference_names_a_real_object():
    assert unresolved_references() == []


def test_the_cross_reference_check_catches_a_stale_target(tmp_path, monkeypatch):
    """A module that moved, a function renamed, a relative name with no home: each is caught."""
    assert not _resolves("dansched.stages.wave_search")  # moved to dansched.stages.dlr.wave_search
    assert _resolves("dansched.stages.dlr.wave_search.detect_grid")
    assert not _resolves("dansched.rooms.is_room_rule")
    assert not any(_resolves(c) for c in _candidates("dansched.stages.dlr.order_search", False, ".timed"))
    assert any(_resolves(c) for c in _candidates("dansched.stages.dlr.order_search", False, ".scan.linear_scan"))


PATH_REFERENCE = re.compile(r"`{1,2}([a-z_]+(?:/[a-z_]+)+\.py)`{1,2}")
PATH_ROOTS = ("", "dansched", "tests", "benchmarks", "docs")  # where a written path may start


def unresolved_paths() -> list[str]:
    """The ``folder/module.py`` paths in the pages and the package's docstrings that name no
    file, from the checkout's root or the package, tests, benchmarks or docs folder."""
    pages = [*sorted(DOCS.glob("*.md")), REPO / "README.md", REPO / "BENCHMARKS.md"]
    code = [*sorted((REPO / "dansched").rglob("*.py")), *sorted((REPO / "benchmarks").glob("*.py"))]
    bad = []
    for path in [*pages, *code]:
        text = path.read_text(encoding="utf-8")
        for m in PATH_REFERENCE.finditer(text):
            if not any((REPO / root / m.group(1)).is_file() for root in PATH_ROOTS):
                bad.append(f"{path.relative_to(REPO)}:{text[: m.start()].count(chr(10)) + 1}: {m.group(1)}")
    return bad


def test_every_module_path_in_the_docs_names_a_file():
    assert unresolved_paths() == []
    assert PATH_REFERENCE.search("see `models/floors.py`").group(1) == "models/floors.py"  # the form it reads
    assert not (REPO / "dansched" / "models/floors.py").is_file()  # a moved module's old path: caught
