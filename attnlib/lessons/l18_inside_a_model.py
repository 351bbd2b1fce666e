"""Lesson 18 · Inside a model you did not train: its explorer, its passages and its three exercise checkers.

Lesson 18 explorer: any head of the course's long-trained character model (``writer_plays``) on a passage of
*Macbeth*, with its scores beside those of a uniform head.

Lesson 18 exercises: the learner scores every head of a model, and concludes on models the lesson never opened.
Each checker runs the learner's function on maps, passages and models the page never showed (``writer_plays``
and lesson 17's Macbeth checkpoint ``writer``, their heads reordered, on short passages of the plays it trained
on; lesson 14's model, its heads reordered, on random tokens) and compares with :mod:`attnlib.heads`; calling
attnlib's own score functions is refused.

- ``inside_a_model.1`` code: ``previous_token_scores(maps)``: ``(num_layers, num_heads)`` previous-token scores.
- ``inside_a_model.2`` code: ``induction_scores(maps, ids)``: ``(num_layers, num_heads)`` induction scores.
- ``inside_a_model.3`` conclude: ``find_heads(model, ids)``: the best previous-token head, the best induction
  head, and whether the model copies (its loss on a repeat below its loss on the first pass).
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable, Mapping, Sequence
from typing import TypedDict, cast

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import language, pretrained
from ..heads import induction_score, induction_targets, previous_token_score, uniform_weights
from ..show import ui
from ..show.explorer import Explorer, HeatmapView, Shown
from ..show.table import Part
from ..training import CHECKPOINTS, load_checkpoint
from ..transformer import Block, TinyTransformer
from ._check import Feedback, Wrong, compare_tensor, exercise, run_learner_code

__all__ = [
    "PASSAGES",
    "ModelHeadsExplorer",
    "find",
    "induction",
    "load_writer",
    "previous_token",
    "repeated",
    "wrong_answers",
]

#: The explorer's passages: a line of the play, and a line written twice (where a copying head would look).
PASSAGES = {
    "a line of the play": "Fair is foul, and foul is fair:\n",
    "a passage repeated": "When shall we three meet again\n" * 2,
}

#: The model lesson 18 opens: lesson 17's long-trained character model, trained on every play but Macbeth.
MODEL = "writer_plays"


def load_writer() -> tuple[TinyTransformer, language.Vocabulary]:
    """The course's long-trained character model (``writer_plays``, :data:`MODEL`) and its vocabulary."""
    return pretrained.load(MODEL), pretrained.text_vocabulary(MODEL)


def repeated(ids: Tensor, half: int, count: int, generator: torch.Generator) -> Tensor:
    """``(count, 2 · half)``: ``count`` passages of ``half`` tokens drawn from ``ids``, each written twice."""
    starts = torch.randint(0, len(ids) - half, (count,), generator=generator)
    runs = torch.stack([ids[s : s + half] for s in starts.tolist()])
    return torch.cat([runs, runs], dim=1)


class ModelHeadsValues(TypedDict):
    """What :meth:`ModelHeadsExplorer.compute` reads: the controls' values."""

    layer: int
    head: int
    passage: str


