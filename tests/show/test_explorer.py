"""attnlib.show.explorer: parse_matrix and the Explorer base every explorer is built on (HeatmapView, the
live view itself: tests/show/test_view.py)."""

from __future__ import annotations

import base64
import inspect
import io
from collections.abc import Callable, Mapping

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from attnlib import pretrained, pronouns
from attnlib.lessons.l01_inputs import InputsExplorer
from attnlib.lessons.l02_projections import ProjectionsExplorer
from attnlib.lessons.l03_queries_keys_values import QKVExplorer
from attnlib.lessons.l04_scores import ScoresExplorer
from attnlib.lessons.l05_softmax import SoftmaxExplorer
from attnlib.lessons.l06_weighting import WeightingExplorer
from attnlib.lessons.l07_summing import SummingExplorer
from attnlib.lessons.l08_scaling import ScalingExplorer
from attnlib.lessons.l09_module import ModuleExplorer
from attnlib.lessons.l10_sentence import SentenceExplorer
from attnlib.lessons.l11_multihead import MultiHeadExplorer
from attnlib.lessons.l12_positions import PositionsExplorer
from attnlib.lessons.l13_attention_learns import TrainingExplorer
from attnlib.lessons.l14_what_heads_learn import HeadsExplorer
from attnlib.lessons.l15_attention_at_scale import TiledExplorer
from attnlib.lessons.l16_what_it_refers_to import ReferentExplorer
from attnlib.lessons.l17_a_model_that_writes import WriterExplorer
from attnlib.lessons.l18_inside_a_model import ModelHeadsExplorer, load_writer
from attnlib.lessons.l19_where_next import MergesExplorer
from attnlib.lessons.pipeline import PipelineExplorer, pipeline_example
from attnlib.show import HeatmapView, ui
from attnlib.show.explorer import Explorer, MatrixParseError, Shown, choices, parse_matrix
from attnlib.training import train
from attnlib.transformer import TinyTransformer

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


# --------------------------------------------------------------------------- parse_matrix
@pytest.mark.parametrize(
    "text",
    [
        "1 0 1 0\n0 2 0 2",
        "1 0 1 0; 0 2 0 2",
        "1, 0, 1, 0\n0, 2, 0, 2\n",
        "[[1, 0, 1, 0], [0, 2, 0, 2]]",
        "  1.0  0e0 1 0 ;\n\n 0 2. 0 2,",
    ],
)
def test_parse_matrix_reads_rows(text: str) -> None:
    matrix = parse_matrix(text)
    assert matrix.dtype == np.float64
    np.testing.assert_array_equal(matrix, [[1, 0, 1, 0], [0, 2, 0, 2]])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the text is empty"),
        (" ;\n ", "the text is empty"),
        ("1 2\n3 x", "row 2: 'x' is not a number"),
        ("1 inf", "row 1: 'inf' is not a finite number"),
        ("nan 1", "row 1: 'nan' is not a finite number"),
        ("1 2 3\n4 5", "row 2 has 2 numbers but row 1 has 3"),
    ],
)
def test_parse_matrix_names_the_problem(text: str, message: str) -> None:
    with pytest.raises(MatrixParseError, match=message.replace("(", r"\(")):
        parse_matrix(text)


def test_parse_matrix_size_limit() -> None:
    assert parse_matrix("1 " * 4, max_size=4).shape == (1, 4)
    with pytest.raises(MatrixParseError, match="at most 4×4 numbers, got 1×5"):
        parse_matrix("1 " * 5, max_size=4)
    assert issubclass(MatrixParseError, ValueError)  # explorers catch ValueError


