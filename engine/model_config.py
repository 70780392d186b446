"""The shape of a Llama-family decoder, read from GGUF metadata or a Hugging Face config.json."""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import ModelLoadError


@dataclass(frozen=True)
class ModelConfig:
    """Hyper-parameters of a Llama-family decoder.

    Field names follow Hugging Face's `LlamaConfig`. `max_position_embeddings` is the context
    length in tokens. Raises ModelLoadError when the numbers cannot describe a working model
    (for example query heads not a multiple of KV heads).
    """

    architecture: str
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rope_theta: float
    rms_norm_eps: float
    max_position_embeddings: int
    tie_word_embeddings: bool

    def __post_init__(self) -> None:
        positive = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                    "num_attention_heads", "num_key_value_heads", "head_dim",
                    "max_position_embeddings")
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, int) or value <= 0:
                raise ModelLoadError(f"model config: {name} must be a positive integer, got {value!r}")
        if self.num_attention_heads % self.num_key_value_heads:
            raise ModelLoadError(
                f"model config: {self.num_attention_heads} attention heads is not a multiple of "
                f"{self.num_key_value_heads} key/value heads")
        if self.head_dim % 2:
            raise ModelLoadError(f"model config: head_dim must be even for RoPE, got {self.head_dim}")
        if not self.rope_theta > 0 or not self.rms_norm_eps > 0:
            raise ModelLoadError("model config: rope_theta and rms_norm_eps must be positive")

    @property
    def q_size(self) -> int:
        """Width of the query projection: num_attention_heads * head_dim."""
        return self.num_attention_heads * self.head_dim

    @property
    def kv_size(self) -> int:
        """Width of each of the key and value projections: num_key_value_heads * head_dim."""
        return self.num_key_value_heads * self.head_dim
