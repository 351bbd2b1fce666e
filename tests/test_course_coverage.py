"""What the course says about itself follows its files: the lessons are the one source.

- README's lesson table lists every notebook (appendix included) with its number, its title (as the lesson's
  header writes it, or the part before the colon) and its duration;
- README's "Each lesson … has at least N live explorers and from A to B checked exercises" and the teaching
  guide's counts ("N lessons and an appendix, about H hours", each lesson's exercise keys, "from A to B
  exercises") are what the lessons hold: exercises counted from their ``check("…")`` calls, explorers from their
  stored explorer outputs (an output whose text is ``SomethingExplorer(…)``);
- the closing lesson ("Where next") explains every other notebook (it links each one in "What you can now
  explain"), and its "left out" list names no topic a lesson teaches (:data:`TAUGHT`, each topic checked against
  the headers of the lesson said to teach it).

Nothing is counted by hand here: a new lesson, or a renumbered one, changes what the tests expect.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
README = (REPO / "README.md").read_text(encoding="utf-8")
GUIDE = (REPO / "docs" / "teaching-guide.md").read_text(encoding="utf-8")
NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty"
).split()


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def header(path: Path) -> tuple[str, str, int]:
    """(number, title, minutes) from the lesson's first cell: ``# 05 · Softmax: …`` … ``about 30 minutes``."""
    first = "".join(cells(path)[0]["source"])
    match = re.match(r"#\s*(\d\d)\s*·\s*(.+)", first)
    minutes = re.search(r"[Aa]bout (\d+) minutes", first)
    assert match and minutes, f"{path.name}'s first cell must be '# NN · Title' and say 'about NN minutes'"
    return match.group(1), match.group(2).strip(), int(minutes.group(1))


HEADERS = {p: header(p) for p in NOTEBOOKS}
APPENDICES = [p for p, (_, title, _) in HEADERS.items() if title.startswith("Appendix")]
LESSONS = [p for p in NOTEBOOKS if p not in APPENDICES]


def lesson(slug: str) -> Path:
    """The notebook named ``NN_<slug>.ipynb``, whatever its number."""
    found = [p for p in NOTEBOOKS if p.stem[3:] == slug]
    assert len(found) == 1, f"no single notebook NN_{slug}.ipynb: {found}"
    return found[0]


def exercises(path: Path) -> list[str]:
    """The keys of the lesson's checked exercises, from its code cells' ``check("<key>.<n>", …)`` calls."""
    keys: list[str] = []
    for cell in cells(path):
        if cell["cell_type"] == "code":
            found = re.findall(r"""\bcheck\(\s*["']([\w]+\.\d+)["']""", "".join(cell["source"]))
            keys += [k for k in found if k not in keys]
    return keys


def explorers(path: Path) -> int:
    """How many explorers the lesson's stored outputs show (their text is ``SomethingExplorer(…)``)."""
    count = 0
    for cell in cells(path):
        for output in cell.get("outputs", []) if cell["cell_type"] == "code" else []:
            text = "".join(output.get("data", {}).get("text/plain", ""))
            count += bool(re.match(r"[A-Z]\w*Explorer\(", text))
    return count


def headers_text(path: Path) -> str:
    """What a lesson announces it teaches: its first cell (title, goals), its headings and exercise headings."""
    texts = ["".join(cells(path)[0]["source"])]
    for cell in cells(path)[1:]:
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"])
            texts += re.findall(r"^#{1,4} .*$", source, re.M)
            texts += re.findall(r"^\*\*\d+\.\d+(?:–\d+\.\d+)? · [^*]*\*\*", source, re.M)
    return "\n".join(texts)


def word(n: int) -> str:
    return NUMBER_WORDS[n]


