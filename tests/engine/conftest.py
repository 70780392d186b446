"""Session-scoped fixtures shared by the engine tests.

`loaded_model`: our `load_model()` of the default GGUF on the float32 reference path (CPU), built
once per session; `fast_model`: the CPU fast path (quantized blocks, int8 kernels) on the same
file; `engine_model`: each of the two in turn (module-scoped parameters).
`hf_reference`: transformers' AutoModelForCausalLM + AutoTokenizer on the same GGUF, float32,
built once per session (about 15 s): the oracle for logits, greedy continuations, token ids
and chat templates. Tests using either should be marked `@pytest.mark.slow`.
`gguf_path` is $CRESCENT_GGUF when set (scripts/gpu_check.py points it at a carried copy).
`tiny_model_dir` / `tiny_model`: a 2-layer Llama with SmolLM2's attention shapes and random
weights, written to a temporary directory (tests/engine/tiny_model.py): no model file needed.
`record_figure`: reports a measured figure (a kernel's max error, an agreement rate) to
scripts/gpu_check.py.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import pytest
import torch

from engine.loader import LoadedModel, default_model_path, load_model
from tests.engine.tiny_model import write_tiny_llama


@dataclass
class HFReference:
    model: Any        # transformers LlamaForCausalLM, float32, eval mode
    tokenizer: Any    # transformers tokenizer built from the GGUF metadata


@pytest.fixture(scope="session")
def gguf_path() -> str:
    return os.environ.get("CRESCENT_GGUF") or default_model_path()


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> str:
    return write_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="session")
def tiny_model(tiny_model_dir: str) -> LoadedModel:
    return load_model(tiny_model_dir)


@pytest.fixture
def record_figure(request, record_property):
    """record_figure(name, value, **labels): one measured figure of this test, kept as a junit
    property and, when $CRESCENT_FIGURES names a file, appended to it as one JSON line
    {"test", "figure", "value", **labels} (scripts/gpu_check.py prints and gathers them)."""
    path = os.environ.get("CRESCENT_FIGURES")

    def record(name: str, value: Any, **labels: Any) -> None:
        record_property(name, value)
        if path:
            line = {"test": request.node.nodeid, "figure": name, "value": value, **labels}
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")
    return record


@pytest.fixture(scope="session")
def loaded_model(gguf_path: str) -> LoadedModel:
    """The float32 reference path (the oracle tests compare it with transformers)."""
    return load_model(gguf_path, quantization="none")


@pytest.fixture(scope="session")
def fast_model(gguf_path: str) -> LoadedModel:
    """The CPU fast path on the same file: quantized blocks kept, int8 kernels."""
    loaded = load_model(gguf_path, quantization="auto")
    assert loaded.quantization == "gguf", "the CPU kernel library did not load"
    return loaded


@pytest.fixture(scope="module", params=["float32", "fast"])
def engine_model(request) -> LoadedModel:
    """Each path in turn, for behaviour that must hold on both (batching, chunking,
    preemption, prefix caching, abort)."""
    return request.getfixturevalue("loaded_model" if request.param == "float32" else "fast_model")


@pytest.fixture(scope="session")
def hf_reference(gguf_path: str) -> HFReference:
    transformers = pytest.importorskip("transformers")
    folder, name = os.path.split(gguf_path)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    return HFReference(model=model.eval(), tokenizer=tokenizer)
