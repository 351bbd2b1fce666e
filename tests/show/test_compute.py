"""What an explorer shows is a function of its controls: ``compute(values)`` is what the widgets hold after any
walk through the controls, and what an explorer built fresh at those values holds.

Every explorer on the lessons' pages is here; the three that need a trained model (lessons 13, 14, 16) run on
small untrained or briefly trained ones: what is tested is the explorer, not the model.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
from attnlib.lessons.l17_where_next import MergesExplorer
from attnlib.lessons.pipeline import PipelineExplorer, pipeline_example
from attnlib.show.explorer import Explorer, choices
from attnlib.training import train
from attnlib.transformer import TinyTransformer


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
    "17 merges": lambda: MergesExplorer("low low low lower lowest newer newest wider"),
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