# ---------------------------------------------------------------------------- README's table
def readme_rows() -> list[tuple[str, str, str, int]]:
    table = README.split("<!-- lesson-table")[1].split("<!-- /lesson-table -->")[0]
    row = re.compile(r"^\| \[(\d\d) ([^\]]+)\]\(notebooks/([^)]+)\) \| .* \| (\d+) min \|$", re.M)
    return [(n, name, f, int(m)) for n, name, f, m in row.findall(table)]


def test_readme_table_lists_every_notebook_with_its_number_title_and_duration() -> None:
    rows = readme_rows()
    assert [f for *_, f, _ in rows] == [p.name for p in NOTEBOOKS], "README's table must list every notebook, in order"
    for (number, name, _, minutes), path in zip(rows, NOTEBOOKS, strict=True):
        own_number, title, own_minutes = HEADERS[path]
        assert (number, minutes) == (own_number, own_minutes), f"{path.name}: README says {number}, {minutes} min"
        assert name in {title, title.split(":")[0]}, f"{path.name}: README calls it {name!r}, its header {title!r}"


# ---------------------------------------------------------------------------- what every lesson has
def test_readme_says_what_every_lesson_has() -> None:
    counts = [len(exercises(p)) for p in LESSONS]
    shown = [explorers(p) for p in LESSONS]
    sentence = re.search(r"Each lesson [^.]*?\.", README.replace("\n", " "))
    assert sentence, "README has no 'Each lesson …' sentence"
    text = sentence.group()
    assert f"at least {word(min(shown))} live explorer" in text, (text, shown)
    assert f"from {word(min(counts))} to {word(max(counts))} checked exercises" in text, (text, counts)


def test_every_lesson_has_an_explorer_and_exercises_and_the_appendix_is_said_to_have_none() -> None:
    assert all(explorers(p) >= 1 for p in LESSONS), {p.name: explorers(p) for p in LESSONS}
    assert all(exercises(p) for p in LESSONS)
    for appendix in APPENDICES:
        number = HEADERS[appendix][0]
        if not exercises(appendix) and not explorers(appendix):
            assert re.search(rf"appendix \({number}\)[^.]*no explorer", README.replace("\n", " "), re.I), (
                f"README must say that the appendix ({number}) has no explorer or exercise"
            )


def test_teaching_guide_counts_the_lessons_and_their_time() -> None:
    total = sum(m for p, (_, _, m) in HEADERS.items() if p in LESSONS)
    stated = re.search(r"^(\w+) lessons(?: and (\w+) appendix(?:es)?)?, about (\d+) hours in all", GUIDE, re.M)
    assert stated, "the guide's lesson plan must open with 'N lessons and an appendix, about H hours in all'"
    count, appendices, hours = stated.groups()
    assert count.lower() == word(len(LESSONS)), f"the guide says {count} lessons, there are {len(LESSONS)}"
    assert (appendices or "no") in {"an", "one"} if len(APPENDICES) == 1 else appendices is None
    assert int(hours) == round(total / 60), f"the lessons take {total} min, not about {hours} hours"


def test_teaching_guide_plan_lists_every_notebook() -> None:
    rows = re.findall(r"^\| (\d+) \| `(\d\d_[a-z_]+)\.ipynb` \| (\d+) min \|", GUIDE, re.M)
    assert [f for _, f, _ in rows] == [p.stem for p in NOTEBOOKS], "the guide's plan must list every notebook"
    assert [(int(n), int(m)) for n, _, m in rows] == [(int(h[0]), h[2]) for h in HEADERS.values()]


