"""Regenerate the README's screenshot of a ``dansched view`` page (``docs/view_fa0.png``).

Solves the instance with the ``dansched`` importable here (``solve --html`` into a
temporary folder; or, with ``--plan``, builds the page of an existing plan folder with
``dansched view``; or takes a ready ``--page``), opens the page in headless Chromium
(Playwright, the system ``chromium``), clicks the first SPILL_IN task (its buffer's
segments are outlined in the memory map), leaves the pointer on it (the tooltip shows),
and saves the viewport as a 128-colour PNG. Beside the picture it writes what the
picture shows (``docs/view_fa0.json``: the instance, the command, the makespan), and
the README's caption is made from that record (``benchmarks/make_doc_figures.py``, run
at the end; ``tests/test_doc_figures.py`` checks the caption against the record).

Needs Playwright (``pip install -e '.[view]'``) and ``chromium`` on PATH (``apt-get install -y
chromium``): both checked first, one line and exit 2 when either is missing, before any solve.

Usage (from the repository root; run it again whenever the solver's makespan changes)::

    python3 docs/view_screenshot.py                      # FlashAttention_Case0 -> docs/view_fa0.png
    python3 docs/view_screenshot.py --instance CASE.json --out PICTURE.png
    python3 docs/view_screenshot.py --plan SOLVED_FOLDER  # the page of a plan already solved
    python3 docs/view_screenshot.py --page PAGE.html      # a page already written
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_INSTANCE = REPO.parent / "shared" / "instances" / "official" / "FlashAttention_Case0.json"
DEFAULT_OUT = REPO / "docs" / "view_fa0.png"
VIEWPORT = {"width": 1200, "height": 1250}
COLOURS = 128


def shown(path: Path) -> str:
    """``path`` as a user at the repository root types it (relative when it can be)."""
    try:
        return os.path.relpath(os.path.abspath(path), REPO)  # a link stays as the user named it
    except ValueError:  # another drive
        return str(path)


def browser_missing() -> str | None:
    """What the screenshot lacks, in one line (None: Playwright, Pillow and chromium are all there)."""
    if importlib.util.find_spec("playwright") is None or importlib.util.find_spec("PIL") is None:
        return "Playwright or Pillow is not installed: pip install -e '.[view]'"
    if shutil.which("chromium") is None:
        return "chromium is not on PATH: apt-get install -y chromium"
    return None


def build_page(instance: Path, plan: Path | None, folder: Path) -> tuple[Path, str]:
    """The page of ``instance``: solved afresh into ``folder``, or of the plan in ``plan``;
    and the command that made the plan, as the caption names it."""
    if plan is None:
        args = ["solve", str(instance), "--out", str(folder), "--html", "--quiet"]
        command = f"dansched solve {shown(instance)} --html"
    else:
        args = ["view", str(instance), "--plan", str(plan), "--out", str(folder / f"{instance.stem}_view.html")]
        command = f"dansched view {shown(instance)} --plan {shown(plan)}"
    subprocess.run([sys.executable, "-m", "dansched.cli", *args], check=True)
    pages = sorted(folder.glob("*_view.html"))
    if len(pages) != 1:
        sys.exit(f"expected one page in {folder}, found {[p.name for p in pages]}")
    return pages[0], command


def screenshot(page_path: Path, png: Path) -> int:
    """Save the screenshot of ``page_path`` to ``png``; returns the makespan the page shows."""
    from PIL import Image
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        page = browser.new_page(viewport=VIEWPORT)
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(page_path.resolve().as_uri())
        page.wait_for_selector("body[data-ready]")
        data = page.evaluate("window.dansched.data")
        tasks, ops = data["tasks"], data["ops"]
        spill_in = [tasks["id"][k] for k in range(len(tasks["id"])) if ops[tasks["op"][k]] == "SPILL_IN"]
        if spill_in:
            c = page.evaluate("id => window.dansched.taskCenter(id)", min(spill_in))
            page.mouse.click(c["x"], c["y"])
            page.mouse.move(c["x"], c["y"])
        raw = page.screenshot()
        browser.close()
    if errors:
        sys.exit(f"console errors: {errors}")
    image = Image.open(io.BytesIO(raw)).convert("RGB")
    image.quantize(colors=COLOURS, method=Image.Quantize.MEDIANCUT).save(png, optimize=True)
    return int(data["makespan"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instance", type=Path, default=DEFAULT_INSTANCE, help="instance to solve and show")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--plan", type=Path, help="plan folder to show instead of solving")
    source.add_argument("--page", type=Path, help="page to show instead of building one")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="PNG to write")
    args = parser.parse_args(argv)
    missing = browser_missing()  # before any solve: a missing browser is said at once, in one line
    if missing is not None:
        print(f"view_screenshot: {missing}", file=sys.stderr)
        sys.exit(2)
    if args.page is None and not args.instance.is_file():
        print(f"view_screenshot: {shown(args.instance)}: no such instance (give --instance)", file=sys.stderr)
        sys.exit(2)
    with tempfile.TemporaryDirectory() as tmp:
        if args.page is not None:
            page, command = args.page, f"dansched view (the page {args.page.name})"
        else:
            page, command = build_page(args.instance, args.plan, Path(tmp))
        makespan = screenshot(page, args.out)
    record = {
        "instance": args.instance.stem,
        "command": command,
        "makespan": makespan,
        "picture": args.out.resolve().relative_to(REPO).as_posix()
        if args.out.resolve().is_relative_to(REPO)
        else str(args.out),
    }
    args.out.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"{args.out}: {args.out.stat().st_size:,} bytes, makespan {makespan:,} cycles")
    if args.out.resolve() == DEFAULT_OUT:  # the README's picture: its caption follows the record
        subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_doc_figures.py")], check=True)


if __name__ == "__main__":
    main()