# --------------------------------------------------------------------------- Explorer base
class TinyExplorer(Explorer):
    """A matrix typed as text, shown as a heatmap, with a row highlighted by a slider."""

    def __init__(self, text: str = "1 2; 3 4") -> None:
        super().__init__()
        self.controls["matrix"] = ui.Textarea(value=text)
        self.controls["row"] = ui.IntSlider(value=0, min=0, max=1)
        self.views["heatmap"] = HeatmapView(None, title="tiny", editable=True)
        self.on_edit("heatmap", self.edit_cell)
        self.update()
        self.observe_controls()
        self.widget = ui.VBox([*self.controls.values(), self.message, self.views["heatmap"]])

    def edit_cell(self, i: int, j: int, value: float) -> None:
        if value < 0:
            raise ValueError("no negative numbers here")
        matrix = parse_matrix(self.controls["matrix"].value)
        matrix[i, j] = value
        self.set_quietly("matrix", value="; ".join(" ".join(f"{v:g}" for v in row) for row in matrix))

    def compute(self, values: Mapping[str, object]) -> Shown:
        matrix = parse_matrix(str(values["matrix"]))
        row = int(values["row"])
        if row >= matrix.shape[0]:
            raise ValueError(f"row must be < n_rows = {matrix.shape[0]}, got {row}")
        explain = lambda: [[f"entry {v:g}" for v in r] for r in matrix]  # noqa: E731
        return Shown(views={"heatmap": self.views["heatmap"].frame(matrix, rows=[row], explanations=explain)})

    def summary(self) -> str:
        return f"TinyExplorer(matrix={self.controls['matrix'].value!r})"


def test_explorer_update_on_control_change() -> None:
    ex = TinyExplorer()
    ex.controls["matrix"].value = "5 6; 7 8"
    np.testing.assert_array_equal(ex.views["heatmap"].data, [[5, 6], [7, 8]])
    assert ex.views["heatmap"].values == [[5, 6], [7, 8]]
    assert ex.message.value == ""


def test_explorer_bad_update_keeps_last_good_state_and_shows_message() -> None:
    ex = TinyExplorer()
    ex.controls["matrix"].value = "5 6; 7 8"
    ex.controls["matrix"].value = "5 6; 7 oops"
    assert "row 2: &#x27;oops&#x27; is not a number" in ex.message.value  # escaped HTML
    np.testing.assert_array_equal(ex.views["heatmap"].data, [[5, 6], [7, 8]])
    ex.controls["matrix"].value = "1 0; 0 1"  # a good edit clears the message
    assert ex.message.value == ""
    np.testing.assert_array_equal(ex.views["heatmap"].data, [[1, 0], [0, 1]])


def test_explorer_error_from_update_itself() -> None:
    ex = TinyExplorer("1 2 3")
    ex.controls["row"].value = 1
    assert "row must be &lt; n_rows = 1, got 1" in ex.message.value


def test_explorer_cell_edit_updates_state_or_explains() -> None:
    ex = TinyExplorer()
    view = ex.views["heatmap"]
    assert view.edit(1, 1, "9") is True
    assert ex.controls["matrix"].value == "1 2; 3 9" and view.values == [[1, 2], [3, 9]]
    assert view.edit(0, 0, "-1") is False
    assert "no negative numbers here" in view.message
    assert view.values == [[1, 2], [3, 9]] and ex.controls["matrix"].value == "1 2; 3 9"


def test_explorer_mimebundle() -> None:
    ex = TinyExplorer()
    bundle, metadata = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.page.model_id  # one model
    png = base64.b64decode(bundle["image/png"])
    assert png.startswith(PNG_SIGNATURE)
    # the fallback is shown at half its pixel size (sharp when zoomed; JupyterLab and the site read the size)
    assert metadata["image/png"]["width"] == pixels(png).shape[1] // 2
    assert pixels(png).shape[0] > 50
    assert bundle["text/plain"] == "TinyExplorer(matrix='1 2; 3 4')"
    assert TinyExplorer()._repr_mimebundle_()[0]["text/plain"] == bundle["text/plain"]  # deterministic
    assert repr(ex) == bundle["text/plain"]


