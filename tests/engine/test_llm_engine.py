"""LLMEngine on the real model: batching invariance, aborts and the KV pool, the window,
stop conditions, preemption, failure isolation, and greedy parity with transformers."""

from __future__ import annotations

import pytest
import torch

from engine.config import EngineConfig
from engine.errors import (DuplicateRequestError, InvalidPromptError, InvalidSamplingParamsError,
                           PromptTooLongError)
from engine.llm_engine import LLMEngine
from engine.sampling_params import SamplingParams

pytestmark = pytest.mark.slow

QUESTIONS = ["Tell me a joke.", "What is 2+2?", "Write a haiku about the sea.", "Who wrote Hamlet?",
             "Explain gravity in one sentence.", "Name three colors.", "What is Python?",
             "Say hello in French."]
GREEDY = SamplingParams(max_tokens=10, temperature=0)


def chat(loaded_model, question: str) -> str:
    return loaded_model.chat_template.render([{"role": "user", "content": question}])


def make_engine(loaded_model, **kwargs) -> LLMEngine:
    kwargs.setdefault("num_kv_blocks", 64)
    # The pool must hold one max_model_len sequence, or the engine refuses to start.
    kwargs.setdefault("max_model_len", kwargs["num_kv_blocks"] * kwargs.get("block_size", 16))
    return LLMEngine(loaded_model, EngineConfig(**kwargs))


def run_until_finished(engine: LLMEngine, request_id: str, max_steps: int = 500):
    for _ in range(max_steps):
        for out in engine.step():
            if out.request_id == request_id and out.finished:
                return out
    raise AssertionError(f"{request_id} did not finish")


@pytest.fixture(scope="module")
def engine(loaded_model) -> LLMEngine:
    return make_engine(loaded_model, num_kv_blocks=128)


def test_greedy_tokens_are_the_same_alone_and_batched(engine_model):
    # On both paths (float32 and the CPU fast path): batch invariance of every kernel.
    prompts = [chat(engine_model, q) for q in QUESTIONS]
    engine = make_engine(engine_model, num_kv_blocks=128)
    alone = [engine.generate(p, GREEDY)[0].new_token_ids for p in prompts]
    # A small token budget makes prompts prefill in chunks while others decode (mixed steps).
    batched_engine = make_engine(engine_model, num_kv_blocks=128, max_num_batched_tokens=48)
    batched = [o.new_token_ids for o in batched_engine.generate(prompts, GREEDY)]
    assert len({tuple(t) for t in alone}) == len(prompts)  # the prompts really differ
    assert batched == alone
    assert batched_engine.num_free_blocks() == 128


def test_greedy_continuation_matches_transformers(loaded_model, hf_reference, engine):
    prompts = [chat(loaded_model, "Write a short story about a robot who learns to paint."),
               "The history of the Roman Empire begins"]
    outs = engine.generate(prompts, SamplingParams(max_tokens=32, temperature=0))
    eos = loaded_model.tokenizer.stop_token_ids
    for prompt, out in zip(prompts, outs):
        ids = loaded_model.tokenizer.encode(prompt)
        assert ids == hf_reference.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            ref = hf_reference.model.generate(torch.tensor([ids]), max_new_tokens=32, do_sample=False,
                                              attention_mask=torch.ones(1, len(ids), dtype=torch.long))
        expected = ref[0, len(ids):].tolist()
        cut = next((i + 1 for i, t in enumerate(expected) if t in eos), len(expected))
        assert out.new_token_ids == expected[:cut]
        assert out.finish_reason == ("stop" if cut < 32 or expected[-1] in eos else "length")


def test_seeded_sampling_is_reproducible_across_batch_compositions(loaded_model, engine):
    prompt = chat(loaded_model, "Invent a name for a cat.")
    params = SamplingParams(max_tokens=12, temperature=0.9, top_p=0.95, top_k=50, seed=1234,
                            ignore_eos=True)
    alone = engine.generate(prompt, params)[0].new_token_ids
    others = [chat(loaded_model, q) for q in QUESTIONS[:3]]
    mixed = engine.generate(
        [others[0], prompt, others[1], others[2]],
        [SamplingParams(max_tokens=8, temperature=1.0), params,
         SamplingParams(max_tokens=12, temperature=0.7, seed=99), GREEDY])
    assert mixed[1].new_token_ids == alone
    reseeded = engine.generate(prompt, SamplingParams(**{**params.__dict__, "seed": 4321}))
    assert reseeded[0].new_token_ids != alone


