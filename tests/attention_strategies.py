"""Hypothesis settings and strategies for attention's inputs, shared by the property tests (test_properties.py,
test_tiled.py). A module of its own, not conftest.py: tests/hub/ and others have a conftest.py too, and a test
importing ``from conftest`` got whichever of them was imported first."""

from __future__ import annotations

import torch
from hypothesis import settings
from hypothesis import strategies as st

PROPERTY = settings(max_examples=80, deadline=None, derandomize=True, database=None)

batch_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)
sizes = st.integers(1, 9)
seeds = st.integers(0, 2**31 - 1)


def randn(shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    return torch.randn(shape, generator=gen)


@st.composite
def attention_inputs(draw: st.DrawFn, masked: bool) -> tuple[torch.Tensor, ...]:
    batch = draw(batch_shapes)
    n_q, n_k, d_k, d_v = draw(sizes), draw(sizes), draw(st.integers(1, 16)), draw(st.integers(1, 16))
    gen = torch.Generator().manual_seed(draw(seeds))
    q, k, v = randn((*batch, n_q, d_k), gen), randn((*batch, n_k, d_k), gen), randn((*batch, n_k, d_v), gen)
    if not masked:
        return q, k, v, None
    # a mask that broadcasts: full (…, n_q, n_k), one per query/key pair shared over the batch, or per key
    kind = draw(st.sampled_from(["full", "shared", "keys"]))
    shape = {"full": (*batch, n_q, n_k), "shared": (n_q, n_k), "keys": (n_k,)}[kind]
    mask = torch.rand(shape, generator=gen) < draw(st.floats(0.2, 0.9))
    return q, k, v, mask


def ensure_visible(mask: torch.Tensor) -> torch.Tensor:
    """Let every query see at least one key (the first of its row if it saw none)."""
    mask = mask.clone()
    hidden = ~mask.any(dim=-1)
    mask[..., 0] |= hidden
    return mask
