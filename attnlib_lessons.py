"""``attnlib-lessons``: copy the learner edition into a folder of yours and open it in JupyterLab.

Usage: attnlib-lessons [--dir my-lessons] [--port 8888] [--no-browser] [--copy-only]

The start without make (Windows, macOS, conda): the same folder ``make learn`` gives,

- ``DIR/lessons/NN_name.ipynb``: the lessons without the teacher's cells. A lesson already there is never
  overwritten (your work stays); a missing one is added, so deleting a broken lesson and running the
  command again gives a fresh copy of just that lesson;
- ``DIR/images/``: the diagrams the lessons show (files already there are kept);
- ``DIR/README.md``: the index every lesson's "Index" link opens, generated from the lessons' own titles
  and durations (rewritten only while it is still the generated one).

JupyterLab then starts on DIR, bound to 127.0.0.1 with token authentication and the project's server
and lab settings (``etc/``); if the port is taken it takes the next free one.

Standard library only, and outside the ``attnlib`` package (a module of its own in the same
distribution), so that it starts without torch; scripts/build_editions.py (``make learn``, the class
hub, Binder) and setup.py load it by path.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LESSONS = "[0-9][0-9]_*.ipynb"
# the first line of a learner index this module wrote: only such a README.md is ever rewritten
INDEX_MARK = "<!-- attnlib-lessons index: generated from the lessons; edit them, not this file -->"
TITLE = re.compile(r"^#\s+(.+?)\s*$", re.MULTILINE)
DURATION = re.compile(r"\*\*Duration:\*\*\s*([^.\n]+)")

# nbformat JSON as json.loads gives it: string keys, values of every JSON type
Cell = dict[str, Any]
Notebook = dict[str, Any]


def data_dir(name: str) -> Path:
    """A folder of the learner's data: inside the installed wheel (``attnlib/NAME``) or, in a
    checkout, the repository's own (``notebooks/``, ``images/``, ``etc/``, ``docs/``)."""
    packaged = HERE / "attnlib" / "data" / name
    if packaged.is_dir():
        return packaged
    return HERE / {"lessons": "notebooks"}.get(name, name)


def is_teacher_only(cell: Cell) -> bool:
    """Speaker notes (slide type ``notes``) and cells tagged ``teacher`` are for the teacher only."""
    metadata = cell.get("metadata", {})
    return metadata.get("slideshow", {}).get("slide_type") == "notes" or "teacher" in metadata.get("tags", [])


def is_aside(cell: Cell) -> bool:
    """A markdown cell tagged ``aside``: a detour the learner may skip (e.g. how a document rounds)."""
    return cell.get("cell_type") == "markdown" and "aside" in cell.get("metadata", {}).get("tags", [])


def is_solution(cell: Cell) -> bool:
    """A markdown cell tagged ``solution``: an exercise's worked answer (left out of the for-credit edition)."""
    return cell.get("cell_type") == "markdown" and "solution" in cell.get("metadata", {}).get("tags", [])


def collapsed(cell: Cell) -> Cell:
    """An aside as a closed ``<details>`` block whose summary is the cell's first line (a heading)."""
    text = _text(cell).strip()
    first, _, rest = text.partition("\n")
    summary, body = (first.lstrip("#").strip(), rest.strip()) if first.startswith("#") else ("Aside", text)
    return {**cell, "source": f'<details class="aside">\n<summary>{summary}</summary>\n\n{body}\n\n</details>'}


def learner_cells(cells: list[Cell]) -> list[Cell]:
    """The learner edition of a lesson's cells: teacher-only cells out, asides collapsed."""
    return [collapsed(cell) if is_aside(cell) else cell for cell in cells if not is_teacher_only(cell)]


def learner_notebook(path: Path) -> Notebook:
    """The notebook at ``path`` (JSON) as the learner edition has it (see :func:`learner_cells`)."""
    nb: Notebook = json.loads(path.read_text(encoding="utf-8"))
    nb["cells"] = learner_cells(nb["cells"])
    return nb


def write_notebook(nb: Notebook, path: Path) -> None:
    """Write ``nb`` as nbformat writes it (one-space indent, UTF-8, trailing newline)."""
    path.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def _text(cell: Cell) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def lesson_entry(path: Path) -> tuple[str, str]:
    """(title, duration) as the lesson's first cell states them: its ``# `` heading and ``**Duration:**``."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    head = next((_text(c) for c in cells if c.get("cell_type") == "markdown"), "")
    title = TITLE.search(head)
    duration = DURATION.search(head)
    return (title.group(1) if title else path.stem), (duration.group(1).strip() if duration else "")


def learner_index(lessons: list[Path]) -> str:
    """The learner's README.md: what to do first, then one table row per lesson (its title and duration)."""
    rows = []
    for path in lessons:
        title, duration = lesson_entry(path)
        rows.append(f"| [{title}](lessons/{path.name}) | {duration} |")
    first = f"lessons/{lessons[0].name}" if lessons else "lessons/"
    return "\n".join(
        [
            INDEX_MARK,
            "# Self-attention, step by step",
            "",
            "Your own copy of the lessons: change anything, it is yours.",
            "",
            f"**Start here.** Open [the first lesson]({first}), then run its cells from the top, one at a time",
            "with **Shift+Enter** (or *Run → Run All Cells*). Each lesson runs on its own in a fresh kernel, "
            "in any order.",
            "An exercise checks your answer when you run its cell; an explorer redraws when you move its controls.",
            "",
            "**Broke a lesson?** Delete its file and start `attnlib-lessons` (or `make learn`) again: the missing",
            "lesson comes back fresh, every other file stays as it is.",
            "",
            "| Lesson | Time |",
            "|---|---|",
            *rows,
            "",
        ]
    )