def test_abort_while_queued_returns_the_blocks(engine_model):
    engine = make_engine(engine_model, max_num_seqs=1)
    engine.add_request("a", chat(engine_model, QUESTIONS[0]), SamplingParams(max_tokens=30, temperature=0))
    engine.step()
    running = engine.scheduler.running[0]
    before = engine.num_free_blocks() + len(running.block_table)
    engine.add_request("b", chat(engine_model, QUESTIONS[1]), GREEDY)
    engine.step()
    assert engine.scheduler.waiting[0].request_id == "b"  # queued behind "a"
    engine.abort_request("b")
    outs = engine.step()
    final = next(o for o in outs if o.request_id == "b")
    assert final.finished and final.finish_reason == "abort" and final.num_output_tokens == 0
    assert final.metrics.queue_ms is None
    assert engine.num_free_blocks() + len(running.block_table) == before
    run_until_finished(engine, "a")
    assert engine.num_free_blocks() == 64


def test_abort_during_prefill_returns_the_blocks(engine_model):
    engine = make_engine(engine_model, max_num_batched_tokens=16)
    before = engine.num_free_blocks()
    long_prompt = chat(engine_model, "Summarize this: " + "the quick brown fox jumps " * 10)
    engine.add_request("p", long_prompt, GREEDY)
    assert engine.step() == []  # one 16-token chunk, nothing sampled yet
    seq = engine.scheduler.running[0]
    assert 0 < seq.num_computed_tokens < seq.num_prompt_tokens
    assert engine.num_free_blocks() < before
    engine.abort_request("p")
    [final] = engine.step()
    assert final.finish_reason == "abort" and final.num_output_tokens == 0 and final.text == ""
    assert engine.num_free_blocks() == before
    assert not engine.has_unfinished_requests()


def test_abort_during_decode_returns_the_blocks(engine_model):
    engine = make_engine(engine_model)
    before = engine.num_free_blocks()
    engine.add_request("d", chat(engine_model, QUESTIONS[4]),
                       SamplingParams(max_tokens=50, temperature=0, ignore_eos=True))
    deltas = []
    for _ in range(4):
        deltas += [o.delta for o in engine.step()]
    assert engine.num_free_blocks() < before
    engine.abort_request("d")
    [final] = engine.step()
    assert final.finish_reason == "abort" and final.num_output_tokens == 4
    assert "".join(deltas) + final.delta == final.text
    assert engine.num_free_blocks() == before


def test_prompt_plus_max_tokens_over_the_window_is_refused_before_taking_blocks(loaded_model):
    engine = make_engine(loaded_model, max_model_len=40)
    tokenizer = loaded_model.tokenizer
    ids = tokenizer.encode("one two three four five six seven eight nine ten " * 4)[:40]
    with pytest.raises(PromptTooLongError, match="40"):
        engine.add_request("long", ids, GREEDY)
    with pytest.raises(PromptTooLongError, match=r"36 tokens; with max_tokens=5 that is 41"):
        engine.add_request("long", ids[:36], SamplingParams(max_tokens=5, temperature=0))
    assert engine.num_free_blocks() == 64 and not engine.has_unfinished_requests()
    [out] = engine.generate(ids[:36], SamplingParams(max_tokens=4, temperature=0, ignore_eos=True))
    assert out.finish_reason == "length" and out.num_output_tokens == 4
    assert out.num_prompt_tokens + out.num_output_tokens == engine.max_model_len == 40


