"""Stress: a seeded random schedule of arrivals, aborts, stop strings and max_tokens over a
small KV pool with prefix caching on, for thousands of steps, checking the pool's invariants
after every step.

The long run swaps the model for `FakeModelRunner`: it keeps a fake KV cache (the token and
position written in each slot), checks before every chunk that the slots the sequence's block
table points at hold exactly its tokens (a wrong prefix-cache hit or a block reused while still
referenced fails here), and "predicts" a deterministic next token from the tokens read back
through the block table. Everything else (scheduler, block manager, prefix cache, detokenizer,
stop strings, aborts) is the real engine. A short run on the real model follows.
"""

from __future__ import annotations

import hashlib
import random

import pytest
import torch

from engine.config import EngineConfig
from engine.llm_engine import LLMEngine
from engine.sampling_params import SamplingParams

pytestmark = pytest.mark.slow

WORDS = [" red", " green", " blue", " cat", " dog", ".", " sun", " end"]


def word_ids(tokenizer) -> list[int]:
    ids = [tokenizer.encode(w) for w in WORDS]
    assert all(len(i) == 1 for i in ids), ids
    return [i[0] for i in ids]


def fake_next_token(tokens: list[int], vocab: list[int]) -> int:
    """The fake model: a deterministic function of the whole history."""
    digest = hashlib.sha256(repr(tokens).encode()).digest()
    return vocab[digest[0] % len(vocab)]


