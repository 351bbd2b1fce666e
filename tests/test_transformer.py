"""TinyTransformer and its training helpers: shapes, masks, caches, checkpoints, clear errors."""

from __future__ import annotations

import pytest
import torch

from attnlib import AttentionInputError
from attnlib.modules import causal_mask
from attnlib.tasks import CopyTask, RepeatTask, ReverseTask
from attnlib.training import Adam, accuracy, load_checkpoint, pattern_mass, save_checkpoint, train
from attnlib.transformer import Block, CrossAttentionModel, TinyTransformer


class ListCache:
    """The smallest key/value cache with KVCache's interface (append per layer, return all)."""

    def __init__(self, num_layers: int) -> None:
        self.keys, self.values = [None] * num_layers, [None] * num_layers

    def __len__(self) -> int:
        return 0 if self.keys[0] is None else self.keys[0].shape[-2]

    def update(self, layer, keys, values):
        if self.keys[layer] is not None:
            keys = torch.cat([self.keys[layer], keys], dim=-2)
            values = torch.cat([self.values[layer], values], dim=-2)
        self.keys[layer], self.values[layer] = keys, values
        return keys, values


def _model(**kw):
    torch.manual_seed(0)
    return TinyTransformer(**{"vocab_size": 12, "d_model": 16, "num_heads": 2, "num_layers": 2, "max_len": 10, **kw})


def test_shapes_and_attention_maps():
    model = _model()
    logits = model(torch.randint(12, (3, 7)))
    assert logits.shape == (3, 7, 12)
    assert [tuple(m.shape) for m in model.attention_maps] == [(3, 2, 7, 7)] * 2
    assert torch.allclose(model.attention_maps[0].sum(-1), torch.ones(3, 2, 7))


def test_causal_model_never_looks_ahead():
    model = _model(causal=True)
    ids = torch.randint(12, (2, 6))
    model(ids)
    assert torch.all(model.attention_maps[1].triu(1) == 0)
    changed = ids.clone()
    changed[:, -1] = (changed[:, -1] + 1) % 12
    assert torch.allclose(model(ids)[:, :-1], model(changed)[:, :-1], atol=1e-6)  # the future changes nothing


def test_cache_gives_the_same_logits_as_recomputing():
    model = _model(causal=True).eval()
    ids = torch.randint(12, (2, 8))
    full = model(ids)
    cache = ListCache(2)
    pieces = [model(ids[:, :5], cache=cache)] + [model(ids[:, i : i + 1], cache=cache) for i in range(5, 8)]
    assert torch.allclose(torch.cat(pieces, dim=1), full, atol=1e-5)
    assert len(cache) == 8
    assert causal_mask(1, offset=5).tolist() == [[True] * 6]


def test_cross_attention_maps_slots_to_inputs():
    torch.manual_seed(0)
    model = CrossAttentionModel(vocab_size=10, d_model=16, num_heads=1, n_out=4, max_len=6)
    assert model(torch.randint(10, (2, 6))).shape == (2, 4, 10)
    assert model.attention_map.shape == (2, 1, 4, 6)


def test_tasks_make_what_they_promise():
    g = torch.Generator().manual_seed(0)
    x, y, counted = ReverseTask(10, 6).batch(4, g)
    assert torch.equal(y, x.flip(1)) and counted.all()
    x, y, counted = CopyTask(10, 7).batch(4, g)
    assert torch.equal(y[:, 3:], x[:, :4]) and counted.tolist() == [False] * 3 + [True] * 4
    x, y, counted = RepeatTask(20, 15, min_half=4).batch(8, g)
    assert counted.shape == (8, 15) and counted.any(dim=1).all()
    assert ReverseTask.pattern(3).tolist() == [[0, 0, 1], [0, 1, 0], [1, 0, 0]]


def test_pattern_mass_per_row():
    weights = torch.tensor([[0.1, 0.9], [0.5, 0.5]])
    assert torch.allclose(pattern_mass(weights, torch.eye(2).flip(1)), torch.tensor([0.9, 0.5]))


