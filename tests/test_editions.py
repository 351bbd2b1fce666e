"""The learner and teacher editions built from the one source (scripts/build_editions.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("build_editions", REPO / "scripts" / "build_editions.py")
editions = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(editions)
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("editions")
    editions.build(out)
    return out


def test_both_editions_hold_every_lesson(built: Path) -> None:
    names = [p.name for p in LESSONS]
    assert sorted(p.name for p in (built / "learner").glob("*.ipynb")) == names
    assert sorted(p.name for p in (built / "teacher").glob("*.ipynb")) == names
    assert (built / "images").is_dir() and (built / "README.md").is_file()


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_learner_edition_has_no_teacher_cells_and_the_same_code(built: Path, lesson: Path) -> None:
    source = nbformat.read(lesson, as_version=4)
    learner = nbformat.read(built / "learner" / lesson.name, as_version=4)
    assert not any(editions.is_teacher_only(c) for c in learner.cells)
    assert not any(c.get("metadata", {}).get("slideshow", {}).get("slide_type") == "notes" for c in learner.cells)
    # only teacher cells were removed: code cells, their sources and stored outputs are identical,
    # so nbval on the learner edition checks the very outputs of the teacher edition
    code = [(c.source, c.outputs) for c in source.cells if c.cell_type == "code"]
    assert [(c.source, c.outputs) for c in learner.cells if c.cell_type == "code"] == code
    removed = [c for c in source.cells if editions.is_teacher_only(c)]
    assert len(learner.cells) == len(source.cells) - len(removed)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_credit_edition_is_the_learner_edition_without_solutions(built: Path, lesson: Path) -> None:
    learner = nbformat.read(built / "learner" / lesson.name, as_version=4)
    credit = nbformat.read(built / "credit" / lesson.name, as_version=4)
    solutions = [c for c in learner.cells if "solution" in c.get("metadata", {}).get("tags", [])]
    assert [c for c in learner.cells if c not in solutions] == credit.cells
    assert not any("<summary>Solution" in c.source for c in credit.cells), "an untagged solution is left"
    checks = [c for c in learner.cells if c.cell_type == "code" and "check(" in c.source]
    assert all(c in credit.cells for c in checks)  # every exercise is still there, checked


def test_teacher_edition_is_the_source(built: Path) -> None:
    for lesson in LESSONS:
        assert (built / "teacher" / lesson.name).read_bytes() == lesson.read_bytes()


def test_teacher_cells_are_recognised() -> None:
    notes = nbformat.v4.new_markdown_cell("say this", metadata={"slideshow": {"slide_type": "notes"}})
    tagged = nbformat.v4.new_code_cell("1", metadata={"tags": ["teacher"]})
    plain = nbformat.v4.new_markdown_cell("read this", metadata={"slideshow": {"slide_type": "slide"}})
    nb = nbformat.v4.new_notebook(cells=[notes, plain, tagged])
    assert [c.source for c in editions.learner_edition(nb).cells] == ["read this"]
    assert len(nb.cells) == 3  # the source is not changed


def test_workspace_keeps_a_learners_work_and_restores_a_deleted_lesson(tmp_path: Path) -> None:
    first = editions.fill_workspace(tmp_path)
    assert [p.name for p in first] == [p.name for p in LESSONS]
    mine = tmp_path / "lessons" / LESSONS[0].name
    mine.write_text("my own work")
    broken = tmp_path / "lessons" / LESSONS[1].name
    broken.unlink()
    again = editions.fill_workspace(tmp_path)
    assert again == [broken]  # only the deleted lesson comes back, fresh
    assert mine.read_text() == "my own work"
    restored = nbformat.read(broken, as_version=4)
    assert not any(editions.is_teacher_only(c) for c in restored.cells)


def test_asides_are_collapsed_for_learners_and_whole_for_teachers() -> None:
    aside = nbformat.v4.new_markdown_cell(
        "#### Why document 002 prints 0.9534\nIts author's CPU fused a multiply and an add.",
        metadata={"tags": ["aside"]},
    )
    untitled = nbformat.v4.new_markdown_cell("A detour.", metadata={"tags": ["aside"]})
    nb = nbformat.v4.new_notebook(cells=[aside, untitled, nbformat.v4.new_markdown_cell("main path")])
    learner = [c.source for c in editions.learner_edition(nb).cells]
    assert learner[0] == (
        '<details class="aside">\n<summary>Why document 002 prints 0.9534</summary>\n\n'
        "Its author's CPU fused a multiply and an add.\n\n</details>"
    )
    assert learner[1].startswith('<details class="aside">\n<summary>Aside</summary>\n\nA detour.')
    assert learner[2] == "main path"
    assert nb.cells[0].source.startswith("#### Why document 002")  # the source (teacher edition) is whole


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_every_lesson_has_speaker_notes_a_teacher_can_use(built: Path, lesson: Path) -> None:
    teacher = nbformat.read(built / "teacher" / lesson.name, as_version=4)
    learner = nbformat.read(built / "learner" / lesson.name, as_version=4)
    notes = [c for c in teacher.cells if c.source.startswith("**Teacher's notes**")]
    assert len(notes) == 1, "one teacher's-notes cell per lesson, before its recap"
    (note,) = notes
    for part in (
        "*Suggested timing*",
        "| section | minutes |",
        "*Misconceptions to expect*",
        "*Discussion questions*",
        "*Open problem for a problem set.*",
    ):
        assert part in note.source, part
    assert editions.is_teacher_only(note) and not any(c.source.startswith("**Teacher's notes**") for c in learner.cells)
