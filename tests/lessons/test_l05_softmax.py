"""SoftmaxExplorer headless: what is shown equals attnlib's computation for each setting."""

import math

import numpy as np
import pytest
import torch

from attnlib import examples, score, softmax
from attnlib.lessons.l05_softmax import SoftmaxExplorer, entropy, example_scores


def _scores_001():
    q, k, _ = examples.three_inputs.qkv()
    return score(q, k)


def test_starts_on_document_001():
    e = SoftmaxExplorer()
    w = softmax(_scores_001())
    assert np.allclose(e.views["heatmap"].data, w.numpy())
    assert np.allclose(e.views["bars"].data, w[0].numpy())
    assert e.views["bars"].annotations == ["0.06", "0.47", "0.47"]
    assert e.summary() == "SoftmaxExplorer(example='001', temperature=1, query='Input 1')"
    assert repr(e) == e.summary()
    bundle, _ = e._repr_mimebundle_()
    assert bundle["text/plain"] == e.summary() and "image/png" in bundle


@pytest.mark.parametrize("temperature", [0.2, 1.0, 5.0])
def test_temperature_divides_scores(temperature):
    e = SoftmaxExplorer()
    e.controls["temperature"].value = temperature
    t = e.controls["temperature"].value
    w = softmax(_scores_001() / t)
    assert np.allclose(e.views["heatmap"].data, w.numpy(), atol=1e-6)
    assert np.allclose(e.views["bars"].data, w[0].numpy(), atol=1e-6)
    ent = entropy(w)
    assert f"{float(ent[1]):.4f}" in e.stats.value
    assert e.stats.value.count("1.0000") >= 3  # every row sums to 1


def test_higher_temperature_flattens():
    e = SoftmaxExplorer()
    e.controls["temperature"].value = 0.2
    low = entropy(torch.tensor(e.views["heatmap"].data))
    e.controls["temperature"].value = 10.0
    high = entropy(torch.tensor(e.views["heatmap"].data))
    assert bool((high > low).all())
    assert float(high.max()) <= math.log(3) + 1e-9


def test_query_and_example_switch():
    e = SoftmaxExplorer()
    e.controls["query"].value = 2
    assert np.allclose(e.views["bars"].data, softmax(_scores_001())[2].numpy())
    assert e.views["heatmap"].highlight_boxes and e.views["heatmap"].highlight_boxes[0][1] == 1.5
    e.controls["example"].value = "000"
    s000, labels = example_scores("000")
    assert np.allclose(e.views["heatmap"].data, softmax(s000).numpy())
    assert e.views["bars"].data.shape[1] == 4
    assert e.views["heatmap"].row_labels == list(labels)
    assert "Input 3" in e.summary()


def test_example_004_scores_are_the_documents_sims():
    s, _ = example_scores("004")
    doc = torch.tensor([[0.4283, -0.2896, 2.8452], [1.2545, 0.0310, 6.1939], [-0.9121, -1.5224, -0.8533]])
    assert torch.allclose(s, doc, atol=1e-4)


def test_custom_text_and_bad_input_keeps_state():
    e = SoftmaxExplorer()
    e.controls["scores"].value = "1000 0; 0 1000"
    assert np.allclose(e.views["heatmap"].data, np.eye(2))  # no overflow
    good = e.views["heatmap"].data.copy()
    e.controls["scores"].value = "1 2; 3"
    assert "row 2" in e.message.value
    assert np.array_equal(e.views["heatmap"].data, good)
    e.controls["scores"].value = "1 2 3; 4 5 6"
    assert "square" in e.message.value
    assert np.array_equal(e.views["heatmap"].data, good)
    e.controls["scores"].value = "0 0; 0 0"
    assert e.message.value == ""
    assert np.allclose(e.views["heatmap"].data, 0.5)


def test_bar_title_follows_query():
    e = SoftmaxExplorer()
    e.controls["query"].value = 1
    assert "weights of Input 2" in e.bar_caption.value