class ModelHeadsExplorer(Explorer):
    """Pick a layer, a head and a passage: the head's attention map, and its scores against a uniform head's.

    Args:
        model: a causal ``TinyTransformer`` of attnlib's ``Block``.
        characters: its vocabulary, id ``i`` = ``characters[i]``.
        passages: name → text (each at most ``model.max_len`` characters of the vocabulary).

    Controls: ``layer``, ``head``, ``passage``. View: ``weights`` ``(n, n)``.
    """

    def __init__(
        self,
        model: TinyTransformer,
        characters: Sequence[str],
        passages: dict[str, str] | None = None,
        *,
        layer: int = 0,
        head: int = 0,
    ) -> None:
        super().__init__()
        first = model.blocks[0]
        if not isinstance(first, Block):
            raise ValueError(f"model must be built of attnlib's Block (its heads are read), got {type(first).__name__}")
        self.model, self.characters = model.eval(), list(characters)
        self.passages = dict(PASSAGES if passages is None else passages)
        ids = {ch: i for i, ch in enumerate(self.characters)}
        for name, text in self.passages.items():
            if not 2 <= len(text) <= model.max_len or set(text) - set(ids):
                raise ValueError(f"passage {name!r} must be 2 to {model.max_len} characters of the vocabulary")
        self.ids = {name: torch.tensor([[ids[ch] for ch in text]]) for name, text in self.passages.items()}
        n_layers, n_heads = len(model.blocks), first.attention.num_heads
        c = self.controls
        c["layer"] = ui.Dropdown(
            options=[(f"layer {i + 1}", i) for i in range(n_layers)], value=layer, description="layer"
        )
        c["head"] = ui.Dropdown(options=[(f"head {r + 1}", r) for r in range(n_heads)], value=head, description="head")
        names = list(self.passages)
        c["passage"] = ui.Dropdown(options=names, value=names[0], description="passage")
        self.views["weights"] = HeatmapView(
            None, xlabel="key (earlier character)", ylabel="query", vmin=0.0, vmax=1.0, annotate=False
        )
        self.texts["caption"] = ui.HTML()
        self.update()
        self.observe_controls()
        self.widget = ui.VBox(
            [ui.HBox([c["layer"], c["head"], c["passage"]]), self.message, self.views["weights"], self.texts["caption"]]
        )

    def table_parts(self) -> list[Part]:
        """One table of every output, in a chunk per layer (the page loads a layer's maps when it is chosen): the
        maps of every layer, head and passage together are over a page's inline budget."""
        return [Part(("layer", "head", "passage"), ("views/weights", "texts/caption"), chunk="layer")]

    @torch.no_grad()
    def compute(self, values: Mapping[str, object]) -> Shown:
        """Run the model on the passage; show the chosen head's map; score it and a uniform head."""
        values = cast(ModelHeadsValues, values)
        ids = self.ids[values["passage"]]
        layer, head = int(values["layer"]), int(values["head"])
        self.model(ids)
        weights = self.model.attention_maps[layer][:, head]  # (1, n, n)
        uniform = uniform_weights(1, ids.shape[1])
        labels = [{"\n": "⏎", " ": "␣"}.get(self.characters[i], self.characters[i]) for i in ids[0].tolist()]
        parts = [
            f"previous-token score {previous_token_score(weights):.2f} (uniform {previous_token_score(uniform):.2f})"
        ]
        if bool((induction_targets(ids) >= 0).any()):
            parts.append(
                f"induction score {induction_score(weights, ids):.2f} (uniform {induction_score(uniform, ids):.2f})"
            )
        return Shown(
            views={
                "weights": self.views["weights"].frame(
                    weights[0], row_labels=labels, col_labels=labels, title=f"layer {layer + 1}, head {head + 1}"
                )
            },
            texts={"caption": html.escape(" · ".join(parts))},
        )

    def summary(self) -> str:
        c = self.controls
        return (
            f"ModelHeadsExplorer(layer={c['layer'].value + 1}, head={c['head'].value + 1}, "
            f"passage={c['passage'].value!r})"
        )


# ---------------------------------------------------------------- what the checkers run the learner's code on
def _permuted(model: TinyTransformer, orders: dict[int, Sequence[int]] | None = None) -> TinyTransformer:
    """A copy of ``model`` whose heads of block ``layer`` come in ``orders[layer]``: the same model, other names.

    ``orders=None``: every block's heads rotated, block ``l`` by ``1 + l mod (h - 1)`` places, so that no head keeps
    its index (``h ≥ 2``) and a head's index learned from the page does not name the same head here."""
    if orders is None:
        heads = _config(model)["num_heads"]
        orders = {
            layer: torch.arange(heads).roll(1 + layer % max(1, heads - 1)).tolist()
            for layer in range(len(model.blocks))
        }
    copy = TinyTransformer(**_config(model))
    copy.load_state_dict(model.state_dict())
    with torch.no_grad():
        for layer, order in orders.items():
            block = copy.blocks[layer]
            assert isinstance(block, Block)
            attention = block.attention
            d = attention.d_head
            rows = torch.cat([torch.arange(r * d, (r + 1) * d) for r in order])
            for lin in (attention.w_query, attention.w_key, attention.w_value):
                lin.weight.copy_(lin.weight[rows])
                lin.bias.copy_(lin.bias[rows])
            attention.out_proj.weight.copy_(attention.out_proj.weight[:, rows])
    return copy.eval()


class _Config(TypedDict):
    """What builds a :class:`TinyTransformer` like another: its arguments."""

    vocab_size: int
    d_model: int
    num_heads: int
    num_layers: int
    max_len: int
    causal: bool
    mlp: bool


