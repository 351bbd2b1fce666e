"""Build the learner, for-credit and teacher editions of the lessons from the one source, ``notebooks/``.

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
import importlib.util
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


def build(out: Path, source: Path = REPO / "notebooks") -> list[Path]:
    """Write the three editions into ``out``; return the learner notebooks written."""
    lessons = sorted(source.glob(LESSONS))
    if not lessons:
        raise SystemExit(f"no lessons matching {LESSONS} in {source}")
    for edition in ("learner", "credit", "teacher"):
        shutil.rmtree(out / edition, ignore_errors=True)
        (out / edition).mkdir(parents=True)
    written = []
    for path in lessons:
        nb = nbformat.read(path, as_version=4)
        shutil.copy2(path, out / "teacher" / path.name)
        target = out / "learner" / path.name
        nbformat.write(learner_edition(nb), target)
        nbformat.write(credit_edition(nb), out / "credit" / path.name)
        written.append(target)
    shutil.rmtree(out / "images", ignore_errors=True)
    if (REPO / "images").is_dir():
        shutil.copytree(REPO / "images", out / "images")
    shutil.copy2(REPO / "README.md", out / "README.md")
    (out / "docs").mkdir(exist_ok=True)
    shutil.copy2(REPO / "docs" / "documents.md", out / "docs" / "documents.md")
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
    print(f"wrote {len(written)} lessons to {args.out}/learner, {args.out}/credit and {args.out}/teacher")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
