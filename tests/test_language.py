"""attnlib.language (lesson 17): the shipped text, the vocabulary, the baselines, sampling and the head score."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from attnlib import language, ngrams
from attnlib._validate import AttentionInputError
from attnlib.transformer import TinyTransformer


@pytest.fixture(scope="module")
def play() -> str:
    return language.load_text("macbeth")


def test_the_text_ships_is_small_and_is_the_play(play: str) -> None:
    assert 90_000 < len(play.encode()) <= 200_000
    assert play.startswith("MACBETH") and "Fair is foul, and foul is fair" in play
    assert "Gutenberg" not in play  # no licence header left in the training text
    assert (language.CORPUS / "README.md").read_text().count("public domain") >= 1
    with pytest.raises(FileNotFoundError, match="macbeth"):
        language.load_text("hamlet")


def test_the_other_plays_ship_compressed_without_macbeth(play: str) -> None:
    import hashlib

    plays = language.load_text("plays")  # plays.txt.xz, decompressed
    assert hashlib.sha256(plays.encode()).hexdigest() in (language.CORPUS / "README.md").read_text()
    assert "HAMLET" in plays and "Fair is foul, and foul is fair" not in plays  # Macbeth is held out whole
    assert set(play) <= set(plays) and (language.CORPUS / "plays.txt.xz").stat().st_size < 2_000_000


def test_learning_rate_warms_up_then_decays_along_a_cosine() -> None:
    rates = [language.learning_rate(step, 100, 1e-2, 1e-3, warmup=10) for step in range(100)]
    assert rates[0] == pytest.approx(1e-3) and rates[9] == pytest.approx(1e-2)
    assert all(a > b for a, b in itertools.pairwise(rates[10:]))  # falls after the warm-up
    assert rates[-1] == pytest.approx(1e-3, rel=1e-2)
    assert language.learning_rate(50, 100, 1e-2) == 1e-2  # no final rate: constant


def test_vocabulary_round_trips_and_names_unknown_characters(play: str) -> None:
    vocabulary = language.Vocabulary(play)
    assert len(vocabulary) == len(set(play)) and vocabulary.characters == sorted(vocabulary.characters)
    ids = vocabulary.encode("Fair is foul")
    assert ids.dtype == torch.int64 and vocabulary.decode(ids) == "Fair is foul"
    with pytest.raises(AttentionInputError, match="characters the vocabulary does not"):
        vocabulary.encode("Fair is foul ~")
    with pytest.raises(AttentionInputError, match="non-empty"):
        language.Vocabulary("")


def test_split_and_random_batch_shift_by_one() -> None:
    ids = torch.arange(100)
    train, held_out = language.split(ids, 0.8)
    assert len(train) == 80 and torch.equal(held_out, torch.arange(80, 100))
    inputs, targets = language.random_batch(train, 7, 5, torch.Generator().manual_seed(0))
    assert inputs.shape == targets.shape == (5, 7)
    assert torch.equal(targets, inputs + 1)  # ids are positions here: the target is the next one
    with pytest.raises(AttentionInputError, match="n_tokens=80"):
        language.random_batch(train, 80, 2, torch.Generator())
    with pytest.raises(AttentionInputError, match=r"ids must be a 1-D integer tensor.*\(2, 3\)"):
        language.split(torch.zeros(2, 3, dtype=torch.int64))


def test_baselines_by_hand() -> None:
    # train "abab" (ids 0 1 0 1), vocabulary of 3: pairs a→b twice, b→a once, plus one for every pair
    train, held_out = torch.tensor([0, 1, 0, 1]), torch.tensor([0, 1, 2])
    counts = language.bigram_counts(train, 3)
    assert counts.tolist() == [[1, 3, 1], [2, 1, 1], [1, 1, 1]]
    want = -(math.log(3 / 5) + math.log(1 / 4)) / 2
    assert language.bigram_loss(train, held_out, 3) == pytest.approx(want)
    # unigram: counts 2, 2, 0 plus one each = 3, 3, 1 of 7
    assert language.unigram_loss(train, held_out, 3) == pytest.approx(-(2 * math.log(3 / 7) + math.log(1 / 7)) / 3)
    with pytest.raises(AttentionInputError, match="outside 0…2"):
        language.bigram_loss(torch.tensor([0, 3]), held_out, 3)


def test_on_the_play_bigram_beats_unigram_beats_uniform(play: str) -> None:
    vocabulary = language.Vocabulary(play)
    train, held_out = language.split(vocabulary.encode(play))
    unigram = language.unigram_loss(train, held_out, len(vocabulary))
    bigram = language.bigram_loss(train, held_out, len(vocabulary))
    assert bigram < unigram - 0.5 < math.log(len(vocabulary)) - 0.5


def test_evaluate_scores_every_window_and_restores_training_mode() -> None:
    torch.manual_seed(0)
    model = TinyTransformer(5, 8, 2, 1, 4, causal=True)
    ids = torch.randint(0, 5, (41,), generator=torch.Generator().manual_seed(1))
    loss = language.evaluate(model, ids, 4)
    with torch.no_grad():
        logits = model(ids[:40].view(10, 4))
    want = torch.nn.functional.cross_entropy(logits.reshape(-1, 5), ids[1:41])
    assert loss == pytest.approx(float(want), abs=1e-6) and model.training
    assert language.evaluate(model, ids, 4, max_windows=2) == pytest.approx(
        float(torch.nn.functional.cross_entropy(logits[:2].reshape(-1, 5), ids[1:9])), abs=1e-6
    )
    with pytest.raises(AttentionInputError, match="n_tokens=50"):
        language.evaluate(model, ids, 50)


def test_sampling_probabilities_temperature_and_top_k() -> None:
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    assert torch.allclose(language.sampling_probabilities(logits), torch.softmax(logits, -1))
    cold = language.sampling_probabilities(logits, 0.5)
    assert cold[0, 0] > torch.softmax(logits, -1)[0, 0]  # below 1: sharper
    top2 = language.sampling_probabilities(logits, 1.0, 2)
    assert top2[0, 2:].tolist() == [0.0, 0.0] and float(top2.sum()) == pytest.approx(1.0)
    assert top2[0, 0] / top2[0, 1] == pytest.approx(math.e)
    with pytest.raises(AttentionInputError, match="temperature must be a number > 0"):
        language.sampling_probabilities(logits, 0)
    with pytest.raises(AttentionInputError, match="top_k=5 is larger than the vocabulary"):
        language.sampling_probabilities(logits, 1.0, 5)


def test_same_character_score_and_its_uniform_baseline() -> None:
    ids = torch.tensor([[0, 1, 0, 0]])  # queries 2 and 3 have earlier copies: keys {0} and {0, 2}
    weights = torch.tensor([[[1.0, 0, 0, 0], [0.5, 0.5, 0, 0], [0.6, 0.2, 0.2, 0], [0.1, 0.2, 0.3, 0.4]]])
    assert language.same_character_score(weights, ids) == pytest.approx((0.6 + 0.4) / 2)
    assert language.uniform_same_character_score(ids) == pytest.approx((1 / 3 + 2 / 4) / 2)
    uniform = torch.ones(4, 4).tril() / torch.arange(1, 5)[:, None]
    assert language.same_character_score(uniform[None], ids) == pytest.approx(
        language.uniform_same_character_score(ids)
    )
    with pytest.raises(AttentionInputError, match=r"weights must be one head's maps \(batch, n, n\)"):
        language.same_character_score(weights[0], ids)


def test_train_on_text_is_deterministic_and_draws_the_lessons_batches() -> None:
    ids = torch.randint(0, 7, (300,), generator=torch.Generator().manual_seed(5))
    # the batches lesson 17's loop draws (starts from the seeded generator) are random_batch's
    generator, twin = torch.Generator().manual_seed(0), torch.Generator().manual_seed(0)
    inputs, targets = language.random_batch(ids, 8, 4, generator)
    starts = torch.randint(0, len(ids) - 8, (4,), generator=twin)
    assert torch.equal(inputs, torch.stack([ids[s : s + 8] for s in starts.tolist()]))
    assert torch.equal(targets, torch.stack([ids[s + 1 : s + 9] for s in starts.tolist()]))
    runs = []
    for _ in range(2):
        torch.manual_seed(0)
        model = TinyTransformer(7, 8, 2, 1, 8, causal=True)
        runs.append(language.train_on_text(model, ids, steps=15, n_tokens=8, batch_size=4, lr=1e-2, progress=False))
    assert runs[0] == runs[1] and runs[0][-1] < runs[0][0]


def test_the_committed_checkpoint_and_its_figures(play: str) -> None:
    """writer.pt (make models) beats both baselines by far; writer.json's seeds beat the counted trigram."""
    import json

    from attnlib.training import CHECKPOINTS, load_checkpoint

    vocabulary = language.Vocabulary(play)
    train, held_out = language.split(vocabulary.encode(play))
    bigram = language.bigram_loss(train, held_out, len(vocabulary))
    model = load_checkpoint(CHECKPOINTS / "writer.pt")
    assert model.max_len == language.WRITER["model"]["max_len"] and model.causal
    assert language.evaluate(model, held_out, model.max_len) < bigram - 0.5
    figures = json.loads((CHECKPOINTS / "writer.json").read_text())
    assert figures["baselines"]["bigram"] == pytest.approx(bigram, abs=1e-4)
    assert len(figures["live"]) >= 3 and all(f["held_out_loss"] < bigram - 0.1 for f in figures["live"].values())
    # the live recipe beats the counted trigram (k chosen on the training text) in every seed
    trigram = ngrams.ngram_table(train, held_out, len(vocabulary), (3,))[0]["loss"]
    assert figures["baselines"]["trigram"] == pytest.approx(trigram, abs=1e-4)
    assert all(f["held_out_loss"] < trigram for f in figures["live"].values())


