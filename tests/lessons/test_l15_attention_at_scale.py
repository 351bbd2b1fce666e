"""Lesson 15: TiledExplorer headless (what it shows is attnlib's online softmax, block by block, ending
at attention()) and the lesson's checkers (solutions pass; typical slips get their hint and mistake id)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlib import attention, examples
from attnlib.lessons import check
from attnlib.lessons.l15_attention_at_scale import TiledExplorer
from attnlib.tiled import online_softmax_blocks


def test_starts_at_the_first_block_of_three():
    e = TiledExplorer()
    assert e.summary() == "TiledExplorer(block_size=3, block=1 of 3)"
    assert e.views["scores"].highlight_cols == [0, 1, 2]
    assert e.views["tile"].data.shape == (8, 3) and e.views["state"].col_labels == ["m", "ℓ"]
    assert "Keys 4–8 not seen yet" in e.caption.value and "168 numbers" in e.caption.value


@pytest.mark.parametrize(("block_size", "block"), [(1, 1), (1, 8), (3, 2), (3, 3), (5, 2), (8, 1)])
def test_views_are_the_online_state(block_size, block):
    e = TiledExplorer(block_size=block_size)
    e.controls["block"].value = block
    q, k, v = examples.translate.qkv()
    state = list(online_softmax_blocks(q, k, v, block_size=block_size))[block - 1]
    assert np.allclose(e.views["tile"].data, state.p.numpy())
    assert np.allclose(e.views["state"].data, torch.cat([state.m, state.ell], -1).numpy())
    assert np.allclose(e.views["output"].data, (state.acc / state.ell).numpy())
    assert e.views["scores"].highlight_cols == list(range(state.start, state.stop))
    if state.stop == 8:
        assert np.allclose(e.views["output"].data, attention(q, k, v).numpy(), atol=1e-6)
        assert "equals attention() (within 1e-6: True)" in e.caption.value


def test_a_larger_block_size_clamps_the_block_slider():
    e = TiledExplorer(block_size=1, block=7)
    e.controls["block_size"].value = 4
    assert e.summary() == "TiledExplorer(block_size=4, block=2 of 2)"
    assert e.views["tile"].col_labels == examples.translate.tokens[4:8]
    e.controls["block_size"].value = 2
    assert e.controls["block"].max == 4 and e.controls["block"].value == 2


def test_static_fallback_is_a_png():
    bundle, _ = TiledExplorer()._repr_mimebundle_()
    assert bundle["text/plain"] == "TiledExplorer(block_size=3, block=1 of 3)"
    assert bundle["image/png"]


def online_step(m, ell, acc, scores, values):
    m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
    correction = torch.exp(m - m_new)
    p = torch.exp(scores - m_new)
    return m_new, ell * correction + p.sum(dim=-1, keepdim=True), acc * correction + p @ values


def test_longest_context_on_paper():
    assert check("attention_at_scale.1", 25905).correct
    assert 32 * 25905**2 * 4 <= 80 * 2**30 < 32 * 25906**2 * 4
    assert "GB" in check("attention_at_scale.1", 25000).message
    assert "one head" in check("attention_at_scale.1", 146542).message
    assert "bfloat16" in check("attention_at_scale.1", 36635).message


def test_longest_context_one_too_many_does_not_fit():
    feedback = check("attention_at_scale.1", 25906)  # the review: 32 · 25906² · 4 B > 80 GiB, accepted at tol 1
    assert not feedback.correct and "85,903,467,008" in feedback.message and "round" in feedback.message


def test_online_step_that_keeps_every_block_is_refused():
    seen = []

    def keeps_every_block(m, ell, acc, scores, values):  # the review's cheat: stores the blocks, redoes the softmax
        seen.append((scores, values))
        s, v = torch.cat([b[0] for b in seen], -1), torch.cat([b[1] for b in seen])
        return s.amax(-1, keepdim=True), torch.ones(s.shape[0], 1), torch.softmax(s, -1) @ v

    feedback = check("attention_at_scale.2", keeps_every_block)
    assert not feedback.correct
    assert "library" in feedback.message or "never saw" in feedback.message

    def keeps_every_block_by_hand(m, ell, acc, scores, values):  # the same without torch's softmax
        if not bool(torch.isfinite(m).any()):
            seen.clear()
        seen.append((scores, values))
        s, v = torch.cat([b[0] for b in seen], -1), torch.cat([b[1] for b in seen])
        top = s.amax(-1, keepdim=True)
        p = torch.exp(s - top)
        return top, p.sum(-1, keepdim=True), p @ v

    feedback = check("attention_at_scale.2", keeps_every_block_by_hand)
    assert not feedback.correct and "never saw" in feedback.message and "n_q · (d_v + 2)" in feedback.message


def test_online_step_success_claims_only_what_was_checked():
    feedback = check("attention_at_scale.2", online_step)
    assert feedback.correct and "never saw" in feedback.message and "5 × 11" not in feedback.message


def test_old_names_still_check_the_same_exercises():
    from attnlib.lessons import registry
    from attnlib.lessons._check import aliases

    ours = {old: new for old, new in aliases().items() if new.startswith("attention_at_scale.")}
    assert ours == {f"scale.{n}": f"attention_at_scale.{n}" for n in (1, 2, 3, 4)} | {
        f"at_scale.{n}": f"attention_at_scale.{n}" for n in (1, 2, 3, 4, 5)
    }
    assert all(registry()[old] is registry()[new] for old, new in aliases().items())
    assert check("attention_at_scale.2", online_step).correct
    assert not set(aliases()) & set(registry(aliases=False))


def test_online_step_runs_over_blocks_of_new_data():
    assert check("attention_at_scale.2", online_step).correct

    def no_rescale(m, ell, acc, scores, values):
        m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
        p = torch.exp(scores - m_new)
        return m_new, ell + p.sum(dim=-1, keepdim=True), acc + p @ values

    assert check("attention_at_scale.2", no_rescale).mistake == "online-no-rescale"

    def no_maximum(m, ell, acc, scores, values):
        p = torch.exp(scores)
        return m, ell + p.sum(dim=-1, keepdim=True), acc + p @ values

    assert "overflowed" in check("attention_at_scale.2", no_maximum).message
    assert "three tensors" in check("attention_at_scale.2", lambda *args: args[:2]).message
    assert "returned None" in check("attention_at_scale.2", lambda *args: None).message
    assert "raised ZeroDivisionError" in check("attention_at_scale.2", lambda *args: 1 / 0).message


def test_one_mask_for_padded_causal_sequences():
    n = 5
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    valid = torch.arange(n) < torch.tensor([5, 3])[:, None]
    assert check("attention_at_scale.3", causal & valid[:, None, :]).correct
    assert check("attention_at_scale.3", causal.expand(2, n, n)).mistake == "causal-and-mask"
    assert check("attention_at_scale.3", valid[:, None, :].expand(2, n, n)).mistake == "causal-and-mask"
    assert "triu" in check("attention_at_scale.3", causal.T & valid[:, None, :]).message
    assert "boolean" in check("attention_at_scale.3", (causal & valid[:, None, :]).float()).message
    padded_queries = causal & valid[:, None, :] & valid[:, :, None]
    assert check("attention_at_scale.3", padded_queries).mistake == "fully-masked-row"
    assert "inverted" in check("attention_at_scale.3", ~(causal & valid[:, None, :])).message


def test_flipped_and_block_maximum_corrections_are_named():
    def flipped(m, ell, acc, scores, values):
        m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
        c, p = torch.exp(m_new - m), torch.exp(scores - m_new)
        return m_new, ell * c + p.sum(dim=-1, keepdim=True), acc * c + p @ values

    def block_max(m, ell, acc, scores, values):
        m_new = scores.amax(dim=-1, keepdim=True)
        c, p = torch.exp(m - m_new), torch.exp(scores - m_new)
        return m_new, ell * c + p.sum(dim=-1, keepdim=True), acc * c + p @ values

    assert "upside down" in check("attention_at_scale.2", flipped).message
    assert "running maximum" in check("attention_at_scale.2", block_max).message


def test_the_library_is_not_an_online_step():
    def via_library(m, ell, acc, scores, values):
        return m, ell, acc + torch.softmax(scores, dim=-1) @ values

    assert check("attention_at_scale.2", via_library).mistake == "library-function"


def test_dot_products_of_the_hundredth_token():
    from attnlib.kv_cache import score_dot_products

    step = score_dot_products(4, 100, use_cache=True) - score_dot_products(4, 99, use_cache=True)
    assert check("attention_at_scale.4", step).correct and step == 103
    assert "without a cache" in check("attention_at_scale.4", 103**2).message
    assert "One too many" in check("attention_at_scale.4", 104).message
    assert "prompt" in check("attention_at_scale.4", 100).message


def test_block_size_memory_prediction_matches_the_measurement():
    from attnlib.cost import MIB, largest_intermediate
    from attnlib.tiled import tiled_attention

    x = torch.zeros(4096, 64)
    measured = largest_intermediate(tiled_attention, x, x, x, block_size=640)[1] / MIB
    assert measured == 10
    assert check("attention_at_scale.5", measured).correct
    assert "whole" in check("attention_at_scale.5", 64).message
    assert "default" in check("attention_at_scale.5", 2).message


def test_the_private_reference_is_not_an_online_step():
    from attnlib.lessons import l15_attention_at_scale

    for answer in (l15_attention_at_scale._solution, lambda *a: l15_attention_at_scale._solution(*a)):
        feedback = check("attention_at_scale.2", answer)
        assert feedback.mistake == "library-function"
        assert "attnlib.lessons.l15_attention_at_scale._solution" in feedback.message


def test_block_size_memory_in_mb_is_named():
    feedback = check("attention_at_scale.5", 4096 * 640 * 4 / 1e6)  # 10.49 MB, not MiB
    assert not feedback.correct and "MiB" in feedback.message and "10⁶" in feedback.message