def test_short_training_learns_the_reverse_task():
    task = ReverseTask(vocab_size=12, n_tokens=6)
    torch.manual_seed(0)
    model = TinyTransformer(12, 32, 1, 1, max_len=6)
    seen = []
    history = train(model, task, steps=300, lr=1e-2, progress=False, snapshot_steps=(0, 300), on_loss=seen.append)
    assert history.accuracies[-1] > 0.9
    assert seen == history.losses  # the hook a live curve uses gets every step's loss
    assert len(history.losses) == 300 and history.losses[-1] < history.losses[0] / 5
    assert set(history.snapshots) == {0, 300}
    mass = pattern_mass(history.snapshots[300][0][0], task.pattern(6))
    assert float(mass.mean()) > 0.5 > float(pattern_mass(history.snapshots[0][0][0], task.pattern(6)).mean())


def test_checkpoints_round_trip_and_name_the_mismatch(tmp_path):
    model = _model()
    config = {"vocab_size": 12, "d_model": 16, "num_heads": 2, "num_layers": 2, "max_len": 10}
    path = save_checkpoint(model, config, tmp_path / "m.pt")
    loaded = load_checkpoint(path)
    ids = torch.randint(12, (1, 5))
    assert torch.equal(loaded(ids), model.eval()(ids))
    mismatch = r"tensor 'embedding.weight' has shape \(12, 16\) in the checkpoint but \(12, 8\)"
    with pytest.raises(AttentionInputError, match=mismatch):
        load_checkpoint(path, TinyTransformer(12, 8, 2, 2, 10))
    with pytest.raises(FileNotFoundError, match="make models"):
        load_checkpoint(tmp_path / "missing.pt")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ReverseTask(vocab_size=1, n_tokens=8), "vocab_size must be an integer from 2 to 1000, got 1"),
        (lambda: ReverseTask(vocab_size=10, n_tokens=500), "n_tokens must be an integer from 2 to 64, got 500"),
        (lambda: train(_model(), ReverseTask(12, 6), steps=0), "steps must be an integer from 1 to 100000, got 0"),
        (lambda: train(_model(), ReverseTask(30, 6), steps=5), "does not fit the task"),
        (lambda: _model()(torch.zeros(1, 11, dtype=torch.int64)), "ids has 11 tokens .* built with max_len=10"),
        (lambda: _model(num_heads=3), "num_heads=3 must divide d_model=16"),
        (lambda: ReverseTask(12, 6, causal="yes"), "causal must be True or False, got 'yes'"),
        (lambda: _model(block=3), "block must be a class or function"),
        (lambda: Block(16, 2)(torch.zeros(1, 4, 8)), r"x must be \(batch, n, d_model=16\), got \(1, 4, 8\)"),
        (lambda: Block(16, 5), "d_model=16 is not divisible by num_heads=5"),
        (lambda: accuracy(_model(), ReverseTask(12, 6), per="word"), "per must be 'sequence' or 'token'"),
        (lambda: _model()(torch.full((1, 3), 12)), r"token ids must be in 0…11"),
        (lambda: _model()(torch.zeros(3)), r"ids must be an integer tensor \(batch, n\)"),
        (lambda: _model()(torch.zeros(1, 2, dtype=torch.int64), cache=ListCache(2)), "needs causal=True"),
        (lambda: _model(positions="rotary"), "positions must be one of"),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises(AttentionInputError, match=message):
        call()


def test_block_switches_change_only_what_they_name():
    torch.manual_seed(0)
    block = Block(16, 2)
    x = torch.randn(2, 5, 16)
    out, _ = block(x)
    torch.manual_seed(0)
    plain = Block(16, 2, residual=False)
    plain.load_state_dict(block.state_dict())
    h = plain.attention(plain.norm_attention(x))
    assert torch.allclose(plain(x)[0], plain.mlp(plain.norm_mlp(h)), atol=1e-6)
    h = x + block.attention(block.norm_attention(x))
    assert torch.allclose(out, h + block.mlp(block.norm_mlp(h)), atol=1e-6)


