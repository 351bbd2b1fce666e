"""The lessons' diagrams, drawn by code from attnlib so that they always agree with the numbers.

``python scripts/figures.py`` (or ``make figures``) writes into ``images/``:

- ``step1_inputs.png`` … ``step8_scaling.png``: one static diagram per step on document 001's
  example (three inputs of size 4, weights 4×3), the row being computed outlined; step 8
  contrasts the softmax of unscaled and scaled scores of random queries and keys (d_k = 64);
- ``step3_qkv.gif`` … ``step7_summing.gif``: document 001's example walked through steps 3–7
  row by row (input by input), like the document's illustrations.

Every number is computed here with :mod:`attnlib.steps` on :mod:`attnlib.examples`; nothing is
typed in. Output is byte-deterministic (fixed sizes and dpi, no PNG metadata, fixed GIF timing), so
``tests/show/test_figures.py`` can regenerate the images and compare them with the committed ones.

``python scripts/figures.py --check`` only compares and lists the images that are out of date.
"""

from __future__ import annotations

import argparse
import io
import math
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib as mpl
import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from PIL import Image

from attnlib import examples, steps
from attnlib.formatting import annotation
from attnlib.show.plots import as_numpy

__all__ = ["ANIMATIONS", "FIGURES", "IMAGES_DIR", "Panel", "render", "render_all", "stale"]

IMAGES_DIR = Path(__file__).resolve().parent.parent / "images"

DPI = 100  # fixed: the same pixels on every machine
CELL = 0.42  # inches per matrix cell
FRAME_MS = 900  # GIF frame duration
LAST_FRAME_MS = 2400  # the finished state stays longer

# document 001's colour code: inputs green, keys orange, queries red, values purple,
# scores/weights blue, weighted values yellow, outputs dark green
COLOURS = {
    "inputs": "#2ca02c",
    "weights": "#7f7f7f",
    "keys": "#ff7f0e",
    "queries": "#d62728",
    "values": "#9467bd",
    "scores": "#1f77b4",
    "weighted": "#e6b800",
    "context": "#0b5e23",
}

_RC = {
    "font.family": "DejaVu Sans",
    "font.size": 11,
    "mathtext.fontset": "dejavusans",
    "svg.hashsalt": "attnlib",
    "path.simplify": True,
}


# --------------------------------------------------------------------------- drawing primitives
@dataclass
class Panel:
    """One matrix drawn as a grid of numbers.

    Args:
        data: ``(n_rows, n_cols)`` numbers (tensor, array or nested lists).
        title: text above the grid (mathtext allowed).
        colour: tint of the cells (document 001's colour of the role), ignored with ``cmap``.
        cmap: colour the cells by value with this colormap instead (step 8).
        row_labels, col_labels: tick texts left of / above the grid.
        rows, cols, cells: rows, columns and single cells to outline and tint strongly.
        shown: boolean ``(n_rows, n_cols)``; cells that are False are drawn empty (not yet computed).
        decimals: digits after the point (integers are written without).
    """

    data: object
    title: str = ""
    colour: str = "#7f7f7f"
    cmap: str | None = None
    row_labels: Sequence[str] | None = None
    col_labels: Sequence[str] | None = None
    rows: Sequence[int] = ()
    cols: Sequence[int] = ()
    cells: Sequence[tuple[int, int]] = ()
    shown: np.ndarray | None = None
    decimals: int = 2
    vmin: float | None = None
    vmax: float | None = None
    array: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.array = as_numpy(self.data)

    @property
    def shape(self) -> tuple[int, int]:
        return self.array.shape  # type: ignore[return-value]

    def left_margin(self) -> float:
        """Inches needed left of the grid for the row labels (and a title wider than the grid)."""
        labels = 0.1 if not self.row_labels else 0.15 + 0.085 * max(len(s) for s in self.row_labels)
        return max(labels, self.title_overhang())

    def title_overhang(self) -> float:
        """Inches the centred title sticks out on each side of the grid (about 0.1 inch a character)."""
        visible = re.sub(r"\\[a-zA-Z]+|[$^_{}]", "", self.title)
        return max(0.0, (0.1 * len(visible) - self.shape[1] * CELL) / 2)