def test_teaching_guide_exercise_table_gives_every_lessons_keys() -> None:
    found = re.findall(r"^\| (\d\d) \| `([\w]+)\.(\d+)`(?: – `\.(\d+)`)?", GUIDE, re.M)
    rows = {n: (key, int(first), int(last or first)) for n, key, first, last in found}
    for path in LESSONS:
        keys = exercises(path)
        number = HEADERS[path][0]
        assert number in rows, f"the guide's exercise table has no row for lesson {number}"
        key, first, last = rows[number]
        assert [f"{key}.{i}" for i in range(first, last + 1)] == sorted(keys, key=lambda k: int(k.split(".")[1])), (
            f"lesson {number} checks {keys}; the guide says {key}.{first} – .{last}"
        )
    counts = [len(exercises(p)) for p in LESSONS]
    said = re.search(r"Every lesson has from (\w+) to (\w+) exercises", GUIDE)
    assert said and said.groups() == (word(min(counts)), word(max(counts))), (said and said.groups(), counts)
    assert not re.search(r"\bthree (?:\"check yourself\" )?exercises\b", GUIDE), "no lesson count of three is true"


# ---------------------------------------------------------------------------- the closing lesson
#: topic → the lesson that teaches it (by its name, not its number); each is checked against that lesson's headers
TAUGHT = {
    "cross-attention": "multihead",
    "encoder–decoder": "multihead",
    "backward": "multihead",
    "rotary": "positions",
    "RoPE": "positions",
    "pre-LN": "attention_learns",
    "dropout": "attention_learns",
    "temperature": "attention_learns",
    "top-k": "attention_learns",
    "sampling": "a_model_that_writes",
    "n-gram": "a_model_that_writes",
    "composition": "inside_a_model",
    "induction": "what_heads_learn",
    "ablat": "what_heads_learn",
    "activation patching": "what_it_refers_to",
    "KV cache": "attention_at_scale",
    "online softmax": "attention_at_scale",
    "FlashAttention": "attention_at_scale",
    "byte-pair": "where_next",
    "BPE": "where_next",
    "grouped-query": "where_next",
    "GQA": "where_next",
}


def section(path: Path, title: str) -> str:
    text = "\n".join("".join(c["source"]) for c in cells(path) if c["cell_type"] == "markdown")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"{path.name} has no section '## {title}'"
    return match.group(1)


@pytest.mark.parametrize("topic", TAUGHT)
def test_each_taught_topic_is_in_the_headers_of_its_lesson(topic: str) -> None:
    path = lesson(TAUGHT[topic])
    assert topic.lower() in headers_text(path).lower(), f"{path.name}'s headers do not name {topic!r}"


def test_where_next_explains_every_other_notebook() -> None:
    closing = lesson("where_next")
    explained = section(closing, "What you can now explain")
    linked = set(re.findall(r"\]\((\d\d_[a-z_]+\.ipynb)\)", explained))
    missing = [p.name for p in NOTEBOOKS if p != closing and p.name not in linked]
    assert not missing, f"'What you can now explain' does not link {missing}"


def test_where_next_calls_nothing_the_course_builds_left_out() -> None:
    closing = lesson("where_next")
    left_out = section(closing, "What the series left out")
    bullets = re.findall(r"^- \*\*(.+?)\*\*(.*?)(?=^- |\Z)", left_out, re.M | re.S)
    assert bullets, "the 'left out' section has no bullets"
    for title, body in bullets:
        for topic, slug in TAUGHT.items():
            assert topic.lower() not in title.lower(), f"'{title}' is called left out, but {slug} teaches {topic}"
            if topic.lower() in body.lower() and slug != "where_next":
                assert lesson(slug).name in body, (
                    f"'{title}' mentions {topic!r} without linking {lesson(slug).name}, which teaches it"
                )
            if slug == "where_next":
                assert topic.lower() not in body.lower(), f"'{title}' mentions {topic!r}, built in this lesson"


def test_the_mapping_reader_finds_a_topic_left_out() -> None:
    """The checks above can fail: a bullet naming a taught topic is caught."""
    assert "dropout" in headers_text(lesson("attention_learns")).lower()
    bad = "- **Dropout** — zero a random share of the weights.\n"
    titles = re.findall(r"^- \*\*(.+?)\*\*", bad, re.M)
    assert any(topic.lower() in t.lower() for t in titles for topic in TAUGHT)
