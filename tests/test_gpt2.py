"""attnlib.gpt2: GPT-2's weights in attnlib's modules give Hugging Face's logits (a small random GPT-2, no download)."""

from __future__ import annotations

import pytest
import torch

from attnlib._validate import AttentionInputError
from attnlib.gpt2 import find_gpt2_weights, from_gpt2, gpt2_config, read_safetensors


def hugging_face():
    """transformers, imported when a test first builds a model (not while every worker collects); skips without it."""
    return pytest.importorskip("transformers")


def small_gpt2(seed: int = 0, **changes) -> torch.nn.Module:
    """A randomly initialised GPT2LMHeadModel, built locally (no download), in eval mode."""
    settings = {"vocab_size": 97, "n_positions": 24, "n_embd": 48, "n_layer": 3, "n_head": 4, **changes}
    settings.setdefault("initializer_range", 0.1)  # larger than GPT-2's 0.02, so that every part moves the logits
    torch.manual_seed(seed)
    transformers = hugging_face()
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(**settings)).eval()
    with torch.no_grad():  # GPT-2's initial biases and layer norms are 0 and 1: make them matter
        for name, p in model.named_parameters():
            if name.endswith("bias") or ".ln_" in name:
                p.add_(0.1 * torch.randn_like(p))
    return model


@pytest.mark.parametrize("seed", [0, 1])
def test_logits_match_hugging_face(seed):
    theirs = small_gpt2(seed)
    ours = from_gpt2(theirs.state_dict(), num_heads=4)
    ids = torch.randint(0, 97, (3, 24), generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        expected = theirs(ids).logits
        got = ours(ids)
    assert got.shape == expected.shape == (3, 24, 97)
    assert torch.allclose(got, expected, atol=1e-5, rtol=0), float((got - expected).abs().max())


def test_the_exact_gelu_would_not_match():
    """The loader's choice of GELU matters: with the exact GELU the logits differ from GPT-2's."""
    theirs = small_gpt2(2)
    ours = from_gpt2(theirs.state_dict(), num_heads=4)
    for block in ours.blocks:
        block.mlp[1] = torch.nn.GELU()
    ids = torch.randint(0, 97, (2, 24), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        assert not torch.allclose(ours(ids), theirs(ids).logits, atol=1e-5, rtol=0)


def test_config_read_from_the_shapes():
    config = gpt2_config(small_gpt2().state_dict(), num_heads=4)
    assert config["vocab_size"] == 97 and config["d_model"] == 48 and config["num_layers"] == 3
    assert config["max_len"] == 24 and config["d_mlp"] == 4 * 48 and config["causal"]


def test_the_file_layout_without_prefix_loads_too(tmp_path):
    """The hub's model.safetensors names its tensors without ``transformer.`` and has no lm_head: read with torch."""
    theirs = small_gpt2(3)
    state = {k.removeprefix("transformer."): v for k, v in theirs.state_dict().items() if not k.startswith("lm_head")}
    safetensors = pytest.importorskip("safetensors.torch")
    path = tmp_path / "model.safetensors"
    safetensors.save_file({k: v.contiguous() for k, v in state.items()}, str(path))
    read = read_safetensors(path)
    assert set(read) == set(state) and all(torch.equal(read[k], state[k]) for k in state)
    ours = from_gpt2(read, num_heads=4)
    ids = torch.arange(24).unsqueeze(0)
    with torch.no_grad():
        assert torch.allclose(ours(ids), theirs(ids).logits, atol=1e-5, rtol=0)


def test_bad_state_names_the_problem():
    with pytest.raises(AttentionInputError, match=r"wte\.weight"):
        from_gpt2({"x": torch.zeros(2)}, num_heads=4)
    with pytest.raises(AttentionInputError, match="num_heads"):
        from_gpt2(small_gpt2().state_dict(), num_heads=5)
    state = small_gpt2().state_dict()
    del state["transformer.h.1.mlp.c_fc.bias"]
    with pytest.raises(AttentionInputError, match=r"h\.1\.mlp\.c_fc\.bias"):
        from_gpt2(state, num_heads=4)


def test_find_gpt2_weights_looks_only_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    assert find_gpt2_weights() is None
    snapshot = tmp_path / "hub" / "models--gpt2" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "model.safetensors").write_bytes(b"")
    assert find_gpt2_weights() == snapshot / "model.safetensors"
