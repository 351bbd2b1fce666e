"""Build the learner and the teacher edition of the lessons from the one source, ``notebooks/``.

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
- ``<out>/images/``, ``<out>/README.md`` and ``<out>/docs/documents.md``: what the lessons link to as
  ``../images``, ``../README.md`` and ``../docs/documents.md``, so links work inside an edition as they
  do in the repository.

``--workspace DIR`` gives a learner their own copy of the learner edition in ``DIR/lessons/``:
lessons already there are never overwritten (a learner's work stays), missing ones are added, so
deleting a broken lesson and running it again gives a fresh copy of just that lesson.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
LESSONS = "[0-9][0-9]_*.ipynb"


def is_teacher_only(cell: nbformat.NotebookNode) -> bool:
    """Speaker notes (slide type ``notes``) and cells tagged ``teacher`` are for the teacher only."""
    slide_type = cell.get("metadata", {}).get("slideshow", {}).get("slide_type")
    return slide_type == "notes" or "teacher" in cell.get("metadata", {}).get("tags", [])


def is_aside(cell: nbformat.NotebookNode) -> bool:
    """A markdown cell tagged ``aside``: a detour the learner may skip (e.g. how a document rounds)."""
    return cell.get("cell_type") == "markdown" and "aside" in cell.get("metadata", {}).get("tags", [])


def collapsed(cell: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """An aside as a closed ``<details>`` block whose summary is the cell's first line (a heading)."""
    first, _, rest = cell.source.strip().partition("\n")
    summary = first.lstrip("#").strip() if first.startswith("#") else "Aside"
    body = rest.strip() if first.startswith("#") else cell.source.strip()
    copy = nbformat.from_dict(cell)
    copy.source = f'<details class="aside">\n<summary>{summary}</summary>\n\n{body}\n\n</details>'
    return copy


def learner_edition(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` without its teacher-only cells, its asides collapsed."""
    copy = nbformat.from_dict(nb)
    copy.cells = [collapsed(cell) if is_aside(cell) else cell for cell in copy.cells if not is_teacher_only(cell)]
    return copy


def build(out: Path, source: Path = REPO / "notebooks") -> list[Path]:
    """Write both editions into ``out``; return the learner notebooks written."""
    lessons = sorted(source.glob(LESSONS))
    if not lessons:
        raise SystemExit(f"no lessons matching {LESSONS} in {source}")
    for edition in ("learner", "teacher"):
        shutil.rmtree(out / edition, ignore_errors=True)
        (out / edition).mkdir(parents=True)
    written = []
    for path in lessons:
        nb = nbformat.read(path, as_version=4)
        shutil.copy2(path, out / "teacher" / path.name)
        target = out / "learner" / path.name
        nbformat.write(learner_edition(nb), target)
        written.append(target)
    shutil.rmtree(out / "images", ignore_errors=True)
    if (REPO / "images").is_dir():
        shutil.copytree(REPO / "images", out / "images")
    shutil.copy2(REPO / "README.md", out / "README.md")
    (out / "docs").mkdir(exist_ok=True)
    shutil.copy2(REPO / "docs" / "documents.md", out / "docs" / "documents.md")
    return written


def fill_workspace(workspace: Path, source: Path = REPO / "notebooks") -> list[Path]:
    """Copy the learner edition into ``workspace/lessons`` without overwriting; return what was added."""
    lessons = workspace / "lessons"
    lessons.mkdir(parents=True, exist_ok=True)
    added = []
    for path in sorted(source.glob(LESSONS)):
        target = lessons / path.name
        if not target.exists():
            nbformat.write(learner_edition(nbformat.read(path, as_version=4)), target)
            added.append(target)
    if (REPO / "images").is_dir():
        shutil.copytree(REPO / "images", workspace / "images", dirs_exist_ok=True)
    shutil.copy2(REPO / "README.md", workspace / "README.md")
    (workspace / "docs").mkdir(exist_ok=True)
    shutil.copy2(REPO / "docs" / "documents.md", workspace / "docs" / "documents.md")
    return added


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
    print(f"wrote {len(written)} lessons to {args.out}/learner and {args.out}/teacher")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
