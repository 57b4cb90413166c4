"""Screenshot of a ``dansched view`` page for the README (``docs/view_fa0.png``).

Opens the page in headless Chromium (Playwright, the system ``chromium``), clicks
the first SPILL_IN task (its buffer's segments are outlined in the memory map),
leaves the pointer on it (the tooltip shows), and saves the viewport as a
128-colour PNG.

Usage::

    dansched solve ../shared/instances/official/FlashAttention_Case0.json --out /tmp/fa0 --html
    python3 docs/view_screenshot.py /tmp/fa0/FlashAttention_Case0_view.html docs/view_fa0.png
"""

from __future__ import annotations

import io
import shutil
import sys
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright


def main(page_path: Path, png: Path) -> None:
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1200, "height": 1250})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
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
    Image.open(io.BytesIO(raw)).convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(
        png, optimize=True
    )
    print(f"{png}: {png.stat().st_size:,} bytes")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python3 docs/view_screenshot.py PAGE.html OUT.png")
    main(Path(sys.argv[1]), Path(sys.argv[2]))
