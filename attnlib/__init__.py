"""attnlib — self-attention, step by step.

The library under the lessons in ``notebooks/``:

- :mod:`attnlib.steps` — one function per step and their composition :func:`attention`;
- :mod:`attnlib.modules` — :class:`SelfAttention` and :class:`MultiHeadAttention` (``nn.Module``);
- :mod:`attnlib.examples` — the worked examples of the five source documents, as named data;
- :mod:`attnlib.text` — sentence → tokens → vocabulary → ids → embeddings;
- :mod:`attnlib.formatting` — numbers as text and how each entry of a step was computed;
- :mod:`attnlib.viz` — static figures with seaborn (heatmaps, distributions, training curves);
- :mod:`attnlib.style` — ``laptop`` and ``projector`` plot styles;
- :mod:`attnlib.widgets` — the interactive explorers: live SVG heatmaps drawn by the browser (anywidget);
- :mod:`attnlib.exercises` — "check yourself" answers checked with hints.
"""

from . import examples, style, text, viz
from ._validate import AttentionInputError
from .modules import MultiHeadAttention, SelfAttention, combine_heads, split_heads
from .steps import (
    QKV,
    Weights,
    attention,
    attention_weights,
    derive_qkv,
    init_weights,
    prepare_inputs,
    project,
    scale_scores,
    score,
    softmax,
    sum_weighted_values,
    weight_values,
)

__version__ = "0.1.0"

__all__ = [
    "QKV",
    "AttentionInputError",
    "MultiHeadAttention",
    "SelfAttention",
    "Weights",
    "attention",
    "attention_weights",
    "combine_heads",
    "derive_qkv",
    "examples",
    "init_weights",
    "prepare_inputs",
    "project",
    "scale_scores",
    "score",
    "softmax",
    "split_heads",
    "style",
    "sum_weighted_values",
    "text",
    "viz",
    "weight_values",
]
