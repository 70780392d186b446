"""Our tokenizer (built from the GGUF metadata) vs transformers' tokenizer on the same GGUF."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
