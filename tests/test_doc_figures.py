"""Figures quoted in the docs come from the result files that measured them: every
generated block of README.md and docs/ (``benchmarks/make_doc_figures.py``) and the whole
of BENCHMARKS.md (``benchmarks/make_benchmarks.py``) are what their generators make from
``benchmarks/results/`` (and ``docs/view_fa0.json``) now. Files are read and parsed only:
no solve runs here."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path

import pytest
from helpers import REPO


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_generated_block_is_what_its_result_file_says():
    figures = load("make_doc_figures")
    assert figures.disagreements() == [], "run python3 benchmarks/make_doc_figures.py"


def test_a_stale_figure_is_caught(tmp_path, monkeypatch):
    """The check can fail: the README with one figure of its picture caption changed."""
    figures = load("make_doc_figures")
    readme = tmp_path / "README.md"
    shutil.copy(REPO / "README.md", readme)
    text = readme.read_text()
    caption = figures.current("picture")
    readme.write_text(text.replace(caption, caption.replace("makespan ", "makespan 1", 1)))
    blocks = {
        name: figures.Block(readme, b.source, b.make) if b.doc.name == "README.md" else b
        for name, b in figures.BLOCKS.items()
    }
    stale = "README.md: block 'picture' disagrees with docs/view_fa0.json"
    assert stale not in figures.disagreements()
    monkeypatch.setattr(figures, "BLOCKS", blocks)
    assert stale in figures.disagreements()


def test_benchmarks_md_is_what_its_result_files_say():
    bench = load("make_benchmarks")
    if not bench.load_anchors():
        pytest.skip("../shared/anchors.json (the best public figures) is not available")
    assert (REPO / "BENCHMARKS.md").read_text() == bench.render(), (
        "run python3 benchmarks/make_benchmarks.py --from benchmarks/results/bench/bench.json"
    )


GENERATED = re.compile(r"<!-- generated.*?<!-- end of generated text -->", re.S)
FIGURE = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.,])\d+(?:\.\d+)?(?![\w,])")


def unmeasured_figures(doc: Path) -> list[str]:
    """The figures (three digits or more) of each paragraph of ``doc`` outside its generated
    blocks that cites result files (``benchmarks/results/NAME.md``) but that none of them
    holds, as ``doc: figure``."""
    missing = []
    for para in re.split(r"\n\s*\n", GENERATED.sub("", doc.read_text())):
        cited = re.findall(r"benchmarks/results/([\w.*-]+\.md)", para)
        if cited:
            source = " ".join(f.read_text() for c in cited for f in (REPO / "benchmarks" / "results").glob(c))
            missing += [
                f"{doc.name}: {n}" for n in FIGURE.findall(para) if len(n.replace(",", "")) >= 3 and n not in source
            ]
    return missing


def test_a_measured_figure_quoted_in_prose_is_in_the_result_file_it_cites():
    """Figures outside the generated blocks that a paragraph attributes to a result file."""
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    assert [m for d in docs for m in unmeasured_figures(d)] == []


def test_a_figure_missing_from_its_result_file_is_caught(tmp_path):
    doc = tmp_path / "guide.md"
    doc.write_text("It took 1,234,567 ms (`benchmarks/results/bench_evaluate.md`).\n")
    assert unmeasured_figures(doc) == ["guide.md: 1,234,567"]


def test_an_empty_block_never_swallows_the_next(tmp_path):
    """A new block with no text yet is filled in place: the rewrite stops at its own end
    marker, never at a later block's."""
    figures = load("make_doc_figures")
    begin, end = figures.BEGIN, figures.END
    text = f"{begin.format(name='a')}\n{end}\n\nprose\n\n{begin.format(name='b')}\nold\n{end}\n"
    assert figures._pattern("a").search(text) is None  # nothing to rewrite in an empty block...
    assert figures._pattern("b").search(text).group(1) == "old"  # ...and the next block stays its own
