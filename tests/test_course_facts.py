"""Facts about the course stated in several places agree with their one source, the lessons themselves.

Each lesson's header (its first cell) gives its number, title and duration ("about NN minutes"); the
README's lesson table and the teaching guide's lesson plan must list the same lessons, in order, with
the same durations, and the guide's sessions must add up. An appendix (a notebook whose title starts
with "Appendix", e.g. ``20 · Appendix: the documents, reconciled``) is numbered after the lessons but is
not a lesson: it is not counted, timed in the plan or required in the README's table.

Counts and overviews are checked against the notebooks too: every "N lessons" the course states is the
real number of lessons, lesson 01's overview names every lesson, and every link into the appendix lands
on one of its anchors, each of which the documents page and a lesson link.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def header(path: Path) -> tuple[str, str, int]:
    """(number, title, minutes) from the lesson's first cell: ``# 05 · Softmax`` … ``about 30 minutes``."""
    first = "".join(json.loads(path.read_text())["cells"][0]["source"])
    number, title = re.match(r"#\s*(\d\d)\s*·\s*(.+)", first).groups()
    minutes = re.search(r"[Aa]bout (\d+) minutes", first)
    assert minutes, f"{path.name}'s first cell does not say how long it takes ('about NN minutes')"
    return number, title.strip(), int(minutes.group(1))


ALL_HEADERS = {p: header(p) for p in NOTEBOOKS}
APPENDICES = [p for p, (_, title, _) in ALL_HEADERS.items() if title.startswith("Appendix")]
LESSONS = [p for p in NOTEBOOKS if p not in APPENDICES]
HEADERS = [ALL_HEADERS[p] for p in LESSONS]
NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four twenty-five"
).split()


def markdown(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "markdown"]


def test_readme_lists_every_lesson_with_its_own_duration() -> None:
    readme = (REPO / "README.md").read_text()
    table = readme.split("<!-- lesson-table")[1].split("<!-- /lesson-table -->")[0]
    rows = re.findall(r"^\| \[(\d\d) ([^\]]+)\]\(notebooks/([^)]+)\) \| .* \| (\d+) min \|$", table, re.M)
    rows = [row for row in rows if row[2] not in {p.name for p in APPENDICES}]  # an appendix may be listed too
    assert [(n, int(m)) for n, _, _, m in rows] == [(n, m) for n, _, m in HEADERS]
    assert [f for _, _, f, _ in rows] == [p.name for p in LESSONS]


def test_teaching_guide_plan_has_every_lesson_duration_and_session_totals() -> None:
    guide = (REPO / "docs" / "teaching-guide.md").read_text()
    rows = re.findall(r"^\| (\d+) \| `(\d\d_[a-z_]+)\.ipynb` \| (\d+) min \|", guide, re.M)
    rows = [row for row in rows if f"{row[1]}.ipynb" not in {p.name for p in APPENDICES}]
    assert [(int(n), f, int(m)) for n, f, m in rows] == [(int(n), p.stem, m) for (n, _, m), p in zip(HEADERS, LESSONS)]
    minutes = {int(n): m for n, _, m in HEADERS}
    sessions = re.findall(r"\*\*session \d+\*\* lessons (\d+)–(\d+) \((\d+) min\)", guide)
    assert sessions, "the guide suggests no sessions"
    covered = []
    for first, last, total in sessions:
        span = range(int(first), int(last) + 1)
        covered += list(span)
        assert sum(minutes[i] for i in span) == int(total), f"session {first}–{last} does not add up"
    assert covered == sorted(minutes), "the sessions must cover every lesson once, in order"


def test_appendices_come_after_the_lessons() -> None:
    assert LESSONS and all(int(ALL_HEADERS[a][0]) > int(ALL_HEADERS[LESSONS[-1]][0]) for a in APPENDICES)


# ---------------------------------------------------------------------------- the number of lessons
STATED_COUNT = re.compile(
    r"(?:^|[.!?:;]\s+|\b(?:all|the|these|its|for|of)\s+)(" + "|".join(NUMBER_WORDS) + r"|\d+) lessons\b",
    re.IGNORECASE | re.MULTILINE,
)


def stated_counts(text: str) -> list[int]:
    """Every "N lessons" stated as the size of the series, as a number ("all fifteen lessons", "Seventeen lessons,")."""
    words = {w: i for i, w in enumerate(NUMBER_WORDS)}
    return [int(m) if m.isdigit() else words[m.lower()] for m in STATED_COUNT.findall(text)]


