"""Numbers as text: short formatting, and how each entry of a step's matrix was computed.

One home for what the plots, the live views and the explorers write: :func:`format_number`
(``1`` for 1.0, ``0.1235`` for 0.12345), :func:`matrix_decimals`, :func:`format_matrix` (the text
:func:`attnlib.show.parse_matrix` reads back), :func:`annotation` (a heatmap cell's label), and
the per-cell explanations a live view shows on hover:

- :func:`explain_products` — an entry of ``A B`` as a dot product written term by term
  (``q_1·k_2 = 1×4 + 0×4 + 2×0 = 4`` for the scores ``Q Kᵀ``, ``x_1·w_:,1 = …`` for ``X W_q``);
- :func:`explain_softmax` — a weight ``α_ij = e^{s_ij} / Σ_l e^{s_il}`` with the row's numbers;
- :func:`explain_weighted_sum` — an output entry ``z_ic = Σ_j α_ij v_jc`` with the numbers.

Each returns ``None`` for matrices larger than :data:`EXPLAIN_MAX` on a side (a hover text of
64 terms helps nobody, and building 4096 of them would cost the kernel more than the maths).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

ArrayLike = Tensor | Sequence[Sequence[float]]  # numpy arrays work too (torch.as_tensor)

__all__ = [
    "EXPLAIN_MAX",
    "annotation",
    "explain_products",
    "explain_softmax",
    "explain_weighted_sum",
    "format_matrix",
    "format_number",
    "matrix_decimals",
]

EXPLAIN_MAX = 16


def format_number(value: float, decimals: int = 4) -> str:
    """``1`` for 1.0, ``-0.5`` for -0.5, ``0.1235`` for 0.12345: short, exact for integers."""
    v = float(value)
    if v.is_integer():
        return str(int(v))
    return f"{v:.{decimals}f}".rstrip("0").rstrip(".")


def matrix_decimals(matrix: ArrayLike) -> int:
    """Digits for heatmap annotations: 0 for an integer-valued matrix (the documents' ``1.``), else 2."""
    m = torch.as_tensor(matrix)
    return 0 if bool((m == m.round()).all()) else 2


def format_matrix(matrix: ArrayLike, decimals: int = 4) -> str:
    """One line per row, numbers separated by ``, `` (the text ``parse_matrix`` reads back)."""
    return "\n".join(", ".join(format_number(v, decimals) for v in row) for row in _t(matrix).tolist())


def annotation(value: float, decimals: int, *, whole: bool = False, scientific: bool = True) -> str:
    """A heatmap cell's label: ``decimals`` digits; zero is ``0`` (never ``-0`` or ``0.00``).

    ``whole``: a whole number below 10⁶ without decimals (``2``, not ``2.00``; the step diagrams).
    ``scientific``: a value too small for ``decimals`` digits, or ≥ 10⁵, as ``1.0e-05`` (the plots and
    live views); without it, it is rounded like the rest.
    """
    value = float(value)
    if whole and value.is_integer() and abs(value) < 1e6:
        return str(int(value))
    if scientific and value != 0 and (abs(value) < 10 ** (-decimals) or abs(value) >= 1e5):
        return f"{value:.1e}"
    return "0" if value == 0 else f"{value:.{decimals}f}"


def _small(*matrices: Tensor) -> bool:
    return all(max(m.shape) <= EXPLAIN_MAX for m in matrices)


def _formatted(rows: list[list[float]]) -> list[list[str]]:
    return [[format_number(x) for x in row] for row in rows]


def _t(matrix: ArrayLike) -> Tensor:
    """Any matrix (tensor, array, nested lists) as a float64 tensor, detached."""
    return torch.as_tensor(matrix).detach().cpu().to(torch.float64)


def explain_products(
    left: ArrayLike,
    right_t: ArrayLike,
    *,
    left_name: str = "q_{i}",
    right_name: str = "k_{j}",
) -> list[list[str]] | None:
    """Entry ``(i, j)`` of ``left @ right_tᵀ`` as ``a_i·b_j = a_i1×b_j1 + … = value``.

    Args:
        left: ``(n_rows, d)`` rows ``a_i`` (e.g. the queries Q).
        right_t: ``(n_cols, d)`` rows ``b_j`` (e.g. the keys K; for ``X W`` pass ``Wᵀ``).
        left_name, right_name: how a row is written, with ``{i}``/``{j}`` the 1-based index
            (``q_{i}``/``k_{j}``; ``x_{i}``/``W_k[:,{j}]`` for a projection ``X W_k``).

    Returns:
        ``n_rows`` lists of ``n_cols`` strings, or ``None`` when a side is larger than EXPLAIN_MAX.
    """
    a, b = _t(left), _t(right_t)
    if not _small(a, b):
        return None
    rows, cols = a.tolist(), b.tolist()
    shown_rows, shown_cols = _formatted(rows), _formatted(cols)  # each number formatted once, not n times
    out = []
    for i, row in enumerate(rows):
        texts = []
        for j, col in enumerate(cols):
            terms = " + ".join(f"{x}×{y}" for x, y in zip(shown_rows[i], shown_cols[j]))
            total = math.fsum(x * y for x, y in zip(row, col))
            name = left_name.format(i=i + 1) + "·" + right_name.format(j=j + 1)
            texts.append(f"{name} = {terms} = {format_number(total)}")
        out.append(texts)
    return out


def explain_softmax(scores: ArrayLike, *, temperature: float = 1.0) -> list[list[str]] | None:
    """Weight ``(i, j)`` of ``softmax(scores / T)`` as ``e^{s_ij} / Σ_l e^{s_il}`` with the row's numbers.

    The exponentials are written shifted by the row's maximum ``m`` (``e^{s−m}``), the way softmax
    is computed, so the text stays finite for scores of ±1e4.

    Args:
        scores: ``(n_q, n_k)`` (already scaled, or divided by ``temperature`` here).
    """
    s = _t(scores) / temperature
    if not _small(s):
        return None
    out = []
    for i, row in enumerate(s.tolist()):
        m = max(row)
        exps = [math.exp(v - m) for v in row]
        total = math.fsum(exps)
        name = "s" if temperature == 1 else "s/T"
        head = f"α_{i + 1}{{j}} = e^({name}_{i + 1}{{j}} − m) / Σ_l e^({name}_{i + 1}l − m), m = {format_number(m)}"
        denominator = " + ".join(f"e^{format_number(v - m)}" for v in row)
        texts = []
        for j, v in enumerate(row):
            texts.append(
                head.format(j=j + 1)
                + f": e^{format_number(v - m)} / ({denominator}) = {format_number(exps[j])} / {format_number(total)}"
                + f" = {format_number(exps[j] / total)}"
            )
        out.append(texts)
    return out


def explain_weighted_sum(weights: ArrayLike, values: ArrayLike) -> list[list[str]] | None:
    """Output entry ``(i, c)`` of ``Z = A V`` as ``z_ic = Σ_j α_ij v_jc`` with the numbers.

    Args:
        weights: ``(n_q, n_k)`` attention weights A.
        values: ``(n_k, d_v)`` values V.
    """
    a, v = _t(weights), _t(values)
    if not _small(a, v):
        return None
    rows, columns = a.tolist(), v.T.tolist()
    shown_rows, shown_columns = _formatted(rows), _formatted(columns)
    out = []
    for i, row in enumerate(rows):
        texts = []
        for c, column in enumerate(columns):
            terms = " + ".join(f"{w}×{x}" for w, x in zip(shown_rows[i], shown_columns[c]))
            total = math.fsum(w * x for w, x in zip(row, column))
            texts.append(f"z_{i + 1},{c + 1} = Σ_j α_{i + 1}j v_j{c + 1} = {terms} = {format_number(total)}")
        out.append(texts)
    return out
