"""site/typeset.mjs, which typesets the site's and the decks' math when they are built (MathJax 3 in Node), called
as both builds call it (scripts/build_slides.py's ``typeset_math``) on tiny pages: each formula becomes MathJax's
CommonHTML with its MathML beside it for screen readers, the web fonts are copied and named relative to the page,
code and a dollar are left alone (``$…$`` is math in a deck only), and a formula MathJax cannot parse fails the
build naming the page and the TeX, every page left as it was."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest

from harness.static_pages import math_problems

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (REPO / "node_modules" / "mathjax-full" / "package.json").is_file(),
    reason="needs Node.js and node_modules/mathjax-full (npm ci)",
)

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>t</title></head><body>
<p>Scores <span class="math">\\(S = QK^\\top \\in \\mathbb{R}^{n_q \\times n_k}\\)</span> cost $5 and $6.</p>
<div class="math">\\[\\operatorname{softmax}(s)_j = \\frac{e^{s_j}}{\\sum_l e^{s_l}}\\]</div>
<pre>\\(left as code\\)</pre><!-- a comment -->
</body></html>
"""


def _typeset_math():
    spec = importlib.util.spec_from_file_location("build_slides", REPO / "scripts" / "build_slides.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.typeset_math


def test_each_formula_becomes_typeset_math_with_its_mathml_and_fonts(tmp_path: Path) -> None:
    typeset_math = _typeset_math()
    page, deck = tmp_path / "site" / "notebooks" / "page.html", tmp_path / "deck.slides.html"
    page.parent.mkdir(parents=True)
    page.write_text(PAGE, encoding="utf-8")
    deck.write_text(PAGE.replace("$5 and $6", "\\$5 and $x_i$"), encoding="utf-8")
    fonts = tmp_path / "site" / "_static" / "math-fonts"
    assert "typeset 2 formulas in 1 pages" in typeset_math([page], fonts)
    assert "typeset 3 formulas in 1 pages" in typeset_math([deck], tmp_path / "deck-fonts", dollars=True)

    html = page.read_text(encoding="utf-8")
    assert html.count("<mjx-container") == 2 and not math_problems(html), math_problems(html)
    mathml = re.findall(r"<mjx-assistive-mml[^>]*>(.*?)</mjx-assistive-mml>", html, re.S)
    assert len(mathml) == 2 and "<mi>S</mi>" in mathml[0] and "<mfrac>" in mathml[1], mathml
    assert 'display="true"' in html  # \[…\] is display math
    assert "cost $5 and $6." in html and "<pre>\\(left as code\\)</pre>" in html  # a dollar; code
    assert "<script" not in html
    assert 'url("../_static/math-fonts/MathJax_Main-Regular.woff")' in html  # relative to the page
    assert (fonts / "MathJax_Main-Regular.woff").is_file() and (fonts / "MathJax_Math-Italic.woff").is_file()

    html = deck.read_text(encoding="utf-8")
    assert html.count("<mjx-container") == 3 and not math_problems(html, dollars=True)
    assert "<msub><mi>x</mi><mi>i</mi></msub>" in html and "<span>$</span>5 and" in html  # \$ is a dollar in a deck
    assert 'url("deck-fonts/MathJax_Main-Regular.woff")' in html


def test_a_formula_mathjax_cannot_parse_fails_naming_the_page_and_the_tex(tmp_path: Path) -> None:
    typeset_math = _typeset_math()
    good, bad = tmp_path / "good.html", tmp_path / "bad.html"
    good.write_text(PAGE, encoding="utf-8")
    bad.write_text(PAGE.replace("\\top", "\\tpo").replace("\\frac{e^{s_j}}", "\\frac{e^{s_j}"), encoding="utf-8")
    with pytest.raises(SystemExit) as failed:
        typeset_math([good, bad], tmp_path / "fonts")
    message = str(failed.value)
    assert "2 formula(s)" in message and message.count(str(bad)) == 2 and str(good) not in message, message
    assert "\\tpo" in message and "Undefined control sequence" in message, message
    assert "\\frac{e^{s_j}" in message, message
    assert good.read_text(encoding="utf-8") == PAGE and "<mjx-" not in bad.read_text(encoding="utf-8")
