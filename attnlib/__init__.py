"""attnlib — self-attention, step by step.

The library under the lessons in ``notebooks/``, in three rooms (``docs/architecture.md``):

- the maths core, which imports only torch — :mod:`attnlib.steps` (one function per step and their
  composition :func:`attention`), :mod:`attnlib.tiled` (the online softmax), :mod:`attnlib.modules`,
  :mod:`attnlib.positions`, :mod:`attnlib.transformer`, :mod:`attnlib.kv_cache`, :mod:`attnlib.heads`,
  :mod:`attnlib.training`, :mod:`attnlib.tasks`, :mod:`attnlib.pretrained`, :mod:`attnlib.cost`,
  :mod:`attnlib.saturation`, :mod:`attnlib.examples`, :mod:`attnlib.text`, :mod:`attnlib.formatting`;
- :mod:`attnlib.show` — static figures (seaborn) and the live views (anywidget);
- :mod:`attnlib.lessons` — each lesson's explorers and exercise checkers, ``lessons/lNN_name.py``.

``import attnlib`` loads the core (and torch), nothing for drawing.

Notation — one table for the lessons (lesson 01 shows it), the code and the tests:

======  ==========================  ======================  =============================================
kind    symbol                      in code                 meaning
======  ==========================  ======================  =============================================
size    n (n_q, n_k)                ``n_tokens``            tokens; n_q queries attend over n_k keys
size    d_in (= d_model)            ``d_in``                size of each input vector
size    d_k                         ``d_k``                 size of queries and keys
size    d_v                         ``d_v``                 size of values and outputs
size    h, d_head = d_model / h     ``num_heads``           heads and the size of each
matrix  X                           ``inputs``              (n, d_in), row i is token i
matrix  W_q, W_k, W_v               ``w_query`` …           (d_in, d_k), (d_in, d_k), (d_in, d_v)
matrix  Q, K, V                     ``queries`` …           X W_q, X W_k (n, d_k); X W_v (n, d_v)
matrix  S                           ``scores``              Q Kᵀ, (n_q, n_k)
matrix  A                           ``weights``             softmax(S / √d_k), rows sum to 1
matrix  Z                           ``context``             A V, (n_q, d_v)
vector  x_i, q_i, k_j, v_j, z_i                             row vectors (rows of X, Q, K, V, Z)
index   i / j / l / c                                       query / key / key summed over / feature
======  ==========================  ======================  =============================================

The vocabulary's size is ``vocab_size`` (|𝒱|), never V. Order of computation: scores → scale →
mask → softmax → weighted sum (scaling's lesson, 08, comes last, but it runs before the softmax).
"""

from __future__ import annotations

from . import _vml, examples, text
from ._validate import AttentionInputError
from .modules import MultiHeadAttention, SelfAttention, causal_mask, combine_heads, split_heads
from .steps import (
    QKV,
    Projections,
    Trace,
    attention,
    attention_weights,
    derive_qkv,
    init_projections,
    mask_scores,
    prepare_inputs,
    project,
    scale_scores,
    score,
    softmax,
    sum_weighted_values,
    trace,
    weight_values,
)
from .tiled import tiled_attention

__version__ = "0.1.0"

_vml.settle_vml()  # MKL chooses each vector-maths function's code on one thread, before a lesson computes (_vml.py)

__all__ = [
    "QKV",
    "AttentionInputError",
    "MultiHeadAttention",
    "Projections",
    "SelfAttention",
    "Trace",
    "attention",
    "attention_weights",
    "causal_mask",
    "combine_heads",
    "derive_qkv",
    "examples",
    "init_projections",
    "mask_scores",
    "prepare_inputs",
    "project",
    "scale_scores",
    "score",
    "softmax",
    "split_heads",
    "sum_weighted_values",
    "text",
    "tiled_attention",
    "trace",
    "weight_values",
]
