"""nbval's comment markers in the lessons are ones nbval obeys, and each says why.

nbval recognises a marker only when the whole comment is the marker (``# NBVAL_IGNORE_OUTPUT``):
``# NBVAL_IGNORE_OUTPUT: because …`` on one line is silently an ordinary comment, and the cell's
output is compared after all. The reason goes on the next line, as a comment of its own.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbval.plugin import comment_markers

REPO = Path(__file__).resolve().parent.parent
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def marker_lines(path: Path) -> list[tuple[int, list[str], int]]:
    """(cell index, the cell's lines, index of the line) for every comment line that mentions NBVAL."""
    found = []
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type != "code":
            continue
        lines = cell.source.splitlines()
        found += [(index, lines, i) for i, line in enumerate(lines) if line.strip().startswith("#") and "NBVAL" in line]
    return found


@pytest.mark.parametrize("path", LESSONS, ids=[p.name for p in LESSONS])
def test_markers_are_ones_nbval_obeys_and_say_why(path: Path) -> None:
    for index, lines, i in marker_lines(path):
        comment = lines[i].strip().lstrip("#").strip()
        assert comment in comment_markers, f"{path.name} cell {index}: {lines[i]!r} is not a marker nbval obeys"
        why = lines[i + 1].strip() if i + 1 < len(lines) else ""
        assert why.startswith("#") and len(why) > 10, f"{path.name} cell {index}: say why on the line after {comment}"


def test_a_marker_with_its_reason_on_the_same_line_is_caught() -> None:
    assert "NBVAL_IGNORE_OUTPUT" in comment_markers
    assert "NBVAL_IGNORE_OUTPUT: timings vary" not in comment_markers
