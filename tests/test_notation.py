"""The notation table of lesson 01 and the lessons stay in step: one symbol, one meaning.

Lesson 01's table promises that no symbol means two things. This test reads the table and checks what can be
checked mechanically:

- every symbol is in the table once, and every name in its "in code" column exists in attnlib (or torch);
- no lesson's prose uses a symbol of the table for something else: ``h`` for the residual stream, ``E`` for
  positional encodings (they are ``PE``) or an expectation (``𝔼``), ``σᵢ`` for a token's sum (σ are singular
  values), ``b`` for a block size (it is the batch), and "weights" for parameters (weights are the attention
  weights ``A``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
ATTNLIB = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "attnlib").rglob("*.py"))

# each symbol's other meanings that once crept in (review of 2026-11-28, item 19), as patterns of markdown
MISUSES = {
    "h (heads) as the residual stream": r"\$h\s*=\s*x\b|\bh_\{?\\ell\b",
    "E (embeddings) for positional encodings or an expectation": (
        r"(?<![A-Za-z\\{])E_(?:[ij\d]|\{[ij])|(?<![A-Za-z\\])E\s*E\^\\top|\$E\[|\\operatorname\{E\}"
    ),
    "σ (singular values) for a token's sum": r"\\sigma_[ij]\b|σ_[ij]\b|σᵢ",
    "b (batch) for a block size": r"\(n_q,\s*b\)|\(n,\s*b\)|\(b,\s*d_v\)|n\(b\s*\+",
    "weights (A) for parameters": (
        r"(?i)\bweight matri(?:x|ces)|\binitial weights|\b(?:random|zero-mean|all-positive|U\[0, 1\)) weights\b"
        r"|\bowns (?:its|the) weights|\brounded weights|\bwithout weights\b"
    ),
}
# Cells other branches of issue 36 rewrite (lessons 11, 13, 14, 16 and the exercises): the lead deletes an
# entry when the branch that fixes it is merged. Nothing else may use a symbol for something else.
PENDING = {
    ("10_sentence", "weights (A) for parameters"),  # exercise 10.2's prompt
    ("11_multihead", "weights (A) for parameters"),
    ("12_positions", "E (embeddings) for positional encodings or an expectation"),  # exercises 12.1 and 12.2
    ("13_attention_learns", "h (heads) as the residual stream"),
    ("13_attention_learns", "weights (A) for parameters"),
    ("15_attention_at_scale", "b (batch) for a block size"),  # exercises 15.2 and 15.3
    ("16_what_it_refers_to", "weights (A) for parameters"),
}


def table() -> list[tuple[str, str, str, str]]:
    """Lesson 01's notation table as (kind, symbol, in code, meaning) rows."""
    cells = json.loads(NOTEBOOKS[0].read_text(encoding="utf-8"))["cells"]
    text = next("".join(c["source"]) for c in cells if "## The series' notation" in "".join(c["source"]))
    rows = re.findall(r"^\| (\w+) \| (.+?) \| (.*?) \| (.+) \|$", text, re.M)
    return [row for row in rows if row[0] != "kind"]


def test_the_table_is_read() -> None:
    symbols = [symbol for _, symbol, _, _ in table()]
    assert len(symbols) >= 15 and "$A$" in symbols and "$E$" in symbols


def test_each_symbol_is_in_the_table_once() -> None:
    symbols = [symbol for _, symbol, _, _ in table()]
    assert len(symbols) == len(set(symbols)), sorted({s for s in symbols if symbols.count(s) > 1})


def test_every_name_in_code_exists() -> None:
    missing = []
    for _, symbol, code, _ in table():
        for name in re.findall(r"`([A-Za-z_]\w*)`", code):
            if not re.search(rf"\b{name}\b", ATTNLIB) and not hasattr(torch.linalg, name):
                missing.append(f"{symbol}: {name}")
    assert not missing, f"names in lesson 01's table that attnlib does not use: {missing}"


def misuses(text: str) -> set[str]:
    return {meaning for meaning, pattern in MISUSES.items() if re.search(pattern, text)}


def test_the_patterns_catch_each_misuse() -> None:
    assert misuses("$$h = x + \\text{MHA}(x)$$") == {"h (heads) as the residual stream"}
    e_rule = "E (embeddings) for positional encodings or an expectation"
    assert misuses("a fixed vector $E_i$, and $E E^\\top$") == {e_rule}
    assert misuses("($E[w^2] = 1/3$)") == misuses("$\\operatorname{E}[q^2]$") == {e_rule}
    assert misuses("where $\\sigma_i = x_i \\cdot 1$") == {"σ (singular values) for a token's sum"}
    assert misuses("an $(n_q, b)$ tile") == {"b (batch) for a block size"}
    assert misuses("## The weights, once-rounded weights") == {"weights (A) for parameters"}
    clean = "row $\\text{id}_i$ of $E$; $\\sigma_1/\\sigma_2$; $(b, n, d)$; the attention weights $A$; $\\mathrm{PE}_i$"
    clean += "; $\\mathbb{E}[w^2]$, $\\operatorname{Var}(q)$"
    assert misuses(clean) == set()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_lesson_gives_a_symbol_a_second_meaning(path: Path) -> None:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = {}
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            for meaning in misuses("".join(cell["source"])) - {m for lesson, m in PENDING if lesson == path.stem}:
                found.setdefault(meaning, []).append(index)
    assert not found, f"{path.name}: {found} (cell indices); lesson 01's table gives each symbol one meaning"
