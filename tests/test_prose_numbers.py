"""Every figure the prose quotes is one a cell prints: the lessons' words cannot drift from their numbers.

Read each lesson's markdown (goals, explanations, exercises, solutions, teacher and speaker notes), README and the
teaching guide; take every number written with a decimal point or a percent sign (``0.61``, ``41 %``,
``2.8 \\cdot 10^{-10}``) and look for it, at the precision written, among the numbers of the stored outputs:

- of the same lesson (for a lesson's markdown);
- of every lesson the sentence links to (``[lesson 14](14_what_heads_learn.ipynb)``);
- or the sentence carries a citation: a link to a web page or to a file of the repository that holds the figure's
  source (``docs/performance.md``, a paper); a table ``bench/report.py`` renders from ``bench/results`` is its own
  citation (``tests/test_bench_report.py`` checks the page shows what the results hold).

"At the precision written" means that some printed number, rounded to as many decimals as the prose writes, equals
it (a printed 0.6123 backs a written 0.61; a printed 0.41 backs a written 41 %). A sentence whose number moves when
the lesson is executed again, or that quotes a figure no cell prints, fails here instead of in front of a reader.

Not figures, so not read: code (fenced blocks and inline code), link targets, exercise numbers (``5.2`` names
exercise 2 of lesson 05: every ``**N.k ·`` heading a lesson has), lesson numbers, version numbers written after
the name of the software they version, and an exercise's prompt (the cell that opens with its heading: its numbers
are the task's givens and tolerances, not findings; its solution is read like any other cell). A closed-form identity
(``log 3 = 1.0986``, ``sqrt(32) ≈ 5.66``, written in LaTeX) is backed by computing its left side.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal, InvalidOperation
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
DOCS = [REPO / "README.md", REPO / "docs" / "teaching-guide.md"]

# a figure in prose: 0.61, 1,234.5, 41 %, 41%, 2.8 \cdot 10^{-10}, 2.8 × 10^-10, 2.8e-10
SCI = r"(?:\s*(?:\\cdot|\\times|×|·)\s*10\^\{?(?P<exp>[-−]?\d+)\}?|e(?P<e>[-+]?\d+)\b)"
FIGURE = re.compile(
    r"(?<![\w.\-/#=])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d+(?=\s?%))(?!\.?\d)(?P<sci>"
    + SCI
    + r")?(?P<pct>\s?%)?"
)
# a number in an output: integers, decimals, scientific, with thousands separators
PRINTED = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+]?\d+)?")
EXERCISE = re.compile(r"(\d{1,2})\.(\d{1,2})(?:\s*[–-]\s*(\d{1,2})\.(\d{1,2}))?(?:\*\*)?\s*·")
LESSON_LINK = re.compile(r"\]\((?:\.\./notebooks/|notebooks/)?(\d\d)_[a-z_]+\.ipynb")
CITATION = re.compile(r"\]\((?:https?://|[^)\s]*\.(?:md|json|toml|txt)\b)")
VERSIONED = re.compile(
    r"(?i)(?:python|torch|pytorch|jupyterlab|jupyterhub|ipywidgets|anywidget|nbval|matplotlib|seaborn|axe-core|"
    r"node(?:\.js)?|chromium|ipykernel|jupyter_server|tornado|transformers|numpy|reveal\.js|wcag|mathjax|version|v)"
    r"\s*(?:≥|>=|==|<=|<)?\s*$"
)


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


@cache
def printed(number: str) -> frozenset[Decimal]:
    """Every number the stored outputs of lesson ``number`` print."""
    path = next(p for p in NOTEBOOKS if p.name.startswith(number + "_"))
    texts: list[str] = []
    for cell in cells(path):
        for output in cell.get("outputs", []) if cell["cell_type"] == "code" else []:
            texts.append("".join(output.get("text", "")))
            for kind, data in output.get("data", {}).items():
                if kind.startswith("text/"):
                    texts.append("".join(data) if isinstance(data, list) else data)
    found = set()
    for match in PRINTED.finditer("\n".join(texts)):
        try:
            found.add(Decimal(match.group().replace(",", "")))
        except InvalidOperation:  # pragma: no cover - the pattern admits only numbers
            continue
    return frozenset(found)


def exercises(path: Path) -> set[str]:
    """The exercise numbers a lesson names in its headings: ``**5.2 · Write it.**`` → "5.2", ``13.3–13.6 ·`` → 13.3 …"""
    text = "\n".join("".join(c["source"]) for c in cells(path) if c["cell_type"] == "markdown")
    ids = set()
    for lesson, first, _, last in EXERCISE.findall(text):
        ids |= {f"{int(lesson)}.{k}" for k in range(int(first), int(last or first) + 1)}
    return ids


EXERCISE_IDS = set().union(*(exercises(p) for p in NOTEBOOKS))


def prose(text: str) -> str:
    """The text a reader reads as prose: code and link targets blanked out (offsets kept)."""
    for pattern in (r"```.*?```", r"`[^`\n]*`", r"<code>.*?</code>", r"\]\([^)]*\)", r"<[^>]+>"):
        text = re.sub(pattern, lambda m: " " * len(m.group()), text, flags=re.S)
    return text


def sentences(text: str) -> list[tuple[str, str]]:
    """(sentence as written, sentence as prose) pairs: split at blank lines, list items, table rows, full stops."""
    text = re.sub(r"(?<=\d)\\,(?=\d{3})", ",", text)  # LaTeX's thin space between thousands: 25\,905.6
    plain = prose(text)
    out = []
    start = 0
    for match in re.finditer(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+\.)\s)|\n(?=\|)|(?<=[.!?])\s+(?=[A-Z*_(\[$])", plain):
        out.append((text[start : match.start()], plain[start : match.start()]))
        start = match.end()
    out.append((text[start:], plain[start:]))
    return out


def value(match: re.Match[str]) -> tuple[Decimal, Decimal]:
    """(the figure as written, the unit of its last digit), percentages and powers of ten applied."""
    number = Decimal(match.group("num").replace(",", ""))
    exponent = match.group("exp") or match.group("e")
    scale = Decimal(10) ** int(exponent.replace("−", "-")) if exponent else Decimal(1)
    digits = -number.as_tuple().exponent if number.as_tuple().exponent < 0 else 0  # type: ignore[operator]
    unit = Decimal(1).scaleb(-digits) * scale
    if match.group("pct"):
        return number * scale / 100, unit / 100
    return number * scale, unit


IDENTITY = re.compile(r"\\(sqrt|log|ln)\s*\{?\s*(\d+(?:\.\d+)?)\s*\}?\s*(?:=|\\approx|≈)\s*$")


def identity(before: str) -> Decimal | None:
    """The value of a closed form written just before a figure (``\\sqrt{32} \\approx``), or None."""
    match = IDENTITY.search(before)
    if not match:
        return None
    function, argument = match.group(1), float(match.group(2))
    return Decimal(repr(math.sqrt(argument) if function == "sqrt" else math.log(argument)))


def backed(figure: Decimal, unit: Decimal, numbers: frozenset[Decimal], *, percent: bool = False) -> bool:
    """True when some printed number, rounded to the figure's last written digit, is the figure.

    A percentage is backed by the fraction (0.41 for 41 %) or by the per cent figure itself (41)."""
    candidates = [*numbers, *(n / 100 for n in numbers)] if percent else numbers
    return any(abs(candidate - figure) <= unit / 2 for candidate in candidates)


def unbacked(text: str, own: str | None, where: str) -> list[str]:
    """The figures of ``text`` that no stored output backs, as "where: figure in «sentence»"."""
    problems = []
    for written, plain in sentences(text):
        if CITATION.search(written):
            continue
        lessons = set(LESSON_LINK.findall(written)) | ({own} if own else set())
        lessons &= {p.name[:2] for p in NOTEBOOKS}
        numbers = frozenset().union(*(printed(n) for n in lessons)) if lessons else frozenset()
        for match in FIGURE.finditer(plain):
            token = match.group()
            before = plain[: match.start()]
            if match.group("num") in EXERCISE_IDS and not (match.group("pct") or match.group("sci")):
                continue
            if VERSIONED.search(before[-24:]) or re.search(r"(?i)\b(?:lessons?|exercises?|steps?)\s*$", before):
                continue
            figure, unit = value(match)
            exact = identity(before)
            if exact is not None and abs(exact - figure) <= unit / 2:
                continue
            if not backed(figure, unit, numbers, percent=bool(match.group("pct"))):
                snippet = " ".join(plain.split())[:140]
                problems.append(f"{where}: {token.strip()} in «{snippet}»")
    return problems


PROMPT = re.compile(r"^(?:## Exercises?\s*\n+)?(?:\*\*|#+\s*)\d{1,2}\.\d{1,2}\b[^\n]*·")


def lesson_problems(path: Path) -> list[str]:
    problems = []
    for index, cell in enumerate(cells(path)):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and not PROMPT.match(source.lstrip()):
            problems += unbacked(source, path.name[:2], f"{path.stem} cell {index}")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_figure_in_a_lesson_is_printed_by_a_cell(path: Path) -> None:
    missing = lesson_problems(path)
    assert not missing, "figures no cell of the lesson (or a lesson the sentence links) prints:\n" + "\n".join(missing)


#: a table bench/report.py renders from bench/results/*.json (tests/test_bench_report.py checks it is what they hold)
RENDERED = re.compile(r"<!-- table: [\w-]+ -->.*?<!-- end -->", re.S)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_every_figure_in_readme_and_guide_is_printed_or_cited(path: Path) -> None:
    text = RENDERED.sub("", path.read_text(encoding="utf-8"))
    missing = unbacked(text, None, path.name)
    assert not missing, "figures neither printed by a linked lesson nor cited:\n" + "\n".join(missing)


def test_the_reader_finds_figures_it_should() -> None:
    """The reader itself: it sees figures in every form the lessons write, and skips what is not a figure."""
    text = "The head puts 0.61 on it; 41 % flip; $2.8 \\cdot 10^{-10}$; exercise 5.2; torch 2.13; `x = 1.5`."
    found = [m.group().strip() for _, plain in sentences(text) for m in FIGURE.finditer(plain)]
    assert found[:3] == ["0.61", "41 %", "2.8 \\cdot 10^{-10}"]
    assert "1.5" not in " ".join(found)
    assert unbacked("It scores 0.61.", None, "x") and not unbacked("It scores [0.61](https://example.org).", None, "x")
    assert backed(Decimal("0.61"), Decimal("0.01"), frozenset({Decimal("0.6123")}))
    assert not backed(Decimal("0.61"), Decimal("0.01"), frozenset({Decimal("0.6163")}))
    assert backed(Decimal("0.41"), Decimal("0.01"), frozenset({Decimal("41")}), percent=True)
    assert not backed(Decimal("0.41"), Decimal("0.01"), frozenset({Decimal("41")}))
    assert backed(Decimal("2.8e-10"), Decimal("1e-11"), frozenset({Decimal("2.7939e-10")}))
    assert not unbacked("So $\\sqrt{32} \\approx 5.66$ and $\\log 3 = 1.0986$.", None, "x")
    assert unbacked("So $\\sqrt{32} \\approx 5.67$.", None, "x")  # a wrong identity is caught
    assert PROMPT.match("**5.3 · Transfer.** Find T within 0.01.") and not PROMPT.match("The answer is 0.01.")
