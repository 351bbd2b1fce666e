"""The solutions still pass: every exercise's solution, as the teacher edition shows it, is checked in its lesson.

``scripts/build_editions.py`` builds the checked edition: the teacher edition (``notebooks/`` itself) with, after
each solution, a cell that runs the solution's code in the lesson's kernel (the cells before it have run) and
asserts that the checker's verdict (the ``Feedback`` that ``check`` returns) is correct. ``make test`` runs
nbval on that edition instead of the learner edition: the same code cells and stored outputs
(tests/test_editions.py), so the lessons are run once and every solution is checked in that run.

This module checks the edition itself: each solution is found and put in place, the check cell asserts the
verdict and leaves the lesson's names and random state alone, and only the listed solutions are prose.
Running one lesson's checked edition here shows that a wrong solution fails it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

REPO = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("build_editions", REPO / "scripts" / "build_editions.py")
editions = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(editions)
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))

#: exercises whose solution gives the answer only in prose or LaTeX: there is no code to run
PROSE_ONLY = {"weighting.1", "scaling.1", "scaling.3", "module.1", "sentence.1", "multihead.1"}


def _checked(path: Path) -> tuple[nbformat.NotebookNode, list[str], list[str]]:
    return editions.checked_edition(nbformat.read(path, as_version=4))


def _run(nb: nbformat.NotebookNode) -> None:
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}).execute()


def test_solution_code_is_found_in_every_form() -> None:
    fenced = "<details><summary>Solution</summary>\n\n```python\ndef f(x):\n    return x\n```\n\nprose `x`\n"
    assert editions.solution_code(fenced) == "def f(x):\n    return x\n"
    assert editions.solution_code("`answer = [1, 2]`: because `[3, 4]` is wrong") == "answer = [1, 2]"
    assert editions.solution_code("$z = [1, 6.5]$; adding gives `[4, 10]`") is None  # no guess at a backtick


def test_a_method_solution_replaces_the_stub_method() -> None:
    cell = "class M:\n    def __init__(self):\n        self.a = 1\n"
    cell += '    def forward(self, x):\n        ...  # stub\n\n\ncheck("m.1", M)'
    name, source = editions.solved(cell, "    def forward(self, x):\n        return x + self.a\n")
    assert name == "m.1" and "stub" not in source and "self.a = 1" in source
    names: dict = {"check": lambda name, answer: answer().forward(1)}
    exec(source, names)
    assert names["_verdict"] == 2


def test_a_cell_that_is_not_an_exercise_is_refused() -> None:
    with pytest.raises(ValueError, match="check"):
        editions.solved("x = 1", "x = 2")


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_every_solution_in_code_gets_a_check_cell(lesson: Path) -> None:
    nb, checked, prose = _checked(lesson)
    exercises = [c for c in nbformat.read(lesson, as_version=4).cells if editions.launch.is_solution(c)]
    assert len(checked) + len(prose) == len(exercises)
    cells = [c for c in nb.cells if "solution-check" in c.metadata.get("tags", [])]
    assert len(cells) == len(checked)
    for name, cell in zip(checked, cells):
        assert (
            cell.source.startswith("# NBVAL_IGNORE_OUTPUT\n#")
            and f"assert _verdict.correct, 'the checker rejects the solution of {name}" in cell.source
        )
    others = [c for c in nb.cells if c not in cells]
    assert others == nbformat.read(lesson, as_version=4).cells  # the teacher edition, untouched


def test_prose_only_solutions_are_exactly_the_listed_ones() -> None:
    found = set().union(*(_checked(path)[2] for path in LESSONS))
    assert found == PROSE_ONLY, "give the solution as code or as `answer = …`, or update PROSE_ONLY"


def _tiny_lesson(solution: str, second: str = "answer = [0.25, 0.25, 0.5]") -> nbformat.NotebookNode:
    def exercise(solution: str) -> list[nbformat.NotebookNode]:
        return [
            nbformat.v4.new_code_cell('answer = ...  # 3 numbers\ncheck("softmax.1", answer)'),
            nbformat.v4.new_markdown_cell(f"Solution: `{solution}`", metadata={"tags": ["solution"]}),
        ]

    cells = [
        nbformat.v4.new_code_cell(
            "import torch\nfrom attnlib.lessons import check\nkept = 'the lesson'\n"
            "torch.manual_seed(0)\nnext_draw = torch.rand(2)[1]\ntorch.manual_seed(0)\ntorch.rand(1)"
        ),
        *exercise(solution),
        nbformat.v4.new_code_cell("assert answer is ... and kept == 'the lesson' and torch.rand(1) == next_draw"),
        *exercise(second),
    ]
    return editions.checked_edition(nbformat.v4.new_notebook(cells=cells))[0]


def test_the_check_cell_passes_a_right_solution_and_leaves_the_lesson_as_it_was() -> None:
    # the second exercise's solution uses what the first one's defined, as a teacher's run of the solutions would
    nb = _tiny_lesson(
        "answer = [0.25, 0.25, 0.5]; kept = 'changed'; half = 0.5; torch.rand(5)", "answer = [0.25, 0.25, half]"
    )
    _run(nb)  # the cell between asserts that the lesson's names and its random numbers are as without the check


def test_the_check_cell_fails_on_a_wrong_solution_with_the_checkers_message() -> None:
    nb = _tiny_lesson("answer = [0.5, 0.25, 0.25]")
    with pytest.raises(CellExecutionError, match=r"the checker rejects the solution of softmax\.1"):
        _run(nb)


def test_the_build_writes_the_checked_edition_of_every_lesson(tmp_path: Path) -> None:
    editions.build(tmp_path)
    assert sorted(p.name for p in (tmp_path / "checked").glob("*.ipynb")) == [p.name for p in LESSONS]
    for lesson in LESSONS:
        written = nbformat.read(tmp_path / "checked" / lesson.name, as_version=4)
        expected = _checked(lesson)[0].cells  # the same cells (a check cell's id is new each time it is made)
        assert [(c.cell_type, c.source) for c in written.cells] == [(c.cell_type, c.source) for c in expected]
