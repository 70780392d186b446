"""load_model: errors on bad paths, config and progress, the Q/K un-permutation, the HF-directory path."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest
import torch

from engine.errors import EngineError, ModelLoadError
from engine.gguf_loader import unpermute_rope
from engine.loader import default_model_path, load_model


def test_default_model_path_is_the_packaged_gguf() -> None:
    path = default_model_path()
    assert path.endswith("SmolLM2-135M-Instruct.Q4_1.gguf") and os.path.isfile(path)
    with open(path, "rb") as f:
        assert f.read(4) == b"GGUF"


def test_missing_file(tmp_path) -> None:
    missing = tmp_path / "nope.gguf"
    with pytest.raises(ModelLoadError, match="not found") as info:
        load_model(str(missing))
    assert str(missing) in str(info.value)
    assert isinstance(info.value, EngineError)


def test_not_a_gguf_file(tmp_path) -> None:
    bogus = tmp_path / "model.gguf"
    bogus.write_text("this is not a model\n")
    with pytest.raises(ModelLoadError, match="not a GGUF file"):
        load_model(str(bogus))


def test_truncated_gguf_file(tmp_path) -> None:
    truncated = tmp_path / "cut.gguf"
    with open(default_model_path(), "rb") as f:
        truncated.write_bytes(f.read(4096))
    with pytest.raises(ModelLoadError, match="cut.gguf"):
        load_model(str(truncated))


def test_directory_without_config(tmp_path) -> None:
    with pytest.raises(ModelLoadError, match="config.json"):
        load_model(str(tmp_path))


def test_directory_with_unsupported_architecture(tmp_path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": 8}))
    with pytest.raises(ModelLoadError, match="unsupported model_type 'bert'"):
        load_model(str(tmp_path))


def test_directory_with_invalid_config_json(tmp_path) -> None:
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ModelLoadError, match="cannot parse"):
        load_model(str(tmp_path))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA error")
def test_cuda_without_cuda() -> None:
    with pytest.raises(ModelLoadError, match="CUDA"):
        load_model(device="cuda")


@pytest.mark.parametrize("num_heads,head_dim", [(9, 64), (3, 64), (2, 8)])
def test_unpermute_rope_inverts_llama_cpp_permute(num_heads: int, head_dim: int) -> None:
    w = np.random.default_rng(0).standard_normal((num_heads * head_dim, 5)).astype(np.float32)
    # llama.cpp convert_hf_to_gguf.py, LlamaModel.permute: the oracle, written as it stands there.
    permuted = (w.reshape(num_heads, 2, w.shape[0] // num_heads // 2, *w.shape[1:])
                .swapaxes(1, 2).reshape(w.shape))
    assert not np.array_equal(permuted, w)
    np.testing.assert_array_equal(unpermute_rope(permuted, num_heads), w)


@pytest.mark.slow
def test_config_matches_transformers(loaded_model, hf_reference) -> None:
    ours, ref = loaded_model.config, hf_reference.model.config
    assert ours.architecture == "llama" and loaded_model.model_name == "SmolLM2-135M-Instruct"
    for field in ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                  "num_key_value_heads", "head_dim", "max_position_embeddings", "tie_word_embeddings"):
        assert getattr(ours, field) == getattr(ref, field), field
    assert ours.rms_norm_eps == pytest.approx(ref.rms_norm_eps)
    rope_theta = getattr(ref, "rope_theta", None) or ref.rope_parameters["rope_theta"]
    assert ours.rope_theta == rope_theta
    assert loaded_model.model.lm_head is None  # tied embeddings: no output tensor in the file
    p = next(loaded_model.model.parameters())
    assert p.dtype == torch.float32 and p.device.type == "cpu" and not loaded_model.model.training


@pytest.mark.slow
def test_weights_equal_transformers_after_unpermute(loaded_model, hf_reference) -> None:
    ours = loaded_model.model.state_dict()
    ref = hf_reference.model.state_dict()
    c = loaded_model.config
    for i in (0, c.num_hidden_layers - 1):
        q, k, v = ours[f"layers.{i}.self_attn.qkv_proj.weight"].split([c.q_size, c.kv_size, c.kv_size])
        torch.testing.assert_close(q, ref[f"model.layers.{i}.self_attn.q_proj.weight"], atol=0, rtol=0)
        torch.testing.assert_close(k, ref[f"model.layers.{i}.self_attn.k_proj.weight"], atol=0, rtol=0)
        torch.testing.assert_close(v, ref[f"model.layers.{i}.self_attn.v_proj.weight"], atol=0, rtol=0)
    torch.testing.assert_close(ours["embed_tokens.weight"], ref["model.embed_tokens.weight"], atol=0, rtol=0)


@pytest.mark.slow
def test_progress_is_reported_and_loading_takes_seconds() -> None:
    events: list[tuple[str, float]] = []
    start = time.perf_counter()
    loaded = load_model(progress=lambda message, fraction: events.append((message, fraction)))
    seconds = time.perf_counter() - start
    fractions = [f for _, f in events]
    assert len(events) >= 5 and fractions[0] == 0.0 and fractions[-1] == 1.0
    assert fractions == sorted(fractions) and all(isinstance(m, str) and m for m, _ in events)
    assert loaded.load_seconds <= seconds
    print(f"load_model: {seconds:.2f} s")
    assert seconds < 30, f"loading took {seconds:.1f} s"  # seconds, not tens of seconds (generous: shared CI)


@pytest.mark.slow
def test_hugging_face_directory(tmp_path, loaded_model, hf_reference) -> None:
    """An HF directory written by transformers (config.json, tokenizer.json, tokenizer_config.json)
    plus its weights in safetensors gives the same model, tokenizer and template as the GGUF."""
    from safetensors.torch import save_file

    hf_reference.model.config.save_pretrained(tmp_path)  # a GGUF-loaded model refuses save_pretrained
    hf_reference.tokenizer.save_pretrained(tmp_path)
    state = {k: v.contiguous() for k, v in hf_reference.model.state_dict().items() if k != "lm_head.weight"}
    save_file(state, str(tmp_path / "model.safetensors"))  # tied: lm_head is embed_tokens, stored once
    loaded = load_model(str(tmp_path))
    assert loaded.config == loaded_model.config
    assert loaded.model_name == tmp_path.name
    text = "Hello 世界 😀\n\t  x =  42 <|im_end|>"
    assert loaded.tokenizer.encode(text) == loaded_model.tokenizer.encode(text)
    assert loaded.tokenizer.eos_token_id == loaded_model.tokenizer.eos_token_id
    assert loaded.tokenizer.stop_token_ids == loaded_model.tokenizer.stop_token_ids
    messages = [{"role": "user", "content": "hi"}]
    assert loaded.chat_template.render(messages) == loaded_model.chat_template.render(messages)
    ours, ref = loaded.model.state_dict(), loaded_model.model.state_dict()
    assert ours.keys() == ref.keys()
    for name in ours:
        torch.testing.assert_close(ours[name], ref[name], atol=0, rtol=0, msg=name)
