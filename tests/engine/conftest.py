"""Session-scoped fixtures shared by the engine tests.

`loaded_model`: our `load_model()` of the default GGUF (float32, CPU), built once per session.
`hf_reference`: transformers' AutoModelForCausalLM + AutoTokenizer on the same GGUF, float32,
built once per session (about 15 s): the oracle for logits, greedy continuations, token ids
and chat templates. Tests using either should be marked `@pytest.mark.slow`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import pytest
import torch

from engine.loader import LoadedModel, default_model_path, load_model


@dataclass
class HFReference:
    model: Any        # transformers LlamaForCausalLM, float32, eval mode
    tokenizer: Any    # transformers tokenizer built from the GGUF metadata


@pytest.fixture(scope="session")
def gguf_path() -> str:
    return default_model_path()


@pytest.fixture(scope="session")
def loaded_model(gguf_path: str) -> LoadedModel:
    return load_model(gguf_path)


@pytest.fixture(scope="session")
def hf_reference(gguf_path: str) -> HFReference:
    transformers = pytest.importorskip("transformers")
    folder, name = os.path.split(gguf_path)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    return HFReference(model=model.eval(), tokenizer=tokenizer)
