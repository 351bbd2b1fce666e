"""Lesson 05: SoftmaxExplorer headless (what is shown equals attnlib's computation for each setting) and
the lesson's checkers (solutions pass; typical slips get their hint and mistake id)."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnlib import examples, score, softmax
from attnlib.lessons import check
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


def test_softmax():
    assert check("softmax.1", [0.25, 0.25, 0.5]).correct

    def my_softmax(scores):
        exps = (scores - scores.max(dim=-1, keepdim=True).values).exp()
        return exps / exps.sum(dim=-1, keepdim=True)

    assert check("softmax.2", my_softmax).correct
    naive = check("softmax.2", lambda s: s.exp() / s.exp().sum(dim=-1, keepdim=True))
    assert not naive.correct and "subtract each row's maximum" in naive.message
    over_queries = check("softmax.2", lambda s: (s - s.max(0).values).exp() / (s - s.max(0).values).exp().sum(0))
    assert over_queries.mistake == "softmax-axis"
    for library in (softmax, torch.softmax, F.softmax, lambda s: s.softmax(-1), lambda s: torch.softmax(s, dim=0)):
        assert check("softmax.2", library).mistake == "library-function"
    global_max = check("softmax.2", lambda s: (s - s.max()).exp() / (s - s.max()).exp().sum(-1, keepdim=True))
    assert not global_max.correct and "underflows" in global_max.message and "overflows" not in global_max.message


def coolest(scores, low=1.0, high=100.0):
    """The smallest T with every weight of softmax(scores / T) at most 0.9, by bisection (the solution)."""
    for _ in range(50):
        mid = (low + high) / 2
        low, high = (mid, high) if softmax(scores / mid).max() > 0.9 else (low, mid)
    return high


def test_coolest_temperature_is_a_function_run_on_unseen_scores():
    q, k, _ = examples.four_inputs.qkv()
    s = score(q, k)
    assert 7.9 < coolest(s.double()) < 8.0
    assert check("softmax.3", coolest).correct
    assert check("softmax.3", lambda scores: coolest(scores) + 0.005).correct
    assert not check("softmax.3", lambda scores: coolest(scores) + 0.05).correct
    # a number, even the right one, does not pass: the function must do the work on scores it has not seen
    constant = check("softmax.3", round(coolest(s.double()), 2))
    assert not constant.correct and "should be a function" in constant.message
    same_t = check("softmax.3", lambda scores: round(coolest(s.double()), 2))
    assert not same_t.correct and "not a number you found once" in same_t.message
    assert "√5 is lesson 08's scale" in check("softmax.3", lambda scores: math.sqrt(5)).message
    assert "row 1 alone" in check("softmax.3", lambda scores: coolest(scores[:1])).message
    far = check("softmax.3", lambda scores: 8.5)
    assert not far.correct and "within 0.01" in far.message  # the tolerance is said, not only "recompute"
    narrow = check("softmax.3", lambda scores: coolest(scores, low=5.0, high=50.0))  # misses a T below 5
    assert not narrow.correct and "search range" in narrow.message
    assert not check("softmax.3", lambda scores: softmax(scores / math.sqrt(5))).correct  # weights, not a T
    from attnlib.lessons import l05_softmax

    assert check("softmax.3", lambda scores: l05_softmax._cooling(scores)).mistake == "library-function"


@pytest.mark.parametrize(
    "answer",
    [
        lambda s: torch.special.softmax(s, -1),
        lambda s: torch.log_softmax(s, -1).exp(),
        lambda s: F.log_softmax(s, -1).exp(),
        lambda s: torch.exp(s - torch.logsumexp(s, -1, keepdim=True)),
        lambda s: F.scaled_dot_product_attention(
            s[None], torch.eye(s.shape[-1])[None], torch.eye(s.shape[-1])[None], scale=1.0
        )[0],
        lambda s: torch.sparse.softmax(s.to_sparse(), -1).to_dense(),
        lambda s: torch._softmax(s, -1, False),
        lambda s: torch.ops.aten._softmax(s, -1, False),
        lambda s: F.softmin(-s, -1),
        lambda s: torch.exp(s - torch.logcumsumexp(s, -1)[:, -1:]),
    ],
    ids=[
        "special",
        "log_softmax",
        "F.log_softmax",
        "logsumexp",
        "sdpa",
        "sparse",
        "_softmax",
        "aten",
        "softmin",
        "logcumsumexp",
    ],
)
def test_my_softmax_refuses_every_spelling_of_the_library(answer):
    feedback = check("softmax.2", answer)
    assert not feedback.correct and feedback.mistake == "library-function"


def test_my_softmax_refuses_the_library_in_a_worker_thread():
    import threading

    def threaded(s):
        out = []
        worker = threading.Thread(target=lambda: out.append(torch.softmax(s, -1)))
        worker.start()
        worker.join()
        return out[0]

    feedback = check("softmax.2", threaded)
    assert not feedback.correct and feedback.mistake == "library-function" and "thread" in feedback.message


def test_my_softmax_names_keepdim_and_the_whole_matrix():
    def no_keepdim(s):
        exps = (s - s.max(dim=-1, keepdim=True).values).exp()
        return exps / exps.sum(dim=-1)  # (3, 4) / (3,): a raw RuntimeError before

    def max_no_keepdim(s):
        exps = (s - s.max(dim=-1).values).exp()
        return exps / exps.sum(dim=-1, keepdim=True)

    for answer in (no_keepdim, max_no_keepdim):
        feedback = check("softmax.2", answer)
        assert feedback.mistake == "keepdim-forgotten" and "keepdim=True" in feedback.message
        assert "RuntimeError" not in feedback.message

    def whole_matrix(s):
        exps = (s - s.max(dim=-1, keepdim=True).values).exp()
        return exps / exps.sum()

    feedback = check("softmax.2", whole_matrix)
    assert feedback.mistake == "whole-matrix-sum" and "whole matrix" in feedback.message