class FakeModelRunner:
    """Stands in for ModelRunner.execute(scheduled) -> float32 logits [num_sampling, vocab]."""

    def __init__(self, num_blocks: int, block_size: int, vocab_size: int, vocab: list[int]) -> None:
        self.slots: list[tuple[int, int] | None] = [None] * (num_blocks * block_size)
        self.block_size = block_size
        self.vocab_size = vocab_size
        self.vocab = vocab

    def _slot(self, seq, position: int) -> int:
        return seq.block_table[position // self.block_size] * self.block_size + position % self.block_size

    def execute(self, scheduled) -> torch.Tensor:
        rows = []
        for item in scheduled:
            seq = item.seq
            start, end = seq.num_computed_tokens, seq.num_computed_tokens + item.num_new_tokens
            assert item.num_new_tokens >= 1  # the last position is always computed
            tokens = seq.token_ids_slice(0, end)
            assert len(seq.block_table) * self.block_size >= end
            for p in range(start):  # what the cache (or a prefix-cache hit) must hold already
                assert self.slots[self._slot(seq, p)] == (tokens[p], p), (seq.request_id, p)
            for p in range(start, end):
                self.slots[self._slot(seq, p)] = (tokens[p], p)
            if item.is_sampling:
                row = torch.full((self.vocab_size,), -1e4, dtype=torch.float32)
                row[fake_next_token(tokens, self.vocab)] = 0.0
                rows.append(row)
        if not rows:
            return torch.empty(0, self.vocab_size)
        return torch.stack(rows)


def check_pool(engine: LLMEngine) -> None:
    sched, bm = engine.scheduler, engine.block_manager
    bm.check_invariants([s.block_table for s in sched.running])
    assert all(not s.block_table for s in sched.waiting)
    stats = engine.stats()
    assert (stats.num_kv_blocks_used + stats.num_kv_blocks_cached + stats.num_kv_blocks_free
            == stats.num_kv_blocks_total)
    assert stats.num_running == len(sched.running)


def test_thousands_of_random_steps_keep_the_pool_consistent(loaded_model):
    rng = random.Random(2024)
    block_size, num_blocks = 4, 24
    engine = LLMEngine(loaded_model, EngineConfig(
        num_kv_blocks=num_blocks, block_size=block_size, max_model_len=num_blocks * block_size,
        max_num_seqs=6, max_num_batched_tokens=24, long_prefill_token_threshold=12))
    vocab = word_ids(loaded_model.tokenizer)
    engine.model_runner = FakeModelRunner(num_blocks, block_size, loaded_model.config.vocab_size, vocab)
    prefixes = [[rng.choice(vocab) for _ in range(rng.randint(0, 40))] for _ in range(4)]
    prompts: dict[str, list[int]] = {}
    finals = {}
    live: set[str] = set()
    aborted = 0
    for step in range(3000):
        if step < 2700 and rng.random() < 0.2:
            rid = f"r{step}"
            prompt = rng.choice(prefixes) + [rng.choice(vocab) for _ in range(rng.randint(1, 20))]
            max_tokens = rng.randint(1, min(40, engine.max_model_len - len(prompt)))
            stop = rng.sample([" cat dog", " end", "sun.", " blue"], k=rng.randint(0, 2))
            n = rng.choice([1, 1, 1, 2, 3])   # n > 1: samples share the prompt's blocks
            engine.add_request(rid, prompt, SamplingParams(max_tokens=max_tokens, temperature=0, stop=stop,
                                                           n=n),
                               cache_salt=rng.choice([None, "alice", "bob"]))
            prompts[rid] = prompt
            live.add(rid)
        if live and rng.random() < 0.03:
            engine.abort_request(rng.choice(sorted(live)))
        for out in engine.step():
            if out.finished:
                finals[out.request_id] = out
                live.discard(out.request_id)
                aborted += out.finish_reason == "abort"
        check_pool(engine)
    while engine.has_unfinished_requests():
        for out in engine.step():
            if out.finished:
                finals[out.request_id] = out
        check_pool(engine)

    stats = engine.stats()
    assert set(finals) == set(prompts) and len(prompts) > 400
    assert stats.num_preemptions > 0 and stats.prefix_cache_hits > 0 and aborted > 0
    assert {o.finish_reason for o in finals.values()} == {"stop", "length", "abort"}
    assert engine.num_free_blocks() == num_blocks and stats.num_kv_blocks_used == 0
    assert stats.num_running == stats.num_waiting == 0


def test_every_token_is_what_the_fake_model_gives_for_the_true_history(loaded_model):
    rng = random.Random(7)
    block_size, num_blocks = 4, 16
    engine = LLMEngine(loaded_model, EngineConfig(
        num_kv_blocks=num_blocks, block_size=block_size, max_model_len=num_blocks * block_size,
        max_num_seqs=4, max_num_batched_tokens=16, long_prefill_token_threshold=8))
    vocab = word_ids(loaded_model.tokenizer)
    engine.model_runner = FakeModelRunner(num_blocks, block_size, loaded_model.config.vocab_size, vocab)
    shared = [rng.choice(vocab) for _ in range(20)]
    prompts = [shared + [rng.choice(vocab) for _ in range(rng.randint(1, 12))] for _ in range(40)]
    params = SamplingParams(max_tokens=24, temperature=0, ignore_eos=True)
    outs = engine.generate(prompts, params)
    for prompt, out in zip(prompts, outs):
        history = list(prompt)
        for token in out.new_token_ids:
            assert token == fake_next_token(history, vocab)
            history.append(token)
        assert out.num_output_tokens == 24
    stats = engine.stats()
    assert stats.num_preemptions > 0 and stats.prefix_cache_hits > 0
    assert engine.num_free_blocks() == num_blocks


def test_short_real_model_run_with_aborts_and_a_small_pool(engine_model):
    rng = random.Random(11)
    engine = LLMEngine(engine_model, EngineConfig(num_kv_blocks=20, block_size=8, max_model_len=160,
                                                  max_num_batched_tokens=64,
                                                  long_prefill_token_threshold=32))
    system = "You are a helpful assistant who answers in one short sentence. "
    questions = ["What is rain?", "Why is the sky blue?", "Name a fruit.", "What is a cat?",
                 "Count to five.", "What is ice?"]
    finals = {}
    for step in range(400):
        if step < len(questions) * 3 and step % 3 == 0:
            q = questions[step // 3]
            engine.add_request(f"q{step}", system + q,
                               SamplingParams(max_tokens=rng.randint(4, 24), temperature=0, stop=["."]))
        if step == 7:
            engine.abort_request("q3")
        for out in engine.step():
            if out.finished:
                finals[out.request_id] = out
        check_pool(engine)
        if len(finals) == len(questions):
            break
    assert len(finals) == len(questions)
    assert finals["q3"].finish_reason == "abort"
    assert engine.stats().prefix_cache_hits > 0
    assert engine.num_free_blocks() == 20
