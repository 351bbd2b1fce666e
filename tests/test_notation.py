"""The notation table of lesson 01 and the lessons stay in step: one symbol, one meaning.

Lesson 01's table promises that no symbol means two things, but for the one exception it names (``c``). This
test reads the table and checks what can be checked mechanically:

- every symbol is in the table once, and every name in its "in code" column exists in attnlib (or torch);
- every symbol a lesson's maths uses (``$…$`` and ``$$…$$`` in its markdown) is one the table lists: a letter
  or a Greek letter, bare or with an index (``x_i``, ``\\alpha_{ij}``), or with a named subscript
  (``d_\\text{in}``, ``W_q``) that the table spells the same way;
- no lesson's prose uses a symbol of the table for something it once meant: ``b`` for the batch (it is ``B``) or a
  block width (``n_b``), ``z`` for logits (``u``), ``p`` for a dropout rate (``p_\\text{drop}``) or a position
  vector (a row of ``PE``), ``θ`` for a frequency (``ω_c``), ``m`` for a run length (``n_\\text{run}``), ``c``
  for a character (``a``), ``f`` for the final layer norm (``LN_final``), ``E`` for positional encodings (``PE``)
  or an expectation (``𝔼``), ``h`` for the residual stream, ``σᵢ`` for a token's sum (σ are singular values),
  ``k`` for top-k, a bare ``d`` for the model width, and "weights" for parameters (weights are the attention
  weights ``A``);
- the table's one exception, ``c``, is a feature (column) in lessons 03–08 and a pair of features in lesson 12
  only, as the table says.

No lesson adds an exception: a symbol a lesson needs gets a row of the table, or the lesson says it another way.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
ATTNLIB = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "attnlib").rglob("*.py"))

# each symbol's other meanings that once crept in (reviews of 2026-11-28, item 19, and 2026-12-07, §5), as
# patterns of markdown
MISUSES = {
    "h (heads) as the residual stream": r"\$h\s*=\s*x\b|\bh_\{?\\ell\b",
    "E (embeddings) for positional encodings or an expectation": (
        r"(?<![A-Za-z\\{])E_(?:[ij\d]|\{[ij])|(?<![A-Za-z\\])E\s*E\^\\top|\$E\[|\\operatorname\{E\}"
    ),
    "σ (singular values) for a token's sum": r"\\sigma_[ij]\b|σ_[ij]\b|σᵢ",
    "b (biases) for a block width": r"\(n_q,\s*b\)|\(n,\s*b\)|\(b,\s*d_v\)|n\(b\s*\+",
    "b (biases) for the batch size": (
        r"\((?:b,\s*[nh]\b|n,\s*b,)|(?i:batch)[^$.]{0,40}\$b\$|\$b\$[^$.]{0,30}(?i:sequences|batch)"
    ),
    "z (output rows) for logits": r"\bz\s*/\s*T\b|\bz_\{?[ia]\}?\s*/\s*T\b|(?i:logits?)\s*\$z\b",
    "p (a probability) for the dropout rate": r"(?i:dropout)[^$.]{0,60}\$p\$|\$1\s*-\s*p\$",
    "p (a probability) for a position vector": r"(?<![A-Za-z\\])p_\{?\d",
    "θ (an angle) for a rotation frequency": r"\\theta_(?:c|\{c|\d|\{\d)|θ_c",
    "m (the running maximum) for a run length": r"(?i:\brepeat\b|\brun\b)[^$.]{0,40}\$m\$|\$m\s*\\dots\s*2m",
    "c (a feature index) for a character": r"p\(c\b|p\(c'|\\mid\s*c\)|\(a\\,c\)",
    "k (keys) for top-k": r"top-\$k\$",
    "f (an input feature) as the final layer norm's label": r"\\(?:mathrm|text)\{LN\}_\{?f\b",
    "a bare d for the model width": r"\d\s*d(?![_A-Za-z])(?=[^$]*\$)|\d\s*nd\^2",
    "weights (A) for parameters": (
        r"(?i)\bweight matri(?:x|ces)|\binitial weights|\b(?:random|zero-mean|all-positive|U\[0, 1\)) weights\b"
        r"|\bowns (?:its|the) weights|\brounded weights|\bwithout weights\b"
    ),
}

# --- the symbols of a lesson's maths ---------------------------------------------------------------------------

GREEK = set(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi rho sigma tau "
    "upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega ell".split()
)
#: commands whose {argument} is words, not symbols (\text{softmax}, \mathbb{R}, \begin{bmatrix})
WORDS = {"text", "textbf", "textit", "operatorname", "mathbb", "begin", "end", "mathit", "textrm", "hbox"}
#: \mathrm{…} and \mathcal{…} name a symbol (\mathrm{PE}, \mathcal{V}) unless they spell an operator
OPERATORS = {
    "softmax",
    "LN",
    "LayerNorm",
    "MHA",
    "FFN",
    "GELU",
    "Attention",
    "concat",
    "id",
    "count",
    "d",
    "T",
    "e",
    "i",
}
#: the characters of an index subscript: x_i, \alpha_{ij}, s_{i l}, \mathrm{PE}_{i, 2c+1}, x_{if}
INDEX = set("ijlcftn0123456789,+-' ")
#: row vectors, whose subscript may name a token instead of its index (x_\text{cats})
TOKEN_VECTORS = {"x", "q", "k", "v", "z"}
#: constants: Euler's number
CONSTANTS = {"e"}
MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)
COMMAND = re.compile(r"\\([A-Za-z]+)")


def math_spans(markdown: str) -> list[str]:
    """The ``$…$`` and ``$$…$$`` spans of a markdown text, code spans and blocks left out."""
    markdown = re.sub(r"```.*?```", "", markdown, flags=re.S)
    markdown = re.sub(r"`[^`]*`", "", markdown)
    return [a or b for a, b in MATH.findall(markdown)]


def _group(tex: str, start: int) -> tuple[str, int]:
    """``tex[start] == "{"``: the braces' content and the index after the closing brace."""
    depth = 0
    for end in range(start, len(tex)):
        depth += {"{": 1, "}": -1}.get(tex[end], 0)
        if depth == 0:
            return tex[start + 1 : end], end + 1
    return tex[start + 1 :], len(tex)


