"""Lesson 11: MultiHeadExplorer (head selector, all-heads grid, scaling and causal toggles) and the
lesson's checkers (solutions pass; typical slips get their hint and mistake id)."""

from __future__ import annotations

import pytest
import torch

from attnlib import MultiHeadAttention, examples
from attnlib._validate import AttentionInputError
from attnlib.formatting import annotation
from attnlib.lessons import check
from attnlib.lessons.l11_multihead import (
    MultiHeadExplorer,
    TwoColoursModel,
    best_guess_accuracy,
    multihead_inputs,
    train_two_colours,
    two_colours_report,
    yours_or_reference,
)
from attnlib.modules import causal_mask, combine_heads, split_heads
from attnlib.tasks import TwoColoursTask


def _reference(num_heads: int, scaled: bool, causal: bool) -> torch.Tensor:
    x, _, module = multihead_inputs(num_heads)
    with torch.no_grad():
        q = split_heads(module.w_query(x), num_heads)
        k = split_heads(module.w_key(x), num_heads)
        scores = q @ k.transpose(-2, -1)
        if scaled:
            scores = scores / (16 // num_heads) ** 0.5
        if causal:
            scores = scores.masked_fill(~causal_mask(x.shape[0]), float("-inf"))
        return torch.softmax(scores, dim=-1)


@pytest.mark.parametrize("scaled", [True, False])
@pytest.mark.parametrize("causal", [False, True])
def test_each_head_shows_its_weights(scaled, causal):
    explorer = MultiHeadExplorer()
    explorer.controls["scaled"].value = scaled
    explorer.controls["causal"].value = causal
    want = _reference(4, scaled, causal)
    plot = explorer.views["head"]
    for h in (3, 1):
        explorer.controls["head"].value = h
        assert plot.data == pytest.approx(want[h].double().numpy(), abs=1e-6)
        assert plot.annotations == [annotation(float(w), plot.decimals) for w in want[h].flatten()]
        assert plot.title.startswith(f"head {h + 1} of 4")
    assert plot.row_labels == examples.translate.tokens


def test_all_heads_grid():
    explorer = MultiHeadExplorer()
    explorer.controls["head"].value = "all"
    explorer.controls["causal"].value = True
    want = _reference(4, True, True)
    grid = [explorer.views[f"head {h + 1}"] for h in range(4)]
    for h, heatmap in enumerate(grid):
        assert heatmap.data == pytest.approx(want[h].double().numpy(), abs=1e-6)
        assert heatmap.col_labels == examples.translate.tokens
    assert explorer.grid.layout.display != "none"
    assert explorer.views["head"].layout.display == "none"
    assert explorer.summary() == "MultiHeadExplorer(num_heads=4, head='all', scaled=True, causal=True)"
    explorer.controls["head"].value = 0
    assert explorer.grid.layout.display == "none"


def test_heads_differ_and_rows_sum_to_one():
    weights = MultiHeadExplorer().weights()
    assert weights.shape == (4, 8, 8)
    assert torch.allclose(weights.sum(-1), torch.ones(4, 8))
    assert not torch.allclose(weights[0], weights[1], atol=1e-3)


def test_two_heads_and_png_fallback():
    explorer = MultiHeadExplorer(num_heads=2, head="all")
    assert [name for name in explorer.views if name != "head"] == ["head 1", "head 2"]
    bundle, _ = explorer._repr_mimebundle_()
    assert bundle["text/plain"] == "MultiHeadExplorer(num_heads=2, head='all', scaled=True, causal=False)"
    assert bundle["image/png"]


def test_parameters():
    count = sum(p.numel() for p in MultiHeadAttention(512, num_heads=8).parameters())
    assert check("multihead.1", count).correct
    assert check("multihead.1", 8 * count).mistake == "heads-parameters"


def test_split_runs_on_fresh_inputs():
    def split(x, h):
        b, n, d = x.shape
        return x.view(b, n, h, d // h).transpose(1, 2)

    assert check("multihead.2", split).correct
    no_transpose = check("multihead.2", lambda x, h: x.view(x.shape[0], h, x.shape[1], x.shape[2] // h))
    assert no_transpose.mistake == "heads-view-no-transpose"


def test_window_mask():
    i = torch.arange(5)
    assert check("multihead.3", (i[:, None] - i[None, :]).abs() > 1).correct
    assert not check("multihead.3", (i[:, None] - i[None, :]).abs() <= 1).correct


def test_window_mask_must_be_boolean():
    i = torch.arange(5)
    forbidden = (i[:, None] - i[None, :]).abs() > 1
    for answer in (forbidden.int(), forbidden.float(), forbidden.long().tolist()):
        feedback = check("multihead.3", answer)  # the review: int and 0/1 float masks passed
        assert not feedback.correct and feedback.mistake == "mask-not-boolean" and "boolean mask" in feedback.message
    additive = torch.zeros(5, 5).masked_fill(forbidden, float("-inf"))  # valid in torch, but not what is asked
    feedback = check("multihead.3", additive)
    assert feedback.mistake == "mask-not-boolean" and "give a boolean mask" in feedback.message
    assert "NaN" not in feedback.message
    assert check("multihead.3", forbidden.tolist()).correct  # a nested list of bools is boolean


def _cross(x_dec, x_enc, w_q, w_k, w_v):
    return torch.softmax((x_dec @ w_q) @ (x_enc @ w_k).T / w_k.shape[-1] ** 0.5, dim=-1) @ (x_enc @ w_v)


def test_cross_attention_checker_takes_the_queries_from_the_decoder():
    assert check("multihead.4", _cross).correct
    swapped = check("multihead.4", lambda xd, xe, wq, wk, wv: _cross(xe, xd, wq, wk, wv))
    assert not swapped.correct and "roles are swapped" in swapped.message and "x_enc" in swapped.message
    values_from_decoder = check(
        "multihead.4",
        lambda xd, xe, wq, wk, wv: torch.softmax((xd @ wq) @ (xe @ wk).T, dim=-1) @ (xd @ wv),
    )
    assert "keys and the values from the encoder" in values_from_decoder.message  # a sentence, not torch's error
    assert "raised" not in values_from_decoder.message


def test_cross_attention_checker_refuses_the_library():
    from attnlib import attention, softmax, tiled_attention
    from attnlib.steps import score

    handed = check("multihead.4", lambda xd, xe, wq, wk, wv: attention(xd @ wq, xe @ wk, xe @ wv))
    assert handed.mistake == "library-function"
    tiled = check("multihead.4", lambda xd, xe, wq, wk, wv: tiled_attention(xd @ wq, xe @ wk, xe @ wv))
    assert tiled.mistake == "library-function" and "attnlib.tiled.tiled_attention" in tiled.message
    steps = check("multihead.4", lambda xd, xe, wq, wk, wv: softmax(score(xd @ wq, xe @ wk) / 2) @ (xe @ wv))
    assert steps.mistake == "library-function" and "attnlib.steps." in steps.message
    fused = check(
        "multihead.4",
        lambda xd, xe, wq, wk, wv: torch.nn.functional.scaled_dot_product_attention(xd @ wq, xe @ wk, xe @ wv),
    )
    assert fused.mistake == "library-function"
    private = check("multihead.4", lambda xd, xe, wq, wk, wv: _private_cross(xd, xe, wq, wk, wv))
    assert private.mistake == "library-function" and "attnlib.lessons.l11_multihead._cross" in private.message


def _private_cross(*args):
    from attnlib.lessons.l11_multihead import _cross as private

    return private(*args)


def _backward(x, w_q, w_k, w_v, grad_z, *, paths=3):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    a = torch.softmax(q @ k.T / k.shape[-1] ** 0.5, dim=-1)
    grad_a = grad_z @ v.T
    grad_s = a * (grad_a - (grad_a * a).sum(dim=-1, keepdim=True))
    grad_q, grad_k, grad_v = grad_s @ k / k.shape[-1] ** 0.5, grad_s.T @ q / k.shape[-1] ** 0.5, a.T @ grad_z
    grad_x = grad_v @ w_v.T + (grad_q @ w_q.T + grad_k @ w_k.T if paths == 3 else 0)
    return grad_x, x.T @ grad_q, x.T @ grad_k, x.T @ grad_v


def test_backward_checker_compares_with_autograd_on_new_inputs():
    assert check("multihead.5", _backward).correct
    one_path = check("multihead.5", lambda *a: _backward(*a, paths=1))
    assert not one_path.correct and "three paths" in one_path.message


def _forward(x, w_q, w_k, w_v):
    return torch.softmax((x @ w_q) @ (x @ w_k).T / w_k.shape[-1] ** 0.5, dim=-1) @ (x @ w_v)


def _finite_differences(x, w_q, w_k, w_v, grad_z, *, h=6e-6):
    """Central differences, one entry at a time: no derivation, about 2e-10 from autograd at this step."""
    inputs, grads = [x, w_q, w_k, w_v], []
    for i, t in enumerate(inputs):
        g = torch.zeros_like(t)
        for j in range(t.numel()):
            moved = [a.clone() for a in inputs]
            moved[i].view(-1)[j] += h
            up = float((_forward(*moved) * grad_z).sum())
            moved[i].view(-1)[j] -= 2 * h
            g.view(-1)[j] = (up - float((_forward(*moved) * grad_z).sum())) / (2 * h)
        grads.append(g)
    return grads


def test_backward_checker_refuses_finite_differences():
    looped = check("multihead.5", _finite_differences)
    assert not looped.correct and "finite differences" in looped.message

    def batched(x, w_q, w_k, w_v, grad_z, h=6e-6):  # every perturbation at once: few calls, many numbers
        inputs, grads = [x, w_q, w_k, w_v], []
        for i, t in enumerate(inputs):
            eye = torch.eye(t.numel(), dtype=t.dtype).view(-1, *t.shape) * h
            moved = [a.expand(t.numel(), *a.shape) for a in inputs]

            def f(shift, moved=moved, i=i):
                ins = list(moved)
                ins[i] = ins[i] + shift
                q, k, v = ins[0] @ ins[1], ins[0] @ ins[2], ins[0] @ ins[3]
                z = torch.softmax(q @ k.mT / w_k.shape[-1] ** 0.5, dim=-1) @ v
                return (z * grad_z).sum(dim=(-2, -1))

            grads.append(((f(eye) - f(-eye)) / (2 * h)).view(t.shape))
        return grads

    vectorised = check("multihead.5", batched)
    assert not vectorised.correct and "finite differences" in vectorised.message

    def approximate(*args):  # within 1e-5 of autograd but not exact
        return [g + 1e-8 for g in _backward(*args)]

    near = check("multihead.5", approximate)
    assert not near.correct and "finite differences" in near.message


def test_backward_checker_refuses_autograd_itself():
    def with_autograd(x, w_q, w_k, w_v, grad_z):
        leaves = [t.requires_grad_() for t in (x, w_q, w_k, w_v)]
        z = torch.softmax((x @ w_q) @ (x @ w_k).T / w_k.shape[-1] ** 0.5, dim=-1) @ (x @ w_v)
        return torch.autograd.grad(z, leaves, grad_z)

    assert check("multihead.5", with_autograd).mistake == "library-function"
    untouched = check("multihead.5", lambda *a: None)
    assert not untouched.correct and not untouched.tried


# ---------------------------------------------------------------- why several heads: the two-colours task
def _split(x, h):  # the learner's own split (11.2): no attnlib in a "write it" answer
    return x.unflatten(-1, (h, -1)).transpose(1, 2)


def _join(heads):
    return heads.transpose(1, 2).flatten(-2)


def _without_head(model, head, colours, numbers):
    att, h = model.attention, model.attention.num_heads
    q = _split(att.w_query(model.query.expand(len(colours), 1, -1)), h)
    k = _split(att.w_key(model.colour(colours)), h)
    v = _split(att.w_value(model.number(numbers)), h)
    weights = torch.softmax(q @ k.transpose(-2, -1) / att.d_head**0.5, dim=-1)
    heads = weights @ v
    heads[:, head] = 0.0
    return model.readout(att.out_proj(_join(heads))[:, 0])


def test_two_colours_model_shapes_weights_and_bad_input():
    task = TwoColoursTask()
    torch.manual_seed(0)
    model = TwoColoursModel(task, d_model=4, num_heads=2)
    colours, numbers, _ = task.batch(3, torch.Generator().manual_seed(1))
    assert model(colours, numbers).shape == (3, task.n_classes)
    assert model.weights.shape == (3, 2, task.n_items)
    assert torch.allclose(model.weights.sum(-1), torch.ones(3, 2))
    # the same parameters whatever the number of heads
    one = TwoColoursModel(task, d_model=4, num_heads=1)
    assert sum(p.numel() for p in one.parameters()) == sum(p.numel() for p in model.parameters())
    with pytest.raises(AttentionInputError, match="task must be a TwoColoursTask"):
        TwoColoursModel("two colours")
    with pytest.raises(AttentionInputError, match=r"colours \(3, 6\) and numbers \(3, 5\)"):
        model(colours, numbers[:, :5])


def test_two_colours_report_and_best_guesses():
    task = TwoColoursTask()
    assert best_guess_accuracy(task, "blue") == pytest.approx(5 / 25)  # the red sum's likeliest value, 4
    # one red and one blue bit: a bag {0, 1} leaves the sign to a coin, {0, 0} and {1, 1} answer 0
    assert best_guess_accuracy(TwoColoursTask(n_values=2, per_colour=1, n_grey=0), "bag") == pytest.approx(0.75)
    with pytest.raises(AttentionInputError, match="knows must be"):
        best_guess_accuracy(task, "red")
    torch.manual_seed(0)
    model = TwoColoursModel(task, num_heads=2).eval()
    report = two_colours_report(model, batch_size=64)
    assert report.on_colour.shape == (2, 3)
    assert torch.allclose(report.on_colour.sum(-1), torch.ones(2))
    assert torch.allclose(report.uniform, torch.tensor([2, 2, 2]) / 6)
    zero = two_colours_report(model, batch_size=64, without=lambda c, n: torch.zeros(len(c), task.n_classes))
    assert 0.0 <= zero.accuracy <= 1.0


def test_two_colours_training_lowers_the_loss():
    task = TwoColoursTask()
    torch.manual_seed(1)
    model = TwoColoursModel(task, num_heads=2)
    losses = train_two_colours(model, steps=60, seed=1)
    assert len(losses) == 60 and sum(losses[-10:]) < sum(losses[:10])


def test_without_head_right_wrong_and_refused():
    assert check("multihead.6", _without_head).correct

    def unscaled(model, head, colours, numbers):
        att, h = model.attention, model.attention.num_heads
        q = _split(att.w_query(model.query.expand(len(colours), 1, -1)), h)
        k = _split(att.w_key(model.colour(colours)), h)
        v = _split(att.w_value(model.number(numbers)), h)
        heads = torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v
        heads[:, head] = 0.0
        return model.readout(att.out_proj(_join(heads))[:, 0])

    assert check("multihead.6", unscaled).mistake == "scale-forgotten"
    assert (
        "You switched off head 0, not head 1"
        in check("multihead.6", lambda m, h, c, n: _without_head(m, 1 - h, c, n)).message
    )
    assert "no head is switched off" in check("multihead.6", lambda m, h, c, n: _full(m, c, n)).message
    assert check("multihead.6", lambda m, h, c, n: m(c, n)).mistake == "library-function"
    from attnlib.lessons import l11_multihead

    private = check("multihead.6", l11_multihead._without_head)
    assert private.mistake == "library-function" and "l11_multihead._without_head" in private.message
    forwarded = check("multihead.6", lambda m, h, c, n: l11_multihead._without_head(m, h, c, n))
    assert forwarded.mistake == "library-function"

    def with_split_heads(model, head, colours, numbers):
        att, h = model.attention, model.attention.num_heads
        q = split_heads(att.w_query(model.query.expand(len(colours), 1, -1)), h)
        k, v = _split(att.w_key(model.colour(colours)), h), _split(att.w_value(model.number(numbers)), h)
        heads = torch.softmax(q @ k.transpose(-2, -1) / att.d_head**0.5, dim=-1) @ v
        heads[:, head] = 0.0
        return model.readout(att.out_proj(combine_heads(heads))[:, 0])

    helper = check("multihead.6", with_split_heads)
    assert helper.mistake == "library-function" and "attnlib.modules.split_heads" in helper.message
    wrong_shape = check("multihead.6", lambda m, h, c, n: torch.zeros(3))
    assert not wrong_shape.correct and "should have shape (5, 37)" in wrong_shape.message

    def stub(model, head, colours, numbers): ...

    assert not check("multihead.6", stub).tried
    assert check("multihead.6", ...).message.startswith("Replace the ...")
    assert yours_or_reference(stub)[1].startswith("the reference")
    assert yours_or_reference(_without_head)[1] == "your without_head"


def _full(model, colours, numbers):
    """The whole model's logits, written out (no head switched off)."""
    att, h = model.attention, model.attention.num_heads
    q = _split(att.w_query(model.query.expand(len(colours), 1, -1)), h)
    k = _split(att.w_key(model.colour(colours)), h)
    v = _split(att.w_value(model.number(numbers)), h)
    heads = torch.softmax(q @ k.transpose(-2, -1) / att.d_head**0.5, dim=-1) @ v
    return model.readout(att.out_proj(_join(heads))[:, 0])