def _config(model: TinyTransformer) -> _Config:
    first = model.blocks[0]
    assert isinstance(first, Block)
    return {
        "vocab_size": model.vocab_size,
        "d_model": first.d_model,
        "num_heads": first.attention.num_heads,
        "num_layers": len(model.blocks),
        "max_len": model.max_len,
        "causal": model.causal,
        "mlp": first.mlp is not None,
    }


#: The checkers' passages: ``count`` passages of ``half`` characters written twice (short, so a check is quick;
#: the page scores passages of half its model's context).
CHECK_PASSAGES = {"half": 12, "count": 16}


@functools.cache
def _cases() -> tuple[tuple[str, TinyTransformer, Tensor], ...]:
    """(name, model, repeated passages) the page never showed: lesson 14's model on repeated random tokens; lesson
    17's Macbeth checkpoint and the page's model on short passages of Macbeth's training text and of the plays,
    each model's heads reordered. Lesson 17's checkpoint does not copy a repeat: a conclusion "it copies" learned
    from the page fails there."""
    writer, vocabulary = load_writer()
    half, count = CHECK_PASSAGES["half"], CHECK_PASSAGES["count"]
    plays = vocabulary.encode(language.load_text("plays")[:200_000])
    on_plays = repeated(plays, half, count, torch.Generator().manual_seed(1818))
    macbeth = language.Vocabulary(language.load_text("macbeth"))
    train, _ = language.split(macbeth.encode(language.load_text("macbeth")))
    on_macbeth = repeated(train, half, count, torch.Generator().manual_seed(1717))
    tokens = torch.randint(1, 64, (count, 11), generator=torch.Generator().manual_seed(1414))
    return (  # the smallest first: what a check hands the learner's code first is quick to copy and to run
        (
            "lesson 14's model, its heads reordered, on random tokens written twice",
            _permuted(pretrained.load("induction")),
            torch.cat([tokens] * 2, 1),
        ),
        (
            "lesson 17's Macbeth model, its heads reordered, on passages of Macbeth written twice",
            _permuted(load_checkpoint(CHECKPOINTS / "writer.pt")),
            on_macbeth,
        ),
        ("the page's model, its heads reordered, on passages of the plays written twice", _permuted(writer), on_plays),
    )


@functools.cache
def _case_maps(index: int) -> tuple[Tensor, ...]:
    """The attention maps of case ``index`` of :func:`_cases`, computed once (each checker hands out clones)."""
    _, model, ids = _cases()[index]
    with torch.no_grad():
        model(ids)
    return tuple(m.clone() for m in model.attention_maps)


def _maps(model: TinyTransformer, ids: Tensor) -> list[Tensor]:
    for index, (_, case_model, case_ids) in enumerate(_cases()):
        if model is case_model and ids.shape == case_ids.shape and torch.equal(ids, case_ids):
            return [m.clone() for m in _case_maps(index)]
    with torch.no_grad():
        model(ids)
    return [m.clone() for m in model.attention_maps]


def _reference_scores(maps: Sequence[Tensor], ids: Tensor | None = None) -> Tensor:
    return torch.tensor(
        [
            [previous_token_score(m[:, r]) if ids is None else induction_score(m[:, r], ids) for r in range(m.shape[1])]
            for m in maps
        ]
    )


def _copies(model: TinyTransformer, ids: Tensor) -> tuple[float, float]:
    """The loss on the first pass and on the repeat (``ids`` a passage written twice)."""
    half = ids.shape[1] // 2
    with torch.no_grad():
        logits = model(ids)
    first = F.cross_entropy(logits[:, : half - 1].flatten(0, 1), ids[:, 1:half].flatten())
    second = F.cross_entropy(logits[:, half:-1].flatten(0, 1), ids[:, half + 1 :].flatten())
    return float(first), float(second)


def _targets(ids: Tensor, shift: int = 1, *, first: bool = False) -> Tensor:
    """``(B, n)``: the position ``shift`` after the latest (``first``: the first) earlier copy of each token, or -1."""
    batch, n = ids.shape
    targets = torch.full((batch, n), -1)
    for b in range(batch):
        seen: dict[int, int] = {}
        for i, token in enumerate(ids[b].tolist()):
            if token in seen:
                targets[b, i] = seen[token] + shift
            if not first or token not in seen:
                seen[token] = i
    return targets


