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
