"""Engine settings: device, KV-cache pool size and batching limits."""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import EngineConfigError

_DTYPES = ("float32", "bfloat16", "float16")


@dataclass(frozen=True)
class EngineConfig:
    """How to build and run one engine.

    model: a .gguf file or Hugging Face directory (None: the packaged SmolLM2 GGUF).
    device: torch device string. dtype: "float32" | "bfloat16" | "float16" (None: the loader's
        default, float32 on CPU and bfloat16 on CUDA).
    block_size: tokens per KV-cache block.
    num_kv_blocks: blocks in the KV pool; None sizes it from kv_cache_memory_gib (GiB, 2**30 bytes).
    max_num_seqs: most sequences in one step's batch.
    max_num_batched_tokens: per-step token budget (decode tokens + prefill chunk tokens).
    max_model_len: window for prompt + output in tokens; None means the model's context length.
        The engine further caps it at what the KV pool can hold for one sequence.

    Raises EngineConfigError (a ValueError) for out-of-range values.
    """

    model: str | None = None
    device: str = "cpu"
    dtype: str | None = None
    block_size: int = 16
    num_kv_blocks: int | None = None
    kv_cache_memory_gib: float = 1.0
    max_num_seqs: int = 32
    max_num_batched_tokens: int = 2048
    max_model_len: int | None = None

    def __post_init__(self) -> None:
        for name in ("block_size", "max_num_seqs", "max_num_batched_tokens"):
            _positive_int(name, getattr(self, name))
        for name in ("num_kv_blocks", "max_model_len"):
            if getattr(self, name) is not None:
                _positive_int(name, getattr(self, name))
        if not (isinstance(self.kv_cache_memory_gib, (int, float)) and self.kv_cache_memory_gib > 0):
            raise EngineConfigError(
                f"kv_cache_memory_gib must be > 0, got {self.kv_cache_memory_gib!r}")
        if self.dtype is not None and self.dtype not in _DTYPES:
            raise EngineConfigError(f"dtype must be one of {_DTYPES} or None, got {self.dtype!r}")


def _positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EngineConfigError(f"{name} must be a positive integer, got {value!r}")
