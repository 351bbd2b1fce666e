"""How much of each lesson's main path is spent on the source documents' quirks (issue #23).

Usage: python scripts/document_share.py [--lessons 01-11] [--notebooks notebooks] [--verbose]

The rule, applied to every lesson's markdown:

1. **Main path** = markdown cells a learner reads in line: not tagged ``aside`` (collapsed in the
   learner edition), not tagged ``teacher`` and not speaker notes (slide type ``notes``; both are
   left out of the learner edition). Solutions count: they are in the learner edition.
2. The main path is split into **blocks**: paragraphs (separated by blank lines), and each list
   item, table row and quoted line of its own. Headings, images, code fences and navigation lines
   (``[← …](…)``) are left out. Words are whitespace-separated tokens that contain a letter or a digit.
3. A block is **about a document's quirks** when it names a source document (``document 001``,
   ``documents 000 and 004``, ``001's``, ``000:`` …) *and* reconciles it with this series: it is a
   "Document vs …" note, or it contains one of the cue words in :data:`CUES` (how a document prints,
   rounds, writes, names, lays out, orders or leaves something). A block that only uses a document's
   example ("Document 001 starts from three inputs of size 4") is not a quirk.

It prints, per lesson, the main-path words, the words in quirk blocks and their share, and the share of
words in blocks that mention a document at all (quirk or example). The goal of issue #23 is a quirk
share of at most 20 % in every lesson 01–11. With ``--verbose`` it lists the quirk blocks.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: A source document named in the text: "document 001", "documents 000 and 004", "001's", "(000:", "000 and 001".
DOCUMENT = re.compile(r"\bdocuments?\s+00[0-4]|\b00[0-4](?:'s|:|\s+and\s+00[0-4])|\(00[0-4]\b|\b00[0-4]\b", re.I)
#: Words that mark reconciling a document with this series rather than using its example.
CUES = re.compile(
    r"document vs|\bprints?\b|\bprinted\b|\bwrites?\b|\bround(s|ed|ing)?\b|\bcalls?\b|\bnames?\b|"
    r"\blayout\b|\border\b|\blists?\b|\bleaves?\b|\bstops?\b|\bdiffers?\b|\bby coincidence\b|\bcomments?\b|"
    r"\bannounces?\b|\bhides?\b|\bquirk",
    re.I,
)
WORD = re.compile(r"\S*[A-Za-z0-9]\S*")


def main_path_cells(nb: dict) -> list[str]:
    """The sources of the markdown cells a learner reads in line (see the rule above)."""
    out = []
    for cell in nb["cells"]:
        meta = cell.get("metadata", {})
        tags = meta.get("tags", [])
        notes = meta.get("slideshow", {}).get("slide_type") == "notes"
        if cell["cell_type"] == "markdown" and "aside" not in tags and "teacher" not in tags and not notes:
            out.append("".join(cell["source"]))
    return out


def blocks(markdown: str) -> list[str]:
    """Paragraphs, list items, table rows and quoted lines; no headings, images, code or navigation."""
    markdown = re.sub(r"```.*?```", "", markdown, flags=re.S)
    out: list[str] = []
    for paragraph in re.split(r"\n\s*\n", markdown):
        current: list[str] = []
        for line in paragraph.splitlines():
            s = line.strip()
            if not s or s.startswith("#") or s.startswith("![") or s.startswith("[←") or s.startswith("<"):
                continue
            if re.match(r"^([-*+]|\d+\.|\||>\s*[-*]|>\s*\|)\s", s) and current:
                out.append(" ".join(current))
                current = []
            current.append(s)
        if current:
            out.append(" ".join(current))
    return out


def words(text: str) -> int:
    return len(WORD.findall(text))


def measure(path: Path) -> tuple[int, int, int, list[str]]:
    """``(main-path words, quirk words, words mentioning a document, quirk blocks)`` of one lesson."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    total = quirk = mention = 0
    found = []
    for source in main_path_cells(nb):
        for block in blocks(source):
            n = words(block)
            total += n
            if DOCUMENT.search(block):
                mention += n
                if CUES.search(block):
                    quirk += n
                    found.append(block)
    return total, quirk, mention, found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", default="01-11", help="a range such as 01-11")
    parser.add_argument("--notebooks", type=Path, default=REPO / "notebooks")
    parser.add_argument("--verbose", action="store_true", help="list the blocks counted as quirks")
    args = parser.parse_args(argv)
    first, _, last = args.lessons.partition("-")
    wanted = range(int(first), int(last or first) + 1)
    print(f"{'lesson':<28} {'words':>6} {'quirks':>7} {'share':>6} {'mention':>8}")
    worst = 0.0
    for path in sorted(args.notebooks.glob("[0-9][0-9]_*.ipynb")):
        if int(path.name[:2]) not in wanted:
            continue
        total, quirk, mention, found = measure(path)
        share = quirk / total if total else 0.0
        worst = max(worst, share)
        print(f"{path.stem:<28} {total:>6} {quirk:>7} {share:>6.0%} {mention / total if total else 0:>8.0%}")
        if args.verbose:
            for block in found:
                print(f"    · {block[:150]}")
    print(f"largest quirk share: {worst:.0%} (goal: at most 20 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
