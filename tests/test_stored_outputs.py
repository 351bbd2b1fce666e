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
_SEPARATORS = r"[\s\[\](),]*"
_BOOLEANS = rf"{_SEPARATORS}(?:(?:tensor\()?(?:True|False){_SEPARATORS})+"
#: a LINE that shows nothing but booleans, after a label or not: ``True True``, ``tensor(True)``,
#: ``symmetric: False``, ``is it symmetric? True``, ``equal rows: [True, True]``, ``(torch.Size([2, 3]), True)``;
#: or a labelled boolean before another clause (``the same 4 decimals: True, 2 of 4 differ``);
#: not a keyword in a repr (``Linear(..., bias=False)``), a key of a dict (``{'mlp': False, 'd_model': 32}``)
#: nor a word that starts with one (``Trueness 0.9``)
BOOLEAN_LINE = re.compile(
    rf"(?:.*[:?]\s+)?{_BOOLEANS}|\(.*,\s*(?:True|False)\)|.*(?<![\x27\x22])[:?]\s+(?:True|False)[,;].*"
)
#: outputs whose booleans ARE the content, not a claim: (lesson, a line of the cell's source) -> why
CONTENT = {
    ("09_module", "mask = causal_mask(3)  # (3, 3), True on and below the diagonal"): "the causal mask itself",
}


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


def boolean_lines(nb: nbformat.NotebookNode, lesson: str = "") -> list[tuple[int, str]]:
    """(cell index, line) of each output line that is only booleans, or a label followed only by booleans."""
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or any((lesson, line) in CONTENT for line in cell.source.splitlines()):
            continue
        for output in cell.get("outputs", []):
            text = shown_text(output)
            found += [(index, line) for line in (text or "").splitlines() if BOOLEAN_LINE.fullmatch(line)]
    return found


def _notebook(*texts: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output("stream", name="stdout", text=text)])
            for text in texts
        ]
    )


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


def test_the_check_sees_a_line_of_booleans_among_figures() -> None:
    nb = _notebook(
        "largest difference: 0\nsymmetric: False\n",  # a labelled boolean after a figure
        "tensor([1.0000, 1.0000])\nTrue True\n",  # a bare line after a figure
        "is it symmetric? True\nequal rows: [True, True]\n",
        "S = lengths × cosines: tensor(True)\n(torch.Size([1, 8, 16]), True)\n",
        "W_q: the same 4 decimals: True, 2 of 4 differ\n",
        "largest difference 0.00000\nTrueness 0.9\nthe answer is True because 2 > 1\n",  # figures and sentences
        "Linear(in_features=2, out_features=2, bias=False)\nExplorer(scaled=True, causal=False)\n",  # reprs
        "{'causal': False, 'd_model': 32, 'mlp': False}\n",  # a configuration
    )
    assert boolean_lines(nb) == [
        (0, "symmetric: False"),
        (1, "True True"),
        (2, "is it symmetric? True"),
        (2, "equal rows: [True, True]"),
        (3, "S = lengths × cosines: tensor(True)"),
        (3, "(torch.Size([1, 8, 16]), True)"),
        (4, "W_q: the same 4 decimals: True, 2 of 4 differ"),
    ]


def test_a_mask_shown_as_the_content_is_allowed_by_name_only() -> None:
    nb = _notebook("tensor([[ True, False],\n        [ True,  True]])")
    nb.cells[0].source = "mask = causal_mask(3)  # (3, 3), True on and below the diagonal\nmask"
    assert boolean_lines(nb, "09_module") == []
    assert boolean_lines(nb, "10_sentence") == [(0, "        [ True,  True]])")]


#: lessons still showing bare booleans, each with who prints their figures; strict: it fails once they are fixed
PENDING = {}


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
    nb = nbformat.read(lesson, as_version=4)
    found = bare_booleans(nb)
    assert not found, f"print the figure the claim rests on and assert the claim instead, in cells {found}"
    lines = boolean_lines(nb, lesson.stem)
    assert not lines, (
        f"{lesson.stem}: print the figure the claim rests on and assert the claim instead of "
        + "; ".join(f"cell {index}, line {line.strip()!r}" for index, line in lines)
    )
