"""A learner clicks "Run All", then goes back up and re-runs a cell of the lesson: it must still work.

Each lesson runs top to bottom in one kernel (the exercise stubs run with their ``...``), then every
code cell *above* the "## Exercises" heading (or, where the exercises are woven into the lesson, above
the first ``check(``) runs again in the same kernel, in order. An exercise
stub that reuses a name the lesson needs (lesson 07's ``def outputs``, lesson 14's
``def previous_token_score``) breaks that second run.

Affordability rules (nbval already runs every lesson once; this test must not double make test's time):

1. A lesson is executed only if it is at risk: a code cell from the exercises on binds a name at its top
   level (assignment, ``for`` target, ``def``, ``import``) that a code cell above the exercises reads
   before binding it itself. For the others, re-running a cell above the exercises reads only names it
   makes itself or that Run All left as the lesson made them, so the static check is the test (and
   a cell above that reads a name an exercise rebinds is the bug: it would compute with the learner's
   exercise instead of the lesson's object, error or not). A synthetic lesson checks that the run
   itself catches what it is for.
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
    """An appendix (``# 20 · Appendix: …``) gathers detours of several lessons and has no exercises to re-run."""
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


class _Scope(ast.NodeVisitor):
    """Walks a cell in the order Python runs it: ``free`` gets each name read before the cell bound it,
    ``bound`` each name the cell binds at its top level (not a function's locals, a comprehension's or a
    lambda's variables). A name bound anywhere in a branch or a loop counts as bound from there on."""

    def __init__(self, bound: set[str] | None = None) -> None:
        self.bound: set[str] = set(bound or ())
        self.top: set[str] = set()  # the names bound at this scope
        self.free: set[str] = set()

    def define(self, name: str) -> None:
        self.bound.add(name)
        self.top.add(name)

    def bind(self, target: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.define(target.id)
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self.bind(element)
        elif isinstance(target, ast.Starred):
            self.bind(target.value)
        else:
            self.visit(target)  # x[i] = … and x.a = … read x (and i), bind nothing

    def inner(self, params: set[str], *body: ast.AST) -> None:
        scope = _Scope(self.bound | params)
        for node in body:
            scope.visit(node)
        self.free |= scope.free

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and node.id not in self.bound:
            self.free.add(node.id)
        elif isinstance(node.ctx, ast.Store | ast.Del):
            self.define(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self.bind(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self.bind(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name) and node.target.id not in self.bound:
            self.free.add(node.target.id)  # x += 1 reads x first
        self.bind(node.target)

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self.bind(node.target)
        for child in (*node.body, *node.orelse):
            self.visit(child)

    def visit_withitem(self, node: ast.withitem) -> None:
        self.visit(node.context_expr)
        if node.optional_vars is not None:
            self.bind(node.optional_vars)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self.define(node.name)
        for child in node.body:
            self.visit(child)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            self.define((alias.asname or alias.name).split(".")[0])

    visit_ImportFrom = visit_Import

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        for child in (*node.decorator_list, *getattr(node, "bases", ()), *getattr(node, "keywords", ())):
            self.visit(child)
        if not isinstance(node, ast.ClassDef):
            for default in (*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)):
                self.visit(default)
        self.define(node.name)
        if isinstance(node, ast.ClassDef):
            self.inner(set(), *node.body)
        else:
            args = node.args
            every = (*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a))
            params = {a.arg for a in every}
            stored = (n for c in node.body for n in ast.walk(c) if isinstance(n, ast.Name))
            local = {n.id for n in stored if isinstance(n.ctx, ast.Store)}
            self.inner(params | local, *node.body)

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for default in node.args.defaults:
            self.visit(default)
        self.inner({a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}, node.body)

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        first, *rest = node.generators
        self.visit(first.iter)  # the first iterable is read in the cell's scope, the rest in the comprehension's
        scope = _Scope(self.bound)
        scope.bind(first.target)
        for condition in first.ifs:
            scope.visit(condition)
        for generator in rest:
            scope.visit(generator.iter)
            scope.bind(generator.target)
            for condition in generator.ifs:
                scope.visit(condition)
        for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
            scope.visit(part)
        self.free |= scope.free

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension


def _names(source: str, *, bound: bool) -> set[str]:
    """The names ``source`` binds at its top level (``bound=True``), or reads before binding them; none for
    cells that are not Python (magics)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    scope = _Scope()
    for statement in tree.body:
        scope.visit(statement)
    return scope.top if bound else scope.free


def at_risk(nb) -> set[str]:
    """Names an exercise cell rebinds that a cell of the lesson above the exercises reads before it binds them
    (a cell that binds a name first re-creates it when re-run)."""
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
    # a cell that binds a name before reading it re-creates it on a re-run: not at risk
    remade = [
        nbformat.v4.new_code_cell(s)
        for s in (
            "gap = (a - b).abs().max()\nprint(gap)",
            "for seed, model in trained.items():\n    print(model)",
            "index = {c: i for i, c in enumerate(text)}",
        )
    ]
    rebinds = nbformat.v4.new_code_cell("gap = 0\nmodel = trained[1]\nline = [c for c in text]\nr = f(model)")
    assert not at_risk(nbformat.v4.new_notebook(cells=[*remade, heading, rebinds]))
    assert at_risk(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("gap += 1"), heading, rebinds])) == {"gap"}
    reads = nbformat.v4.new_code_cell("def score(m):\n    return m(inputs)\nscore(model)")
    assert at_risk(nbformat.v4.new_notebook(cells=[reads, heading, rebinds])) == {"model"}
    assert _names("x[i] = f(y)", bound=True) == set() and _names("x[i] = f(y)", bound=False) == {"x", "i", "f", "y"}
    assert _long_running(nbformat.v4.new_code_cell("model, history = pretrained.train_recipe(recipe, steps=3)"))
    assert not _long_running(nbformat.v4.new_code_cell("trained = model.training"))


def _run_all_then_rerun(nb, folder: Path) -> None:
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", allow_errors=False, resources={"metadata": {"path": str(folder)}}
    )
    stop = _first_exercise_cell(nb)
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        for index, cell in enumerate(nb.cells[:stop]):
            if cell.cell_type == "code" and not _long_running(cell):
                client.execute_cell(cell, index)  # raises CellExecutionError with the cell's traceback


def test_the_rerun_catches_a_stub_that_shadows_the_lessons_name(tmp_path: Path):
    from nbclient.exceptions import CellExecutionError

    # the lesson's model comes from a cell the second pass skips (rule 2); the exercise's stub takes its name
    lesson = ("def train():\n    return lambda x: x / 2", "model = train()", "half = model(4) + 1")
    stub = nbformat.v4.new_code_cell("def model(x):\n    ...  # your code")
    cells = [nbformat.v4.new_code_cell(s) for s in lesson]
    nb = nbformat.v4.new_notebook(cells=[*cells, nbformat.v4.new_markdown_cell("## Exercises"), stub])
    assert at_risk(nb) == {"model"}
    with pytest.raises(CellExecutionError, match="NoneType"):
        _run_all_then_rerun(nb, tmp_path)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_run_all_then_rerun_the_lesson(path):
    nb = nbformat.read(path, as_version=4)
    stop = _first_exercise_cell(nb)
    assert stop < len(nb.cells), f"{path.name} has no '## Exercises' heading and no check(...)"
    if not at_risk(nb):
        return  # rule 1: nothing the exercises bind is read above them before it is made there
    _run_all_then_rerun(nb, path.parent)
