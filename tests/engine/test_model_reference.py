"""Our Llama over the paged KV cache vs transformers on the same GGUF (float32, CPU)."""

from __future__ import annotations

import random

import pytest
import torch

from engine.attention import make_attention_metadata, positions_for

pytestmark = pytest.mark.slow

BLOCK_SIZE = 16

RAW_PROMPTS = [
    "The capital of France is",
    "def fibonacci(n):\n    if n < 2:\n        return n\n",
    "Once upon a time, in a small village by the sea, there lived",
    "日本の首都は",
]
CHAT_QUESTIONS = [
    "What is the capital of France?",
    "Write a haiku about the ocean.",
    "Explain recursion in one sentence.",
]


class PagedSequences:
    """A tiny stand-in for the engine: a KV pool, shuffled block ids, and one block table per sequence."""

    def __init__(self, loaded_model, num_blocks: int = 64, seed: int = 0) -> None:
        c = loaded_model.config
        self.model = loaded_model.model
        self.kv_caches = [torch.zeros(2, num_blocks, BLOCK_SIZE, c.num_key_value_heads, c.head_dim)
                          for _ in range(c.num_hidden_layers)]
        self.free = list(range(num_blocks))
        random.Random(seed).shuffle(self.free)  # tables point at scattered blocks
        self.tables: list[list[int]] = []
        self.lens: list[int] = []

    def add(self) -> int:
        self.tables.append([])
        self.lens.append(0)
        return len(self.tables) - 1

    def step(self, chunks: dict[int, list[int]]) -> torch.Tensor:
        """Feed new tokens for some sequences (a prefill chunk or one decode token each);
        returns float32 logits of each sequence's last new token, [len(chunks), vocab]."""
        seq_ids = list(chunks)
        for s in seq_ids:
            self.lens[s] += len(chunks[s])
            while len(self.tables[s]) * BLOCK_SIZE < self.lens[s]:
                self.tables[s].append(self.free.pop())
        seq_lens = [self.lens[s] for s in seq_ids]
        query_lens = [len(chunks[s]) for s in seq_ids]
        meta = make_attention_metadata(seq_lens, query_lens, [self.tables[s] for s in seq_ids], BLOCK_SIZE)
        input_ids = torch.tensor([t for s in seq_ids for t in chunks[s]], dtype=torch.int64)
        hidden = self.model(input_ids, positions_for(seq_lens, query_lens), self.kv_caches, meta)
        last = torch.tensor(meta.query_start_loc_host[1:]) - 1
        return self.model.compute_logits(hidden[last])


def greedy(loaded_model, prompt_ids: list[int], max_new_tokens: int) -> list[int]:
    """Prefill, then one-token decodes, argmax each time (no stopping)."""
    seqs = PagedSequences(loaded_model)
    s = seqs.add()
    out = [int(seqs.step({s: prompt_ids})[0].argmax())]
    while len(out) < max_new_tokens:
        out.append(int(seqs.step({s: [out[-1]]})[0].argmax()))
    return out


def chat_prompt_ids(loaded_model, question: str) -> list[int]:
    text = loaded_model.chat_template.render([{"role": "user", "content": question}])
    return loaded_model.tokenizer.encode(text)


def test_last_position_logits_match_transformers(loaded_model, hf_reference) -> None:
    prompts = [loaded_model.tokenizer.encode(p) for p in RAW_PROMPTS]
    prompts += [chat_prompt_ids(loaded_model, q) for q in CHAT_QUESTIONS]
    worst = 0.0
    for ids in prompts:
        ours = _prefill_logits(loaded_model, ids)
        with torch.no_grad():
            ref = hf_reference.model(torch.tensor([ids])).logits[0, -1].float()
        diff = (ours - ref).abs().max().item()
        worst = max(worst, diff)
        assert diff < 1e-3, f"max |logit diff| {diff} for prompt of {len(ids)} tokens"
        assert int(ours.argmax()) == int(ref.argmax())
    print(f"max |logit diff| vs transformers over {len(prompts)} prompts: {worst:.2e}")


def _prefill_logits(loaded_model, ids: list[int]) -> torch.Tensor:
    seqs = PagedSequences(loaded_model)
    return seqs.step({seqs.add(): ids})[0]


@pytest.mark.parametrize("question", CHAT_QUESTIONS[:1])
def test_greedy_32_tokens_identical_to_transformers_generate(loaded_model, hf_reference, question) -> None:
    ids = chat_prompt_ids(loaded_model, question)
    ours = greedy(loaded_model, ids, 32)
    with torch.no_grad():
        generated = hf_reference.model.generate(
            torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.int64),
            do_sample=False, max_new_tokens=32, pad_token_id=loaded_model.tokenizer.eos_token_id)
    ref = generated[0, len(ids):].tolist()
    assert len(ref) == 32 or ref[-1] in loaded_model.tokenizer.stop_token_ids, "transformers stopped early"
    assert ours[:len(ref)] == ref, (loaded_model.tokenizer.decode(ours), loaded_model.tokenizer.decode(ref))


def test_greedy_raw_text_identical_to_transformers_generate(loaded_model, hf_reference) -> None:
    ids = loaded_model.tokenizer.encode(RAW_PROMPTS[1])
    ours = greedy(loaded_model, ids, 32)
    with torch.no_grad():
        generated = hf_reference.model.generate(
            torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.int64),
            do_sample=False, max_new_tokens=32, pad_token_id=loaded_model.tokenizer.eos_token_id)
    ref = generated[0, len(ids):].tolist()
    assert ours[:len(ref)] == ref


def test_chunked_prefill_matches_one_shot_prefill(loaded_model) -> None:
    ids = chat_prompt_ids(loaded_model, CHAT_QUESTIONS[2])
    one_shot = _prefill_logits(loaded_model, ids)
    seqs = PagedSequences(loaded_model, seed=3)
    s = seqs.add()
    for start in range(0, len(ids), 7):  # chunks straddle block boundaries
        logits = seqs.step({s: ids[start:start + 7]})[0]
    torch.testing.assert_close(logits, one_shot, atol=1e-4, rtol=1e-4)


def test_batched_prefill_and_decode_match_single_sequences(loaded_model) -> None:
    """Several sequences in one forward pass (ragged prefills, then a prefill mixed with decodes,
    then decode-only steps) give the same greedy tokens as each sequence alone."""
    prompts = [chat_prompt_ids(loaded_model, q) for q in CHAT_QUESTIONS]
    alone = [greedy(loaded_model, ids, 6) for ids in prompts]
    seqs = PagedSequences(loaded_model, seed=7)
    a, b, c = seqs.add(), seqs.add(), seqs.add()
    first = seqs.step({a: prompts[0], b: prompts[1]}).argmax(-1).tolist()
    out = {a: [first[0]], b: [first[1]], c: []}
    mixed = seqs.step({a: [out[a][-1]], c: prompts[2], b: [out[b][-1]]}).argmax(-1).tolist()
    out[a].append(mixed[0]); out[c].append(mixed[1]); out[b].append(mixed[2])
    while len(out[c]) < 6:
        live = [s for s in (a, b, c) if len(out[s]) < 6]
        nxt = seqs.step({s: [out[s][-1]] for s in live}).argmax(-1).tolist()
        for s, t in zip(live, nxt):
            out[s].append(t)
    assert [out[a], out[b], out[c]] == alone