def _subscript(tex: str, start: int) -> tuple[str, int]:
    """The subscript that follows an ``_`` ending at ``start``, and the index after it."""
    while start < len(tex) and tex[start] == " ":
        start += 1
    if start >= len(tex):
        return "", start
    if tex[start] == "{":
        return _group(tex, start)
    if tex[start] == "\\":
        m = re.match(r"\\[A-Za-z]+(?:\{[^{}]*\})?", tex[start:])
        if m:
            return m.group(0), start + m.end()
    return tex[start], start + 1


def _normal(subscript: str) -> str:
    """``{\\text{in}}``, ``\\text{in}`` and ``{ \\text{in} }`` are spelt alike: ``\\text{in}``."""
    subscript = re.sub(r"\s|\\[,;!]", "", subscript)
    while subscript.startswith("{") and _group(subscript, 0) == (subscript[1:-1], len(subscript)):
        subscript = subscript[1:-1]
    return subscript


def symbols(tex: str) -> list[str]:
    """The symbols of one maths span: ``"W_q"``, ``"d_\\text{in}"`` (named subscripts spelt out), ``"x_•"`` (any
    index), ``"x"`` (bare). A uniform distribution ``U[…)``/``U(…)`` and operators are not symbols."""
    tex = re.sub(r"U(?=\s*[\[(])", "", tex)
    found, i = [], 0
    while i < len(tex):
        if tex[i] == "\\":
            m = COMMAND.match(tex, i)
            if not m:
                i += 2
                continue
            name, i = m.group(1), m.end()
            has_arg = i < len(tex) and tex[i] == "{"
            if name in GREEK:
                base = "\\" + name
            elif name in ("mathrm", "mathcal", "mathbf", "boldsymbol") and has_arg:
                content, i = _group(tex, i)
                if content in OPERATORS or (name == "mathbf" and content == "1"):
                    continue
                base = f"\\{name}{{{content}}}"
            elif name in WORDS and has_arg:
                _, i = _group(tex, i)
                continue
            else:
                continue
        elif tex[i].isascii() and tex[i].isalpha():
            base, i = tex[i], i + 1
        else:
            i += 1
            continue
        if i < len(tex) and tex[i] == "_":
            subscript, i = _subscript(tex, i + 1)
            plain = re.sub(r"[{}\s]|\\[,;!]", "", re.sub(r"n_\{?[qkb]\}?|\\ell", "", subscript))
            token = re.fullmatch(r"\\text\{[a-z]+\}", _normal(subscript)) and base in TOKEN_VECTORS
            if set(plain) <= INDEX or token:  # x_i, \alpha_{ij}; x_\text{cats}: the row of the token "cats"
                found.append(base + "_•")
            else:
                found.append(f"{base}_{_normal(subscript)}")
                found.extend(s for s in symbols(subscript) if len(s) > 1 and not s.isalpha())
        else:
            found.append(base)
    return found


@cache
def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def table() -> list[tuple[str, str, str, str]]:
    """Lesson 01's notation table as (kind, symbol, in code, meaning) rows."""
    text = next("".join(c["source"]) for c in cells(NOTEBOOKS[0]) if "## The series' notation" in "".join(c["source"]))
    rows = [tuple(c.strip() for c in line.strip()[1:-1].split("|")) for line in text.splitlines() if line[:2] == "| "]
    assert all(len(row) == 4 for row in rows), [row for row in rows if len(row) != 4]
    return [row for row in rows if row[0] not in ("kind", "---")]  # type: ignore[misc]