def test_add_request_validates_before_queueing(loaded_model, engine):
    with pytest.raises(InvalidSamplingParamsError, match="temperature"):
        engine.add_request("x", "hi", SamplingParams(temperature=-1))
    with pytest.raises(InvalidPromptError):
        engine.add_request("x", "", GREEDY)
    with pytest.raises(InvalidPromptError):
        engine.add_request("x", [1, 2, 10**6], GREEDY)
    engine.add_request("x", "hi", GREEDY)
    with pytest.raises(DuplicateRequestError):
        engine.add_request("x", "hello", GREEDY)
    run_until_finished(engine, "x")
    assert not engine.has_unfinished_requests()


def test_stop_string_and_stop_token_ids(loaded_model, engine):
    prompt = chat(loaded_model, "Count from 1 to 20, separated by commas.")
    [full] = engine.generate(prompt, SamplingParams(max_tokens=40, temperature=0))
    assert "5" in full.text, full.text
    [cut] = engine.generate(prompt, SamplingParams(max_tokens=40, temperature=0, stop=["5"]))
    assert cut.finish_reason == "stop" and cut.text == full.text[:full.text.index("5")]
    token = full.new_token_ids[3]
    [by_id] = engine.generate(prompt, SamplingParams(max_tokens=40, temperature=0, stop_token_ids=[token]))
    assert by_id.finish_reason == "stop"
    assert by_id.new_token_ids == full.new_token_ids[:full.new_token_ids.index(token) + 1]


def test_eos_stops_unless_ignored(loaded_model, engine):
    prompt = chat(loaded_model, "Reply with just the word yes.")
    [out] = engine.generate(prompt, SamplingParams(max_tokens=30, temperature=0))
    assert out.finish_reason == "stop" and out.new_token_ids[-1] in loaded_model.tokenizer.stop_token_ids
    assert "<|im_end|>" not in out.text
    [more] = engine.generate(prompt, SamplingParams(max_tokens=out.num_output_tokens + 3,
                                                    temperature=0, ignore_eos=True))
    assert more.finish_reason == "length" and more.new_token_ids[:out.num_output_tokens] == out.new_token_ids


def test_preemption_by_recompute_keeps_greedy_outputs(engine_model):
    prompts = ["The capital of France is", "My favourite fruit is", "Water boils at"]
    params = SamplingParams(max_tokens=20, temperature=0, ignore_eos=True)
    roomy = make_engine(engine_model, num_kv_blocks=64, block_size=4)
    expected = [roomy.generate(p, params)[0].new_token_ids for p in prompts]
    tight = make_engine(engine_model, num_kv_blocks=12, block_size=4)  # 48 slots for ~75 tokens
    preempted = []
    original = tight.scheduler.schedule

    def spy():
        out = original()
        preempted.extend(s.request_id for s in out.preempted)
        return out

    tight.scheduler.schedule = spy
    outs = tight.generate(prompts, params)
    assert preempted, "the pool was meant to run out"
    assert [o.new_token_ids for o in outs] == expected
    assert tight.num_free_blocks() == 12


def test_a_failing_step_fails_its_requests_and_the_engine_keeps_serving(loaded_model, engine):
    original = engine.model_runner.execute

    def broken(scheduled):
        raise RuntimeError("simulated device fault")

    engine.model_runner.execute = broken
    try:
        engine.add_request("bad", "Hello", GREEDY)
        [out] = engine.step()
    finally:
        engine.model_runner.execute = original
    assert out.finished and out.finish_reason == "error" and "simulated device fault" in out.error
    assert engine.num_free_blocks() == 128
    [ok] = engine.generate("Hello", GREEDY)
    assert ok.finish_reason in ("stop", "length") and ok.num_output_tokens > 0


def test_final_event_carries_metrics(loaded_model, engine):
    [out] = engine.generate(chat(loaded_model, QUESTIONS[2]),
                            SamplingParams(max_tokens=8, temperature=0, ignore_eos=True))
    m = out.metrics
    assert out.num_prompt_tokens == len(loaded_model.tokenizer.encode(chat(loaded_model, QUESTIONS[2])))
    assert out.num_output_tokens == 8
    assert 0 <= m.queue_ms <= m.ttft_ms
    assert m.arrival_time <= m.first_scheduled_time <= m.first_token_time <= m.finished_time
    assert m.decode_tokens_per_s == pytest.approx(7 / (m.finished_time - m.first_token_time))