def _draw_panel(fig: Figure, panel: Panel, x0: float, y0: float, fig_w: float, fig_h: float) -> None:
    """Draw ``panel`` with its grid's lower-left corner at (x0, y0) inches."""
    n_rows, n_cols = panel.shape
    ax = fig.add_axes((x0 / fig_w, y0 / fig_h, n_cols * CELL / fig_w, n_rows * CELL / fig_h))
    ax.set_xlim(-0.5, n_cols - 0.5)
    ax.set_ylim(n_rows - 0.5, -0.5)
    ax.set_axis_off()
    strong = {(i, j) for i in panel.rows for j in range(n_cols)}
    strong |= {(i, j) for j in panel.cols for i in range(n_rows)}
    strong |= {tuple(c) for c in panel.cells}
    cmap = mpl.colormaps[panel.cmap] if panel.cmap else None
    lo = panel.vmin if panel.vmin is not None else float(panel.array.min())
    hi = panel.vmax if panel.vmax is not None else float(panel.array.max())
    for i in range(n_rows):
        for j in range(n_cols):
            visible = panel.shown is None or bool(panel.shown[i, j])
            value = float(panel.array[i, j])
            if not visible:
                face, text_colour = "white", "black"
            elif cmap is not None:
                rgba = cmap((value - lo) / (hi - lo) if hi > lo else 0.5)
                face = rgba
                luminance = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2]
                text_colour = "black" if luminance > 0.5 else "white"
            else:
                face = mpl.colors.to_rgba(panel.colour, 0.75 if (i, j) in strong else 0.18)
                text_colour = "black"
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=face, edgecolor="#bbbbbb", linewidth=0.8))
            if visible:
                ax.text(
                    j,
                    i,
                    annotation(value, panel.decimals, whole=True, scientific=False),
                    ha="center",
                    va="center",
                    fontsize=10,
                    color=text_colour,
                )
    for i, j in sorted(strong):
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.0))
    for i in panel.rows:
        ax.add_patch(Rectangle((-0.5, i - 0.5), n_cols, 1, fill=False, edgecolor="black", linewidth=2.4))
    for j in panel.cols:
        ax.add_patch(Rectangle((j - 0.5, -0.5), 1, n_rows, fill=False, edgecolor="black", linewidth=2.4))
    for i, j in panel.cells:
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=2.4))
    ax.add_patch(Rectangle((-0.5, -0.5), n_cols, n_rows, fill=False, edgecolor="#333333", linewidth=1.2))
    if panel.row_labels:
        for i, label in enumerate(panel.row_labels):
            ax.text(-0.65, i, label, ha="right", va="center", fontsize=9, color="#333333")
    top = -0.6
    if panel.col_labels:
        for j, label in enumerate(panel.col_labels):
            ax.text(j, -0.6, label, ha="center", va="bottom", fontsize=9, color="#333333")
        top = -1.2
    if panel.title:
        ax.text((n_cols - 1) / 2, top, panel.title, ha="center", va="bottom", fontsize=11)


Item = Panel | str


def _row_size(items: Sequence[Item]) -> tuple[float, float]:
    width = 0.0
    height = 0.0
    for item in items:
        if isinstance(item, Panel):
            width += item.left_margin() + item.shape[1] * CELL + item.title_overhang() + 0.1
            height = max(height, item.shape[0] * CELL)
        else:
            width += 0.3 + 0.13 * len(item)
    return width, height