@cache
def allowed() -> tuple[set[str], set[str]]:
    """What the table lets a lesson write: bases (bare or with any index) and named subscripts, spelt out."""
    bases, named = set(CONSTANTS), set()
    for _, symbol, _, _ in table():
        for span in math_spans(symbol):
            for found in symbols(span):
                if "_" in found and not found.endswith("_•"):
                    named.add(found)
                else:
                    bases.add(found.removesuffix("_•"))
    return bases, named


def unlisted(path: Path) -> dict[str, list[int]]:
    """The symbols of a lesson's maths that lesson 01's table does not list, with the cells that use them."""
    bases, named = allowed()
    found: dict[str, list[int]] = {}
    for index, cell in enumerate(cells(path)):
        if cell["cell_type"] != "markdown" or "## The series' notation" in "".join(cell["source"]):
            continue  # the table itself names what a symbol never means ("never a bare $d$")
        for span in math_spans("".join(cell["source"])):
            for symbol in symbols(span):
                if symbol.removesuffix("_•") in bases or symbol in named:
                    continue
                if index not in found.setdefault(symbol, []):
                    found[symbol].append(index)
    return found


def test_the_table_is_read() -> None:
    symbols_ = [symbol for _, symbol, _, _ in table()]
    assert len(symbols_) >= 30 and "$A$ ($\\alpha_{ij}$)" in symbols_ and "$E$" in symbols_
    bases, named = allowed()
    assert {"A", "\\alpha", "G", "B", "T", "u", "p", "\\ell", "m", "\\omega", "a", "\\mathrm{PE}"} <= bases
    assert {"b_q", "b_o", "n_b", "n_\\text{run}", "d_\\text{model}", "p_\\text{drop}", "\\omega_c"} <= named | {
        b + "_c" for b in bases
    }


def test_each_symbol_is_in_the_table_once() -> None:
    symbols_ = [symbol for _, symbol, _, _ in table()]
    assert len(symbols_) == len(set(symbols_)), sorted({s for s in symbols_ if symbols_.count(s) > 1})
    rows = [{s for span in math_spans(symbol) for s in symbols(span)} for _, symbol, _, _ in table()]
    twice = {s for row in rows for s in row if sum(s in other for other in rows) > 1}
    assert not twice, f"symbols in two rows of the table: {sorted(twice)}"


def test_every_name_in_code_exists() -> None:
    missing = []
    for _, symbol, code, _ in table():
        for name in re.findall(r"`([A-Za-z_]\w*)`", code):
            if not re.search(rf"\b{name}\b", ATTNLIB) and not hasattr(torch.linalg, name):
                missing.append(f"{symbol}: {name}")
    assert not missing, f"names in lesson 01's table that attnlib does not use: {missing}"


def test_symbols_are_read_from_maths() -> None:
    assert symbols(r"S = QK^\top \in \mathbb{R}^{n_q \times n_k}") == ["S", "Q", "K", "n_q", "n_k"]
    assert symbols(r"\alpha_{ij} = \frac{e^{s_{ij}}}{\sum_{l=1}^{n_k} e^{s_{il}}}") == [
        "\\alpha_•",
        "e",
        "s_•",
        "l",
        "n_k",
        "e",
        "s_•",
    ]
    assert symbols(r"d_\text{in}, d_{\text{model}}, \mathrm{PE}_{i,\,2c+1}") == [
        "d_\\text{in}",
        "d_\\text{model}",
        "\\mathrm{PE}_•",
    ]
    assert symbols(r"U[0, 1) \text{ and } U(-1, 1), \operatorname{softmax}(S), \mathrm{LN}(x)") == ["S", "x"]
    assert symbols(r"\omega_c, \theta_{ij}, s_{n_k}, b_q") == ["\\omega_•", "\\theta_•", "s_•", "b_q"]


def test_the_symbol_check_can_fail() -> None:
    bases, named = allowed()
    for symbol in ("y", "\\gamma", "W_\\text{stored}", "n_\\text{tokens}", "N"):
        assert symbol.removesuffix("_•") not in bases and symbol not in named, symbol
    for symbol in ("x_•", "q", "\\alpha_•", "d_\\text{in}", "b_v", "n_b", "\\delta_•", "a"):
        assert symbol.removesuffix("_•") in bases or symbol in named, symbol


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_symbol_of_a_lesson_is_in_the_table(path: Path) -> None:
    found = unlisted(path)
    assert not found, f"{path.name}: symbols lesson 01's table does not list: {found} (cell indices)"


def misuses(text: str) -> set[str]:
    return {meaning for meaning, pattern in MISUSES.items() if re.search(pattern, text)}