_SCORES = [previous_token_score, induction_score, induction_targets, language.same_character_score]


# ---------------------------------------------------------------- the exercises
def wrong_answers() -> dict[str, list[tuple[object, str | None]]]:
    """Per exercise, typical wrong answers and the mistake id each must reveal (None: a plain hint)."""

    def own_key(maps: Sequence[Tensor]) -> Tensor:
        return torch.stack([torch.diagonal(m, dim1=-2, dim2=-1).mean((0, 2)) for m in maps])

    def over_n(maps: Sequence[Tensor]) -> Tensor:
        return torch.stack([torch.diagonal(m, offset=-1, dim1=-2, dim2=-1).sum(-1).mean(0) / m.shape[-1] for m in maps])

    def on(maps: Sequence[Tensor], ids: Tensor, shift: int, every_query: bool = False, first: bool = False) -> Tensor:
        targets = _targets(ids, shift, first=first)
        valid = targets >= 0
        rows = []
        for m in maps:
            index = targets.clamp(min=0)[:, None, :, None].expand(-1, m.shape[1], -1, 1)
            picked = m.gather(-1, index).squeeze(-1) * valid[:, None]  # (B, H, n)
            counted = torch.ones_like(valid) if every_query else valid
            rows.append(picked.sum((0, 2)) / counted.sum())
        return torch.stack(rows)

    def copy_of_token(
        maps: Sequence[Tensor], ids: Tensor
    ) -> Tensor:  # the earlier copy itself: a duplicate-token head, not an induction head
        return on(maps, ids, 0)

    def over_every_query(maps: Sequence[Tensor], ids: Tensor) -> Tensor:
        return on(maps, ids, 1, every_query=True)

    def first_copy(maps: Sequence[Tensor], ids: Tensor) -> Tensor:
        return on(maps, ids, 1, first=True)

    def find_by_first_head(model: TinyTransformer, ids: Tensor) -> dict[str, object]:
        return {"previous_token": (0, 0), "induction": (1, 0), "copies": True}

    def always_copies(model: TinyTransformer, ids: Tensor) -> dict[str, object]:
        model(ids)
        prev = torch.stack([torch.diagonal(m, -1, -2, -1).mean((0, 2)) for m in model.attention_maps])
        ind = on(model.attention_maps, ids, 1)
        return {
            "previous_token": divmod(int(prev.argmax()), prev.shape[1]),
            "induction": divmod(int(ind.argmax()), ind.shape[1]),
            "copies": True,
        }

    def library(maps: Sequence[Tensor]) -> Tensor:
        return torch.tensor([[previous_token_score(m[:, r]) for r in range(m.shape[1])] for m in maps])

    return {
        "inside_a_model.1": [(own_key, None), (over_n, None), (library, "library-function")],
        "inside_a_model.2": [(copy_of_token, None), (over_every_query, None), (first_copy, None)],
        "inside_a_model.3": [(find_by_first_head, None), (always_copies, None)],
    }


def _scores_answer(answer: object, want: Tensor, call: str, wrong: Sequence[Wrong], *args: object) -> Feedback | None:
    got = run_learner_code(answer, *args, name=call, write_it=_SCORES)
    if isinstance(got, Feedback):
        return got
    feedback = compare_tensor(
        got, want, name=f"the scores (num_layers, num_heads) = {tuple(want.shape)}", atol=1e-4, wrong=wrong
    )
    return None if feedback else feedback


#: the typical wrong scores the checkers recognise (functions of :func:`wrong_answers`)
WRONG_SCORES = ("own_key", "over_n", "copy_of_token", "over_every_query", "first_copy")


@functools.cache
def _expected(index: int) -> dict[str, Tensor]:
    """Case ``index``'s right scores and its typical wrong ones, computed once: what every check compares with."""
    _, _, ids = _cases()[index]
    maps = _case_maps(index)
    typical: dict[str, Callable[..., Tensor]] = {
        getattr(f, "__name__", ""): f  # type: ignore[misc]
        for f, _ in wrong_answers()["inside_a_model.1"] + wrong_answers()["inside_a_model.2"]
    }
    expected = {"previous_token": _reference_scores(maps), "induction": _reference_scores(maps, ids)}
    for name in WRONG_SCORES:
        expected[name] = typical[name](list(maps), *(() if name in ("own_key", "over_n") else (ids,)))
    return expected


