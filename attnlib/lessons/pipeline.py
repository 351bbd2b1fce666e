"""The linked explorer: one worked example carried through all eight steps, every matrix live.

``X → W_q, W_k, W_v → Q, K, V → S → S/√d_k → A → α_i·V → Z``, side by side, each view computed by
the step function of its lesson (:mod:`attnlib.steps`). Type a number into a cell of ``X`` or of a
projection and every later matrix is recomputed; hover any number to see how it was computed;
choose a query (the dropdown, or click a cell of Q, S, A or Z) and its row lights up everywhere,
with the key chosen (click a cell of K, S or A) outlined in K, V, S and A.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache, partial
from typing import TypedDict, cast

import torch
from torch import Tensor

from .. import examples
from .._validate import shape_str
from ..formatting import explain_products, explain_softmax, explain_weighted_sum, format_number
from ..modules import causal_mask
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..steps import Projections, derive_qkv, trace

__all__ = ["EXAMPLES", "PipelineExplorer", "pipeline", "pipeline_example"]

#: The worked examples the explorer offers: document → what it is.
EXAMPLES = {
    "001": "001 — three inputs, worked by hand",
    "000": "000 — four inputs",
    "004": "004 — three encodings, seeded module projections",
    "003": "003 — “can you help me to translate this sentence”",
}


@lru_cache(maxsize=8)
class PipelineValues(TypedDict):
    """What :meth:`PipelineExplorer.compute` reads: the controls' values, and ``X`` and the projections."""

    example: str
    query: int
    key: int
    scaled: bool
    causal: bool
    inputs: Tensor
    projections: Projections


def pipeline_example(key: str) -> tuple[Tensor, Projections, tuple[str, ...]]:
    """Inputs ``X`` ``(n, d_in)``, projections ``(d_in, d_k)``/``(d_in, d_v)`` (``Q = X W_q``), and token labels.

    004's module holds ``nn.Linear`` weights, applied as ``x Wᵀ``: shown here transposed, as ``W``.
    003 applies its matrices as ``U x`` (``X Uᵀ``): shown as ``W = Uᵀ``. Either way ``Q = X W_q``.
    """
    if key not in EXAMPLES:
        raise ValueError(f"example must be one of {sorted(EXAMPLES)}, got {key!r}")
    if key in ("001", "000"):
        ex = examples.get(key)
        assert isinstance(ex, examples.MatrixExample), "documents 001 and 000 give their numbers"
        return ex.inputs, ex.projections, ex.token_labels
    if key == "004":
        module = examples.document_004_module()
        layers = (module.w_query, module.w_key, module.w_value)
        return (
            examples.encodings.inputs,
            Projections(*(layer.weight.detach().T.contiguous() for layer in layers)),
            (examples.encodings.token_labels),
        )
    ex = examples.translate
    run = ex.run()
    projections = Projections(run.u_query.T.contiguous(), run.u_key.T.contiguous(), run.u_value.T.contiguous())
    return run.embedded, projections, tuple(ex.tokens)


def pipeline(
    inputs: Tensor, projections: Projections, *, scaled: bool = True, causal: bool = False
) -> dict[str, Tensor]:
    """Every step's matrix, each computed by the step function of its lesson (through :func:`attnlib.steps.trace`).

    Returns ``queries``, ``keys`` ``(n, d_k)``, ``values`` ``(n, d_v)``, ``scores`` ``(n, n)``,
    ``scaled_scores`` ``(n, n)`` (``S/√d_k``, or ``S`` when not scaled; ``-inf`` where the causal
    mask hides a key), ``weights`` ``(n, n)``, ``weighted_values`` ``(n, n, d_v)`` and ``context``
    ``(n, d_v)``.
    """
    queries, keys, values = derive_qkv(inputs, *projections)  # step 3
    mask = causal_mask(inputs.shape[0]) if causal else None
    steps = trace(queries, keys, values, scale=None if scaled else 1.0, mask=mask)  # steps 4, 8, 5, 6, 7
    return {"queries": queries, "keys": keys, "values": values, **steps._asdict()}


def _options(labels: Sequence[str], letter: str) -> list[tuple[str, int]]:
    return [(f"{letter}{i + 1} ({label})", i) for i, label in enumerate(labels)]


def _shape_strip(inputs: Tensor, s: dict[str, Tensor], scaled: bool) -> list[str]:
    """The shape of every step, in the order of computation."""
    return [
        f"X {shape_str(inputs)}",
        f"Q, K {shape_str(s['queries'])}, V {shape_str(s['values'])}",
        f"S {shape_str(s['scores'])}",
        f"{'S/√d_k' if scaled else 'S'} {shape_str(s['scaled_scores'])}",
        f"A {shape_str(s['weights'])}",
        f"α_ij v_j {shape_str(s['weighted_values'])}",
        f"Z {shape_str(s['context'])}",
    ]