def test_set_quietly_changes_a_control_without_an_update_and_keeps_it_wired():
    class Counting(Explorer):
        def __init__(self) -> None:
            super().__init__()
            self.updates = 0
            self.controls["n"] = ui.IntSlider(value=1, min=0, max=9)
            self.observe_controls()

        def update(self) -> None:
            self.updates += 1

    ex = Counting()
    ex.set_quietly("n", max=5, value=4)
    assert (ex.controls["n"].value, ex.controls["n"].max, ex.updates) == (4, 5, 0)
    ex.controls["n"].value = 2
    assert ex.updates == 1


def test_weights_views_of_the_explorers_have_the_scale_0_to_1() -> None:
    from attnlib.lessons.l05_softmax import SoftmaxExplorer
    from attnlib.lessons.l06_weighting import WeightingExplorer
    from attnlib.lessons.l08_scaling import ScalingExplorer
    from attnlib.lessons.l09_module import ModuleExplorer
    from attnlib.lessons.l10_sentence import SentenceExplorer
    from attnlib.lessons.l11_multihead import MultiHeadExplorer
    from attnlib.lessons.pipeline import PipelineExplorer

    views = [
        SoftmaxExplorer().views["heatmap"],
        SoftmaxExplorer().views["bars"],
        WeightingExplorer().views["weights"],
        *ScalingExplorer().views.values(),
        ModuleExplorer().views["weights"],
        SentenceExplorer().views["weights"],
        *MultiHeadExplorer().views.values(),
        PipelineExplorer().views["weights"],
    ]
    assert all((view.vmin, view.vmax) == (0.0, 1.0) for view in views)
    assert all(view.cmap == "cividis" for view in views)


# --------------------------------------------------------------------------- compute() is what is shown
# What an explorer shows is a function of its controls: ``compute(values)`` is what the widgets hold after any
# walk through the controls, and what an explorer built fresh at those values holds.
#
# Every explorer on the lessons' pages is here; the three that need a trained model (lessons 13, 14, 16) run on
# small untrained or briefly trained ones: what is tested is the explorer, not the model.
#
def _training() -> TrainingExplorer:
    recipe = pretrained.RECIPES["reverse"]
    torch.manual_seed(0)
    model = TinyTransformer(**recipe.config)
    history = train(model, recipe.task, steps=4, progress=False, snapshot_steps=(0, 2, 4))
    return TrainingExplorer(history, model.eval(), recipe.task)


def _heads() -> HeadsExplorer:
    torch.manual_seed(0)
    model = TinyTransformer(vocab_size=24, d_model=16, num_heads=2, num_layers=2, max_len=12, causal=True).eval()
    return HeadsExplorer(model, [7, 21, 3, 7, 21, 3])


def _writer() -> WriterExplorer:
    torch.manual_seed(0)
    model = TinyTransformer(vocab_size=5, d_model=8, num_heads=2, num_layers=1, max_len=8, causal=True).eval()
    return WriterExplorer(model, list("ab c\n"), prompt="ab ", temperature=0.7, top_k=3, shown=4)


def _model_heads() -> ModelHeadsExplorer:
    model, vocabulary = load_writer()
    return ModelHeadsExplorer(model, vocabulary.characters)


def _referent() -> ReferentExplorer:
    return ReferentExplorer(pronouns.load(), "the animal did not cross the street because it was too tired")


#: every explorer the lessons display, built as its lesson builds it (the pipeline: lessons 01 and 07)
EXPLORERS: dict[str, Callable[[], Explorer]] = {
    "01 inputs": InputsExplorer,
    "01 pipeline": PipelineExplorer,
    "02 projections": ProjectionsExplorer,
    "03 qkv": QKVExplorer,
    "04 scores": ScoresExplorer,
    "05 softmax": SoftmaxExplorer,
    "06 weighting": WeightingExplorer,
    "07 summing": SummingExplorer,
    "08 scaling": ScalingExplorer,
    "09 module": ModuleExplorer,
    "10 sentence": SentenceExplorer,
    "11 multihead": MultiHeadExplorer,
    "12 positions": PositionsExplorer,
    "13 training": _training,
    "14 heads": _heads,
    "15 tiled": TiledExplorer,
    "16 referent": _referent,
    "17 writer": _writer,
    "18 model heads": _model_heads,
    "19 merges": lambda: MergesExplorer("low low low lower lowest newer newest wider"),
}

