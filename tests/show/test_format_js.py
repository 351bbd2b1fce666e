"""The page writes numbers as Python does: heatmap.js's ``formatValue`` against :func:`attnlib.formatting.annotation`
over zero, tiny, huge, negative, exactly-tied and random values, run by node."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np

from attnlib.formatting import annotation
from attnlib.show.view import STATIC

RUN = """
import { formatValue } from %s;
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const cases = JSON.parse(input);
  process.stdout.write(JSON.stringify(cases.map(([v, d]) => formatValue(v, d))));
});
"""


def values() -> list[float]:
    rng = np.random.default_rng(37)
    special = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 0.125, -0.125, 0.375, 1.005, 99999.99, 99999.999, 1e5, -1e5]
    special += [125000.0, 135000.0, 9.95, 0.0995, 0.995, 9.5e-5, 5e-324, 1.7e308, -1e-300, 1e21, 3.5e22, 2.0**-20]
    ties = [k / 2**p for k in range(-40, 41, 3) for p in (1, 3, 4, 6)]  # exactly representable halves at some digit
    spread = (rng.standard_normal(400) * 10.0 ** rng.integers(-12, 12, 400)).tolist()
    grid = (rng.integers(-5000, 5000, 200) / 1000).tolist()  # three decimals: ties at two
    return special + ties + spread + grid


def test_the_page_formats_numbers_as_python_does(tmp_path) -> None:
    node = shutil.which("node")
    assert node, "node is needed to run the page's formatter (make lint installs it with the npm packages)"
    cases = [[v, d] for v in values() for d in (0, 1, 2, 3, 4, 6)]
    script = tmp_path / "run.mjs"
    script.write_text(RUN % json.dumps((STATIC / "heatmap.js").as_uri()))
    out = subprocess.run([node, str(script)], input=json.dumps(cases), capture_output=True, text=True, check=True)
    page = json.loads(out.stdout)
    python = [annotation(v, d) for v, d in cases]
    wrong = [(v, d, js, py) for (v, d), js, py in zip(cases, page, python) if js != py]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, e.g. (value, decimals, page, python): {wrong[:5]}"
    assert page[python.index("0")] == "0"  # an exact zero is 0 in the page too