def test_the_phrases_that_state_a_count_are_found() -> None:
    assert stated_counts("One table for all fifteen lessons.") == [15]
    assert stated_counts("Seventeen lessons, about 9½ hours") == [17]
    assert stated_counts("Lessons 12–15 add positions; 16 lessons in all") == [16]
    assert stated_counts("about 4 s to build here, 15 lessons)") == []  # a measurement's record, not a claim


def test_every_count_of_the_lessons_is_the_real_one() -> None:
    sources = {p.name: "\n".join(markdown(p)) for p in NOTEBOOKS}
    for name in ("README.md", "docs/teaching-guide.md", "docs/documents.md"):
        sources[name] = (REPO / name).read_text(encoding="utf-8")
    counted = {name: stated_counts(text) for name, text in sources.items()}
    wrong = {name: counts for name, counts in counted.items() if counts and set(counts) != {len(LESSONS)}}
    assert not wrong, f"there are {len(LESSONS)} lessons, but these state another number: {wrong}"


def test_lesson_01_overview_names_every_lesson() -> None:
    """Lesson 01's map of the series (the steps' table, then the paragraph on lessons 09 on) forgets none."""
    cell = next(text for text in markdown(NOTEBOOKS[0]) if "## The eight steps" in text)
    table = [int(n) for n in re.findall(r"^\|.*\| (\d\d) \|$", cell, re.M)]
    overview = cell[cell.index("Lessons 09") :]
    named = set(table)
    for first, last in re.findall(r"\b(\d\d)–(\d\d)\b", overview):
        named |= set(range(int(first), int(last) + 1))
    named |= {int(n) for n in re.findall(r"(?<![\d–])\b(\d\d)\b(?![–\d])", overview)}
    numbers = {int(n) for n, _, _ in ALL_HEADERS.values()}
    assert numbers <= named, f"lesson 01's overview forgets lessons {sorted(numbers - named)}"


# ---------------------------------------------------------------------------- the appendix
def test_every_link_into_the_appendix_lands_and_every_section_is_reached() -> None:
    for appendix in APPENDICES:
        anchors = set(re.findall(r'<a id="([^"]+)"></a>', "\n".join(markdown(appendix))))
        assert anchors, f"{appendix.name} has no anchors to link"
        link = re.compile(re.escape(appendix.name) + r"(?:#([\w-]+))?\)")
        documents_page = (REPO / "docs" / "documents.md").read_text(encoding="utf-8")
        from_page = set(link.findall(documents_page))
        from_lessons = {a for p in LESSONS for text in markdown(p) for a in link.findall(text)}
        assert "" in from_page or from_page, "docs/documents.md does not link the appendix"
        missing = (from_page | from_lessons) - anchors - {""}
        assert not missing, f"links to anchors {appendix.name} does not have: {sorted(missing)}"
        assert anchors <= from_page, f"sections the documents page does not reach: {sorted(anchors - from_page)}"
        assert anchors <= from_lessons, f"sections no lesson links: {sorted(anchors - from_lessons)}"


def test_no_visible_cell_follows_a_collapsed_aside() -> None:
    """A learner who skips an aside (collapsed in the learner edition) must not meet a code cell that needs it."""
    orphans = []
    for path in NOTEBOOKS:
        cells = json.loads(path.read_text())["cells"]
        for i, (cell, after) in enumerate(itertools.pairwise(cells)):
            if "aside" in cell.get("metadata", {}).get("tags", []) and after["cell_type"] == "code":
                orphans.append(f"{path.name} cell {i + 1}")
    assert not orphans, f"code cells right after an aside: {orphans}"


# ---------------------------------------------------------------------------- what a learner can run
# A learner's copy (make learn, attnlib-lessons, the hub, Binder) has the lessons, not the repository's Makefile:
# a lesson may name `make learn` (how they got there), never a workshop target such as `make models`.
WORKSHOP_TARGET = re.compile(r"`make (?!learn`)[a-z-]+`")
# lessons other branches of issue 36 rewrite; the lead deletes an entry when the fix is merged
PENDING_TARGETS = {"13_attention_learns", "14_what_heads_learn", "16_what_it_refers_to"}


def test_no_lesson_sends_a_learner_to_a_workshop_make_target() -> None:
    assert WORKSHOP_TARGET.search("`make models`") and not WORKSHOP_TARGET.search("`make learn`")
    checked = [p for p in NOTEBOOKS if p.stem not in PENDING_TARGETS]
    found = {p.stem: sorted(set(WORKSHOP_TARGET.findall("\n".join(markdown(p))))) for p in checked}
    found = {name: targets for name, targets in found.items() if targets}
    assert not found, f"lessons naming make targets a learner's copy cannot run: {found}"
