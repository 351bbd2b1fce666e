"""``attnlib-lessons`` (attnlib_lessons.py): the learner's start without make.

- The copy: every lesson, the images and the learner's index; a second run into the same folder keeps
  every file there and adds only what is missing; a folder it cannot write gets a message, not a traceback.
- Every lesson's "Index" link opens the learner's index in the copy, and the index's links open lessons.
- End to end, from a venv of only the learner set: tests/test_learner_env.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

REPO = Path(__file__).resolve().parents[1]
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
COMMAND = Path(sys.executable).with_name("attnlib-lessons")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _launch():
    import attnlib_lessons

    return attnlib_lessons


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(COMMAND), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_the_module_imports_only_the_standard_library() -> None:
    code = (
        "import importlib.util, sys; spec = importlib.util.spec_from_file_location('l', sys.argv[1]);"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m);"
        "print([n for n in ('torch', 'attnlib', 'nbformat', 'jupyterlab', 'matplotlib') if n in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code, REPO / "attnlib_lessons.py"], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr


def test_copy_into_an_existing_folder_keeps_every_file_and_adds_the_missing_lessons(tmp_path: Path) -> None:
    assert COMMAND.exists(), "attnlib-lessons is not installed: make env installs attnlib with its scripts"
    first = _run("--dir", "mine", "--copy-only", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    lessons = tmp_path / "mine" / "lessons"
    assert sorted(p.name for p in lessons.glob("*.ipynb")) == [p.name for p in LESSONS]
    (lessons / LESSONS[0].name).write_text("my work", encoding="utf-8")
    (lessons / LESSONS[1].name).unlink()
    (tmp_path / "mine" / "notes.txt").write_text("mine too", encoding="utf-8")
    (tmp_path / "mine" / "images" / "step1_inputs.png").write_bytes(b"my drawing")
    again = _run("--dir", "mine", "--copy-only", cwd=tmp_path)
    assert again.returncode == 0 and "1 lesson(s) added" in again.stdout, again.stdout + again.stderr
    assert (lessons / LESSONS[0].name).read_text(encoding="utf-8") == "my work"
    assert (tmp_path / "mine" / "notes.txt").read_text(encoding="utf-8") == "mine too"
    assert (tmp_path / "mine" / "images" / "step1_inputs.png").read_bytes() == b"my drawing"
    restored = json.loads((lessons / LESSONS[1].name).read_text(encoding="utf-8"))
    assert not any(_launch().is_teacher_only(c) for c in restored["cells"])


def test_a_learners_own_readme_is_kept_and_the_generated_index_is_refreshed(tmp_path: Path) -> None:
    launch = _launch()
    launch.fill(tmp_path / "a")
    (tmp_path / "a" / "README.md").write_text(launch.INDEX_MARK + "\nold index", encoding="utf-8")
    launch.fill(tmp_path / "a")
    assert "| Lesson | Time |" in (tmp_path / "a" / "README.md").read_text(encoding="utf-8")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "README.md").write_text("my diary", encoding="utf-8")
    launch.fill(tmp_path / "b")
    assert (tmp_path / "b" / "README.md").read_text(encoding="utf-8") == "my diary"


@pytest.mark.parametrize("where", ["file", "proc"])
def test_a_folder_it_cannot_write_gets_a_message_naming_it(tmp_path: Path, where: str) -> None:
    if where == "file":
        (tmp_path / "a-file").write_text("x")
        target = tmp_path / "a-file" / "lessons"
    else:
        if not Path("/proc/self").exists():
            pytest.skip("no /proc")
        target = Path("/proc/attnlib-lessons-test")  # not writable, not even by root
    done = _run("--dir", target, "--copy-only", cwd=tmp_path)
    assert done.returncode == 2
    assert "cannot put the lessons in" in done.stderr and "--dir" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_index_table_comes_from_the_lessons_titles_and_durations(tmp_path: Path) -> None:
    launch = _launch()
    launch.fill(tmp_path)
    index = (tmp_path / "README.md").read_text(encoding="utf-8")
    for lesson in LESSONS:
        head = json.loads(lesson.read_text(encoding="utf-8"))["cells"][0]["source"]
        head = head if isinstance(head, str) else "".join(head)
        title = re.search(r"^# (.+)$", head, re.MULTILINE)[1].strip()
        duration = re.search(r"\*\*Duration:\*\*\s*([^.\n]+)", head)[1].strip()
        assert f"| [{title}](lessons/{lesson.name}) | {duration} |" in index


def test_every_lessons_index_link_works_in_a_learners_copy(tmp_path: Path) -> None:
    """In the copy `make learn`, the hub, Binder and Kubernetes make (build_editions.py --workspace), every
    relative link of every lesson resolves, "Index" opens the learner's index, and its links open lessons; so do
    the links of the documents page every lesson links."""
    done = subprocess.run(
        [sys.executable, REPO / "scripts" / "build_editions.py", "--workspace", tmp_path],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    broken = []
    for lesson in sorted((tmp_path / "lessons").glob("*.ipynb")):
        cells = json.loads(lesson.read_text(encoding="utf-8"))["cells"]
        prose = [
            re.sub(r"```.*?```|`[^`\n]*`", "", "".join(c["source"]), flags=re.S) for c in cells
        ]  # code is not a link
        links = [m for c, text in zip(cells, prose) if c["cell_type"] == "markdown" for m in LINK.findall(text)]
        assert "../README.md" in links, f"{lesson.name} has no Index link"
        for link in links:
            url = urlparse(link)
            if not url.scheme and url.path and not (lesson.parent / unquote(url.path)).is_file():
                broken.append(f"{lesson.name} -> {link}")
    index = tmp_path / "README.md"
    targets = LINK.findall(index.read_text(encoding="utf-8"))
    assert {f"lessons/{p.name}" for p in LESSONS} <= set(targets)
    broken += [f"README.md -> {t}" for t in targets if not (tmp_path / unquote(t)).is_file()]
    documents = tmp_path / "docs" / "documents.md"
    page_links = [urlparse(t) for t in LINK.findall(documents.read_text(encoding="utf-8"))]
    assert sum(link.path.endswith(".ipynb") for link in page_links) >= len(LESSONS)  # it links the lessons
    broken += [
        f"docs/documents.md -> {link.path}"
        for link in page_links
        if not link.scheme and link.path and not (documents.parent / unquote(link.path)).is_file()
    ]
    assert not broken, "\n".join(broken)
