"""EngineTextGenerator over the real model: the TextGenerator contract end to end."""

from __future__ import annotations

import asyncio
import time

import pytest

from backend.engine_adapter import EngineTextGenerator, create_generator, to_sampling_params
from backend.generator import (ChatMessage, GenerationDone, GenerationParams, GeneratorUnavailable,
                               InvalidGenerationParams, PromptTooLong, TextDelta, TextGenerator)
from engine import AsyncLLMEngine, EngineConfig, LLMEngine, load_model

pytestmark = pytest.mark.slow
NUM_BLOCKS = 64
QUESTION = [ChatMessage("user", "What is the capital of France?")]
GREEDY = GenerationParams(max_tokens=16, temperature=0.0)


@pytest.fixture(scope="module")
def loaded():
    return load_model()


@pytest.fixture(scope="module")
def generator(loaded):
    gen = EngineTextGenerator(AsyncLLMEngine(LLMEngine(loaded, EngineConfig(num_kv_blocks=NUM_BLOCKS, max_model_len=NUM_BLOCKS * 16))))
    gen.start()
    yield gen
    gen.shutdown()


def reference_text(loaded, messages, params: GenerationParams) -> str:
    engine = LLMEngine(loaded, EngineConfig(num_kv_blocks=NUM_BLOCKS, max_model_len=NUM_BLOCKS * 16))
    prompt = loaded.chat_template.render([{"role": m.role, "content": m.content} for m in messages])
    return engine.generate(prompt, to_sampling_params(params))[0].text


async def collect(stream):
    return [event async for event in stream]


async def wait_idle(gen: EngineTextGenerator, timeout: float = 20.0) -> None:
    engine = gen._engine.engine
    deadline = time.monotonic() + timeout
    while engine.has_unfinished_requests():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    assert engine.num_free_blocks() == NUM_BLOCKS


def test_is_a_text_generator(generator, loaded):
    assert isinstance(generator, TextGenerator)
    assert generator.model_name == "SmolLM2-135M-Instruct"
    assert generator.context_length == min(loaded.config.max_position_embeddings, NUM_BLOCKS * 16)


def test_count_prompt_tokens_matches_the_template_and_tokenizer(generator, loaded):
    messages = [ChatMessage("system", "Be brief."), ChatMessage("user", "Hi"),
                ChatMessage("assistant", "Hello!"), ChatMessage("user", "Größe 你好 🚀?")]
    text = loaded.chat_template.render([{"role": m.role, "content": m.content} for m in messages])
    assert text.endswith("<|im_start|>assistant\n")
    assert generator.count_prompt_tokens(messages) == len(loaded.tokenizer.encode(text))


async def test_stream_yields_deltas_then_one_done(generator, loaded):
    events = await collect(generator.stream("r1", QUESTION, GREEDY))
    *deltas, done = events
    assert all(isinstance(e, TextDelta) and e.text for e in deltas)
    assert isinstance(done, GenerationDone)
    text = "".join(e.text for e in deltas)
    assert text == reference_text(loaded, QUESTION, GREEDY)
    assert "Paris" in text
    assert done.finish_reason in ("stop", "length") and done.error is None
    assert done.prompt_tokens == generator.count_prompt_tokens(QUESTION)
    assert 1 <= done.completion_tokens <= 16
    assert done.queue_ms >= 0 and done.ttft_ms >= done.queue_ms
    await wait_idle(generator)


async def test_stop_string_is_excluded(generator, loaded):
    params = GenerationParams(max_tokens=16, temperature=0.0, stop=("Paris",))
    events = await collect(generator.stream("r2", QUESTION, params))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert events[-1].finish_reason == "stop"
    assert text == reference_text(loaded, QUESTION, GREEDY).split("Paris")[0]


@pytest.mark.parametrize("field, value", [("temperature", -1.0), ("top_p", 0.0), ("top_k", 0),
                                          ("max_tokens", 0), ("stop", ("",))])
def test_invalid_params_raise_synchronously(generator, field, value):
    async def call():
        with pytest.raises(InvalidGenerationParams, match=field):
            generator.stream("bad", QUESTION, GenerationParams(**{field: value}))

    asyncio.run(call())
    assert not generator._engine.engine.has_unfinished_requests()


