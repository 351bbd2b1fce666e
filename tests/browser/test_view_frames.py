"""The live view keeps its elements from one state to the next (heatmap.js: a label pool, one colour bar per
palette, the grid's cells), so a view must show exactly what a view built fresh shows, whatever it drew before:
in headless Chromium, one view walks through states of random shapes, labels, titles, axis labels, palettes and
highlights made by :class:`attnlib.show.HeatmapView`, and after each its SVG is compared with a fresh view's."""

from __future__ import annotations

import base64
import shutil

import numpy as np
import pytest

from attnlib.show import HeatmapView
from attnlib.show.page import STATIC
from harness.labdriver import headless_chromium
from harness.static_pages import open_page, serve

pytestmark = pytest.mark.browser

PAGE = """<!doctype html><meta charset="utf-8"><body><div id="walked"></div><div id="fresh"></div>
<script type="module">
import { createHeatmap } from "./heatmap.js";
const host = { send() {}, asks: () => false, explain: async () => "" };
const walked = createHeatmap(document.getElementById("walked"), host);
// what a view shows, without the id that ties its grid to its own description (random per view)
const shown = (root) => [...root.querySelectorAll("svg")].map((s) => s.outerHTML).join("")
  .replace(/ aria-describedby="[^"]*"/g, "");
window.compare = (states) => states.map((state) => {
  const bytes = Uint8Array.from(atob(state.buffer), (c) => c.charCodeAt(0));
  const drawn = { ...state, buffer: new DataView(bytes.buffer) };
  walked.draw(drawn);
  const box = document.getElementById("fresh");
  box.replaceChildren();
  const fresh = createHeatmap(box, host);
  fresh.draw(drawn);
  return [shown(walked.root), shown(fresh.root)];
});
window.ready = true;
</script>"""

WORDS = ["the", "animal", "didn't", "cross", "street", "because", "it", "was", "too", "tired", "q1", "k12", "é"]


def states(n: int, seed: int) -> list[dict]:
    """``n`` states as an explorer sends them (look and drawn traits), each of a random view and matrix."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        rows, cols = int(rng.integers(1, 11)), int(rng.integers(1, 13))  # more than 8 columns: rotated labels
        pick = lambda k: [str(rng.choice(WORDS)) * int(rng.integers(1, 3)) for _ in range(k)]  # noqa: E731
        view = HeatmapView(
            np.zeros((rows, cols)),
            title=str(rng.choice(["", "A = softmax", "S = Q Kᵀ"])),
            xlabel=str(rng.choice(["", "key"])),
            ylabel=str(rng.choice(["", "query"])),
            cmap=None if rng.random() < 0.5 else "coolwarm",
            annotate=None if rng.random() < 0.6 else bool(rng.random() < 0.5),
        )
        matrix = rng.standard_normal((rows, cols)) * 10.0 ** int(rng.integers(-2, 3))
        frame = view.frame(
            matrix,
            row_labels=pick(rows) if rng.random() < 0.8 else None,
            col_labels=pick(cols) if rng.random() < 0.8 else None,
            rows=[int(rng.integers(rows))] if rng.random() < 0.5 else (),
            cells=[(int(rng.integers(rows)), int(rng.integers(cols)))] if rng.random() < 0.3 else (),
        )
        state = {**view.look(), **view.drawn(frame)}
        state["buffer"] = base64.b64encode(state["buffer"]).decode()
        out.append(state)
    return out


def test_a_view_shows_what_a_fresh_view_shows_whatever_it_drew_before(tmp_path) -> None:
    shutil.copy(STATIC / "heatmap.js", tmp_path / "heatmap.js")
    (tmp_path / "index.html").write_text(PAGE, encoding="utf-8")
    walk = states(60, seed=37)
    assert {s["shape"][1] > 8 for s in walk} == {True, False}, "both rotated and upright column labels"
    assert {bool(s["ylabel"]) for s in walk} == {True, False} and len({s["palette"][0] for s in walk}) > 1
    with headless_chromium() as browser, serve(tmp_path) as base:
        page, blocked, errors = open_page(browser, f"{base}/index.html")
        try:
            page.wait_for_function("window.ready === true")
            pairs = page.evaluate("(states) => window.compare(states)", walk)
        finally:
            page.close()
    assert not blocked and not errors, (blocked, errors)
    assert len(pairs) == len(walk) and all(walked for walked, _ in pairs)
    differ = [k for k, (walked, fresh) in enumerate(pairs) if walked != fresh]
    assert not differ, f"states {differ} drawn after others differ from a fresh view's, e.g.:\n{pairs[differ[0]]}"
    # the walk moved the frame: not every state looks the same
    assert len({walked for walked, _ in pairs}) == len(pairs)
