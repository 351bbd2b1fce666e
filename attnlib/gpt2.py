"""GPT-2's weights in attnlib's own modules (lesson 18): a model nobody in this course trained.

Hugging Face stores GPT-2 as a dictionary of named tensors (``GPT2LMHeadModel.state_dict()``, or the
``model.safetensors`` file of the ``gpt2`` model, whose names lack the ``transformer.`` prefix):

- ``transformer.wte.weight (vocab_size, d_model)`` the token embedding ``E``; ``transformer.wpe.weight
  (n_positions, d_model)`` the learned positions ``PE``;
- per block ``N``: ``h.N.ln_1``, ``h.N.attn.c_attn`` (queries, keys and values side by side), ``h.N.attn.c_proj``,
  ``h.N.ln_2``, ``h.N.mlp.c_fc``, ``h.N.mlp.c_proj``;
- ``transformer.ln_f``, and ``lm_head.weight``, the same tensor as ``wte`` (tied).

Its linear layers are ``Conv1D``: ``y = x W + b`` with ``W`` stored ``(in, out)``, the transpose of
``nn.Linear``'s ``(out, in)``. GPT-2's block is attnlib's :class:`~attnlib.transformer.Block` (pre-LN, a
residual around each part) with the tanh approximation of GELU (``activation="gelu_tanh"``), and its
read-out has no bias (``readout_bias=False``).

:func:`from_gpt2` builds a causal :class:`~attnlib.transformer.TinyTransformer` from such a dictionary;
:func:`find_gpt2_weights` looks for GPT-2 small's weights already on this machine (it never downloads) and
:func:`read_safetensors` reads that file with torch alone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from ._validate import AttentionInputError, check_positive_int
from .transformer import TinyTransformer

__all__ = ["find_gpt2_weights", "from_gpt2", "gpt2_config", "load_gpt2", "read_safetensors"]

_IGNORED = (".attn.bias", ".attn.masked_bias")  # the causal mask GPT-2 stores as a buffer
_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64}


def _strip(state: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """The tensors by their names without ``transformer.``; the stored causal masks left out."""
    if not isinstance(state, Mapping) or not all(isinstance(t, Tensor) for t in state.values()):
        raise AttentionInputError("state must be a dictionary of named tensors (a GPT-2 state_dict)")
    out = {}
    for name, tensor in state.items():
        short = name.removeprefix("transformer.")
        if not short.endswith(_IGNORED):
            out[short] = tensor
    return out


def gpt2_config(state: Mapping[str, Tensor], num_heads: int) -> dict[str, Any]:
    """The :class:`TinyTransformer` keywords that hold ``state`` (GPT-2's layout); ``num_heads`` is not in the
    tensors' shapes (GPT-2 small: 12)."""
    weights = _strip(state)
    for name in ("wte.weight", "wpe.weight", "h.0.attn.c_attn.weight"):
        if name not in weights:
            raise AttentionInputError(f"state has no tensor {name!r}: is it a GPT-2 state_dict?")
    vocab_size, d_model = weights["wte.weight"].shape
    num_layers = 1 + max(int(name.split(".")[1]) for name in weights if name.startswith("h."))
    check_positive_int("num_heads", num_heads)
    if d_model % num_heads:
        raise AttentionInputError(f"num_heads={num_heads} must divide d_model={d_model}")
    return {
        "vocab_size": int(vocab_size),
        "d_model": int(d_model),
        "num_heads": num_heads,
        "num_layers": num_layers,
        "max_len": int(weights["wpe.weight"].shape[0]),
        "d_mlp": int(weights["h.0.mlp.c_fc.weight"].shape[1]),
        "causal": True,
        "activation": "gelu_tanh",
        "readout_bias": False,
    }


def _renamed(weights: dict[str, Tensor], config: Mapping[str, Any]) -> dict[str, Tensor]:
    """GPT-2's tensors under attnlib's names, Conv1D's ``(in, out)`` transposed to ``nn.Linear``'s ``(out, in)``."""
    d = config["d_model"]
    out = {
        "embedding.weight": weights["wte.weight"],
        "positions.table": weights["wpe.weight"],
        "norm.weight": weights["ln_f.weight"],
        "norm.bias": weights["ln_f.bias"],
        "readout.weight": weights.get("lm_head.weight", weights["wte.weight"]),  # tied: the embedding
    }
    for layer in range(config["num_layers"]):
        h, b = f"h.{layer}.", f"blocks.{layer}."
        qkv_w, qkv_b = weights[h + "attn.c_attn.weight"], weights[h + "attn.c_attn.bias"]  # (d, 3d), (3d,)
        for i, name in enumerate(("w_query", "w_key", "w_value")):
            out[f"{b}attention.{name}.weight"] = qkv_w[:, i * d : (i + 1) * d].T
            out[f"{b}attention.{name}.bias"] = qkv_b[i * d : (i + 1) * d]
        pairs = {
            "attn.c_proj": "attention.out_proj",
            "mlp.c_fc": "mlp.0",
            "mlp.c_proj": "mlp.2",
        }
        for theirs, ours in pairs.items():
            out[f"{b}{ours}.weight"] = weights[f"{h}{theirs}.weight"].T
            out[f"{b}{ours}.bias"] = weights[f"{h}{theirs}.bias"]
        for theirs, ours in (("ln_1", "norm_attention"), ("ln_2", "norm_mlp")):
            for kind in ("weight", "bias"):
                out[f"{b}{ours}.{kind}"] = weights[f"{h}{theirs}.{kind}"]
    return out


def from_gpt2(state: Mapping[str, Tensor], num_heads: int) -> TinyTransformer:
    """A causal :class:`TinyTransformer` holding GPT-2's weights ``state``, in eval mode, in float32.

    Its logits equal Hugging Face's ``GPT2LMHeadModel`` for ``ids (batch, n)``, ``n ≤ n_positions``.
    """
    weights = _strip(state)
    config = gpt2_config(weights, num_heads)
    model = TinyTransformer(**config)
    try:
        renamed = _renamed(weights, config)
    except KeyError as missing:
        raise AttentionInputError(f"state has no tensor {missing.args[0]!r}: is it a GPT-2 state_dict?") from None
    own = model.state_dict()
    for name, tensor in renamed.items():
        if tuple(tensor.shape) != tuple(own[name].shape):
            raise AttentionInputError(
                f"GPT-2 tensor for {name!r} has shape {tuple(tensor.shape)}, attnlib's module expects "
                f"{tuple(own[name].shape)}"
            )
    model.load_state_dict({name: t.float().contiguous() for name, t in renamed.items()})
    return model.eval()


def read_safetensors(path: str | Path) -> dict[str, Tensor]:
    """The tensors of a ``.safetensors`` file: an 8-byte header length, a JSON header, then the raw bytes."""
    data = Path(path).read_bytes()
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + size])
    body = memoryview(data)[8 + size :]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(entry["dtype"])
        if dtype is None:
            raise ValueError(
                f"{path}: tensor {name!r} has dtype {entry['dtype']}, which read_safetensors does not read"
            )
        start, end = entry["data_offsets"]
        flat = torch.frombuffer(bytearray(body[start:end]), dtype=dtype) if end > start else torch.empty(0, dtype=dtype)
        out[name] = flat.reshape(entry["shape"])
    return out


def find_gpt2_weights() -> Path | None:
    """The ``model.safetensors`` of GPT-2 small in the Hugging Face cache of this machine, or None.

    Looks in ``$HF_HOME/hub`` (default ``~/.cache/huggingface/hub``) for the models ``gpt2`` and
    ``openai-community/gpt2``; never downloads.
    """
    home = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))
    hub = Path(os.environ.get("HF_HUB_CACHE", home / "hub"))
    for repo in ("models--openai-community--gpt2", "models--gpt2"):
        found = sorted((hub / repo / "snapshots").glob("*/model.safetensors"))
        if found:
            return found[-1]
    return None


def load_gpt2(path: str | Path | None = None) -> TinyTransformer | None:
    """GPT-2 small (12 heads a layer) from ``path`` or :func:`find_gpt2_weights`; None where it is not here."""
    path = find_gpt2_weights() if path is None else Path(path)
    if path is None or not path.is_file():
        return None
    return from_gpt2(read_safetensors(path), num_heads=12)
