"""Build the learner, for-credit, teacher and checked editions of the lessons from the one source, ``notebooks/``.

Usage: python scripts/build_editions.py [--out build/editions]
       python scripts/build_editions.py --workspace my-lessons   (a learner's own copy; see below)

- ``<out>/teacher/``: the lessons as they are in ``notebooks/`` (speaker notes included).
- ``<out>/learner/``: the same lessons without the teacher's cells: cells whose slide type is
  ``notes`` (speaker notes) and cells tagged ``teacher``. Solutions stay, collapsed in their
  ``<details>`` blocks, so a learner studying alone can check their work after trying. Markdown cells
  tagged ``aside`` (detours a learner may skip) become closed ``<details>`` blocks too; the teacher
  edition keeps them open.
  Code cells and their stored outputs are untouched, so the learner edition re-executes to exactly
  the outputs it holds (``make test`` runs nbval on it).
- ``<out>/credit/``: the learner edition without the solutions (markdown cells tagged ``solution``),
  for a teacher who hands the exercises out for credit (docs/teaching-guide.md says how). Its code is
  the learner edition's: the checkers still give their hints, they never show the worked answer.
- ``<out>/checked/``: the teacher edition with, after each exercise, a cell that runs the exercise's solution
  (as its solution cell shows it) in the lesson's kernel and asserts that its checker accepts it. Its other
  cells are the teacher's, so ``make test`` runs nbval on it instead of the learner edition: the same code
  cells and stored outputs (tests/test_editions.py), plus every solution checked, in the same kernels.
- ``<out>/images/``, ``<out>/README.md`` and ``<out>/docs/documents.md``: what the lessons link to as
  ``../images``, ``../README.md`` and ``../docs/documents.md``, so links work inside an edition as they
  do in the repository.

``--workspace DIR`` gives a learner their own copy of the learner edition in ``DIR/lessons/``
(``make learn``, the class hub, Binder, Kubernetes): lessons already there are never overwritten
(a learner's work stays), missing ones are added, so deleting a broken lesson and running it again
gives a fresh copy of just that lesson. ``DIR/README.md`` is the learner's index (the lesson table,
what to do first), generated from the lessons. The one home of that code is attnlib_lessons.py (the
``attnlib-lessons`` command), loaded here by path so that neither attnlib nor torch is imported.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import re
import shutil
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
_SPEC = importlib.util.spec_from_file_location("attnlib_launch", REPO / "attnlib_lessons.py")
launch = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(launch)
LESSONS = launch.LESSONS
is_teacher_only = launch.is_teacher_only


def learner_edition(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` as the learner edition has it: teacher-only cells out, asides collapsed."""
    copy = nbformat.from_dict(nb)
    copy.cells = [nbformat.from_dict(cell) for cell in launch.learner_cells(copy.cells)]
    return copy


