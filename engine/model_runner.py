"""Executes one scheduled step: host-built inputs, one forward pass over the paged KV cache."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from engine.attention import AttentionMetadata, make_attention_metadata
from engine.config import EngineConfig
from engine.cuda_graph_runner import CUDAGraphRunner, batch_size_buckets
from engine.errors import EngineConfigError
from engine.kernels import triton_available
from engine.kv_host_tier import KVHostTier
from engine.model_config import ModelConfig
from engine.scheduler import ScheduledSequence

logger = logging.getLogger(__name__)


def kv_block_bytes(config: ModelConfig, block_size: int, dtype: torch.dtype) -> int:
    """Bytes of one KV block across all layers: layers * 2 (K, V) * block_size * kv_heads * head_dim."""
    elem = torch.empty((), dtype=dtype).element_size()
    return (config.num_hidden_layers * 2 * block_size * config.num_key_value_heads
            * config.head_dim * elem)


# Room for what the KV pool's allocation precedes on CUDA: the decode CUDA graphs' memory pool,
# cuBLAS workspaces (one per stream, capture uses a side stream), Triton's compiled kernels and
# allocator slack. CUDAGraphRunner measures what capture really took (capture_bytes).
CUDA_GRAPH_HEADROOM_BYTES = 512 * 2**20


def step_memory_reserve_bytes(config: EngineConfig, model_config: ModelConfig,
                              dtype: torch.dtype) -> int:
    """Device bytes set aside before the KV pool takes its fraction of free memory: the
    activations of the largest step (max(max_num_batched_tokens, max_num_seqs) tokens, each
    alive tensor of a layer counted twice for allocator slack), the float32 logits of
    max_num_seqs rows with the sampler's copies (about six), and CUDA_GRAPH_HEADROOM_BYTES.
    An estimate, since the pool must exist before the graphs that read it are captured."""
    c = model_config
    elem = torch.empty((), dtype=dtype).element_size()
    num_tokens = max(config.max_num_batched_tokens, config.max_num_seqs)
    # residual, norm output, attention output, MLP output (hidden each); qkv; attention heads;
    # gate/up; silu(gate) * up.
    per_token = (4 * c.hidden_size + c.q_size + 2 * c.kv_size + c.q_size
                 + 3 * c.intermediate_size) * elem * 2
    logits = config.max_num_seqs * c.vocab_size * 4 * 6
    return num_tokens * per_token + logits + CUDA_GRAPH_HEADROOM_BYTES


def kv_cache_budget_bytes(config: EngineConfig, device: torch.device,
                          reserve_bytes: int = 0) -> int:
    """Bytes the KV pool may take: kv_cache_memory_fraction of the device's free memory (CUDA,
    measured now, so after the weights are loaded) less reserve_bytes (what later steps and
    graph capture need: step_memory_reserve_bytes), else kv_cache_memory_gib * 2**30.

    Raises EngineConfigError when a fraction is asked for on a non-CUDA device.
    """
    if config.kv_cache_memory_fraction is not None:
        if device.type != "cuda":
            raise EngineConfigError(
                f"kv_cache_memory_fraction needs a CUDA device, got {device}; "
                "use kv_cache_memory_gib or num_kv_blocks")
        free, _total = torch.cuda.mem_get_info(device)
        return int(max(0, free - reserve_bytes) * config.kv_cache_memory_fraction)
    return int(config.kv_cache_memory_gib * 2**30)


def determine_num_kv_blocks(config: EngineConfig, model_config: ModelConfig, dtype: torch.dtype,
                            device: torch.device) -> int:
    """Blocks in the KV pool: config.num_kv_blocks, else the memory budget // one block's bytes
    (a fraction of free CUDA memory counts after step_memory_reserve_bytes is set aside).

    Raises EngineConfigError when the budget holds not even one block.
    """
    if config.num_kv_blocks is not None:
        return config.num_kv_blocks
    budget = kv_cache_budget_bytes(config, device,
                                   step_memory_reserve_bytes(config, model_config, dtype))
    block_bytes = kv_block_bytes(model_config, config.block_size, dtype)
    if budget < block_bytes:
        raise EngineConfigError(
            f"KV cache budget of {budget} bytes holds no block of {block_bytes} bytes "
            f"({config.block_size} tokens, {dtype}); raise kv_cache_memory_gib")
    return budget // block_bytes


@dataclass
class ModelInput:
    """One step's batch, built on the host once before the forward pass.

    input_ids, positions: int64 [num_tokens]. sample_indices: int64 [num_sampling_seqs], the
    row of each sampling sequence's last token in the hidden states.
    """

    input_ids: torch.Tensor
    positions: torch.Tensor
    metadata: AttentionMetadata
    sample_indices: torch.Tensor


class ModelRunner:
    """Owns the KV-cache pool and runs the model over it.

    The pool is one tensor [num_layers, 2, num_blocks, block_size, num_kv_heads, head_dim],
    allocated once (zeroed, so padded reads are finite); layer i reads kv_caches[i], a view.
    On CUDA with Triton, decode steps of up to max_num_seqs sequences replay CUDA graphs
    captured for batch_size_buckets(max_num_seqs).
    host_tier: the prefix cache's host-memory tier (engine.kv_host_tier); its pending
    offloads and restores are copied at the start of each `execute`, before the forward pass.
    """

    def __init__(self, model: torch.nn.Module, config: ModelConfig, num_blocks: int,
                 block_size: int, device: torch.device | str, dtype: torch.dtype,
                 max_num_seqs: int = 32, host_tier: KVHostTier | None = None) -> None:
        self.model = model
        self.host_tier = host_tier
        self.config = config
        self.block_size = block_size
        self.device = torch.device(device)
        self.kv_cache = torch.zeros(
            config.num_hidden_layers, 2, num_blocks, block_size, config.num_key_value_heads,
            config.head_dim, dtype=dtype, device=self.device)
        self.kv_caches = list(self.kv_cache.unbind(0))
        # Decode under CUDA graphs: CUDA with Triton only (padded graph rows rely on the Triton
        # kernels skipping slot -1 and seq_len 0).
        self.cuda_graphs: CUDAGraphRunner | None = None
        if self.device.type == "cuda" and triton_available():
            max_blocks = min(num_blocks, -(-config.max_position_embeddings // block_size))
            self.cuda_graphs = CUDAGraphRunner(model, self.kv_caches, block_size, max_blocks,
                                               self.device, batch_size_buckets(max_num_seqs))
            self.cuda_graphs.capture()
        nbytes = self.kv_cache.numel() * self.kv_cache.element_size()
        logger.info("KV cache: %d blocks of %d tokens = %d tokens, %d bytes (%.1f MiB, %s, %s)",
                    num_blocks, block_size, num_blocks * block_size, nbytes, nbytes / 2**20,
                    dtype, self.device)
        if host_tier is not None:
            logger.info("host KV tier: %d blocks, %d bytes (%.1f MiB%s)", host_tier.num_blocks,
                        host_tier.nbytes, host_tier.nbytes / 2**20,
                        ", pinned" if host_tier.kv.is_pinned() else "")

    def prepare_inputs(self, scheduled: Sequence[ScheduledSequence]) -> ModelInput:
        """Concatenate every scheduled chunk (a prefill chunk or one decode token) in order."""
        input_ids: list[int] = []
        positions: list[int] = []
        seq_lens: list[int] = []
        query_lens: list[int] = []
        sample_indices: list[int] = []
        for item in scheduled:
            seq = item.seq
            start, end = seq.num_computed_tokens, seq.num_computed_tokens + item.num_new_tokens
            input_ids.extend(seq.token_ids_slice(start, end))
            positions.extend(range(start, end))
            seq_lens.append(end)
            query_lens.append(item.num_new_tokens)
            if item.is_sampling:
                sample_indices.append(len(input_ids) - 1)
        metadata = make_attention_metadata(
            seq_lens, query_lens, [item.seq.block_table for item in scheduled], self.block_size,
            device=self.device)
        return ModelInput(
            input_ids=torch.tensor(input_ids, dtype=torch.int64, device=self.device),
            positions=torch.tensor(positions, dtype=torch.int64, device=self.device),
            metadata=metadata,
            sample_indices=torch.tensor(sample_indices, dtype=torch.int64, device=self.device),
        )

    @torch.inference_mode()
    def execute(self, scheduled: Sequence[ScheduledSequence]) -> torch.Tensor:
        """Run one forward pass; returns float32 logits [num_sampling_seqs, vocab] in the
        order of the sampling sequences within `scheduled`."""
        if self.host_tier is not None:
            self.host_tier.flush(self.kv_cache)   # evicted KV out, restored KV in
        inp = self.prepare_inputs(scheduled)
        if self.cuda_graphs is not None and self.cuda_graphs.can_run(inp.metadata):
            hidden = self.cuda_graphs.run(inp.input_ids, inp.positions, inp.metadata)
        else:
            hidden = self.model(inp.input_ids, inp.positions, self.kv_caches, inp.metadata)
        if inp.sample_indices.numel() == 0:
            return torch.empty(0, self.config.vocab_size, dtype=torch.float32, device=self.device)
        return self.model.compute_logits(hidden[inp.sample_indices])