def _figure(rows: Sequence[Sequence[Item]], caption: str = "", *, size: tuple[float, float] | None = None) -> Figure:
    """Lay out rows of panels and operators (``"×"``, ``"="`` …) left to right, top to bottom."""
    head = 0.75  # room for titles (and column labels) above each row
    sizes = [_row_size(r) for r in rows]
    width = max(w for w, _ in sizes) + 0.3
    if size is not None:
        width = max(width, size[0])
    # the caption wraps to the figure's width (about 12 characters per inch at 10 pt) and always
    # gets room for two lines, so that frames of one animation keep the same size
    lines = textwrap.wrap(caption, width=max(20, int(width * 12))) if caption else []
    caption_h = 0.15 + 0.18 * max(2, len(lines)) if lines else 0.15
    height = sum(h + head for _, h in sizes) + caption_h + 0.1
    if size is not None:
        height = max(height, size[1])
    fig = Figure(figsize=(round(width, 2), round(height, 2)), dpi=DPI, facecolor="white")
    FigureCanvasAgg(fig)
    y_top = height - 0.1
    for row, (w, h) in zip(rows, sizes):
        x = (width - w) / 2
        y_top -= head
        y0 = y_top - h
        for item in row:
            if isinstance(item, Panel):
                x += item.left_margin()
                grid_y = y0 + (h - item.shape[0] * CELL) / 2
                _draw_panel(fig, item, x, grid_y, width, height)
                x += item.shape[1] * CELL + item.title_overhang() + 0.1
            else:
                step = 0.3 + 0.13 * len(item)
                fig.text((x + step / 2) / width, (y0 + h / 2) / height, item, ha="center", va="center", fontsize=15)
                x += step
        y_top = y0
    if caption:
        fig.text(0.5, 0.12 / height, "\n".join(lines), ha="center", va="bottom", fontsize=10, color="#333333")
    return fig


def _png(fig: Figure) -> bytes:
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=DPI, metadata={"Software": None})
    return out.getvalue()


def _rgb(fig: Figure) -> Image.Image:
    canvas = fig.canvas
    canvas.draw()
    buf = np.asarray(canvas.buffer_rgba())
    return Image.fromarray(buf[..., :3].copy(), "RGB")


