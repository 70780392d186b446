"""SamplingParams.validate: every out-of-range field is refused with a message naming it."""

from __future__ import annotations

import math

import pytest

from engine.errors import EngineError, InvalidSamplingParamsError
from engine.sampling_params import MAX_STOP_STRINGS, SamplingParams

VOCAB = 49152


@pytest.mark.parametrize("params", [
    SamplingParams(),
    SamplingParams(temperature=0.0, max_tokens=1),
    SamplingParams(temperature=2.5, top_p=0.01, top_k=1, seed=0),
    SamplingParams(top_k=VOCAB, top_p=1.0, seed=2**63 - 1),
    SamplingParams(stop=["\n\n", "User:"], stop_token_ids=[0, VOCAB - 1], ignore_eos=True),
])
def test_valid_params_pass(params):
    params.validate(VOCAB)


@pytest.mark.parametrize("field, kwargs", [
    ("temperature", {"temperature": -0.1}),
    ("temperature", {"temperature": math.nan}),
    ("temperature", {"temperature": math.inf}),
    ("temperature", {"temperature": "hot"}),
    ("top_p", {"top_p": 0.0}),
    ("top_p", {"top_p": 1.0001}),
    ("top_p", {"top_p": -0.5}),
    ("top_p", {"top_p": math.nan}),
    ("top_k", {"top_k": 0}),
    ("top_k", {"top_k": -3}),
    ("top_k", {"top_k": VOCAB + 1}),
    ("top_k", {"top_k": 2.5}),
    ("max_tokens", {"max_tokens": 0}),
    ("max_tokens", {"max_tokens": -1}),
    ("max_tokens", {"max_tokens": 3.0}),
    ("max_tokens", {"max_tokens": True}),
    ("seed", {"seed": -1}),
    ("seed", {"seed": 2**64}),
    ("stop", {"stop": [""]}),
    ("stop", {"stop": "x"}),
    ("stop", {"stop": [1]}),
    ("stop", {"stop": ["s"] * (MAX_STOP_STRINGS + 1)}),
    ("stop", {"stop": ["x" * 1000]}),
    ("stop_token_ids", {"stop_token_ids": [VOCAB]}),
    ("stop_token_ids", {"stop_token_ids": [-1]}),
    ("ignore_eos", {"ignore_eos": "yes"}),
])
def test_invalid_field_is_named(field, kwargs):
    with pytest.raises(InvalidSamplingParamsError) as info:
        SamplingParams(**kwargs).validate(VOCAB)
    assert str(info.value).startswith(field)
    assert isinstance(info.value, ValueError) and isinstance(info.value, EngineError)


def test_greedy_means_temperature_zero():
    assert SamplingParams(temperature=0).is_greedy
    assert not SamplingParams(temperature=1e-3).is_greedy


# -- the complete sampling parameters (min-p, penalties, min_tokens, logit bias, logprobs, n) --

@pytest.mark.parametrize("params", [
    SamplingParams(temperature=100.0, min_p=1.0, repetition_penalty=100.0, presence_penalty=2.0,
                   frequency_penalty=-2.0),
    SamplingParams(temperature=1e-6, min_p=0.0, repetition_penalty=1e-6, presence_penalty=-2.0,
                   frequency_penalty=2.0),
    SamplingParams(max_tokens=5, min_tokens=5, logprobs=20, n=16, logit_bias={0: -100, VOCAB - 1: 100.0}),
    SamplingParams(logprobs=0, n=1, logit_bias={}),
])
def test_valid_complete_params_pass(params):
    params.validate(VOCAB)


@pytest.mark.parametrize("field, kwargs", [
    ("temperature", {"temperature": 100.5}),
    ("min_p", {"min_p": -0.01}),
    ("min_p", {"min_p": 1.01}),
    ("min_p", {"min_p": math.nan}),
    ("repetition_penalty", {"repetition_penalty": 0.0}),
    ("repetition_penalty", {"repetition_penalty": -1.0}),
    ("repetition_penalty", {"repetition_penalty": 101.0}),
    ("repetition_penalty", {"repetition_penalty": math.inf}),
    ("presence_penalty", {"presence_penalty": 2.01}),
    ("presence_penalty", {"presence_penalty": -2.5}),
    ("presence_penalty", {"presence_penalty": math.nan}),
    ("frequency_penalty", {"frequency_penalty": 3}),
    ("frequency_penalty", {"frequency_penalty": -math.inf}),
    ("min_tokens", {"min_tokens": -1}),
    ("min_tokens", {"min_tokens": 1.5}),
    ("min_tokens", {"max_tokens": 4, "min_tokens": 5}),
    ("logit_bias", {"logit_bias": {VOCAB: 1.0}}),
    ("logit_bias", {"logit_bias": {-1: 1.0}}),
    ("logit_bias", {"logit_bias": {"12": 1.0}}),
    ("logit_bias", {"logit_bias": {5: 100.5}}),
    ("logit_bias", {"logit_bias": {5: -101}}),
    ("logit_bias", {"logit_bias": {5: math.nan}}),
    ("logit_bias", {"logit_bias": [(5, 1.0)]}),
    ("logprobs", {"logprobs": -1}),
    ("logprobs", {"logprobs": 21}),
    ("logprobs", {"logprobs": True}),
    ("n", {"n": 0}),
    ("n", {"n": 17}),
    ("n", {"n": 2.0}),
    ("seed", {"seed": 2**63 - 2, "n": 3}),   # sample i is seeded with seed + i
])
def test_invalid_complete_field_is_named(field, kwargs):
    with pytest.raises(InvalidSamplingParamsError) as info:
        SamplingParams(**kwargs).validate(VOCAB)
    assert str(info.value).startswith(field), str(info.value)
