"""Lesson 13: TrainingExplorer (bad input gets an inline message naming the problem; the last good map
stays) and the lesson's checkers (solutions pass; typical slips get their hint; the library is not an
answer)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attnlib import MultiHeadAttention, pretrained
from attnlib.lessons import check
from attnlib.lessons._check import CHECKER_FAILED
from attnlib.lessons.l13_attention_learns import TrainingExplorer, attnlib_twin, parse_tokens, pick_yours
from attnlib.modules import causal_mask
from attnlib.tasks import ReverseTask
from attnlib.training import train
from attnlib.transformer import Block, TinyTransformer


def _causal(n):  # the learner's own mask (13.4): no attnlib inside a write-it answer
    i = torch.arange(n)
    return i[:, None] >= i


@pytest.fixture(scope="module")
def trained():
    recipe = pretrained.RECIPES["reverse"]
    torch.manual_seed(0)
    model = TinyTransformer(**recipe.config)
    history = train(model, recipe.task, steps=20, progress=False, snapshot_steps=(0, 20))
    return history, model.eval(), recipe.task


def test_training_explorer_names_bad_sequences_and_keeps_the_map(trained):
    history, model, task = trained
    e = TrainingExplorer(history, model, task, step=0)
    e.controls["sequence"].value = "1 2 3 4 5 6 7 8"
    good = e.views["trained"].spec()
    e.controls["sequence"].value = "1 2 3"
    assert "type exactly 8 token ids" in e.message.value
    e.controls["sequence"].value = "1 2 3 4 5 6 7 99"
    assert "token id 99 is out of range" in e.message.value
    assert e.views["trained"].spec() == good
    e.controls["sequence"].value = "7 6 5 4 3 2 1 0"
    assert e.message.value == ""


def test_training_explorer_refuses_a_step_it_does_not_have(trained):
    history, model, task = trained
    with pytest.raises(ValueError, match=r"step must be one of the stored steps \[0, 20\]"):
        TrainingExplorer(history, model, task, step=5)


def test_parse_tokens_says_what_is_wrong():
    with pytest.raises(ValueError, match="type exactly 4 token ids"):
        parse_tokens("1 2", vocab_size=10, n_tokens=4)
    assert parse_tokens("1, 2, 3", vocab_size=10, n_tokens=3).tolist() == [[1, 2, 3]]


class Parts(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.attention = MultiHeadAttention(d_model, num_heads)
        self.norm_attention = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
        self.norm_mlp = nn.LayerNorm(d_model)


class Right(Parts):
    def forward(self, x, mask=None):
        x = x + self.attention(self.norm_attention(x), mask=mask)
        return x + self.mlp(self.norm_mlp(x))


class MyTransformer(nn.Module):
    def __init__(self, vocab_size, d_model, num_heads, num_layers, max_len, causal=False):
        super().__init__()
        self.causal = causal
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.positions = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(Right(d_model, num_heads) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)
        self.readout = nn.Linear(d_model, vocab_size)

    def embed(self, ids):
        return self.embedding(ids) + self.positions(torch.arange(ids.shape[1]))

    def mask(self, n):
        i = torch.arange(n)
        return i[:, None] >= i[None, :] if self.causal else None

    def read_out(self, x):
        return self.readout(self.norm(x))

    def forward(self, ids):
        n = ids.shape[1]
        x = self.embedding(ids) + self.positions(torch.arange(n))
        mask = _causal(n) if self.causal else None
        for block in self.blocks:
            x = block(x, mask=mask)
        return self.readout(self.norm(x))


def _with(**methods):
    """MyTransformer with some of its methods replaced."""
    return type("Learner", (MyTransformer,), methods)


def test_each_part_of_the_model_is_checked_on_its_own():
    for name in ("attention_learns.3", "attention_learns.4", "attention_learns.5", "attention_learns.6"):
        assert check(name, MyTransformer).correct, name
    # a part that is wrong fails its own check and no other
    no_positions = _with(embed=lambda self, ids: self.embedding(ids))
    assert check("attention_learns.3", no_positions).mistake == "positions-forgotten"
    assert check("attention_learns.5", no_positions).correct
    tied = _with(read_out=lambda self, x: self.norm(x) @ self.embedding.weight.T)
    assert check("attention_learns.5", tied).mistake == "readout-tied"
    assert check("attention_learns.3", tied).correct


def test_embed_hints():
    by_id = _with(embed=lambda self, ids: self.embedding(ids) + self.positions(ids))
    assert "indexed by POSITION" in check("attention_learns.3", by_id).message
    whole = _with(embed=lambda self, ids: self.embedding(ids) + self.positions.weight)
    feedback = check("attention_learns.3", whole)
    assert feedback.mistake == "positions-forgotten" and "first n" in feedback.message
    only_positions = _with(embed=lambda self, ids: self.positions(torch.arange(ids.shape[1])).expand(*ids.shape, -1))
    assert "position vectors alone" in check("attention_learns.3", only_positions).message
    concatenated = _with(
        embed=lambda self, ids: torch.cat(
            [self.embedding(ids), self.positions(torch.arange(ids.shape[1])).expand(*ids.shape, -1)], -1
        )
    )
    assert "do not concatenate" in check("attention_learns.3", concatenated).message


def test_mask_hints():
    def made(mask):
        return _with(mask=lambda self, n: mask(n) if self.causal else None)

    torch_convention = made(lambda n: torch.ones(n, n, dtype=torch.bool).triu(1))
    assert "True = NOT allowed" in check("attention_learns.4", torch_convention).message
    assert check("attention_learns.4", made(lambda n: torch.ones(n, n, dtype=torch.bool).triu())).mistake == (
        "mask-not-causal"
    )
    assert (
        "diagonal" in check("attention_learns.4", made(lambda n: torch.ones(n, n, dtype=torch.bool).tril(-1))).message
    )
    assert (
        "nothing is masked" in check("attention_learns.4", made(lambda n: torch.ones(n, n, dtype=torch.bool))).message
    )
    assert check("attention_learns.4", made(lambda n: torch.ones(n, n).tril())).mistake == "mask-not-boolean"
    assert check("attention_learns.4", made(causal_mask)).mistake == "library-function"
    assert check("attention_learns.4", made(lambda n: torch.ones(n, n, dtype=torch.bool).tril())).correct
    always = _with(mask=lambda self, n: torch.ones(n, n, dtype=torch.bool).tril())
    assert "not causal" in check("attention_learns.4", always).message
    never = _with(mask=lambda self, n: None)
    assert check("attention_learns.4", never).mistake == "mask-not-causal"


def test_read_out_hints():
    backwards = _with(read_out=lambda self, x: self.norm(x) @ self.readout.weight)
    assert check("attention_learns.5", backwards).mistake == "readout-tied"
    assert "final layer norm" in check("attention_learns.5", _with(read_out=lambda self, x: self.readout(x))).message
    probabilities = _with(read_out=lambda self, x: self.readout(self.norm(x)).softmax(-1))
    assert "logits themselves" in check("attention_learns.5", probabilities).message
    assert check(
        "attention_learns.5", _with(read_out=lambda self, x: self.readout(self.norm(x)).transpose(1, 2))
    ).mistake == ("transposed")


def test_part_checks_of_an_untouched_class_show_the_prompt():
    class Stub(nn.Module):
        def __init__(self, vocab_size, d_model, num_heads, num_layers, max_len, causal=False):
            super().__init__()
            self.causal = causal

        def embed(self, ids): ...

        def mask(self, n): ...

        def read_out(self, x): ...

        def forward(self, ids): ...

    for name in ("attention_learns.3", "attention_learns.4", "attention_learns.5", "attention_learns.6"):
        feedback = check(name, Stub)
        assert not feedback.correct and not feedback.tried and feedback.message.startswith("Replace the ..."), name
    for junk in (TinyTransformer, 0.5, MyTransformer(5, 8, 1, 1, 4)):
        for name in ("attention_learns.3", "attention_learns.4", "attention_learns.5"):
            assert not check(name, junk).correct
    assert "no method embed" in check("attention_learns.3", type("Old", (nn.Module,), {})).message


def test_former_names_still_check_the_same_exercises():
    assert check("learning.3", step).correct  # the training step, now attention_learns.7


def _model(forward=None, **parts):
    """A variant of MyTransformer: another forward, or parts replaced (``None`` removes one)."""

    def init(self, *args, **kwargs):
        MyTransformer.__init__(self, *args, **kwargs)
        for name, make in parts.items():
            setattr(self, name, None if make is None else make(*args))

    body = {"__init__": init}
    if forward is not None:
        body["forward"] = forward
    return type("Learner", (MyTransformer,), body)


def _through(self, x, mask):
    for block in self.blocks:
        x = block(x, mask=mask)
    return self.readout(self.norm(x))


def test_model_right_and_the_same_as_attnlibs():
    assert check("attention_learns.6", MyTransformer).correct
    torch.manual_seed(0)
    mine = MyTransformer(13, 16, 2, 2, 10, causal=True).eval()
    twin = attnlib_twin(mine, vocab_size=13, d_model=16, num_heads=2, num_layers=2, max_len=10, causal=True).eval()
    ids = torch.randint(13, (4, 9))
    assert torch.allclose(mine(ids), twin(ids), atol=1e-6)


def test_model_typical_mistakes_get_their_hint():
    def no_positions(self, ids):
        return _through(self, self.embedding(ids), _causal(ids.shape[1]) if self.causal else None)

    assert check("attention_learns.6", _model(no_positions)).mistake == "positions-forgotten"
    assert check("attention_learns.6", _model(positions=None)).mistake == "positions-forgotten"

    def whole_table(self, ids):
        x = self.embedding(ids) + self.positions.weight
        return _through(self, x, _causal(ids.shape[1]) if self.causal else None)

    assert "first n position vectors" in check("attention_learns.6", _model(whole_table)).message

    def never_masked(self, ids):
        return _through(self, self.embedding(ids) + self.positions(torch.arange(ids.shape[1])), None)

    assert check("attention_learns.6", _model(never_masked)).mistake == "mask-not-causal"

    def always_masked(self, ids):
        n = ids.shape[1]
        return _through(self, self.embedding(ids) + self.positions(torch.arange(n)), _causal(n))

    assert "only when self.causal" in check("attention_learns.6", _model(always_masked)).message

    def inverted(self, ids):
        n = ids.shape[1]
        mask = torch.ones(n, n, dtype=torch.bool).triu() if self.causal else None
        return _through(self, self.embedding(ids) + self.positions(torch.arange(n)), mask)

    assert "future leaks in" in check("attention_learns.6", _model(inverted)).message
    backwards = _model(readout=lambda vocab, d_model, *rest: nn.Linear(vocab, d_model))
    assert check("attention_learns.6", backwards).mistake == "readout-tied"
    assert "read-out is missing" in check("attention_learns.6", _model(readout=None)).message

    def transposed(self, ids):
        return MyTransformer.forward(self, ids).transpose(1, 2)

    assert check("attention_learns.6", _model(transposed)).mistake == "transposed"

    def no_final_norm(self, ids):
        n = ids.shape[1]
        x = self.embedding(ids) + self.positions(torch.arange(n))
        for block in self.blocks:
            x = block(x, mask=_causal(n) if self.causal else None)
        return self.readout(x)

    assert "final layer norm" in check("attention_learns.6", _model(no_final_norm)).message


def test_model_logits_as_a_list_or_an_array_are_checked():
    """compare_tensor takes logits as a nested list or an array; 13.6 then read .detach() and .shape of them."""
    forward = MyTransformer.forward
    assert check("attention_learns.6", _model(lambda self, ids: forward(self, ids).tolist())).correct
    assert check("attention_learns.6", _model(lambda self, ids: forward(self, ids).detach().numpy())).correct
    off = check("attention_learns.6", _model(lambda self, ids: (forward(self, ids) + 0.5).tolist()))
    assert not off.correct and not off.message.startswith(CHECKER_FAILED)
    assert "off by up to 0.5" in off.message


def test_model_library_and_junk_are_refused_kindly():
    assert check("attention_learns.6", TinyTransformer).mistake == "library-function"

    class Borrowed(TinyTransformer):
        pass

    assert check("attention_learns.6", Borrowed).mistake == "library-function"
    with_library_blocks = _model(
        blocks=lambda v, d, h, layers, *rest: nn.ModuleList(Block(d, h) for _ in range(layers))
    )
    assert check("attention_learns.6", with_library_blocks).mistake == "library-function"
    assert "class itself" in check("attention_learns.6", MyTransformer(5, 8, 1, 1, 4)).message
    for junk in (0.5, "MyTransformer", TinyTransformer.forward, torch.nn.Transformer):
        assert not check("attention_learns.6", junk).correct


def _block(forward):
    return type("Learner", (Parts,), {"forward": forward})


def step(model, optimiser, inputs, targets):
    logits = model(inputs)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
    return loss


def test_predict_and_transfer():
    assert check("attention_learns.1", 5).correct
    assert "from 0" in check("attention_learns.1", 6).message
    assert check("attention_learns.9", 8).correct
    assert "5 positions back" in check("attention_learns.9", 2).message


def test_block_right_and_its_typical_mistakes():
    assert check("attention_learns.2", Right).correct
    post = _block(lambda s, x, mask=None: s.norm_mlp((h := s.norm_attention(x + s.attention(x, mask=mask))) + s.mlp(h)))
    assert "post-LN" in check("attention_learns.2", post).message
    no_residual = _block(lambda s, x, mask=None: s.mlp(s.norm_mlp(s.attention(s.norm_attention(x), mask=mask))))
    assert "residual connections are missing" in check("attention_learns.2", no_residual).message
    no_mlp_residual = _block(lambda s, x, mask=None: s.mlp(s.norm_mlp(x + s.attention(s.norm_attention(x), mask=mask))))
    assert "MLP's residual is missing" in check("attention_learns.2", no_mlp_residual).message
    no_mask = _block(lambda s, x, mask=None: (h := x + s.attention(s.norm_attention(x))) + s.mlp(s.norm_mlp(h)))
    assert "mask is not passed" in check("attention_learns.2", no_mask).message
    returns_tuple = _block(lambda s, x, mask=None: (Right.forward(s, x, mask), None))
    assert check("attention_learns.2", returns_tuple).correct


def test_block_library_and_junk_are_refused_kindly():
    assert "write" in check("attention_learns.2", Block).message

    class Borrowed(Block):
        pass

    assert "write" in check("attention_learns.2", Borrowed).message
    calls_block = _block(lambda s, x, mask=None: Block.forward(s, x, mask=mask))
    assert "write" in check("attention_learns.2", calls_block).message
    assert "class itself" in check("attention_learns.2", Right(16, 2)).message
    assert "Replace the ..." in check("attention_learns.2", ...).message

    class Renamed(nn.Module):
        def __init__(self, d_model, num_heads):
            super().__init__()
            self.attn = MultiHeadAttention(d_model, num_heads)

    assert "has no attention" in check("attention_learns.2", Renamed).message
    stub = _block(lambda s, x, mask=None: None)
    assert "returned None" in check("attention_learns.2", stub).message


def test_train_step_right_and_its_typical_mistakes():
    assert check("attention_learns.7", step).correct

    def no_zero_grad(model, optimiser, inputs, targets):
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimiser.step()
        return loss

    assert "zero_grad" in check("attention_learns.7", no_zero_grad).message

    def late_zero_grad(model, optimiser, inputs, targets):
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimiser.zero_grad()
        optimiser.step()
        return loss

    assert "no gradients to apply" in check("attention_learns.7", late_zero_grad).message

    def softmaxed(model, optimiser, inputs, targets):
        probs = model(inputs).softmax(-1)
        loss = F.cross_entropy(probs.reshape(-1, probs.shape[-1]), targets.reshape(-1))
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        return loss

    assert "raw logits" in check("attention_learns.7", softmaxed).message

    def transposed_logits(model, optimiser, inputs, targets):  # (batch, vocab, n): the same loss
        loss = F.cross_entropy(model(inputs).transpose(1, 2), targets)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        return loss

    assert check("attention_learns.7", transposed_logits).correct

    def zero_grad_at_the_end(model, optimiser, inputs, targets):
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
        return loss

    assert check("attention_learns.7", zero_grad_at_the_end).correct

    def unflattened(model, optimiser, inputs, targets):
        loss = F.cross_entropy(model(inputs), targets)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        return loss

    hint = check("attention_learns.7", unflattened).message
    assert "Flatten both" in hint and "(8, 6, 10)" in hint and "RuntimeError" not in hint

    def own_optimiser(model, optimiser, inputs, targets):
        optimiser = torch.optim.AdamW(model.parameters(), lr=1e-2)
        return step(model, optimiser, inputs, targets)

    assert "optimiser you are given took 0 steps" in check("attention_learns.7", own_optimiser).message
    assert "returned None" in check("attention_learns.7", lambda *a: None).message
    assert "write" in check("attention_learns.7", train).message


def test_next_token_loss_and_the_shift():
    def right(logits, ids):
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))

    assert check("attention_learns.8", right).correct
    unshifted = check(
        "attention_learns.8", lambda lo, ids: F.cross_entropy(lo.reshape(-1, lo.shape[-1]), ids.reshape(-1))
    )
    assert "No shift" in unshifted.message
    backwards = check(
        "attention_learns.8",
        lambda lo, ids: F.cross_entropy(lo[:, 1:].reshape(-1, lo.shape[-1]), ids[:, :-1].reshape(-1)),
    )
    assert "wrong way" in backwards.message
    assert "does not shift" in check("attention_learns.8", F.cross_entropy).message


def test_a_training_step_that_calls_attnlibs_train_is_refused():
    def wraps(model, optimiser, inputs, targets):
        train(model, ReverseTask(10, 6), steps=1, progress=False)
        return step(model, optimiser, inputs, targets)

    assert check("attention_learns.7", wraps).mistake == "library-function"
    assert check("attention_learns.7", train).mistake == "library-function"
    # a method of the same name (nn.Module.train) is not attnlib's train
    assert check("attention_learns.7", lambda m, o, i, t: (m.train(), step(m, o, i, t))[1]).correct


def test_the_lesson_runs_before_and_after_the_exercises():
    model, chosen_step, said = pick_yours(None, None, None)
    assert "reference model and block" in said and chosen_step is not None
    assert model(10, 8, 1, 1, 5)(torch.randint(10, (2, 5))).shape == (2, 5, 10)
    model, chosen_step, said = pick_yours(Right, MyTransformer, step)
    assert model is MyTransformer and chosen_step is step
    assert said == "Training your MyTransformer with your train_step."
    model, _, said = pick_yours(Right, None, None)
    assert "around your MyBlock" in said


def test_causal_reverse_takes_the_trained_model_and_measures_it():
    task = ReverseTask(32, 8, causal=True)
    torch.manual_seed(0)
    model = TinyTransformer(32, 32, 1, 1, max_len=8, causal=True)
    untrained = check("attention_learns.10", model)
    assert not untrained.correct and "full 150 steps" in untrained.message
    train(model, task, steps=150, lr=1e-2, progress=False)
    verdict = check("attention_learns.10", model)
    assert verdict.correct and "1024 sequences" in verdict.message
    seeing = check("attention_learns.10", pretrained.load("reverse"))
    assert not seeing.correct and "sees the future" in seeing.message
    for number in (0.52, 0.5, torch.tensor(0.516)):
        assert "Hand in the trained model" in check("attention_learns.10", number).message
    assert not check("attention_learns.10", TinyTransformer).correct


def test_loss_curve_keeps_every_loss_and_draws_without_a_notebook():
    from attnlib.lessons.l13_attention_learns import LossCurve

    curve = LossCurve(every=2)
    for loss in (torch.tensor(3.0, requires_grad=True), 2.0, 1):
        curve.add(loss)
    curve.draw()
    assert curve.losses == [3.0, 2.0, 1.0]


def test_the_private_reference_step_is_refused():
    from attnlib.lessons import l13_attention_learns

    for answer in (l13_attention_learns._reference_step, lambda *a: l13_attention_learns._reference_step(*a)):
        feedback = check("attention_learns.7", answer)
        assert feedback.mistake == "library-function"
        assert "attnlib.lessons.l13_attention_learns._reference_step" in feedback.message


def test_the_training_step_is_checked_without_torch_optim():
    import subprocess
    import sys

    code = (
        "import sys, torch.nn.functional as F\n"
        "from attnlib.lessons import check\n"
        "def step(m, o, i, t):\n"
        "    logits = m(i)\n"
        "    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), t.reshape(-1))\n"
        "    o.zero_grad(); loss.backward(); o.step(); return loss\n"
        "assert check('attention_learns.7', step).correct\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"  # the checker's optimiser is attnlib's Adam: torch's compiler never loads