def _gif(figures: Sequence[Figure]) -> bytes:
    frames = [_rgb(f) for f in figures]
    size = frames[0].size
    if any(f.size != size for f in frames):
        raise RuntimeError(f"GIF frames differ in size: {[f.size for f in frames]}")
    palette_source = Image.new("RGB", (size[0], size[1] * len(frames)))
    for k, frame in enumerate(frames):
        palette_source.paste(frame, (0, k * size[1]))
    palette = palette_source.quantize(colors=128, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    indexed = [f.quantize(palette=palette, dither=Image.Dither.NONE) for f in frames]
    out = io.BytesIO()
    durations = [FRAME_MS] * (len(indexed) - 1) + [LAST_FRAME_MS]
    indexed[0].save(
        out, format="GIF", save_all=True, append_images=indexed[1:], duration=durations, loop=0, optimize=False
    )
    return out.getvalue()


# --------------------------------------------------------------------------- document 001's numbers
def _example() -> dict[str, object]:
    """Document 001's example through steps 1–7, computed with attnlib (no scaling, as in 001)."""
    ex = examples.three_inputs
    inputs = ex.inputs
    w_query, w_key, w_value = ex.projections
    queries, keys, values = steps.derive_qkv(inputs, w_query, w_key, w_value)
    scores = steps.score(queries, keys)
    weights = steps.softmax(scores)
    weighted = steps.weight_values(weights, values)
    context = steps.sum_weighted_values(weighted)
    return {
        "labels": list(ex.token_labels),
        "inputs": inputs,
        "w_query": w_query,
        "w_key": w_key,
        "w_value": w_value,
        "queries": queries,
        "keys": keys,
        "values": values,
        "scores": scores,
        "weights": weights,
        "weighted": weighted,
        "context": context,
    }


def _shown_rows(n_rows: int, n_cols: int, upto: int) -> np.ndarray:
    """Rows ``0 … upto-1`` visible."""
    mask = np.zeros((n_rows, n_cols), dtype=bool)
    mask[:upto] = True
    return mask


def _short(labels: Sequence[str]) -> list[str]:
    return [s.replace("Input ", "") for s in labels]


# --------------------------------------------------------------------------- static figures
def step1_inputs() -> Figure:
    e = _example()
    x = e["inputs"]
    return _figure(
        [[Panel(x, r"inputs $X$  (3 × 4)", COLOURS["inputs"], row_labels=e["labels"], decimals=0)]],
        "one row per input: n_tokens = 3 inputs of size d_in = 4",
    )


def step2_weights() -> Figure:
    e = _example()
    kw = {"decimals": 0}
    return _figure(
        [
            [
                Panel(e["w_key"], r"$W_k$ (4 × 3)", COLOURS["keys"], **kw),
                "  ",
                Panel(e["w_query"], r"$W_q$ (4 × 3)", COLOURS["queries"], **kw),
                "  ",
                Panel(e["w_value"], r"$W_v$ (4 × 3)", COLOURS["values"], **kw),
            ]
        ],
        "each set of weights maps d_in = 4 to 3: keys and queries share d_k, values have d_v",
    )


def _qkv_row(e: dict, name: str, highlight: int | None, upto: int = 3) -> list[Item]:
    sym = {"keys": "K", "values": "V", "queries": "Q"}[name]
    weight = {"keys": "w_key", "values": "w_value", "queries": "w_query"}[name]
    sub = sym.lower() if sym != "V" else "v"
    rows = () if highlight is None else (highlight,)
    return [
        Panel(e["inputs"], r"$X$", COLOURS["inputs"], row_labels=e["labels"], rows=rows, decimals=0),
        "×",
        Panel(e[weight], rf"$W_{sub}$", COLOURS[name], decimals=0),
        "=",
        Panel(e[name], rf"{name} ${sym}$", COLOURS[name], rows=rows, shown=_shown_rows(3, 3, upto), decimals=0),
    ]


def step3_qkv() -> Figure:
    e = _example()
    return _figure(
        [_qkv_row(e, name, 0) for name in ("keys", "values", "queries")],
        "every input row times the same weights: row 1 of X gives row 1 of K, V and Q",
    )


def _scores_row(e: dict, row: int | None, col: int | None, shown: np.ndarray | None) -> list[Item]:
    rows = () if row is None else (row,)
    cells = () if row is None or col is None else ((row, col),)
    return [
        Panel(e["queries"], r"queries $Q$", COLOURS["queries"], row_labels=e["labels"], rows=rows, decimals=0),
        "×",
        Panel(
            e["keys"].T,
            r"keys transposed $K^\top$",
            COLOURS["keys"],
            col_labels=_short(e["labels"]),
            cols=() if col is None else (col,),
            decimals=0,
        ),
        "=",
        Panel(
            e["scores"],
            r"scores $S = QK^\top$",
            COLOURS["scores"],
            col_labels=_short(e["labels"]),
            rows=rows if col is None else (),
            cells=cells,
            shown=shown,
            decimals=0,
        ),
    ]


def step4_scores() -> Figure:
    e = _example()
    return _figure(
        [_scores_row(e, 0, None, None)],
        "Input 1's query against every key: [1, 0, 2] · keys = [2, 4, 4]",
    )


def _softmax_row(e: dict, row: int | None, upto: int) -> list[Item]:
    rows = () if row is None else (row,)
    return [
        Panel(e["scores"], r"scores $S$", COLOURS["scores"], row_labels=e["labels"], rows=rows, decimals=0),
        "softmax\nby row →",
        Panel(
            e["weights"],
            r"weights $A$ (rows sum to 1)",
            COLOURS["scores"],
            rows=rows,
            shown=_shown_rows(3, 3, upto),
            decimals=2,
        ),
    ]


def step5_softmax() -> Figure:
    e = _example()
    w = e["weights"][0].tolist()
    printed = examples.three_inputs.printed_softmax_1
    return _figure(
        [_softmax_row(e, 0, 3)],
        f"row 1 exactly: [{w[0]:.4f}, {w[1]:.4f}, {w[2]:.4f}]; document 001 rounds it to {list(printed)}",
    )


def _weighting_row(e: dict, query: int, key: int | None, upto: int) -> list[Item]:
    rows = () if key is None else (key,)
    weights_col = e["weights"][query].reshape(3, 1)
    return [
        Panel(
            weights_col,
            rf"$\alpha_{{{query + 1}j}}$",
            COLOURS["scores"],
            row_labels=e["labels"],
            rows=rows,
            decimals=2,
        ),
        "×",
        Panel(e["values"], r"values $V$", COLOURS["values"], rows=rows, decimals=0),
        "=",
        Panel(
            e["weighted"][query],
            rf"weighted values for Input {query + 1}",
            COLOURS["weighted"],
            rows=rows,
            shown=_shown_rows(3, 3, upto),
            decimals=2,
        ),
    ]


def step6_weighting() -> Figure:
    e = _example()
    return _figure(
        [_weighting_row(e, 0, None, 3)],
        "each value row times its weight for Input 1 (document 001 uses the rounded 0.0, 0.5, 0.5)",
    )


def _summing_row(e: dict, query: int, upto: int) -> list[Item]:
    return [
        Panel(
            e["weighted"][query],
            rf"weighted values, Input {query + 1}",
            COLOURS["weighted"],
            row_labels=e["labels"],
            rows=(0, 1, 2) if upto > query else (),
            decimals=2,
        ),
        "sum\nrows →",
        Panel(
            e["context"],
            r"outputs $Z = AV$",
            COLOURS["context"],
            row_labels=["Output 1", "Output 2", "Output 3"],
            rows=(query,) if upto > query else (),
            shown=_shown_rows(3, 3, upto),
            decimals=2,
        ),
    ]


def step7_summing() -> Figure:
    e = _example()
    z = e["context"][0].tolist()
    printed = examples.three_inputs.printed_output_1
    return _figure(
        [_summing_row(e, 0, 1)],
        f"Output 1 exactly: [{z[0]:.4f}, {z[1]:.4f}, {z[2]:.4f}]; with the rounded weights 001 gets {list(printed)}",
    )


SCALING_D_K = 64
SCALING_TOKENS = 6
SCALING_SEED = 0


def scaling_example() -> dict[str, torch.Tensor]:
    """Random queries and keys with unit-variance entries, ``(6, 64)`` each, and both softmaxes."""
    gen = torch.Generator().manual_seed(SCALING_SEED)
    queries = torch.randn(SCALING_TOKENS, SCALING_D_K, generator=gen)
    keys = torch.randn(SCALING_TOKENS, SCALING_D_K, generator=gen)
    scores = steps.score(queries, keys)
    scaled = steps.scale_scores(scores, SCALING_D_K)
    return {
        "scores": scores,
        "scaled": scaled,
        "unscaled_weights": steps.softmax(scores),
        "scaled_weights": steps.softmax(scaled),
    }


def step8_scaling() -> Figure:
    s = scaling_example()
    labels = [str(i + 1) for i in range(SCALING_TOKENS)]
    kw = {"cmap": "viridis", "vmin": 0.0, "vmax": 1.0, "decimals": 2, "col_labels": labels}
    std_u = float(s["scores"].std())
    std_s = float(s["scaled"].std())
    return _figure(
        [
            [
                Panel(s["unscaled_weights"], r"softmax$(QK^\top)$", row_labels=labels, **kw),
                "   vs   ",
                Panel(s["scaled_weights"], r"softmax$(QK^\top / \sqrt{d_k})$", **kw),
            ]
        ],
        f"random queries and keys, d_k = {SCALING_D_K}: scores' std {std_u:.1f} → {std_s:.2f} after ÷√{SCALING_D_K}; "
        "unscaled rows are nearly one-hot",
    )


# --------------------------------------------------------------------------- animations (001, row by row)
def step3_qkv_frames() -> list[Figure]:
    e = _example()
    frames = []
    for name in ("keys", "values", "queries"):  # the document's order
        for i in range(3):
            frames.append(_figure([_qkv_row(e, name, i, i + 1)], f"{name}: row {i + 1} of X times the weights"))
    return frames


def step4_scores_frames() -> list[Figure]:
    e = _example()
    frames = []
    for i in range(3):
        for j in range(3):
            shown = np.zeros((3, 3), dtype=bool)
            shown[:i] = True
            shown[i, : j + 1] = True
            q, k = e["queries"][i].tolist(), e["keys"][j].tolist()
            frames.append(
                _figure(
                    [_scores_row(e, i, j, shown)],
                    f"query {i + 1} · key {j + 1} = {q} · {k} = {float(e['scores'][i, j]):g}",
                )
            )
    return frames


def step5_softmax_frames() -> list[Figure]:
    e = _example()
    frames = [_figure([_softmax_row(e, None, 0)], "softmax turns each row of scores into weights")]
    for i in range(3):
        frames.append(_figure([_softmax_row(e, i, i + 1)], f"row {i + 1}: exp(s) / sum(exp(s))"))
    return frames


def step6_weighting_frames() -> list[Figure]:
    e = _example()
    frames = []
    for q in range(3):
        for j in range(3):
            a = float(e["weights"][q, j])
            frames.append(
                _figure(
                    [_weighting_row(e, q, j, j + 1)],
                    f"Input {q + 1}: weight {a:.2f} × value {j + 1} {[int(v) for v in e['values'][j].tolist()]}",
                )
            )
    return frames


def step7_summing_frames() -> list[Figure]:
    e = _example()
    frames = [_figure([_summing_row(e, 0, 0)], "add each input's weighted values element-wise")]
    for q in range(3):
        z = ", ".join(f"{v:.2f}" for v in e["context"][q].tolist())
        frames.append(_figure([_summing_row(e, q, q + 1)], f"Output {q + 1} = [{z}]"))
    return frames


FIGURES: dict[str, Callable[[], Figure]] = {
    "step1_inputs.png": step1_inputs,
    "step2_weights.png": step2_weights,
    "step3_qkv.png": step3_qkv,
    "step4_scores.png": step4_scores,
    "step5_softmax.png": step5_softmax,
    "step6_weighting.png": step6_weighting,
    "step7_summing.png": step7_summing,
    "step8_scaling.png": step8_scaling,
}

ANIMATIONS: dict[str, Callable[[], list[Figure]]] = {
    "step3_qkv.gif": step3_qkv_frames,
    "step4_scores.gif": step4_scores_frames,
    "step5_softmax.gif": step5_softmax_frames,
    "step6_weighting.gif": step6_weighting_frames,
    "step7_summing.gif": step7_summing_frames,
}


def render(name: str) -> bytes:
    """The bytes of image ``name`` (a key of :data:`FIGURES` or :data:`ANIMATIONS`), drawn now."""
    with mpl.rc_context():
        # independent of attnlib.show.style and of any matplotlibrc: defaults plus the fixed settings
        mpl.rcdefaults()
        mpl.rcParams.update(_RC)
        if name in FIGURES:
            return _png(FIGURES[name]())
        if name in ANIMATIONS:
            return _gif(ANIMATIONS[name]())
    raise KeyError(f"no figure {name!r}; choose one of {sorted(FIGURES) + sorted(ANIMATIONS)}")


def render_all(out_dir: str | Path = IMAGES_DIR, names: Sequence[str] | None = None) -> list[Path]:
    """Draw every image (or ``names``) into ``out_dir``; returns the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names or [*FIGURES, *ANIMATIONS]:
        path = out / name
        path.write_bytes(render(name))
        written.append(path)
    return written


def stale(images_dir: str | Path = IMAGES_DIR) -> list[str]:
    """Names of the committed images that are missing or differ from what the code draws now."""
    d = Path(images_dir)
    return [n for n in [*FIGURES, *ANIMATIONS] if not (d / n).is_file() or (d / n).read_bytes() != render(n)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/figures.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(IMAGES_DIR), help="folder to write into (default: images/)")
    parser.add_argument("--check", action="store_true", help="only list images that are out of date")
    parser.add_argument("names", nargs="*", help="only these images, e.g. step4_scores.png")
    args = parser.parse_args(argv)
    if args.check:
        out_of_date = stale(args.out)
        for name in out_of_date:
            print(f"out of date: {name} (run `make figures`)")
        return 1 if out_of_date else 0
    for path in render_all(args.out, args.names or None):
        print(f"wrote {path} ({math.ceil(path.stat().st_size / 1024)} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