def test_the_patterns_catch_each_misuse() -> None:
    assert misuses("$$h = x + \\text{MHA}(x)$$") == {"h (heads) as the residual stream"}
    e_rule = "E (embeddings) for positional encodings or an expectation"
    assert misuses("a fixed vector $E_i$, and $E E^\\top$") == {e_rule}
    assert misuses("($E[w^2] = 1/3$)") == misuses("$\\operatorname{E}[q^2]$") == {e_rule}
    assert misuses("where $\\sigma_i = x_i \\cdot 1$") == {"σ (singular values) for a token's sum"}
    assert misuses("an $(n_q, b)$ tile") == {"b (biases) for a block width"}
    assert (
        misuses("shape $(b, n, d_\\text{model})$")
        == misuses("a batch of $b$ sequences")
        == {"b (biases) for the batch size"}
    )
    assert misuses("$\\text{softmax}(z / T)$") == misuses("$e^{z_i/T}$") == {"z (output rows) for logits"}
    assert misuses("dropout zeroes each weight with probability $p$") == {"p (a probability) for the dropout rate"}
    assert misuses("divided by $1 - p$") == {"p (a probability) for the dropout rate"}
    assert misuses("$q = \\mathrm{LN}(e_\\text{it} + p_8)\\,W_q$") == {"p (a probability) for a position vector"}
    assert misuses("$\\sin(i\\theta_c)$") == {"θ (an angle) for a rotation frequency"}
    assert misuses("A repeat of length $m$ at $m \\dots 2m - 2$") == {"m (the running maximum) for a run length"}
    assert misuses("$p(c) = 1$, $p(c \\mid a)$") == {"c (a feature index) for a character"}
    assert misuses("top-$k$ sampling") == {"k (keys) for top-k"}
    assert misuses("$u = \\mathrm{LN}_f(X) W_u$") == {"f (an input feature) as the final layer norm's label"}
    assert misuses("that is $n > 6d$") == {"a bare d for the model width"}
    assert misuses("## The weights, once-rounded weights") == {"weights (A) for parameters"}
    clean = "row $\\text{id}_i$ of $E$; $\\sigma_1/\\sigma_2$; $(B, n, d_\\text{model})$; the attention weights $A$"
    clean += "; $\\mathrm{PE}_i$; $\\mathbb{E}[w^2]$, $\\operatorname{Var}(q)$; $\\cos\\theta_{ij}$; $(n_q, n_b)$"
    clean += "; $\\operatorname{softmax}(u / T)$; $p(a' \\mid a)$; $p_\\text{drop}$; $m = -\\infty$, $m = 2$"
    clean += "; $n_\\text{run}$; top-k; $\\omega_c$; $(n, d_\\text{in})$; $4 n^2 d_\\text{model}$"
    clean += "; $\\mathrm{LN}_\\text{final}(X)$, $\\mathrm{LN}_1$; $x_{jf}$"
    assert misuses(clean) == set(), misuses(clean)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_lesson_gives_a_symbol_a_second_meaning(path: Path) -> None:
    found = {}
    for index, cell in enumerate(cells(path)):
        if cell["cell_type"] == "markdown":
            for meaning in misuses("".join(cell["source"])):
                found.setdefault(meaning, []).append(index)
    assert not found, f"{path.name}: {found} (cell indices); lesson 01's table gives each symbol one meaning"


def _uses_c(span: str) -> bool:
    return "c" in {s.removesuffix("_•") for s in symbols(span)} or bool(re.search(r"\\omega_\{?c", span))


def test_c_has_the_two_meanings_the_table_gives_it_and_no_other() -> None:
    """``c`` is a feature (column) in lessons 03–08 and a pair of features in lesson 12, as the table says."""
    table_cell = next(
        " ".join("".join(c["source"]).split())
        for c in cells(NOTEBOOKS[0])
        if "## The series' notation" in "".join(c["source"])
    )
    assert (
        "no symbol means two things, except $c$: a feature (column) in lessons 03–08, a pair of features in lesson 12"
        in table_cell
    )
    in_pairs, elsewhere = set(), set()  # lessons whose cells use c, beside words or maths of pairs or not
    for path in NOTEBOOKS[1:]:
        for cell in cells(path):
            text = "".join(cell["source"])
            if cell["cell_type"] == "markdown" and any(_uses_c(span) for span in math_spans(text)):
                pairs = re.search(r"(?i)\bpairs?\b|\bfrequency\b|\\omega_\{?c|\b2c\b", text)
                (in_pairs if pairs else elsewhere).add(path.name[:2])
    assert in_pairs == {"12"}, f"c for a pair of features outside lesson 12: {sorted(in_pairs)}"
    assert elsewhere and elsewhere <= {"03", "04", "05", "06", "07", "08"}, f"c as a column in: {sorted(elsewhere)}"
