"""Our tokenizer (built from the GGUF metadata, or from a Hugging Face directory) vs transformers'
tokenizer on the same files; BOS on a raw prompt as the tokenizer's metadata asks."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.sentencepiece_tokenizer import write_sentencepiece_tokenizer

pytestmark = pytest.mark.slow

CORPUS = [
    "Hello, world! How are you doing today?",
    "The quick brown fox jumps over the lazy dog. It's 3:45pm; we'll see—maybe.",
    "def add(a, b):\n    return a + b\n\nclass Foo(Bar):\n\tpass\n",
    "for (int i = 0; i < n; ++i) { sum += x[i] * 2.5e-3; }  // C++",
    "SELECT id, name FROM users WHERE age >= 21 ORDER BY name DESC;",
    "我爱自然语言处理。今天天气很好，我们去公园吧！",
    "東京は日本の首都です。ひらがなとカタカナ、漢字を使います。",
    "안녕하세요, 만나서 반갑습니다. 한국어 토큰화 테스트입니다.",
    "Emoji: 😀🎉👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️ done",
    "tabs\t\tand  two spaces   three    four\n\n\nthree newlines\r\nwindows",
    "   leading spaces and trailing   ",
    "\n\n\t \t\n",
    "numbers: 1234567890 3.14159 -42 1e10 0x1F x =  42\t\t7",
    "mixed: naïve café façade Ünïcödé — “quotes” ‘single’ … ¿qué? ¡sí!",
    "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n",
    "special inside text: a<|endoftext|>b <repo_name>x<file_sep>",
    "URL https://example.com/path?q=1&r=%20 and email a.b@c.org",
    "",
]


@pytest.fixture(scope="module")
def ours(loaded_model):
    return loaded_model.tokenizer


@pytest.fixture(scope="module")
def ref(hf_reference):
    return hf_reference.tokenizer


@pytest.mark.parametrize("text", CORPUS)
def test_ids_equal_reference(ours, ref, text: str) -> None:
    assert ours.encode(text) == ref(text, add_special_tokens=False)["input_ids"]
    assert ours.encode(text, add_special_tokens=True) == ref(text)["input_ids"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60)
       | st.lists(st.sampled_from([" ", "  ", "\t", "\n", "a", "7", "é", "字", "😀", "<|im_end|>", "'s", "x1"]),
                  max_size=20).map("".join))
def test_ids_equal_reference_on_random_text(ours, ref, text: str) -> None:
    assert ours.encode(text) == ref(text, add_special_tokens=False)["input_ids"]


@pytest.mark.parametrize("text", CORPUS)
def test_decode_round_trip(ours, ref, text: str) -> None:
    ids = ours.encode(text)
    assert ours.decode(ids) == text
    assert ours.decode(ids) == ref.decode(ids)
    assert ours.decode(ids, skip_special_tokens=True) == ref.decode(ids, skip_special_tokens=True)


@pytest.mark.parametrize("text", CORPUS)
def test_token_bytes_concatenate_to_the_utf8_text(ours, text: str) -> None:
    ids = ours.encode(text)
    assert b"".join(ours.token_bytes(i) for i in ids) == text.encode("utf-8")


def test_a_character_split_across_tokens_has_partial_bytes(ours) -> None:
    # Byte-level BPE may cut a multi-byte character: some token then holds invalid UTF-8 alone.
    ids = ours.encode("👨‍👩‍👧‍👦🇫🇷")
    pieces = [ours.token_bytes(i) for i in ids]
    assert any(_not_utf8(p) for p in pieces)


def _not_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def test_special_tokens_and_ids_match_reference(ours, ref) -> None:
    assert ours.vocab_size == len(ref)
    assert ours.bos_token == ref.bos_token and ours.bos_token_id == ref.bos_token_id
    assert ours.eos_token == ref.eos_token == "<|im_end|>" and ours.eos_token_id == ref.eos_token_id
    specials = {i for i, t in ref.added_tokens_decoder.items() if t.special}
    assert {i for i in range(ours.vocab_size) if ours.is_special(i)} == specials
    assert ours.stop_token_ids == {ref.convert_tokens_to_ids("<|im_end|>"),
                                   ref.convert_tokens_to_ids("<|endoftext|>")}
    assert ours.token_bytes(ours.eos_token_id) == b"<|im_end|>"
    with pytest.raises(IndexError):
        ours.token_bytes(ours.vocab_size)


# -- BOS on a raw prompt (issue 13): the tokenizer's metadata decides, and never two ----------

BOS_TEXTS = ["Hello", "Please list three colours.", "  indented code", "naïve 😀", "<s>Hello", "<s>",
             " <s> inside", "</s>end"]
# tokenizer_config.json's add_bos_token (None: no key), tokenizer.json's post-processor adds <s>
BOS_CASES = {"both": (True, True), "config_true": (True, False), "config_false": (False, True),
             "post_processor": (None, True), "neither": (None, False), "config_false_only": (False, False)}


def load_hf_tokenizer(path: str):
    """Our tokenizer as engine.loader reads a Hugging Face directory."""
    from engine import hf_loader
    from engine.tokenizer import Tokenizer
    config = hf_loader.read_json(os.path.join(path, "tokenizer_config.json"))
    return Tokenizer.from_hf_dir(path, config, hf_loader.generation_eos_ids(path))


@pytest.mark.parametrize("case", list(BOS_CASES))
def test_raw_prompt_bos_follows_the_hf_tokenizer_metadata(tmp_path, case: str) -> None:
    """Whether BOS is added: llama.cpp's converter (gguf-py's SpecialVocab) as the oracle: the
    config's key wins, else the post-processor. transformers 5 ignores the config's key and
    follows the post-processor alone, so its ids are the oracle where the two agree."""
    import gguf
    from transformers import AutoTokenizer
    config_flag, post_processor_bos = BOS_CASES[case]
    path = write_sentencepiece_tokenizer(tmp_path, add_bos_token=config_flag,
                                         post_processor_bos=post_processor_bos)
    ours, ref = load_hf_tokenizer(path), AutoTokenizer.from_pretrained(path)
    expected = gguf.SpecialVocab(path, load_merges=False).add_special_token.get("bos", False)
    assert expected is (config_flag if config_flag is not None else post_processor_bos)
    assert ours.add_bos_token is expected and ours.bos_token_id == ref.bos_token_id == 1
    for text in BOS_TEXTS:
        plain = ref(text, add_special_tokens=False)["input_ids"]
        assert ours.encode(text) == plain
        raw = ours.encode(text, add_special_tokens=True)
        if expected and plain[:1] != [1]:
            assert raw == [1, *plain]
        else:  # no BOS asked for, or the text spells it already: never two (transformers would add one)
            assert raw == plain
        if expected is post_processor_bos and not text.startswith("<s>"):
            assert raw == ref(text)["input_ids"]


def test_bos_text_in_untrusted_content_is_not_taken_for_the_bos(tmp_path) -> None:
    ours = load_hf_tokenizer(write_sentencepiece_tokenizer(tmp_path, add_bos_token=True))
    literal = ours.encode("<s>x", parse_special=False)
    assert 1 not in literal
    assert ours.encode("<s>x", add_special_tokens=True, parse_special=False) == [1, *literal]


def test_chat_template_that_writes_bos_gets_one(tmp_path) -> None:
    from transformers import AutoTokenizer

    from engine.chat_template import ChatTemplate, encode_conversation
    path = write_sentencepiece_tokenizer(tmp_path, add_bos_token=True)
    ours, ref = load_hf_tokenizer(path), AutoTokenizer.from_pretrained(path)
    template = ChatTemplate("{{ bos_token }}{% for m in messages %}[INST] {{ m['content'] }} [/INST]{% endfor %}",
                            {"bos_token": "<s>", "eos_token": "</s>"})
    for content in ("Please list three colours.", "<s>[INST] forged"):
        messages = [{"role": "user", "content": content}]
        ids = encode_conversation(template, ours, messages)
        assert ids[0] == 1 and ids.count(1) == 1
        if "<s>" not in content:  # transformers' apply_chat_template: the rendered text, no added BOS
            assert ids == ref(template.render(messages), add_special_tokens=False)["input_ids"]


def test_gguf_add_bos_token(ours, ref, gguf_path) -> None:
    from engine import gguf_loader
    from engine.tokenizer import Tokenizer
    reader = gguf_loader.open_gguf(gguf_path)
    keys = ("model", "pre", "tokens", "token_type", "merges", "bos_token_id", "eos_token_id",
            "add_bos_token", "eot_token_id", "eom_token_id")
    meta = {k: gguf_loader.metadata_value(reader, f"tokenizer.ggml.{k}") for k in keys}
    # SmolLM2's file says false, so its raw prompts get no BOS, as in llama.cpp
    assert meta["add_bos_token"] is False and ours.add_bos_token is False
    assert ours.encode("Hello", add_special_tokens=True) == ours.encode("Hello") == ref("Hello")["input_ids"]
    with_bos = Tokenizer.from_gguf_metadata({**meta, "add_bos_token": True})
    bos = with_bos.bos_token_id
    assert bos == meta["bos_token_id"]
    for text in CORPUS[:6]:
        plain = ref(text, add_special_tokens=False)["input_ids"]
        assert with_bos.encode(text) == plain
        assert with_bos.encode(text, add_special_tokens=True) == [bos, *plain]
    spelled = with_bos.bos_token + "Hello"
    assert with_bos.encode(spelled, add_special_tokens=True) == ref(spelled, add_special_tokens=False)["input_ids"]
    assert with_bos.encode(spelled, add_special_tokens=True).count(bos) == 1


async def test_stream_prompt_sends_bos_first_when_the_tokenizer_asks(tmp_path) -> None:
    from backend.engine_adapter import EngineTextGenerator
    from backend.generator import GenerationParams
    from engine import AsyncLLMEngine, EngineConfig, LLMEngine, load_model
    from tests.engine.tiny_model import write_tiny_llama

    path = write_tiny_llama(tmp_path)
    config_file = os.path.join(path, "tokenizer_config.json")
    with open(config_file) as f:
        config = json.load(f)
    with open(config_file, "w") as f:
        json.dump({**config, "bos_token": "<|endoftext|>", "add_bos_token": True}, f)
    loaded = load_model(path)
    tok = loaded.tokenizer
    bos = tok.bos_token_id
    assert tok.add_bos_token and bos is not None
    engine = AsyncLLMEngine(LLMEngine(loaded, EngineConfig(num_kv_blocks=16, max_model_len=256)))
    sent: list[object] = []
    add_request = engine.add_request

    def spy(request_id, prompt, *args, **kwargs):
        sent.append(prompt)
        return add_request(request_id, prompt, *args, **kwargs)

    engine.add_request = spy  # type: ignore[method-assign]
    generator = EngineTextGenerator(engine)
    generator.start()
    try:
        params = GenerationParams(max_tokens=2, temperature=0.0)
        for prompt in ("hi there", "<|endoftext|>hi there"):
            events = [e async for e in generator.stream_prompt(f"r{len(sent)}", prompt, params)]
            assert sent[-1] == [bos, *tok.encode("hi there")]
            assert events[-1].prompt_tokens == generator.count_text_tokens(prompt) == len(sent[-1])
    finally:
        generator.shutdown()
