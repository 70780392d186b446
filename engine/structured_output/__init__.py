"""Grammar-constrained decoding: a request's output follows a JSON Schema, a regex, a choice,
a context-free grammar or a tool-call format.

params: StructuredOutputParams, ToolCallGrammar (what the caller sets on SamplingParams).
compiler: GrammarCompiler (llguidance; compile once per distinct constraint, LRU-cached).
matcher: GrammarMatcher (one per sampled sequence) and the batch's token bitmask.
tool_calls: ToolCallGrammar -> Lark grammar.
The engine applies the mask in engine.sampler and advances the matchers in engine.llm_engine.
"""

from __future__ import annotations

from engine.errors import InvalidStructuredOutputError
from engine.structured_output.params import StructuredOutputParams, ToolCallGrammar

__all__ = ["InvalidStructuredOutputError", "StructuredOutputParams", "ToolCallGrammar"]