_BUILT: dict[str, tuple[Explorer, dict[str, object]]] = {}


def built(name: str) -> Explorer:
    """One explorer per name for the whole session (the slow ones are built once), back in its first state."""
    if name not in _BUILT:
        explorer = EXPLORERS[name]()
        _BUILT[name] = explorer, explorer.values_now()
    explorer, first = _BUILT[name]
    explorer.adopt(first)
    explorer.update()
    return explorer


def enumerable(explorer: Explorer) -> list[str]:
    return [name for name, c in explorer.controls.items() if choices(c) is not None and not c.disabled]


def assert_shows_compute(explorer: Explorer) -> None:
    assert explorer.message.value == ""
    assert explorer.displayed() == explorer.state(explorer.compute(explorer.values_now()))


@pytest.mark.parametrize("name", list(EXPLORERS))
def test_a_new_explorer_shows_compute_of_its_values(name: str) -> None:
    assert_shows_compute(built(name))


@pytest.mark.parametrize("name", list(EXPLORERS))
@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_walk_through_the_controls_shows_compute_and_a_fresh_explorer_shows_the_same(name: str, data) -> None:
    """Random steps through the controls (each a click or a drag); after each, the widgets hold compute(values),
    and an explorer built with the walked values as arguments holds the same."""
    explorer = built(name)  # every example starts from the explorer's first state
    for _ in range(data.draw(st.integers(1, 6), label="steps")):
        names = enumerable(explorer)
        if not names:
            break
        control = data.draw(st.sampled_from(names), label="control")
        widget = explorer.controls[control]
        widget.value = data.draw(st.sampled_from(choices(widget)), label=control)
        assert_shows_compute(explorer)
    factory = EXPLORERS[name]
    if not isinstance(factory, type):
        return  # built with a model: the constructor's arguments are not the controls
    accepted = inspect.signature(factory).parameters
    arguments = {k: v for k, v in explorer.values_now().items() if k in accepted and k in explorer.controls}
    fresh = factory(**arguments)
    assert fresh.values_now().keys() == explorer.values_now().keys()
    assert fresh.displayed() == explorer.displayed(), f"{name} built fresh with {arguments} shows something else"


def test_softmax_labels_do_not_depend_on_the_path() -> None:
    """001 → 004 used to keep 001's labels ("Input 1 …") where SoftmaxExplorer("004") shows 004's."""
    walked = SoftmaxExplorer("001")
    walked.controls["example"].value = "004"
    fresh = SoftmaxExplorer("004")
    assert walked.views["heatmap"].row_labels == fresh.views["heatmap"].row_labels
    assert walked.controls["query"].options == fresh.controls["query"].options
    assert walked.displayed() == fresh.displayed()


def test_compute_touches_no_widget() -> None:
    """compute() of another state leaves every widget as it was (it is pure)."""
    explorer = PipelineExplorer("001")
    before = explorer.displayed()
    inputs, projections, _ = pipeline_example("000")
    values = {**explorer.values_now(), "example": "000", "query": 3, "causal": True}
    values.update(inputs=inputs, projections=projections)
    shown = explorer.compute(values)
    assert explorer.displayed() == before
    assert explorer.state(shown) != before
    assert explorer.state(explorer.compute(values)) == explorer.state(shown)  # and the same every time


def test_a_bad_text_keeps_the_last_good_state_and_the_summary() -> None:
    explorer = SoftmaxExplorer("001")
    before, summary = explorer.displayed(), explorer.summary()
    explorer.controls["scores"].value = "1 2; 3 oops"
    assert "oops" in explorer.message.value
    assert explorer.views["heatmap"].shown() == before["views"]["heatmap"] and explorer.summary() == summary
