"""Decode steps under CUDA graphs: one graph per bucketed batch size, replayed over static
input buffers.

A decode step launches a few hundred small kernels (30 layers of norm, projections, RoPE,
KV write, attention, MLP) whose launch cost exceeds their work at small batches; a CUDA graph
replays them in one launch. Shapes inside a graph are fixed, so a batch of n sequences runs
in the graph of the smallest bucket >= n, its inputs copied into the leading rows of static
buffers and the padding rows made inert: slot -1 (the Triton KV write skips it) and
seq_len 0 (the Triton decode kernel writes zeros). The design follows vLLM's CUDAGraphRunner
and gpt-fast's static decode shapes. Used only on CUDA with Triton, for decode-only batches.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch

from engine.attention import AttentionMetadata

logger = logging.getLogger(__name__)


def batch_size_buckets(max_num_seqs: int) -> tuple[int, ...]:
    """Batch sizes to capture for an engine that runs at most max_num_seqs sequences per step:
    1, 2, 4, 8, 16, then every multiple of 16 below max_num_seqs, then max_num_seqs itself, so
    every decode batch the scheduler can form has a graph and pads by less than 16 rows (vLLM
    captures 1, 2, 4 and multiples of 8 up to its max_num_seqs in the same spirit).

    (32 -> 1, 2, 4, 8, 16, 32; 20 -> 1, 2, 4, 8, 16, 20; 3 -> 1, 2, 3.)
    Raises ValueError for max_num_seqs < 1.
    """
    if isinstance(max_num_seqs, bool) or not isinstance(max_num_seqs, int) or max_num_seqs < 1:
        raise ValueError(f"max_num_seqs must be a positive integer, got {max_num_seqs!r}")
    sizes = [b for b in (1, 2, 4, 8) if b < max_num_seqs]
    sizes += range(16, max_num_seqs, 16)
    return (*sizes, max_num_seqs)


BATCH_SIZE_BUCKETS = batch_size_buckets(32)  # the buckets for EngineConfig's default max_num_seqs


def bucket_for(num_seqs: int, buckets: tuple[int, ...] = BATCH_SIZE_BUCKETS) -> int | None:
    """The smallest bucket holding num_seqs sequences; None when num_seqs exceeds them all
    (the step then runs eagerly). Raises ValueError for num_seqs < 1."""
    if num_seqs < 1:
        raise ValueError(f"num_seqs must be >= 1, got {num_seqs}")
    return next((b for b in sorted(buckets) if b >= num_seqs), None)


@dataclass
class DecodeBuffers:
    """Static inputs of the decode graphs, sized for the largest bucket.

    input_ids, positions, slot_mapping, seq_lens: int64 [max_num_seqs];
    block_tables: int32 [max_num_seqs, max_blocks_per_seq]; query_start_loc: int64
    [max_num_seqs + 1], fixed at 0..max_num_seqs (one token per sequence).
    """

    input_ids: torch.Tensor
    positions: torch.Tensor
    slot_mapping: torch.Tensor
    seq_lens: torch.Tensor
    block_tables: torch.Tensor
    query_start_loc: torch.Tensor

    @classmethod
    def allocate(cls, max_num_seqs: int, max_blocks_per_seq: int,
                 device: torch.device | str) -> DecodeBuffers:
        def zeros(*shape: int, dtype: torch.dtype = torch.int64) -> torch.Tensor:
            return torch.zeros(*shape, dtype=dtype, device=device)
        return cls(zeros(max_num_seqs), zeros(max_num_seqs),
                   torch.full((max_num_seqs,), -1, dtype=torch.int64, device=device),
                   zeros(max_num_seqs), zeros(max_num_seqs, max_blocks_per_seq, dtype=torch.int32),
                   torch.arange(max_num_seqs + 1, dtype=torch.int64, device=device))

    def metadata(self, bucket: int, block_size: int) -> AttentionMetadata:
        """AttentionMetadata over the first `bucket` rows (views, so a replay sees new values)."""
        return AttentionMetadata(
            slot_mapping=self.slot_mapping[:bucket], query_start_loc=self.query_start_loc[:bucket + 1],
            seq_lens=self.seq_lens[:bucket], block_tables=self.block_tables[:bucket],
            block_size=block_size, query_start_loc_host=list(range(bucket + 1)),
            seq_lens_host=[0] * bucket,  # unread by the Triton decode path
            is_decode_only=True)

    def fill(self, bucket: int, input_ids: torch.Tensor, positions: torch.Tensor,
             metadata: AttentionMetadata) -> None:
        """Copy a decode batch of n <= bucket sequences into rows 0..n-1 and make rows
        n..bucket-1 inert (token 0, position 0, slot -1, seq_len 0, block table of zeros).

        Raises ValueError when the batch is not decode-only, exceeds the bucket, or has a block
        table wider than the buffers.
        """
        n = metadata.num_seqs
        width = metadata.block_tables.shape[1]
        if not metadata.is_decode_only or n > bucket or bucket > self.input_ids.shape[0]:
            raise ValueError(f"need a decode-only batch of at most {bucket} sequences "
                             f"(buffers hold {self.input_ids.shape[0]}), got {n}")
        if width > self.block_tables.shape[1]:
            raise ValueError(f"block tables of {width} blocks exceed the captured "
                             f"{self.block_tables.shape[1]}")
        self.input_ids[:n].copy_(input_ids, non_blocking=True)
        self.positions[:n].copy_(positions, non_blocking=True)
        self.slot_mapping[:n].copy_(metadata.slot_mapping, non_blocking=True)
        self.seq_lens[:n].copy_(metadata.seq_lens, non_blocking=True)
        self.block_tables[:n, :width].copy_(metadata.block_tables, non_blocking=True)
        self.input_ids[n:bucket].zero_()
        self.positions[n:bucket].zero_()
        self.slot_mapping[n:bucket].fill_(-1)
        self.seq_lens[n:bucket].zero_()
        self.block_tables[n:bucket].zero_()


class CUDAGraphRunner:
    """Captures `model`'s decode forward once per bucket and replays it.

    model(input_ids, positions, kv_caches, metadata) -> hidden [num_tokens, hidden_size], as
    LlamaForCausalLM. kv_caches: the per-layer cache tensors (their storage must not move).
    max_blocks_per_seq: block-table width captured (longest sequence / block_size, rounded up).
    Raises ValueError unless `device` is CUDA.
    """

    def __init__(self, model: torch.nn.Module, kv_caches: list[torch.Tensor], block_size: int,
                 max_blocks_per_seq: int, device: torch.device,
                 buckets: tuple[int, ...] = BATCH_SIZE_BUCKETS) -> None:
        if torch.device(device).type != "cuda":
            raise ValueError(f"CUDA graphs need a CUDA device, got {device}")
        self.model = model
        self.kv_caches = kv_caches
        self.block_size = block_size
        self.buckets = tuple(sorted(buckets))
        self.buffers = DecodeBuffers.allocate(self.buckets[-1], max_blocks_per_seq, device)
        self.capture_bytes = 0  # device memory capture() took, measured by it
        self._graphs: dict[int, torch.cuda.CUDAGraph] = {}
        self._outputs: dict[int, torch.Tensor] = {}

    @torch.inference_mode()
    def capture(self) -> None:
        """Capture every bucket, largest first so the smaller graphs fit in its memory pool
        (as vLLM does). Each is run once eagerly first (Triton compiles, cuBLAS allocates)."""
        free_before, _ = torch.cuda.mem_get_info(self.buffers.input_ids.device)
        pool = None
        # One side stream for every warm-up: cuBLAS keeps a workspace per stream it has run on.
        stream = torch.cuda.Stream()
        for bucket in reversed(self.buckets):
            metadata = self.buffers.metadata(bucket, self.block_size)
            args = (self.buffers.input_ids[:bucket], self.buffers.positions[:bucket],
                    self.kv_caches, metadata)
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                self.model(*args)
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=pool):
                self._outputs[bucket] = self.model(*args)
            pool = graph.pool()
            self._graphs[bucket] = graph
        torch.cuda.synchronize()
        free_after, _ = torch.cuda.mem_get_info(self.buffers.input_ids.device)
        # What capture took from the device (graph pools, workspaces, compiled kernels): the
        # KV pool's sizing reserves room for it (model_runner.step_memory_reserve_bytes).
        self.capture_bytes = max(0, free_before - free_after)
        logger.info("captured decode CUDA graphs for batch sizes %s (%.1f MiB)", self.buckets,
                    self.capture_bytes / 2**20)

    def can_run(self, metadata: AttentionMetadata) -> bool:
        """Whether a captured graph fits this batch: decode-only, at most the largest bucket,
        block tables no wider than captured."""
        return (metadata.is_decode_only and bool(self._graphs)
                and metadata.num_seqs <= self.buckets[-1]
                and metadata.block_tables.shape[1] <= self.buffers.block_tables.shape[1])

    def run(self, input_ids: torch.Tensor, positions: torch.Tensor,
            metadata: AttentionMetadata) -> torch.Tensor:
        """Replay the bucket's graph; returns hidden states [num_seqs, hidden_size], a view of
        the graph's output buffer (valid until the next replay). Raises ValueError as
        DecodeBuffers.fill does, or when nothing has been captured."""
        bucket = bucket_for(metadata.num_seqs, self.buckets)
        if bucket is None or bucket not in self._graphs:
            raise ValueError(f"no captured graph for {metadata.num_seqs} sequences")
        self.buffers.fill(bucket, input_ids, positions, metadata)
        self._graphs[bucket].replay()
        return self._outputs[bucket][:metadata.num_seqs]
