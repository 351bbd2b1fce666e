"""Lesson 03: QKVExplorer headless (the highlighted row, column and products match derive_qkv) and the
lesson's checkers (solutions pass; typical slips get their hint and mistake id)."""

import numpy as np
import pytest
import torch

from attnlib import derive_qkv, examples, project
from attnlib.lessons import check
from attnlib.lessons.l03_queries_keys_values import KINDS, QKVExplorer, product_lines


def _box(rect):
    return (rect.get_x(), rect.get_y(), rect.get_width(), rect.get_height())


def test_starts_on_001_key_of_input_1():
    e = QKVExplorer()
    assert e.summary() == "QKVExplorer(example='001', token='Input 1', kind='key')"
    # document 001: key of Input 1 is [0, 1, 1]
    assert e.product_texts == ["[1,0,1,0]·[0,1,0,1] = 0", "[1,0,1,0]·[0,1,1,1] = 1", "[1,0,1,0]·[1,0,0,0] = 1"]
    assert "[0,1,1]" in e.products.value
    assert np.array_equal(e.views["result"].data, examples.three_inputs.qkv().keys.numpy())


@pytest.mark.parametrize("example", ["001", "000"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_and_token(example, kind):
    e = QKVExplorer()
    e.controls["example"].value = example
    e.controls["kind"].value = kind
    ex = examples.get(example)
    index = KINDS[kind][0]
    result = derive_qkv(ex.inputs, *ex.projections)[index]
    weight = ex.projections[index]
    for i in range(len(ex.rows)):
        e.controls["token"].value = i
        assert np.array_equal(e.views["result"].data, result.numpy())
        assert np.array_equal(e.views["weight"].data, weight.numpy())
        lines = e.product_texts
        assert len(lines) == weight.shape[1]
        assert [float(t.rsplit("= ", 1)[1]) for t in lines] == result[i].tolist()
        assert lines == product_lines(ex.inputs[i], weight)
        assert e.views["inputs"].highlight_boxes[0] == (-0.5, i - 0.5, ex.inputs.shape[1], 1)
        assert (-0.5, i - 0.5, result.shape[1], 1) in e.views["result"].highlight_boxes
    label = ex.token_labels[len(ex.rows) - 1]
    assert e.summary() == f"QKVExplorer(example={example!r}, token={label!r}, kind={kind!r})"


def test_column_outlines_weight_column_and_result_cell():
    e = QKVExplorer("000", token=3, kind="value")
    e.controls["column"].value = 3
    assert e.controls["column"].max == 4
    assert e.views["weight"].highlight_boxes[0] == (2.5, -0.5, 1, 4)
    assert (2.5, 2.5, 1, 1) in e.views["result"].highlight_boxes
    # document 000: value of Input 4 is [2, 10, 3, 13, 9]; the chosen product is in bold
    assert "<b>[3,1,1,1]·[3,1,1,2] = 13</b>" in e.products.value
    e.controls["example"].value = "001"  # 3 tokens, 3 columns: selections are clamped
    assert e.controls["token"].value == 2 and e.controls["column"].max == 2 and e.controls["column"].value == 2


def test_annotations_match_result():
    e = QKVExplorer(kind="query")
    q = examples.three_inputs.qkv().queries
    assert e.views["result"].annotations == [str(int(v)) for v in q.reshape(-1).tolist()]


def test_bad_arguments():
    with pytest.raises(ValueError, match="kind"):
        QKVExplorer(kind="keys")
    with pytest.raises(ValueError, match="example"):
        QKVExplorer("002")


def test_static_fallback_is_the_result_and_follows_controls():
    e = QKVExplorer("001", kind="key")
    bundle, _ = e._repr_mimebundle_()
    assert bundle["text/plain"] == e.summary() and "image/png" in bundle
    before = e.snapshot_png()
    assert before == e.views["result"].to_png()
    e.controls["kind"].value = "value"  # another result matrix: another picture
    assert e.snapshot_png() == e.views["result"].to_png() != before


def test_qkv():
    w = examples.three_inputs.projections
    assert check("queries_keys_values.1", torch.tensor([2.0, 0, 0, 1]) @ w.w_key).correct
    assert check("queries_keys_values.1", [1, 1, 2]).correct
    assert check("queries_keys_values.2", lambda x, wq, wk, wv: (x @ wq, x @ wk, x @ wv)).correct
    assert (
        check("queries_keys_values.2", lambda x, wq, wk, wv: tuple(derive_qkv(x, wq, wk, wv))).mistake
        == "library-function"
    )
    assert check(
        "queries_keys_values.2", lambda x, wq, wk, wv: (project(x, wq), project(x, wk), project(x, wv))
    ).mistake == ("library-function")
    assert "three tensors" in check("queries_keys_values.2", lambda x, wq, wk, wv: x @ wq).message
    assert "swapped" in check("queries_keys_values.2", lambda x, wq, wk, wv: (x @ wk, x @ wq, x @ wv)).message
    x, u = torch.tensor([[1.0, 2.0], [3.0, -1.0]]), torch.tensor([[0.0, 1.0], [2.0, 1.0]])
    assert check("queries_keys_values.3", x @ u.T).correct
    assert check("queries_keys_values.3", x @ u).mistake == "transposed"


@pytest.mark.parametrize(
    "answer",
    [
        lambda X, wq, wk, wv: (X @ wq.T, X @ wk.T, X @ wv.T),
        lambda X, wq, wk, wv: (wq @ X, wk @ X, wv @ X),
    ],
    ids=["X @ W.T", "W @ X"],
)
def test_project_all_with_a_transposed_product_gets_a_hint_not_a_torch_error(answer):
    feedback = check("queries_keys_values.2", answer)
    assert not feedback.correct and feedback.mistake == "transposed"
    assert "cannot be multiplied" not in feedback.message and "X @ w_query" in feedback.message


def test_project_all_refuses_attnlib():
    from attnlib import project

    feedback = check("queries_keys_values.2", lambda X, wq, wk, wv: (project(X, wq), project(X, wk), project(X, wv)))
    assert feedback.mistake == "library-function"