async def test_prompt_too_long(generator):
    huge = [ChatMessage("user", "word " * (NUM_BLOCKS * 16))]
    with pytest.raises(PromptTooLong):
        generator.stream("long", huge, GREEDY)


async def test_closing_the_stream_aborts_and_frees_blocks(generator):
    stream = generator.stream("close", QUESTION, GenerationParams(max_tokens=200, temperature=0.0))
    first = await stream.__anext__()
    assert isinstance(first, (TextDelta, GenerationDone))
    await stream.aclose()
    await wait_idle(generator)


async def test_abort_ends_the_stream_with_abort(generator):
    stream = generator.stream("stopme", [ChatMessage("user", "Tell me a long story.")],
                              GenerationParams(max_tokens=200, temperature=0.0))
    events = []
    async for event in stream:
        events.append(event)
        if len(events) == 2:
            await generator.abort("stopme")
    assert isinstance(events[-1], GenerationDone) and events[-1].finish_reason == "abort"
    assert events[-1].completion_tokens < 200
    await generator.abort("unknown-id")  # ignored
    await wait_idle(generator)


async def test_create_generator_loads_starts_and_shuts_down():
    seen = []
    gen = create_generator(None, progress=lambda message, fraction: seen.append(fraction),
                           num_kv_blocks=NUM_BLOCKS, max_model_len=NUM_BLOCKS * 16)
    assert seen and seen[-1] == 1.0
    with pytest.raises(GeneratorUnavailable):
        gen.stream("early", QUESTION, GREEDY)
    gen.start()
    try:
        events = await collect(gen.stream("ok", QUESTION, GREEDY))
        assert isinstance(events[-1], GenerationDone) and events[-1].finish_reason in ("stop", "length")
    finally:
        gen.shutdown()
    with pytest.raises(GeneratorUnavailable):
        gen.stream("late", QUESTION, GREEDY)


def test_create_generator_reports_a_bad_model_path(tmp_path):
    with pytest.raises(GeneratorUnavailable, match="cannot load"):
        create_generator(str(tmp_path / "missing.gguf"))


async def test_cache_salt_reaches_the_engine(generator):
    engine = generator._engine.engine
    params = GenerationParams(max_tokens=2, temperature=0.0, cache_salt="salt-a")
    before = engine.stats().prefix_cache_hits
    await collect(generator.stream("salt-1", QUESTION, params))
    await collect(generator.stream("salt-2", QUESTION, GenerationParams(max_tokens=2, temperature=0.0,
                                                                        cache_salt="salt-b")))
    assert engine.stats().prefix_cache_hits == before  # different salts: no sharing
    await collect(generator.stream("salt-3", QUESTION, params))
    assert engine.stats().prefix_cache_hits > before
    await wait_idle(generator)


async def test_multi_turn_chat_hits_the_prefix_cache_on_turn_two(loaded, session_factory, fast_hasher):
    from backend.auth import AuthService
    from backend.chat import ChatService, Done
    from backend.settings import Settings

    gen = EngineTextGenerator(AsyncLLMEngine(LLMEngine(
        loaded, EngineConfig(num_kv_blocks=NUM_BLOCKS, max_model_len=NUM_BLOCKS * 16))))
    gen.start()
    try:
        user = AuthService(session_factory, 3600, fast_hasher).sign_up("carol", "password three")
        chat = ChatService(session_factory, gen, Settings(max_tokens=12, temperature=0.0),
                           flush_interval_s=0.0)
        stats = gen._engine.stats
        turn1 = [e async for e in chat.send(user.id, "m-1", None, "What is the capital of France?")]
        assert isinstance(turn1[-1], Done) and turn1[-1].status == "complete"
        hits_after_turn1 = stats().prefix_cache_hits
        turn2 = [e async for e in chat.send(user.id, "m-2", turn1[0].conversation_id, "And of Spain?")]
        assert isinstance(turn2[-1], Done) and turn2[-1].status == "complete"
        prompt2 = turn2[-1].usage["prompt_tokens"]
        turn2_hits = stats().prefix_cache_hits - hits_after_turn1
        # Turn 2 resends the system prompt and turn 1: all their full blocks come from the cache.
        assert turn2_hits >= turn1[-1].usage["prompt_tokens"] // 16 * 16 - 16 and turn2_hits > 0
        assert turn2_hits < prompt2
    finally:
        gen.shutdown()