def test_the_model_trained_on_the_other_plays_against_the_counted_ngrams(play: str) -> None:
    """writer_plays (make train-models), Macbeth held out whole: on its last tenth it beats every n-gram counted on
    Macbeth's training text and every one counted on the plays it read (what lesson 17 asserts and says), trained in
    at most 50 CPU minutes and shipped with its text in at most 10 MB."""
    import json

    from attnlib import pretrained
    from attnlib.training import CHECKPOINTS

    figures = json.loads((CHECKPOINTS / "writer_plays.json").read_text())
    on_plays = json.loads((CHECKPOINTS / "writer_plays_ngrams.json").read_text())["table"]
    model, vocabulary = pretrained.load("writer_plays"), pretrained.text_vocabulary("writer_plays")
    held_out_text = play[int(len(play) * 0.9) :]  # language.split's held-out tenth
    loss = language.evaluate(model, vocabulary.encode(held_out_text), model.max_len)
    assert loss == pytest.approx(figures["held_out_loss"], abs=5e-3)
    macbeth = language.Vocabulary(play)
    train, held_out = language.split(macbeth.encode(play))
    on_macbeth = ngrams.ngram_table(train, held_out, len(macbeth), (1, 2, 3, 4, 5))
    assert loss < min(row["loss"] for row in on_macbeth)
    assert [row["n"] for row in on_plays] == [1, 2, 3, 4, 5, 6] and loss < min(row["loss"] for row in on_plays)
    assert figures["cpu_minutes"] <= 50 and figures["curve"][-1]["step"] == figures["recipe"]["steps"]
    shipped = [CHECKPOINTS / name for name in ("writer_plays.pt", "writer_plays.json", "writer_plays_ngrams.json")]
    assert sum(path.stat().st_size for path in [*shipped, language.CORPUS / "plays.txt.xz"]) <= 10 * 10**6
