"""Facts about the course stated in several places agree with their one source, each lesson's header.

The header (the lesson's first cell) gives its number, title and duration ("about NN minutes"); the
README's lesson table and the teaching guide's lesson plan must list the same lessons, in order, with
the same durations, and the guide's sessions must add up.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def header(path: Path) -> tuple[str, str, int]:
    """(number, title, minutes) from the lesson's first cell: ``# 05 · Softmax`` … ``about 30 minutes``."""
    first = "".join(json.loads(path.read_text())["cells"][0]["source"])
    number, title = re.match(r"#\s*(\d\d)\s*·\s*(.+)", first).groups()
    minutes = re.search(r"[Aa]bout (\d+) minutes", first)
    assert minutes, f"{path.name}'s first cell does not say how long it takes ('about NN minutes')"
    return number, title.strip(), int(minutes.group(1))


HEADERS = [header(p) for p in NOTEBOOKS]


def test_readme_lists_every_lesson_with_its_own_duration() -> None:
    readme = (REPO / "README.md").read_text()
    table = readme.split("<!-- lesson-table")[1].split("<!-- /lesson-table -->")[0]
    rows = re.findall(r"^\| \[(\d\d) ([^\]]+)\]\(notebooks/([^)]+)\) \| .* \| (\d+) min \|$", table, re.M)
    assert [(n, int(m)) for n, _, _, m in rows] == [(n, m) for n, _, m in HEADERS]
    assert [f for _, _, f, _ in rows] == [p.name for p in NOTEBOOKS]


def test_teaching_guide_plan_has_every_lesson_duration_and_session_totals() -> None:
    guide = (REPO / "docs" / "teaching-guide.md").read_text()
    rows = re.findall(r"^\| (\d+) \| `(\d\d_[a-z_]+)\.ipynb` \| (\d+) min \|", guide, re.M)
    assert [(int(n), f, int(m)) for n, f, m in rows] == [
        (int(n), p.stem, m) for (n, _, m), p in zip(HEADERS, NOTEBOOKS)
    ]
    minutes = {int(n): m for n, _, m in HEADERS}
    sessions = re.findall(r"\*\*session \d+\*\* lessons (\d+)–(\d+) \((\d+) min\)", guide)
    assert sessions, "the guide suggests no sessions"
    covered = []
    for first, last, total in sessions:
        span = range(int(first), int(last) + 1)
        covered += list(span)
        assert sum(minutes[i] for i in span) == int(total), f"session {first}–{last} does not add up"
    assert covered == sorted(minutes), "the sessions must cover every lesson once, in order"
