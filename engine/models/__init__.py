"""Model architectures. Each takes a ModelConfig and runs over the paged KV cache."""

from engine.models.llama import LlamaForCausalLM

__all__ = ["LlamaForCausalLM"]