@exercise("inside_a_model.1")
def previous_token(answer: object) -> Feedback:
    """18.1: ``previous_token_scores(maps)`` on the maps of three models on inputs the page never showed."""
    call = "your previous_token_scores(maps)"
    for index in range(len(_cases())):
        expected = _expected(index)
        wrong = [
            (
                expected["own_key"],
                "you read the diagonal (each query's own key): the previous token is one below it, offset=-1.",
            ),
            (
                expected["over_n"],
                "you divided by n: only the n - 1 queries from the second on have a previous token (a mean).",
            ),
        ]
        maps = [m.clone() for m in _case_maps(index)]
        failed = _scores_answer(answer, expected["previous_token"], call, wrong, maps)
        if failed is not None:
            return failed
    return Feedback(True, "Those are the previous-token scores of every head: the mean weight on the key just before.")


@exercise("inside_a_model.2")
def induction(answer: object) -> Feedback:
    """18.2: ``induction_scores(maps, ids)`` on the maps of three models on repeats the page never showed."""
    call = "your induction_scores(maps, ids)"
    for index, (_, _, ids) in enumerate(_cases()):
        expected = _expected(index)
        wrong = [
            (
                expected["copy_of_token"],
                "you scored the weight on the earlier copy of the same token (a duplicate-token head): an induction "
                "head looks at the token right *after* that copy, the one it will predict.",
            ),
            (
                expected["over_every_query"],
                "you averaged over every query: only the queries whose token occurred before have a target.",
            ),
            (
                expected["first_copy"],
                "you used the first earlier occurrence: the target follows the latest one (the nearest copy).",
            ),
        ]
        maps = [m.clone() for m in _case_maps(index)]
        failed = _scores_answer(answer, expected["induction"], call, wrong, maps, ids.clone())
        if failed is not None:
            return failed
    return Feedback(True, "Those are the induction scores: the mean weight on the token after the earlier copy.")


@functools.cache
def _case_copies(index: int) -> tuple[float, float]:
    _, model, ids = _cases()[index]
    return _copies(model, ids)


@exercise("inside_a_model.3")
def find(answer: object) -> Feedback:
    """18.3: ``find_heads(model, ids)`` on three models the page never opened, on other repeats."""
    call = "your find_heads(model, ids)"
    for index, (name, model, ids) in enumerate(_cases()):
        got = run_learner_code(answer, model, ids.clone(), name=call, write_it=_SCORES)
        if isinstance(got, Feedback):
            return got
        keys = {"previous_token", "induction", "copies"}
        if not isinstance(got, dict) or set(got) != keys:
            return Feedback(
                False, f"{call} should return a dict with the keys {sorted(keys)}, got {type(got).__name__}: {got!r}"
            )
        expected = _expected(index)
        for kind in ("previous_token", "induction"):
            want, pick = expected[kind], got[kind]
            if (
                not isinstance(pick, tuple | list)
                or len(pick) != 2
                or not all(isinstance(i, int) and not isinstance(i, bool) for i in pick)
                or not (0 <= pick[0] < want.shape[0] and 0 <= pick[1] < want.shape[1])
            ):
                return Feedback(
                    False,
                    f"{call}[{kind!r}] should be (layer, head), two indices from 0 (layers 0…{want.shape[0] - 1}, "
                    f"heads 0…{want.shape[1] - 1}), got {pick!r}.",
                )
            best = float(want.max())
            if float(want[pick[0], pick[1]]) < best - 0.01:
                layer, head = divmod(int(want.argmax()), want.shape[1])
                return Feedback(
                    False,
                    f"On {name}, head {tuple(pick)} scores {float(want[pick[0], pick[1]]):.2f} as {kind}, but head "
                    f"{(layer, head)} scores {best:.2f}: did you take the best of every layer and every head, with "
                    "indices from 0?",
                )
        first, second = _case_copies(index)
        if not isinstance(got["copies"], bool):
            return Feedback(False, f"{call}['copies'] should be True or False, got {got['copies']!r}.")
        if got["copies"] != (second < first):
            return Feedback(
                False,
                f"On {name}, the loss is {first:.2f} nats on the first pass and {second:.2f} on the repeat, so "
                f"'copies' should be {second < first}: compare the loss on the repeat with the loss on the first pass "
                "(the model's own predictions), not the scores.",
            )
    return Feedback(
        True,
        "Right on all three models: the scores name the heads, and the loss on the repeat says whether the model "
        "copies.",
    )