class PipelineExplorer(Explorer):
    """All eight steps of one example at once, linked: edit an input or a weight, every later matrix follows.

    Args:
        example: ``"001"``, ``"000"``, ``"004"`` or ``"003"`` (see :data:`EXAMPLES`).
        query: the query (token) whose row is outlined everywhere (0-based).
        key: the key outlined in K, V, S and A (0-based).
        scaled: divide the scores by ``√d_k`` before the softmax.
        causal: hide the keys after each query (a causal mask, lesson 09).

    Controls: ``example``, ``query``, ``key``, ``scaled``, ``causal``. Views (all drawn by the
    browser): ``inputs`` and ``w_query``/``w_key``/``w_value`` (editable), ``queries``, ``keys``,
    ``values``, ``scores``, ``scaled_scores``, ``weights``, ``weighted_values`` (the chosen query's
    ``α_ij v_j``, one row per key) and ``context``. :attr:`shapes` names every shape in order.
    """

    SNAPSHOT_VIEWS = 4

    def __init__(
        self, example: str = "001", *, query: int = 0, key: int = 0, scaled: bool = True, causal: bool = False
    ) -> None:
        super().__init__()
        self.inputs, self.projections, labels = pipeline_example(example)
        n = self.inputs.shape[0]
        for name, value in (("query", query), ("key", key)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
                raise ValueError(f"{name} must be a token index from 0 to {n - 1}, got {value!r}")
        c = self.controls
        c["example"] = ui.Dropdown(options=[(v, k) for k, v in EXAMPLES.items()], value=example, description="example")
        c["query"] = ui.Dropdown(options=_options(labels, "q"), value=query, description="query")
        c["key"] = ui.Dropdown(options=_options(labels, "k"), value=key, description="key")
        c["scaled"] = ui.Checkbox(value=scaled, description="scale by 1/√d_k")
        c["causal"] = ui.Checkbox(value=causal, description="causal mask")
        self.shapes = self.texts["shapes"] = ui.HTML()
        self.caption = self.texts["caption"] = ui.HTML()
        empty = None
        v = self.views
        v["inputs"] = HeatmapView(empty, title="X: inputs", editable=True, ylabel="token")
        v["w_query"] = HeatmapView(empty, title="W_q", editable=True)
        v["w_key"] = HeatmapView(empty, title="W_k", editable=True)
        v["w_value"] = HeatmapView(empty, title="W_v", editable=True)
        v["queries"] = HeatmapView(empty, title="Q = X W_q")
        v["keys"] = HeatmapView(empty, title="K = X W_k")
        v["values"] = HeatmapView(empty, title="V = X W_v")
        v["scores"] = HeatmapView(empty, title="S = Q Kᵀ", xlabel="key", ylabel="query")
        v["scaled_scores"] = HeatmapView(empty, title="S / √d_k", xlabel="key", ylabel="query")
        v["weights"] = HeatmapView(empty, title="A = softmax", xlabel="key", ylabel="query", vmin=0.0, vmax=1.0)
        v["weighted_values"] = HeatmapView(empty, title="α_ij v_j", ylabel="key")
        v["context"] = HeatmapView(empty, title="Z = A V", ylabel="query")
        self.on_edit("inputs", self._edit("inputs"))
        for name in ("w_query", "w_key", "w_value"):
            self.on_edit(name, self._edit(name))
        for name in ("queries", "context"):
            v[name].on_select(lambda i, _j: self._choose(query=i))
        for name in ("keys", "values"):
            v[name].on_select(lambda i, _j: self._choose(key=i))
        for name in ("scores", "scaled_scores", "weights"):
            v[name].on_select(lambda i, j: self._choose(query=i, key=j))
        self.update()
        self.observe_controls()

        def row(*names: str) -> ui.HBox:
            return ui.HBox([v[name] for name in names], layout=ui.Layout(flex_flow="row wrap"))

        self.widget = ui.VBox(
            [
                ui.HBox([c["example"], c["query"], c["key"]]),
                ui.HBox([c["scaled"], c["causal"]]),
                self.shapes,
                self.message,
                row("inputs", "w_query", "w_key", "w_value"),
                row("queries", "keys", "values"),
                row("scores", "scaled_scores", "weights"),
                row("weighted_values", "context"),
                self.caption,
            ]
        )

    # ---------------------------------------------------------------- state changes
    @property
    def example(self) -> str:
        """The example chosen."""
        example: str = self.controls["example"].value
        return example

    @property
    def labels(self) -> tuple[str, ...]:
        """The example's token labels."""
        return pipeline_example(self.example)[2]

    @property
    def steps(self) -> dict[str, Tensor]:
        """Every step's matrix for the state now (see :func:`pipeline`)."""
        c = self.controls
        return pipeline(self.inputs, self.projections, scaled=c["scaled"].value, causal=c["causal"].value)

    def values_now(self) -> dict[str, object]:
        """The controls' values, and ``X`` and the projections as edited (the example's until a cell is typed in)."""
        return {**super().values_now(), "inputs": self.inputs, "projections": self.projections}

    def transition(self, values: Mapping[str, object], name: str) -> Mapping[str, object]:
        """A new example: its own inputs and projections replace any edits."""
        if name != "example":
            return values
        inputs, projections, _ = pipeline_example(cast(PipelineValues, values)["example"])
        return {**values, "inputs": inputs, "projections": projections}

    def adopt(self, values: Mapping[str, object]) -> None:
        """The controls, and ``X`` and the projections."""
        state = cast(PipelineValues, values)
        self.inputs, self.projections = state["inputs"], state["projections"]
        super().adopt(values)

    def _edit(self, name: str) -> Callable[[int, int, float], None]:
        """A number typed into ``name`` (inputs or a projection) replaces that entry."""

        def apply(i: int, j: int, value: float) -> None:
            if name == "inputs":
                changed = self.inputs.clone()
                changed[i, j] = value
                self.inputs = changed
            else:
                matrices = self.projections._asdict()
                changed = matrices[name].clone()
                changed[i, j] = value
                self.projections = self.projections._replace(**{name: changed})

        return apply

    def _choose(self, **choice: int) -> None:
        """A cell clicked in a view chooses a query and/or a key: one update for both."""
        for name, value in choice.items():
            self.set_quietly(name, value=value)
        self.changed()

    # ---------------------------------------------------------------- the one render path
    def compute(self, values: Mapping[str, object]) -> Shown:
        """Every step from ``X`` and the projections, the chosen query and key outlined."""
        values = cast(PipelineValues, values)
        labels = list(pipeline_example(values["example"])[2])
        n = len(labels)
        x, w = values["inputs"], values["projections"]
        scaled, causal = values["scaled"], values["causal"]
        steps = pipeline(x, w, scaled=scaled, causal=causal)
        context = steps["context"]  # attnlib's step functions refuse inf/NaN with a message (kept inline)
        i, j = min(values["query"], n - 1), min(values["key"], n - 1)
        d_k, d_v = steps["keys"].shape[1], steps["values"].shape[1]
        k_cols = [f"{c + 1}" for c in range(d_k)]
        v_cols = [f"{c + 1}" for c in range(d_v)]
        in_cols = [f"{c + 1}" for c in range(x.shape[1])]
        q_rows = [f"q{r + 1}" for r in range(n)]
        k_rows = [f"k{r + 1}" for r in range(n)]
        v = self.views
        frames = {"inputs": v["inputs"].frame(x, row_labels=labels, col_labels=in_cols, rows=[i])}
        for name, cols in (("w_query", k_cols), ("w_key", k_cols), ("w_value", v_cols)):
            frames[name] = v[name].frame(getattr(w, name), row_labels=in_cols, col_labels=cols)
        # explanations are written when the browser asks for one (partial: the arguments of now)
        for name, weight, letter, cols, row in (  # Q, K, V = X W: the query's row outlined in Q, the key's in K, V
            ("queries", w.w_query, "q", k_cols, i),
            ("keys", w.w_key, "k", k_cols, j),
            ("values", w.w_value, "v", v_cols, j),
        ):
            frames[name] = v[name].frame(
                steps[name],
                row_labels=labels,
                col_labels=cols,
                explanations=partial(
                    explain_products, x, weight.T, left_name="x_{i}", right_name=f"W_{letter}[:,{{j}}]"
                ),
                rows=[row],
            )
        frames["scores"] = v["scores"].frame(
            steps["scores"],
            row_labels=q_rows,
            col_labels=k_rows,
            explanations=partial(explain_products, steps["queries"], steps["keys"]),
            rows=[i],
            cells=[(i, j)],
        )
        frames["scaled_scores"] = v["scaled_scores"].frame(
            self._scaled_view(steps),
            row_labels=q_rows,
            col_labels=k_rows,
            explanations=partial(self._scaled_texts, steps, scaled, causal),
            title=("S / √d_k" if scaled else "S (not scaled)") + (", causal mask" if causal else ""),
            rows=[i],
            cells=[(i, j)],
        )
        frames["weights"] = v["weights"].frame(
            steps["weights"],
            row_labels=q_rows,
            col_labels=k_rows,
            explanations=partial(self._softmax_texts, steps["scaled_scores"]),
            rows=[i],
            cells=[(i, j)],
        )
        frames["weighted_values"] = v["weighted_values"].frame(
            steps["weighted_values"][i],
            row_labels=k_rows,
            col_labels=v_cols,
            title=f"α_{i + 1}j v_j (query {i + 1})",
            explanations=partial(self._weighted_texts, steps["weights"][i], steps["values"], i),
            rows=[j],
        )
        frames["context"] = v["context"].frame(
            context,
            row_labels=labels,
            col_labels=v_cols,
            explanations=partial(explain_weighted_sum, steps["weights"], steps["values"]),
            rows=[i],
        )
        z = "[" + ", ".join(format_number(t, 4) for t in context[i].tolist()) + "]"
        return Shown(
            views=frames,
            texts={
                "shapes": "<code>" + html.escape(" → ".join(_shape_strip(x, steps, scaled))) + "</code>",
                "caption": html.escape(f"z_{i + 1} ({labels[i]}) = {z}"),
            },
            controls={
                "query": {"options": _options(labels, "q"), "value": i},
                "key": {"options": _options(labels, "k"), "value": j},
            },
        )

    @staticmethod
    def _scaled_view(steps: dict[str, Tensor]) -> Tensor:
        """``S/√d_k`` as shown: masked entries (−∞) are drawn as the row's lowest visible score."""
        s = steps["scaled_scores"]
        finite = torch.where(torch.isinf(s), steps["scores"].new_tensor(float("nan")), s)
        floor = torch.nan_to_num(finite, nan=float("inf")).amin(dim=-1, keepdim=True)
        return torch.where(torch.isinf(s), floor, s)

    @staticmethod
    def _scaled_texts(steps: dict[str, Tensor], scaled: bool, causal: bool) -> list[list[str]] | None:
        """Each entry of ``S/√d_k`` (or of ``S``) explained; a masked one says why it is −∞."""
        d_k = steps["keys"].shape[1]
        texts = []
        for i, row in enumerate(steps["scores"].tolist()):
            line = []
            for j, value in enumerate(row):
                if causal and j > i:
                    line.append(f"masked: key {j + 1} comes after query {i + 1}, so its score is set to −∞ (weight 0)")
                elif scaled:
                    line.append(
                        f"s_{i + 1}{j + 1} / √{d_k} = {format_number(value)} / {format_number(math.sqrt(d_k))}"
                        f" = {format_number(value / math.sqrt(d_k))}"
                    )
                else:
                    line.append(f"s_{i + 1}{j + 1} = {format_number(value)} (not scaled)")
            texts.append(line)
        return texts if len(texts) <= 16 else None

    @staticmethod
    def _softmax_texts(scaled_scores: Tensor) -> list[list[str]] | None:
        """``explain_softmax`` on the visible keys of each row (masked keys get weight 0, said so)."""
        if not bool(torch.isinf(scaled_scores).any()):
            return explain_softmax(scaled_scores)
        out = []
        for i, row in enumerate(scaled_scores.tolist()):
            visible = [(j, s) for j, s in enumerate(row) if math.isfinite(s)]
            texts = explain_softmax(torch.tensor([[s for _, s in visible]], dtype=torch.float64))
            line = ["masked key: its score is −∞, so e^(−∞) = 0 and its weight is 0"] * len(row)
            for (j, _), text in zip(visible, texts[0] if texts else [""] * len(visible)):
                # explain_softmax numbered this one-row matrix as row 1: give it its own row number
                line[j] = text.replace("α_1", f"α_{i + 1}").replace("(s_1", f"(s_{i + 1}")
            out.append(line)
        return out

    @staticmethod
    def _weighted_texts(weights_row: Tensor, values: Tensor, i: int) -> list[list[str]] | None:
        if values.shape[0] > 16 or values.shape[1] > 16:
            return None
        f = format_number
        return [
            [f"α_{i + 1}{j + 1} × v_{j + 1},{c + 1} = {f(a)} × {f(x)} = {f(a * x)}" for c, x in enumerate(row)]
            for j, (a, row) in enumerate(zip(weights_row.tolist(), values.tolist()))
        ]

    # ---------------------------------------------------------------- what is shown
    @property
    def shape_strip(self) -> list[str]:
        """The shape of every step, in the order of computation."""
        return _shape_strip(self.inputs, self.steps, self.controls["scaled"].value)

    def summary(self) -> str:
        c = self.controls
        label = self.labels[c["query"].value]
        return (
            f"PipelineExplorer(example={self.example!r}, query={label!r}, "
            f"scaled={c['scaled'].value}, causal={c['causal'].value})"
        )