def credit_edition(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The learner edition of ``nb`` without the exercises' solutions."""
    copy = learner_edition(nb)
    copy.cells = [cell for cell in copy.cells if not launch.is_solution(cell)]
    return copy


#: an exercise's cell ends with ``check("<exercise>", <answer>)``
CHECK_LINE = re.compile(r"""^check\(\s*["']([\w.]+)["']\s*,\s*(.+?)\s*\)\s*$""")
FENCED = re.compile(r"```python\n(.*?)```", re.S)
INLINE = re.compile(r"`([^`\n]*\banswer\s*=[^`\n]*)`")


def solution_code(markdown: str) -> str | None:
    """The code of a solution cell: its fenced python blocks, else its inline `` `answer = …` ``; None when the
    solution gives its answer in prose only (a sum worked in LaTeX)."""
    blocks = FENCED.findall(markdown)
    if blocks:
        return "\n".join(blocks)
    inline = INLINE.findall(markdown)
    return inline[0] if inline else None


def _splice_method(cell_source: str, method: str) -> str:
    """``cell_source`` with the method that ``method`` (an indented ``def``) defines replaced by it."""
    first = method.lstrip("\n").splitlines()[0].strip()
    lines = cell_source.splitlines()
    start = next(k for k, line in enumerate(lines) if line.strip() == first)
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
        end += 1
    return "\n".join([*lines[:start], method.rstrip("\n"), "", *lines[end:]])


def solved(cell_source: str, solution: str) -> tuple[str, str]:
    """The exercise's name and its cell with ``solution`` in place, ending ``_verdict = check(...)``.

    The solution runs after the exercise's own lines (its ``...`` stubs), so what it defines replaces them; a
    solution indented like a method (lesson 13's ``forward``) replaces that method in the exercise's class."""
    lines = cell_source.rstrip().splitlines()
    match = CHECK_LINE.match(lines[-1]) if lines else None
    if match is None:
        raise ValueError(f"an exercise's cell ends with check(...): {cell_source!r}")
    name, argument = match.groups()
    body = "\n".join(lines[:-1])
    if solution.startswith((" ", "\t")):
        body, solution = _splice_method(body, solution), ""
    source = f"{body}\n{solution}\n_verdict = check({name!r}, {argument})\n"
    ast.parse(source)  # a solution that is not Python fails the build, named
    return name, source


def solution_check_cell(name: str, source: str) -> nbformat.NotebookNode:
    """A cell that runs ``source`` and asserts the checker's verdict, on a copy of the lesson's names, with torch's
    random state put back after it: the lesson's later cells see the kernel as the learner edition leaves it.

    What earlier solutions defined (lesson 13's block, then the model built of it) is in the copy, as long as
    the lesson has not rebound that name since (``_solved``: name -> the lesson's value it replaced, its own)."""
    label = f"<solution of {name}>"
    code = (
        "# NBVAL_IGNORE_OUTPUT\n"
        f"# the solution of {name}, run and checked: what it prints (a progress bar) is not compared\n"
        "import torch as _torch\n\n"
        "_solved = globals().setdefault('_solved', {})\n"
        "_names = dict(globals())\n"
        "_names.update({k: mine for k, (was, mine) in _solved.items() if globals().get(k, _solved) is was})\n"
        "with _torch.random.fork_rng(devices=[]):\n"
        f"    exec(compile({source!r}, {label!r}, 'exec'), _names)\n"
        "_verdict = _names.pop('_verdict')\n"
        "_solved.update(\n"
        "    {k: (globals().get(k, _solved), v) for k, v in _names.items()\n"
        "     if k[:2] != '__' and globals().get(k, _solved) is not v}\n"
        ")\n"
        f"assert _verdict.correct, 'the checker rejects the solution of {name}: ' + _verdict.message\n"
        "del _names, _verdict"
    )
    return nbformat.v4.new_code_cell(code, metadata={"tags": ["solution-check"]})


def checked_edition(nb: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, list[str], list[str]]:
    """The teacher edition of ``nb`` with a :func:`solution_check_cell` after each solution; the exercises
    checked, and those whose solution gives the answer in prose only (not checked)."""
    copy = nbformat.from_dict(nb)
    cells, checked, prose = [], [], []
    exercise = None
    for cell in copy.cells:
        cells.append(cell)
        if cell.cell_type == "code":
            exercise = cell
        if not launch.is_solution(cell):
            continue
        match = CHECK_LINE.match(exercise.source.rstrip().splitlines()[-1]) if exercise is not None else None
        if match is None:
            raise ValueError(f"the code cell before a solution is not an exercise: {cell.source[:80]!r}")
        code = solution_code(cell.source)
        if code is None:
            prose.append(match.group(1))
            continue
        name, source = solved(exercise.source, code)
        cells.append(solution_check_cell(name, source))
        checked.append(name)
    copy.cells = cells
    return copy, checked, prose


def build(out: Path, source: Path = REPO / "notebooks") -> list[Path]:
    """Write the four editions into ``out``; return the learner notebooks written."""
    lessons = sorted(source.glob(LESSONS))
    if not lessons:
        raise SystemExit(f"no lessons matching {LESSONS} in {source}")
    for edition in ("learner", "credit", "teacher", "checked"):
        shutil.rmtree(out / edition, ignore_errors=True)
        (out / edition).mkdir(parents=True)
    written = []
    for path in lessons:
        nb = nbformat.read(path, as_version=4)
        shutil.copy2(path, out / "teacher" / path.name)
        target = out / "learner" / path.name
        nbformat.write(learner_edition(nb), target)
        nbformat.write(credit_edition(nb), out / "credit" / path.name)
        nbformat.write(checked_edition(nb)[0], out / "checked" / path.name)
        written.append(target)
    shutil.rmtree(out / "images", ignore_errors=True)
    if (REPO / "images").is_dir():
        shutil.copytree(REPO / "images", out / "images")
    shutil.copy2(REPO / "README.md", out / "README.md")
    (out / "docs").mkdir(exist_ok=True)  # the documents page links the learner edition's lessons
    page = launch.documents_page((REPO / "docs" / "documents.md").read_text(encoding="utf-8"), "learner")
    (out / "docs" / "documents.md").write_text(page, encoding="utf-8")
    return written


def fill_workspace(workspace: Path, source: Path = REPO / "notebooks") -> list[Path]:
    """Copy the learner edition into ``workspace`` without overwriting; return the lessons added."""
    return launch.fill(workspace, source, REPO / "images")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "build" / "editions", help="output folder")
    parser.add_argument("--workspace", type=Path, help="fill a learner's own folder instead (never overwrites)")
    args = parser.parse_args(argv)
    if args.workspace is not None:
        added = fill_workspace(args.workspace)
        print(f"{args.workspace}/lessons: {len(added)} lesson(s) added, existing ones kept")
        return 0
    written = build(args.out)
    print(f"wrote {len(written)} lessons to {args.out}/learner, /credit, /teacher and /checked")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
