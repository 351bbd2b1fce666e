"""Every model the series trains is trained on one torch thread, whatever the machine's cores.

Split over threads, a sum adds its terms in another order; training grows the difference in the last bits into
another model. Lesson 14's recipe trained on two threads gave ablations the lesson's claims do not hold for
(attnlib.training.one_thread). So each training function of attnlib, and the ``one_thread()`` block the
learner's own loops run in (lessons 13 and 17), must train on one thread and give the caller's threads back.
What the model sees is observed from the model's side: a forward pre-hook (public torch API) records the number
of threads torch runs each forward with.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import torch

from attnlib import language, pronouns
from attnlib.lessons.l11_multihead import TwoColoursModel, train_two_colours
from attnlib.seq2seq import EncoderDecoder, train_reverse
from attnlib.tasks import ReverseTask, TwoColoursTask
from attnlib.training import fit, one_thread, train
from attnlib.transformer import TinyTransformer

CALLERS = 2  # the caller's threads: more than one, as on any machine of two cores or more


@pytest.fixture
def callers_threads() -> Iterator[int]:
    before = torch.get_num_threads()
    torch.set_num_threads(CALLERS)
    try:
        yield CALLERS
    finally:
        torch.set_num_threads(before)


def _watched(model: torch.nn.Module, seen: list[int]) -> torch.nn.Module:
    model.register_forward_pre_hook(lambda module, args: seen.append(torch.get_num_threads()))
    return model


def _tiny_transformer(seen: list[int]) -> None:
    torch.manual_seed(0)
    train(_watched(TinyTransformer(12, 16, 1, 1, max_len=6), seen), ReverseTask(12, 6), steps=3, progress=False)


def _text(seen: list[int]) -> None:
    torch.manual_seed(0)
    ids = torch.randint(0, 7, (100,), generator=torch.Generator().manual_seed(5))
    model = _watched(TinyTransformer(7, 8, 2, 1, 8, causal=True), seen)
    language.train_on_text(model, ids, steps=3, n_tokens=8, batch_size=4, lr=1e-2, progress=False)


def _reverse(seen: list[int]) -> None:
    torch.manual_seed(0)
    model = _watched(EncoderDecoder(vocab_size=11, d_model=16, num_heads=1, num_layers=1, max_len=6), seen)
    train_reverse(model, n_tokens=6, steps=3, batch_size=8)


def _two_colours(seen: list[int]) -> None:
    torch.manual_seed(0)
    train_two_colours(_watched(TwoColoursModel(TwoColoursTask(), d_model=4, num_heads=2), seen), steps=3)


def _encoder(seen: list[int]) -> None:
    # train_encoder builds its model itself: what it calls back with each step's losses runs inside its loop
    def called_back(losses: list[float]) -> None:
        seen.append(torch.get_num_threads())

    pronouns.train_encoder(steps=3, progress=False, every=1, on_loss=called_back)


def _own_loop(seen: list[int]) -> None:
    torch.manual_seed(0)
    model = _watched(TinyTransformer(12, 16, 1, 1, max_len=6), seen)
    inputs, targets, _ = ReverseTask(12, 6).batch(4, torch.Generator().manual_seed(0))
    with one_thread():  # the block lessons 13 and 17 wrap the learner's loop in
        loss = torch.nn.functional.cross_entropy(model(inputs).flatten(0, 1), targets.flatten())
        loss.backward()


TRAINERS: dict[str, Callable[[list[int]], None]] = {
    "training.train": _tiny_transformer,
    "language.train_on_text": _text,
    "seq2seq.train_reverse": _reverse,
    "l11_multihead.train_two_colours": _two_colours,
    "pronouns.train_encoder": _encoder,
    "a learner's loop in one_thread()": _own_loop,
}


@pytest.mark.parametrize("name", TRAINERS)
def test_each_training_runs_on_one_thread_and_gives_the_threads_back(name: str, callers_threads: int) -> None:
    seen: list[int] = []
    TRAINERS[name](seen)
    assert seen, f"{name}: the model was never run"
    assert set(seen) == {1}, f"{name} trained with {sorted(set(seen))} threads"
    assert torch.get_num_threads() == callers_threads


def test_one_thread_gives_the_threads_back_after_an_error(callers_threads: int) -> None:
    with pytest.raises(RuntimeError, match="inside"), one_thread():
        assert torch.get_num_threads() == 1
        raise RuntimeError("inside")
    assert torch.get_num_threads() == callers_threads


def _reverse_problem() -> tuple[TinyTransformer, Callable[[torch.Generator], torch.Tensor]]:
    """A seeded model and the loss of one batch of the reverse task, as fit takes it."""
    torch.manual_seed(0)
    model = TinyTransformer(12, 16, 1, 1, max_len=6)
    task = ReverseTask(12, 6)

    def step_loss(generator: torch.Generator) -> torch.Tensor:
        inputs, targets, _ = task.batch(8, generator)
        return torch.nn.functional.cross_entropy(model(inputs).flatten(0, 1), targets.flatten())

    return model, step_loss


def _fit_reverse(lr_at: Callable[[int], float] | None = None) -> tuple[list[float], torch.Tensor]:
    model, step_loss = _reverse_problem()
    losses = fit(model, step_loss, steps=20, lr=1e-2, seed=3, lr_at=lr_at, progress=False)
    return losses, torch.cat([p.detach().flatten() for p in model.parameters()])


def test_fit_trains_the_same_bits_without_deterministic_algorithms() -> None:
    """fit leaves torch.use_deterministic_algorithms off (its first call imports torch's compiler, 4-5 s of CPU):
    the ops the course trains with are deterministic on the CPU, so the flag changes no bit."""
    plain = _fit_reverse()
    torch.use_deterministic_algorithms(True)
    try:
        flagged = _fit_reverse()
    finally:
        torch.use_deterministic_algorithms(False)
    assert plain[0] == flagged[0]
    assert torch.equal(plain[1], flagged[1])
    assert plain[0][-1] < plain[0][0]  # and it learns


def test_fit_follows_its_learning_rate_schedule() -> None:
    constant, zero = _fit_reverse(), _fit_reverse(lambda step: 0.0)
    assert zero[0] != constant[0]
    torch.manual_seed(0)
    untrained = torch.cat([p.detach().flatten() for p in TinyTransformer(12, 16, 1, 1, max_len=6).parameters()])
    assert torch.equal(zero[1], untrained)  # a rate of 0 moves no parameter


def test_fit_calls_back_after_every_step_and_refuses_bad_steps() -> None:
    calls: list[tuple[int, int]] = []
    model, step_loss = _reverse_problem()
    fit(model, step_loss, steps=3, lr=1e-2, on_step=lambda s, losses: calls.append((s, len(losses))), progress=False)
    assert calls == [(1, 1), (2, 2), (3, 3)]
    with pytest.raises(ValueError, match="steps must be an integer"):
        fit(model, step_loss, steps=0, lr=1e-2, progress=False)
