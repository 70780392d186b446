"""`python -m engine` prints only the reply on stdout (subprocess, real model)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from engine.config import EngineConfig
from engine.llm_engine import LLMEngine
from engine.sampling_params import SamplingParams

pytestmark = pytest.mark.slow
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=240)


def test_prints_the_greedy_reply_and_nothing_else(loaded_model):
    question = "What is the capital of France? Answer in one word, then explain."
    result = run_cli("--max-tokens", "24", "--temperature", "0", question)
    assert result.returncode == 0, result.stderr
    engine = LLMEngine(loaded_model, EngineConfig(num_kv_blocks=32, max_model_len=32 * 16))
    prompt = loaded_model.chat_template.render([{"role": "user", "content": question}])
    [expected] = engine.generate(prompt, SamplingParams(max_tokens=24, temperature=0))
    assert expected.text.strip()
    assert result.stdout == expected.text + "\n"
    assert "KV cache" in result.stderr  # logs went to stderr


def test_bad_parameter_exits_2_with_a_message_on_stderr():
    result = run_cli("--temperature", "-1", "hello")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "temperature" in result.stderr
