"""Cross-attention: a small encoder–decoder whose decoder reads the encoder's output (lesson 11).

Self-attention takes its queries, keys and values from one sequence. Cross-attention takes the
queries from one sequence (the decoder's tokens) and the keys and values from another (the encoder's
output): ``softmax(Q_dec K_encᵀ / √d_k) V_enc``, weights ``(n_dec, n_enc)``, one output per decoder
token. The decoder of :class:`EncoderDecoder` runs, per block, causal self-attention over the target
so far, then cross-attention over the source, then an MLP (each pre-LN, with a residual), as in the
original transformer's decoder.

The toy task is :class:`attnlib.tasks.ReverseTask`'s, as a translation: the target is the source
reversed, fed to the decoder shifted right behind a start token, so the cross-attention map of a
trained model is readable (decoder token ``t`` should look at source token ``n − 1 − t``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._validate import AttentionInputError, check_positive_int, shape_str
from .modules import MultiHeadAttention, causal_mask
from .training import fit
from .transformer import Block

__all__ = ["DecoderBlock", "EncoderDecoder", "alignment_score", "reverse_batch", "train_reverse"]


class DecoderBlock(nn.Module):
    """``x + self_attention(norm(x))`` (causal), ``x + cross_attention(norm(x), memory)``, ``x + mlp(norm(x))``."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.self_attention = MultiHeadAttention(d_model, num_heads)
        self.cross_attention = MultiHeadAttention(d_model, num_heads)
        self.norms = nn.ModuleList([nn.LayerNorm(d_model) for _ in range(3)])
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x: Tensor, memory: Tensor) -> tuple[Tensor, Tensor]:
        """``x (batch, n_dec, d_model)``, ``memory (batch, n_enc, d_model)`` → ``(x', cross weights
        (batch, num_heads, n_dec, n_enc))``."""
        mask = causal_mask(x.shape[-2])
        out = self.self_attention(self.norms[0](x), mask=mask)
        assert isinstance(out, Tensor)
        x = x + out
        # cross-attention: the queries from the decoder, the keys and the values from the encoder
        out, weights = self.cross_attention(self.norms[1](x), memory, memory, return_weights=True)
        x = x + out
        return x + self.mlp(self.norms[2](x)), weights


class EncoderDecoder(nn.Module):
    """Source ids ``(batch, n_src)`` and decoder ids ``(batch, n_dec)`` → logits ``(batch, n_dec, vocab_size)``.

    One vocabulary for both sides, learned positions, ``num_layers`` encoder blocks (self-attention
    and MLP, as :class:`attnlib.transformer.Block`) and as many :class:`DecoderBlock`\\ s. After a
    forward, :attr:`cross_maps` holds each decoder block's cross-attention weights.
    """

    def __init__(self, vocab_size: int, d_model: int, num_heads: int, num_layers: int, max_len: int) -> None:
        super().__init__()
        self.vocab_size, self.max_len = check_positive_int("vocab_size", vocab_size), max_len
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.positions = nn.Embedding(check_positive_int("max_len", max_len), d_model)
        self.encoder = nn.ModuleList([Block(d_model, num_heads) for _ in range(num_layers)])
        self.decoder = nn.ModuleList([DecoderBlock(d_model, num_heads) for _ in range(num_layers)])
        self.norm = nn.LayerNorm(d_model)
        self.readout = nn.Linear(d_model, vocab_size)
        self.cross_maps: list[Tensor] = []

    def embed(self, ids: Tensor, name: str) -> Tensor:
        if not isinstance(ids, Tensor) or ids.dim() != 2 or ids.dtype != torch.long:
            got = f"{ids.dtype} {shape_str(ids)}" if isinstance(ids, Tensor) else type(ids).__name__
            raise AttentionInputError(f"{name} must be token ids, a (batch, n) tensor of integers, got {got}")
        if ids.shape[-1] > self.max_len:
            raise AttentionInputError(f"{name} has {ids.shape[-1]} tokens, more than max_len={self.max_len}")
        embedded: Tensor = self.embedding(ids) + self.positions.weight[: ids.shape[-1]]
        return embedded

    def forward(self, source: Tensor, decoder_ids: Tensor) -> Tensor:
        memory = self.embed(source, "source")
        for block in self.encoder:
            memory, _ = block(memory)
        x = self.embed(decoder_ids, "decoder_ids")
        self.cross_maps = []
        for block in self.decoder:
            x, weights = block(x, memory)
            self.cross_maps.append(weights.detach())
        logits: Tensor = self.readout(self.norm(x))
        return logits


def reverse_batch(
    batch_size: int, n_tokens: int, vocab_size: int, generator: torch.Generator
) -> tuple[Tensor, Tensor, Tensor]:
    """``(source, decoder_ids, targets)``, each ``(batch, n_tokens)``: ``targets`` is ``source`` reversed;
    the decoder reads the targets shifted right behind the start token ``vocab_size − 1`` (never in a source)."""
    source = torch.randint(0, vocab_size - 1, (batch_size, n_tokens), generator=generator)
    targets = source.flip(-1)
    start = torch.full((batch_size, 1), vocab_size - 1)
    return source, torch.cat([start, targets[:, :-1]], dim=1), targets


def train_reverse(
    model: EncoderDecoder, *, n_tokens: int, steps: int, batch_size: int = 64, lr: float = 3e-3, seed: int = 0
) -> list[float]:
    """Train ``model`` on reversed sequences (teacher forcing) with :func:`attnlib.training.fit`; return the loss
    of every step."""

    def step_loss(generator: torch.Generator) -> Tensor:
        source, decoder_ids, targets = reverse_batch(batch_size, n_tokens, model.vocab_size, generator)
        return F.cross_entropy(model(source, decoder_ids).flatten(0, 1), targets.flatten())

    return fit(model, step_loss, steps=check_positive_int("steps", steps), lr=lr, seed=seed)


@torch.no_grad()
def alignment_score(model: EncoderDecoder, *, n_tokens: int, seed: int = 10_000, batch_size: int = 256) -> float:
    """Mean cross-attention weight of decoder token ``t`` on source token ``n − 1 − t`` (the one it must
    copy), over the last decoder block's heads and ``batch_size`` held-out sequences: 1 is a perfect map."""
    source, decoder_ids, _ = reverse_batch(batch_size, n_tokens, model.vocab_size, torch.Generator().manual_seed(seed))
    model(source, decoder_ids)
    weights = model.cross_maps[-1]  # (batch, heads, n_dec, n_enc)
    return float(weights.flip(-1).diagonal(dim1=-2, dim2=-1).mean())
