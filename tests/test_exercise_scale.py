"""Lesson 15 checkers: the lesson's solutions pass; the typical slips get their hint and mistake id."""

import torch

from attnlib.lessons import check


def online_step(m, ell, acc, scores, values):
    m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
    correction = torch.exp(m - m_new)
    p = torch.exp(scores - m_new)
    return m_new, ell * correction + p.sum(dim=-1, keepdim=True), acc * correction + p @ values


def test_gib_on_paper():
    assert check("scale.1", 4).correct and check("scale.1", 32768**2 * 4 / 2**30).correct
    assert "one row" in check("scale.1", 32768 * 4 / 2**30).message
    assert "GB" in check("scale.1", 4.294967296).message
    assert "float16" in check("scale.1", 2).message


def test_online_step_runs_over_blocks_of_new_data():
    assert check("scale.2", online_step).correct

    def no_rescale(m, ell, acc, scores, values):
        m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
        p = torch.exp(scores - m_new)
        return m_new, ell + p.sum(dim=-1, keepdim=True), acc + p @ values

    assert check("scale.2", no_rescale).mistake == "online-no-rescale"

    def no_maximum(m, ell, acc, scores, values):
        p = torch.exp(scores)
        return m, ell + p.sum(dim=-1, keepdim=True), acc + p @ values

    assert "overflowed" in check("scale.2", no_maximum).message
    assert "three tensors" in check("scale.2", lambda *args: args[:2]).message
    assert "returned None" in check("scale.2", lambda *args: None).message
    assert "raised ZeroDivisionError" in check("scale.2", lambda *args: 1 / 0).message


def test_one_mask_for_padded_causal_sequences():
    n = 5
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    valid = torch.arange(n) < torch.tensor([5, 3])[:, None]
    assert check("scale.3", causal & valid[:, None, :]).correct
    assert check("scale.3", causal.expand(2, n, n)).mistake == "causal-and-mask"
    assert check("scale.3", valid[:, None, :].expand(2, n, n)).mistake == "causal-and-mask"
    assert "triu" in check("scale.3", causal.T & valid[:, None, :]).message
    assert "boolean" in check("scale.3", (causal & valid[:, None, :]).float()).message


def test_dot_products_with_cache():
    assert check("scale.4", 16 + 5 + 6).correct
    assert "without a cache" in check("scale.4", 16 + 25 + 36).message
    assert "last token" in check("scale.4", 16 + 5 + 6 + 7).message
