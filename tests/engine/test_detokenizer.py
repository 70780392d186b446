"""Incremental detokenizer against the real SmolLM2 tokenizer's one-shot decode.

Invariants (hypothesis, random token ids including split multi-byte characters and specials):
- joined deltas == final text;
- without stop strings, final text == tokenizer.decode(ids, skip_special_tokens=True), and every
  intermediate joined text is a prefix of it (no broken character was ever emitted);
- with stop strings, generation stops at the first token whose text completes a stop string, and
  the text (every delta included) is the one-shot decode cut just before the first occurrence,
  so no emitted character ever belongs to a stop string.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.detokenizer import IncrementalDetokenizer

pytestmark = pytest.mark.slow
HYPOTHESIS = settings(max_examples=150, deadline=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture,
                                             HealthCheck.too_slow])


@pytest.fixture(scope="module")
def tokenizer(loaded_model):
    return loaded_model.tokenizer


@pytest.fixture(scope="module")
def pools(tokenizer):
    """Token ids grouped by kind, so random sequences often split characters."""
    partial, special = [], []
    for i in range(tokenizer.vocab_size):
        if tokenizer.is_special(i):
            special.append(i)
            continue
        try:
            tokenizer.token_bytes(i).decode("utf-8")
        except UnicodeDecodeError:
            partial.append(i)
    assert len(partial) > 100 and special
    return partial, special


def token_ids(pools):
    partial, special = pools
    any_id = st.integers(min_value=0, max_value=49151)
    return st.lists(st.one_of(any_id, any_id, st.sampled_from(partial), st.sampled_from(partial),
                              st.sampled_from(special)), min_size=1, max_size=40)


def run(detok: IncrementalDetokenizer, ids: list[int]) -> tuple[list[str], list[str], int]:
    """Feed ids until stopped; returns (deltas, joined text after each event, ids consumed)."""
    deltas, joined = [], []
    used = 0
    for token in ids:
        deltas.append(detok.add_token(token))
        joined.append("".join(deltas))
        used += 1
        if detok.stopped:
            break
    deltas.append(detok.finish())
    joined.append("".join(deltas))
    return deltas, joined, used


def test_property_no_stop_strings(tokenizer, pools):
    @HYPOTHESIS
    @given(ids=token_ids(pools))
    def check(ids):
        detok = IncrementalDetokenizer(tokenizer)
        deltas, joined, _ = run(detok, ids)
        full = tokenizer.decode(ids, skip_special_tokens=True)
        assert "".join(deltas) == detok.text == full
        for text in joined:
            assert full.startswith(text)
        assert not detok.stopped

    check()


def test_property_stop_strings(tokenizer, pools):
    @HYPOTHESIS
    @given(ids=token_ids(pools), data=st.data())
    def check(ids, data):
        full = tokenizer.decode(ids, skip_special_tokens=True)
        stops = []
        for _ in range(data.draw(st.integers(1, 3))):
            if full and data.draw(st.booleans()):
                start = data.draw(st.integers(0, len(full) - 1))
                end = data.draw(st.integers(start + 1, min(len(full), start + 6)))
                piece = full[start:end]
            else:
                piece = data.draw(st.sampled_from(["e", " the", "\n", "ing", "。", "🙂"]))
            if "\ufffd" not in piece:
                stops.append(piece)
        if not stops:
            return
        detok = IncrementalDetokenizer(tokenizer, stops)
        deltas, joined, used = run(detok, ids)
        text = "".join(deltas)
        assert text == detok.text
        for partial in joined:
            assert text.startswith(partial)
        consumed = tokenizer.decode(ids[:used], skip_special_tokens=True)
        hits = [i for s in stops if (i := consumed.find(s)) >= 0]
        if detok.stopped:
            # cut exactly before the first stop string, at the first token that completed one
            assert hits and text == consumed[:min(hits)]
            assert not any(s in tokenizer.decode(ids[:used - 1], skip_special_tokens=True)
                           for s in stops)
        else:
            assert used == len(ids) and text == full and not hits

    check()


def test_split_characters_are_held_until_complete(tokenizer):
    text = "Größe 你好 🙂🚀 한국어 done"
    ids = tokenizer.encode(text)
    detok = IncrementalDetokenizer(tokenizer)
    deltas = [detok.add_token(t) for t in ids] + [detok.finish()]
    assert "".join(deltas) == text
    assert not any("\ufffd" in d for d in deltas)
    assert "" in deltas[:-1]  # some token ended mid-character, so its delta was held


def test_ending_mid_character_flushes_a_replacement_character(tokenizer):
    ids = tokenizer.encode("ok 🚀")  # the rocket is split over three byte-level tokens
    cut = next(n for n in range(1, len(ids))
               if tokenizer.decode(ids[:n]).endswith("\ufffd"))
    detok = IncrementalDetokenizer(tokenizer)
    before = "".join(detok.add_token(t) for t in ids[:cut])
    assert "\ufffd" not in before
    last = detok.finish()
    assert last.endswith("\ufffd")
    assert before + last == detok.text == tokenizer.decode(ids[:cut], skip_special_tokens=True)


def test_special_tokens_add_no_text(tokenizer):
    ids = tokenizer.encode("<|im_start|>assistant\nHi<|im_end|>")
    detok = IncrementalDetokenizer(tokenizer)
    for t in ids:
        detok.add_token(t)
    detok.finish()
    assert detok.text == "assistant\nHi"


def test_stop_string_across_tokens_is_never_emitted(tokenizer):
    ids = tokenizer.encode("The answer is 42. END of story")
    detok = IncrementalDetokenizer(tokenizer, ["END"])
    deltas, joined, used = run(detok, ids)
    assert detok.stopped and detok.text == "The answer is 42. "
    assert used < len(ids)
    assert all("E" not in d for d in deltas)
