"""Per-request sampling parameters, validated before a request is queued."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from engine.errors import InvalidSamplingParamsError, InvalidStructuredOutputError
from engine.structured_output.params import StructuredOutputParams

MAX_STOP_STRINGS = 16
MAX_STOP_STRING_CHARS = 256
MAX_STOP_TOKEN_IDS = 64
MAX_TEMPERATURE = 100.0
MAX_REPETITION_PENALTY = 100.0
MAX_ABS_PENALTY = 2.0        # presence_penalty and frequency_penalty, as OpenAI's API
MAX_ABS_LOGIT_BIAS = 100.0   # as OpenAI's API
MAX_LOGPROBS = 20            # as OpenAI's API (top_logprobs)
MAX_N = 16


@dataclass
class SamplingParams:
    """How to pick each next token of one request.

    max_tokens: most tokens to generate; prompt + max_tokens must fit the engine's window
        (max_model_len), else add_request raises PromptTooLongError.
    temperature: in [0, 100]; 0 means greedy (argmax); otherwise logits are divided by it
        before softmax.
    top_p: nucleus sampling, keep the smallest set of tokens whose probability sums to >= top_p
        (1.0 disables it). top_k: keep the k most likely tokens (None disables it).
    seed: seeds this request's own torch.Generator, so its tokens do not depend on the batch.
    stop: strings that end generation; the text is cut before the first match.
    stop_token_ids: extra token ids that end generation (their text is not emitted).
    ignore_eos: keep generating past the model's EOS / end-of-turn tokens (they then neither
        stop the request nor are masked by min_tokens).
    min_p: in [0, 1]; after temperature, top-k and top-p, drop tokens whose probability is below
        min_p times the most likely token's (0 disables it; 1 keeps only the most likely).
    repetition_penalty: in (0, 100], 1 disables it. Every token that occurs in the prompt or the
        output so far has its logit divided by it when positive, multiplied by it when negative
        (Keskar et al. 2019, "CTRL", with Hugging Face's sign handling; vLLM's semantics).
    presence_penalty: in [-2, 2]; subtracted once from the logit of every token that occurs in
        the output so far (OpenAI semantics; the prompt does not count).
    frequency_penalty: in [-2, 2]; subtracted from a token's logit once per occurrence in the
        output so far (OpenAI semantics).
    min_tokens: >= 0 and <= max_tokens; until this many tokens are generated, the request's stop
        tokens (EOS / end-of-turn unless ignore_eos, and stop_token_ids) are masked out and stop
        strings are not honoured; a stop string can match only in text generated from the
        min_tokens-th token on.
    logit_bias: {token id: bias}, ids in [0, vocab), biases in [-100, 100], added to the logits
        before anything else (OpenAI semantics).
    logprobs: None, or N in [0, 20]: each generated token comes with its log-probability, its rank
        and the N most likely alternatives (ids, text, log-probabilities). They are computed
        from the model's raw distribution (log_softmax of the logits before bias, penalties,
        temperature and filtering), as vLLM's default "raw_logprobs".
    n: in [1, 16], independent samples of the same prompt. The engine runs them as n requests
        "{request_id}#{i}" (sample index i; seeded samples use seed + i), all reported under the
        request id with RequestOutput.index = i; aborting the request aborts all of them.
    structured_output: None, or a StructuredOutputParams (JSON Schema, any JSON object, regex,
        choice, grammar or tool calls): every generated token keeps the output valid for it, EOS
        comes only where it may end, and a complete output finishes with "stop". Its shape is
        checked here; LLMEngine.add_request compiles it and raises InvalidStructuredOutputError
        before queueing when it cannot be compiled. The sampler masks the disallowed tokens
        right after logit_bias.
    Greedy (temperature 0) still applies logit_bias, min_tokens and the penalties: it takes the
    argmax of the processed logits. The order is engine.sampler's: logit_bias, grammar mask,
    min_tokens mask,
    penalties, temperature, top-k, top-p, min-p, sample.
    """

    max_tokens: int = 16
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int | None = None
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    stop_token_ids: list[int] = field(default_factory=list)
    ignore_eos: bool = False
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    min_tokens: int = 0
    logit_bias: dict[int, float] = field(default_factory=dict)
    logprobs: int | None = None
    n: int = 1
    structured_output: StructuredOutputParams | None = None

    @property
    def is_greedy(self) -> bool:
        return self.temperature == 0.0

    def validate(self, vocab_size: int) -> None:
        """Check every field against its range.

        Raises InvalidSamplingParamsError (a ValueError) whose message names the field.
        """
        _check_int("max_tokens", self.max_tokens, low=1)
        _check_float("temperature", self.temperature)
        if not 0 <= self.temperature <= MAX_TEMPERATURE:
            raise InvalidSamplingParamsError(
                f"temperature must be in [0, {MAX_TEMPERATURE:g}] (0 means greedy), "
                f"got {self.temperature}")
        _check_float("top_p", self.top_p)
        if not 0.0 < self.top_p <= 1.0:
            raise InvalidSamplingParamsError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.top_k is not None:
            _check_int("top_k", self.top_k, low=1)
            if self.top_k > vocab_size:
                raise InvalidSamplingParamsError(
                    f"top_k must be <= the vocabulary size {vocab_size}, got {self.top_k}")
        if self.seed is not None:
            _check_int("seed", self.seed, low=0)
            if self.seed >= 2**63:
                raise InvalidSamplingParamsError(f"seed must be < 2**63, got {self.seed}")
        if not isinstance(self.ignore_eos, bool):
            raise InvalidSamplingParamsError(f"ignore_eos must be a bool, got {self.ignore_eos!r}")
        self._validate_stop()
        self._validate_stop_token_ids(vocab_size)
        self._validate_penalties()
        _check_int("min_tokens", self.min_tokens, low=0)
        if self.min_tokens > self.max_tokens:
            raise InvalidSamplingParamsError(
                f"min_tokens must be <= max_tokens ({self.max_tokens}), got {self.min_tokens}")
        self._validate_logit_bias(vocab_size)
        if self.logprobs is not None:
            _check_int("logprobs", self.logprobs, low=0)
            if self.logprobs > MAX_LOGPROBS:
                raise InvalidSamplingParamsError(
                    f"logprobs must be in [0, {MAX_LOGPROBS}] or None, got {self.logprobs}")
        _check_int("n", self.n, low=1)
        if self.n > MAX_N:
            raise InvalidSamplingParamsError(f"n must be in [1, {MAX_N}], got {self.n}")
        if self.structured_output is not None:
            if not isinstance(self.structured_output, StructuredOutputParams):
                raise InvalidStructuredOutputError(
                    "structured_output must be a StructuredOutputParams or None, got "
                    f"{type(self.structured_output).__name__}")
            self.structured_output.validate()
        if self.seed is not None and self.seed + self.n - 1 >= 2**63:
            raise InvalidSamplingParamsError(
                f"seed must be < 2**63 - (n - 1) = {2**63 - self.n + 1} with n={self.n} "
                f"(sample i is seeded with seed + i), got {self.seed}")

    def _validate_penalties(self) -> None:
        _check_float("min_p", self.min_p)
        if not 0.0 <= self.min_p <= 1.0:
            raise InvalidSamplingParamsError(f"min_p must be in [0, 1], got {self.min_p}")
        _check_float("repetition_penalty", self.repetition_penalty)
        if not 0.0 < self.repetition_penalty <= MAX_REPETITION_PENALTY:
            raise InvalidSamplingParamsError(
                f"repetition_penalty must be in (0, {MAX_REPETITION_PENALTY:g}] (1 disables it), "
                f"got {self.repetition_penalty}")
        for name in ("presence_penalty", "frequency_penalty"):
            value = getattr(self, name)
            _check_float(name, value)
            if not -MAX_ABS_PENALTY <= value <= MAX_ABS_PENALTY:
                raise InvalidSamplingParamsError(
                    f"{name} must be in [-{MAX_ABS_PENALTY:g}, {MAX_ABS_PENALTY:g}], got {value}")

    def _validate_logit_bias(self, vocab_size: int) -> None:
        if not isinstance(self.logit_bias, dict):
            raise InvalidSamplingParamsError(
                f"logit_bias must be a dict of token id to bias, got {self.logit_bias!r}")
        for token_id, bias in self.logit_bias.items():
            if isinstance(token_id, bool) or not isinstance(token_id, int) \
                    or not 0 <= token_id < vocab_size:
                raise InvalidSamplingParamsError(
                    f"logit_bias keys must be token ids in [0, {vocab_size}), got {token_id!r}")
            _check_float("logit_bias", bias)
            if not -MAX_ABS_LOGIT_BIAS <= bias <= MAX_ABS_LOGIT_BIAS:
                raise InvalidSamplingParamsError(
                    f"logit_bias values must be in [-{MAX_ABS_LOGIT_BIAS:g}, "
                    f"{MAX_ABS_LOGIT_BIAS:g}], got {bias} for token {token_id}")

    def _validate_stop(self) -> None:
        if isinstance(self.stop, str) or not isinstance(self.stop, (list, tuple)):
            raise InvalidSamplingParamsError(f"stop must be a list of strings, got {self.stop!r}")
        if len(self.stop) > MAX_STOP_STRINGS:
            raise InvalidSamplingParamsError(
                f"stop holds {len(self.stop)} strings, at most {MAX_STOP_STRINGS} are allowed")
        for s in self.stop:
            if not isinstance(s, str):
                raise InvalidSamplingParamsError(f"stop strings must be str, got {s!r}")
            if not s:
                raise InvalidSamplingParamsError("stop strings must not be empty")
            if len(s) > MAX_STOP_STRING_CHARS:
                raise InvalidSamplingParamsError(
                    f"stop strings must be at most {MAX_STOP_STRING_CHARS} characters, "
                    f"got one of {len(s)}")

    def _validate_stop_token_ids(self, vocab_size: int) -> None:
        if not isinstance(self.stop_token_ids, (list, tuple, set, frozenset)):
            raise InvalidSamplingParamsError(
                f"stop_token_ids must be a list of ints, got {self.stop_token_ids!r}")
        if len(self.stop_token_ids) > MAX_STOP_TOKEN_IDS:
            raise InvalidSamplingParamsError(
                f"stop_token_ids holds {len(self.stop_token_ids)} ids, "
                f"at most {MAX_STOP_TOKEN_IDS} are allowed")
        for t in self.stop_token_ids:
            if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < vocab_size:
                raise InvalidSamplingParamsError(
                    f"stop_token_ids must be ints in [0, {vocab_size}), got {t!r}")


def _check_int(name: str, value: object, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidSamplingParamsError(f"{name} must be an integer, got {value!r}")
    if value < low:
        raise InvalidSamplingParamsError(f"{name} must be >= {low}, got {value}")


def _check_float(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidSamplingParamsError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise InvalidSamplingParamsError(f"{name} must be finite, got {value}")