def documents_page(text: str, lessons: str) -> str:
    """The documents page for a copy whose lessons sit in the folder ``lessons`` beside ``docs/``: the repository's
    page links them in ``../notebooks/``."""
    return text.replace("](../notebooks/", f"](../{lessons}/")


def fill(workspace: Path, source: Path | None = None, images: Path | None = None) -> list[Path]:
    """Copy the learner edition into ``workspace`` without overwriting anything; return the lessons added."""
    source = source or data_dir("lessons")
    images = images or data_dir("images")
    lessons = sorted(source.glob(LESSONS))
    if not lessons:
        raise FileNotFoundError(f"no lessons matching {LESSONS} in {source}")
    target_dir = workspace / "lessons"
    target_dir.mkdir(parents=True, exist_ok=True)
    added = []
    for path in lessons:
        target = target_dir / path.name
        if not target.exists():
            write_notebook(learner_notebook(path), target)
            added.append(target)
    if images.is_dir():
        for picture in sorted(images.iterdir()):
            target = workspace / "images" / picture.name
            if picture.is_file() and not target.exists():
                target.parent.mkdir(exist_ok=True)
                shutil.copy2(picture, target)
    documents = data_dir("docs") / "documents.md"  # the lessons link ../docs/documents.md
    if documents.is_file() and not (workspace / "docs" / "documents.md").exists():
        (workspace / "docs").mkdir(exist_ok=True)
        page = documents_page(documents.read_text(encoding="utf-8"), "lessons")
        (workspace / "docs" / "documents.md").write_text(page, encoding="utf-8")
    readme = workspace / "README.md"
    if not readme.exists() or readme.read_text(encoding="utf-8").startswith(INDEX_MARK):
        readme.write_text(learner_index(lessons), encoding="utf-8")
    return added


def lab_command(workspace: Path, port: int, open_browser: bool) -> list[str]:
    """The ``jupyter lab`` command line for ``workspace`` (127.0.0.1, token auth, the project's settings)."""
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={workspace}",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=50",
        f"--config={data_dir('etc') / 'jupyter_server_config.py'}",
    ]
    if not open_browser:
        command.append("--no-browser")
    if hasattr(os, "getuid") and os.getuid() == 0:
        command.append("--allow-root")  # JupyterLab refuses root otherwise (containers, CI)
    return command


def lab_environment() -> dict[str, str]:
    """The environment for JupyterLab: etc/ first on JUPYTER_CONFIG_PATH, for its lab settings
    (``etc/labconfig/default_setting_overrides.json``: no news pop-up)."""
    env = dict(os.environ)
    paths = [str(data_dir("etc")), *filter(None, env.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep))]
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(paths)
    return env


def _writable(folder: Path) -> str | None:
    """Why ``folder`` cannot hold the lessons, or None."""
    probe = folder
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is a file, not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{probe} is not writable by you"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="attnlib-lessons", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=Path("my-lessons"), help="your lessons folder (my-lessons)")
    parser.add_argument("--port", type=int, default=8888, help="JupyterLab's port; the next free one if taken")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser (the URL is printed)")
    parser.add_argument("--copy-only", action="store_true", help="copy the lessons, do not start JupyterLab")
    args = parser.parse_args(argv)
    if not 0 < args.port < 65536:
        parser.error(f"--port must be between 1 and 65535, got {args.port}")
    workspace = args.dir.expanduser().resolve()
    problem = _writable(workspace)
    if problem:
        print(f"attnlib-lessons: cannot put the lessons in {workspace} (--dir): {problem}", file=sys.stderr)
        return 2
    try:
        added = fill(workspace)
    except OSError as error:
        print(f"attnlib-lessons: cannot put the lessons in {workspace} (--dir): {error}", file=sys.stderr)
        return 2
    print(f"{workspace / 'lessons'}: {len(added)} lesson(s) added, existing ones kept")
    if args.copy_only:
        return 0
    try:
        import jupyterlab  # noqa: F401 — only to say what is missing before starting it
    except ImportError:
        print("attnlib-lessons: JupyterLab is not installed: pip install 'attnlib[lessons]'", file=sys.stderr)
        return 2
    command = lab_command(workspace, args.port, open_browser=not args.no_browser)
    env = lab_environment()
    if os.name == "nt":  # no exec on Windows: run it and pass its exit code on
        import subprocess

        return subprocess.call(command, env=env)
    os.execve(sys.executable, command, env)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
