"""A learner clicks "Run All", then goes back up and re-runs a cell of the lesson: it must still work.

Each lesson runs top to bottom in one kernel (the exercise stubs run with their ``...``), then every
code cell *above* the "## Exercises" heading (or, where the exercises are woven into the lesson, above
the first ``check(``) runs again in the same kernel, in order. An exercise
stub that reuses a name the lesson needs (lesson 07's ``def outputs``, lesson 14's
``def previous_token_score``) breaks that second run.

Affordability rules (nbval already runs every lesson once; this test must not double make test's time):

1. A lesson is executed only if it is at risk: a code cell from the exercises on binds a name (assignment,
   ``def``, ``import``) that a code cell above the exercises reads. For the others, re-running a cell
   above the exercises finds exactly the names Run All left, so the static check is the test.
2. On the second pass, a cell that trains, generates or times (its source calls ``train``,
   ``train_recipe``, ``reverse_model``, ``generate``, ``median_seconds`` or ``.backward()``, or it is
   tagged ``long-running``) is not re-run: it only re-creates what it made the first time.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient


def _is_appendix(path: Path) -> bool:
    """An appendix (``# 19 · Appendix: …``) gathers detours of several lessons and has no exercises to re-run."""
    return "· Appendix" in nbformat.read(path, as_version=4).cells[0].source.splitlines()[0]


LESSONS_DIR = Path(__file__).parent.parent / "notebooks"
NOTEBOOKS = [p for p in sorted(LESSONS_DIR.glob("[0-9][0-9]_*.ipynb")) if not _is_appendix(p)]
LONG = re.compile(r"\b(train|train_recipe|reverse_model|generate|median_seconds)\(|\.backward\(\)")
EXERCISES = re.compile(r"^#+\s*Exercises", re.MULTILINE)


def _first_exercise_cell(nb) -> int:
    """The "## Exercises" heading; in a lesson whose exercises are woven into it (13), the first ``check(``."""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and EXERCISES.search(cell.source):
            return index
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and "check(" in cell.source:
            return index
    return len(nb.cells)


def _names(source: str, *, bound: bool) -> set[str]:
    """The names ``source`` binds (``bound=True``) or reads; none for cells that are not Python (magics)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if bound and isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif bound and isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store if bound else ast.Load):
            names.add(node.id)
    return names


def at_risk(nb) -> set[str]:
    """Names an exercise cell rebinds that a cell of the lesson above the exercises reads."""
    stop = _first_exercise_cell(nb)
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    read = set().union(*(_names(c.source, bound=False) for i, c in code if i < stop))
    rebound = set().union(*(_names(c.source, bound=True) for i, c in code if i > stop))
    return read & rebound


def _long_running(cell) -> bool:
    return "long-running" in cell.metadata.get("tags", []) or bool(LONG.search(cell.source))


def test_the_rules_find_exercises_long_cells_and_shadowed_names():
    nb = nbformat.read(NOTEBOOKS[0], as_version=4)
    assert _first_exercise_cell(nb) < len(nb.cells)
    cells = [nbformat.v4.new_code_cell(s) for s in ("outputs = x @ w", "print(outputs)")]
    heading = nbformat.v4.new_markdown_cell("## Exercises")
    stub = nbformat.v4.new_code_cell("def outputs(x):\n    ...")
    assert at_risk(nbformat.v4.new_notebook(cells=[*cells, heading, stub])) == {"outputs"}
    assert not at_risk(nbformat.v4.new_notebook(cells=[*cells, heading, nbformat.v4.new_code_cell("answer = ...")]))
    assert _long_running(nbformat.v4.new_code_cell("model, history = pretrained.train_recipe(recipe, steps=3)"))
    assert not _long_running(nbformat.v4.new_code_cell("trained = model.training"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_run_all_then_rerun_the_lesson(path):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", allow_errors=False, resources={"metadata": {"path": str(path.parent)}}
    )
    stop = _first_exercise_cell(nb)
    assert stop < len(nb.cells), f"{path.name} has no '## Exercises' heading and no check(...)"
    if not at_risk(nb):
        return  # rule 1: nothing the exercises bind is read above them
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        for index, cell in enumerate(nb.cells[:stop]):
            if cell.cell_type == "code" and not _long_running(cell):
                client.execute_cell(cell, index)  # raises CellExecutionError with the cell's traceback
