"""Engine settings: device, KV-cache pool size and batching limits."""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import EngineConfigError

_DTYPES = ("float32", "bfloat16", "float16")
QUANTIZATIONS = ("auto", "none", "int8")


@dataclass(frozen=True)
class EngineConfig:
    """How to build and run one engine.

    model: a .gguf file or Hugging Face directory (None: the packaged SmolLM2 GGUF).
    device: torch device string.
    quantization: "auto" (default): on CPU a GGUF model runs the fast path with its quantized
        blocks kept and int8 kernels (engine.models.llama_quantized), falling back to float32
        with one warning when the kernel library cannot be built; Hugging Face directories and
        CUDA run the float path. "none": the float path (the reference). "int8": the CPU fast
        path with float matrices quantized to int8 at load (CPU only).
    dtype: "float32" | "bfloat16" | "float16" (None: the loader's
        default, float32 on CPU and bfloat16 on CUDA).
    block_size: tokens per KV-cache block.
    num_kv_blocks: blocks in the KV pool; None sizes it after the model is loaded, from
        kv_cache_memory_fraction when set, else from kv_cache_memory_gib.
    kv_cache_memory_gib: KV pool budget in GiB (2**30 bytes).
    kv_cache_memory_fraction: in (0, 1]: the pool takes this fraction of the device's free
        memory after loading (torch.cuda.mem_get_info; CUDA devices only), less what graph
        capture and the largest step need (model_runner.step_memory_reserve_bytes).
    max_num_seqs: most sequences in one step's batch; on CUDA, decode CUDA graphs are captured
        for batch sizes up to it (cuda_graph_runner.batch_size_buckets).
    max_num_batched_tokens: per-step token budget (decode tokens + prefill chunk tokens).
    long_prefill_token_threshold: most prompt tokens one sequence prefills in one step (the
        chunk size of chunked prefill); None: only max_num_batched_tokens limits it.
    max_prefill_tokens_during_decode: most prompt tokens (all sequences together) in a step
        that also runs decodes; None: no cap beyond the others. Bounds decoders' inter-token
        latency while a long prompt prefills, without slowing a prefill that runs alone.
    max_model_len: window for prompt + max_tokens, in tokens; None means the model's context
        length. The engine refuses to start (EngineConfigError) when it exceeds the context
        length or what the KV pool holds for one sequence.
    enable_prefix_caching: reuse the KV of full blocks shared with earlier requests (same
        tokens, same cache_salt).
    kv_host_cache_gib: size of the host-memory tier under the prefix cache, in GiB (2**30
        bytes; engine.kv_host_tier): cached blocks evicted from the KV pool are copied there
        and copied back on a prefix hit instead of being recomputed. 0 (default): disabled;
        unused when enable_prefix_caching is off.
    num_kv_host_blocks: the tier's size in blocks instead (0: disabled); None: from
        kv_host_cache_gib.
    queue_timeout_s: a request not scheduled within this many seconds of arrival ends with
        finish_reason "error" (error starting "queue_timeout:"); None: no limit.

    Raises EngineConfigError (a ValueError) for out-of-range values.
    """

    model: str | None = None
    device: str = "cpu"
    quantization: str = "auto"
    dtype: str | None = None
    block_size: int = 16
    num_kv_blocks: int | None = None
    kv_cache_memory_gib: float = 1.0
    max_num_seqs: int = 32
    max_num_batched_tokens: int = 2048
    max_model_len: int | None = None
    kv_cache_memory_fraction: float | None = None
    long_prefill_token_threshold: int | None = None
    max_prefill_tokens_during_decode: int | None = None
    enable_prefix_caching: bool = True
    queue_timeout_s: float | None = None
    kv_host_cache_gib: float = 0.0
    num_kv_host_blocks: int | None = None

    def __post_init__(self) -> None:
        for name in ("block_size", "max_num_seqs", "max_num_batched_tokens"):
            _positive_int(name, getattr(self, name))
        for name in ("num_kv_blocks", "max_model_len"):
            if getattr(self, name) is not None:
                _positive_int(name, getattr(self, name))
        if not (isinstance(self.kv_cache_memory_gib, (int, float)) and self.kv_cache_memory_gib > 0):
            raise EngineConfigError(
                f"kv_cache_memory_gib must be > 0, got {self.kv_cache_memory_gib!r}")
        for name in ("long_prefill_token_threshold", "max_prefill_tokens_during_decode"):
            if getattr(self, name) is not None:
                _positive_int(name, getattr(self, name))
        if not (_is_number(self.kv_host_cache_gib) and 0 <= self.kv_host_cache_gib < float("inf")):
            raise EngineConfigError(f"kv_host_cache_gib must be >= 0, got {self.kv_host_cache_gib!r}")
        host_blocks = self.num_kv_host_blocks
        if host_blocks is not None and (isinstance(host_blocks, bool) or not isinstance(host_blocks, int)
                                        or host_blocks < 0):
            raise EngineConfigError(f"num_kv_host_blocks must be an int >= 0 or None, got {host_blocks!r}")
        fraction = self.kv_cache_memory_fraction
        if fraction is not None and not (_is_number(fraction) and 0 < fraction <= 1):
            raise EngineConfigError(f"kv_cache_memory_fraction must be in (0, 1], got {fraction!r}")
        timeout = self.queue_timeout_s
        if timeout is not None and not (_is_number(timeout) and timeout > 0):
            raise EngineConfigError(f"queue_timeout_s must be > 0 or None, got {timeout!r}")
        if not isinstance(self.enable_prefix_caching, bool):
            raise EngineConfigError(
                f"enable_prefix_caching must be a bool, got {self.enable_prefix_caching!r}")
        if self.quantization not in QUANTIZATIONS:
            raise EngineConfigError(f"quantization must be one of {QUANTIZATIONS}, got {self.quantization!r}")
        if self.quantization == "int8" and (self.device != "cpu" or self.dtype not in (None, "float32")):
            raise EngineConfigError("quantization 'int8' needs device 'cpu' and dtype float32")
        if self.dtype is not None and self.dtype not in _DTYPES:
            raise EngineConfigError(f"dtype must be one of {_DTYPES} or None, got {self.dtype!r}")


def _positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EngineConfigError(f"{name} must be a positive integer, got {value!r}")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
