"""No lesson shows a bare ``True`` or ``False`` where a claim rests on a figure: the learner sees the figure (the
largest difference, a count, an accuracy) and a cell asserts the claim (the project's standards)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
#: an output made of nothing but booleans: ``True``, ``False\n``, ``True True True``, ``[True, False]``
ONLY_BOOLEANS = re.compile(r"[\s\[\](),]*(?:(?:True|False)[\s\[\](),]*)+")


def shown_text(output: nbformat.NotebookNode) -> str | None:
    """The text an output shows: a stream's, or an execute_result's plain text; None for anything else."""
    if output.output_type == "stream":
        return "".join(output.text)
    if output.output_type == "execute_result":
        return "".join(output.get("data", {}).get("text/plain", ""))
    return None


def bare_booleans(nb: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """(cell index, text) of each output that shows nothing but booleans."""
    found = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            text = shown_text(output)
            if text is not None and ONLY_BOOLEANS.fullmatch(text):
                found.append((index, text.strip()))
    return found


def test_the_check_sees_a_bare_boolean_and_passes_a_figure() -> None:
    cells = [
        nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output("stream", name="stdout", text="True\nTrue\n")]),
        nbformat.v4.new_code_cell(
            "y", outputs=[nbformat.v4.new_output("execute_result", data={"text/plain": "False"})]
        ),
        nbformat.v4.new_code_cell("z", outputs=[nbformat.v4.new_output("stream", name="stdout", text="[True, True]")]),
        nbformat.v4.new_code_cell(
            "w", outputs=[nbformat.v4.new_output("stream", name="stdout", text="largest difference: 0\n")]
        ),
        nbformat.v4.new_code_cell(
            "v", outputs=[nbformat.v4.new_output("stream", name="stdout", text="Trueness 0.9\n")]
        ),
    ]
    assert [index for index, _ in bare_booleans(nbformat.v4.new_notebook(cells=cells))] == [0, 1, 2]


#: lessons still showing bare booleans, each with who prints their figures; strict: it fails once they are fixed
PENDING = {
}


@pytest.mark.parametrize(
    "lesson",
    [
        pytest.param(path, marks=pytest.mark.xfail(strict=True, reason=PENDING[path.stem]))
        if path.stem in PENDING
        else path
        for path in LESSONS
    ],
    ids=lambda p: p.stem,
)
def test_no_stored_output_is_a_bare_boolean(lesson: Path) -> None:
    found = bare_booleans(nbformat.read(lesson, as_version=4))
    assert not found, f"print the figure the claim rests on and assert the claim instead, in cells {found}"