def test_a_learner_block_plugs_in_and_its_weights_load_into_block():
    class Mine(torch.nn.Module):
        def __init__(self, d_model, num_heads):
            super().__init__()
            own = Block(d_model, num_heads)
            self.attention, self.norm_attention, self.mlp, self.norm_mlp = (
                own.attention,
                own.norm_attention,
                own.mlp,
                own.norm_mlp,
            )

        def forward(self, x, mask=None):
            x = x + self.attention(self.norm_attention(x), mask=mask)
            return x + self.mlp(self.norm_mlp(x))

    mine = _model(block=Mine, causal=True)
    ids = torch.randint(12, (2, 7))
    logits = mine(ids)
    assert mine.attention_maps == []  # a block that returns no weights leaves no maps
    twin = _model(causal=True)
    twin.load_state_dict(mine.state_dict())
    assert torch.allclose(twin(ids), logits, atol=1e-6)
    with pytest.raises(AttentionInputError, match="needs attnlib's Block"):
        mine(ids[:, :1], cache=ListCache(2))


def test_per_token_accuracy_counts_tokens():
    task = CopyTask(10, 7)
    model = _model(vocab_size=10, causal=True, max_len=7)
    per_token, per_sequence = accuracy(model, task, per="token"), accuracy(model, task)
    assert 0.0 <= per_sequence <= per_token <= 1.0


def test_a_causal_reverse_task_needs_a_causal_model():
    task = ReverseTask(12, 6, causal=True)
    assert task.causal and not ReverseTask(12, 6).causal
    with pytest.raises(AttentionInputError, match="does not fit the task"):
        train(_model(max_len=6), task, steps=1, progress=False)


def test_repeat_task_batches_repeat_then_pad():
    inputs, targets, counted = RepeatTask(vocab_size=20, n_tokens=15, min_half=3).batch(
        64, torch.Generator().manual_seed(4)
    )
    sequence = torch.cat([inputs, targets[:, -1:]], dim=1)
    for row, scored in zip(sequence.tolist(), counted):
        m = sum(t != 0 for t in row) // 2
        assert 3 <= m <= 8 and row[:m] == row[m : 2 * m] and set(row[2 * m :]) <= {0}
        assert 0 not in row[:m]
        assert scored.nonzero().flatten().tolist() == list(range(m, 2 * m - 1))


@pytest.mark.parametrize("torch_optimiser", [torch.optim.Adam, torch.optim.AdamW])
def test_adam_is_torchs_adam_bit_for_bit(torch_optimiser):
    """attnlib's Adam (which spares every lesson that trains the import of torch's compiler) moves every
    parameter exactly as torch.optim.Adam does, and as AdamW with no weight decay; a parameter that has no
    gradient at a step stays, and its own step count waits (the one layer the loss skips at some steps)."""
    task = ReverseTask(n_tokens=5, vocab_size=7)
    ours, theirs = (TinyTransformer(vocab_size=7, d_model=8, num_heads=2, num_layers=2, max_len=5) for _ in "ab")
    theirs.load_state_dict(ours.state_dict())
    start = {name: p.detach().clone() for name, p in ours.named_parameters()}
    optimisers = (Adam(ours.parameters(), lr=0.02), torch_optimiser(theirs.parameters(), lr=0.02, weight_decay=0.0))
    generator = torch.Generator().manual_seed(5)
    for step in range(6):
        inputs, targets, _ = task.batch(16, generator)
        for model, optimiser in zip((ours, theirs), optimisers):
            optimiser.zero_grad()
            logits = model(inputs)
            torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten()).backward()
            if step % 3 == 1:  # the last block's MLP has no gradient at this step
                for p in model.blocks[-1].mlp.parameters():
                    p.grad = None
            optimiser.step()
    for (name, a), b in zip(ours.named_parameters(), theirs.parameters()):
        assert torch.equal(a, b), f"{name}: largest difference {float((a - b).abs().max()):.3g}"
        assert not torch.equal(a, start[name]), f"{name} did not move"
