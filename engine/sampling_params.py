"""Per-request sampling parameters, validated before a request is queued."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from engine.errors import InvalidSamplingParamsError

MAX_STOP_STRINGS = 16
MAX_STOP_STRING_CHARS = 256
MAX_STOP_TOKEN_IDS = 64


@dataclass
class SamplingParams:
    """How to pick each next token of one request.

    max_tokens: most tokens to generate (the engine clips it so prompt + output fit its window).
    temperature: 0 means greedy (argmax); otherwise logits are divided by it before softmax.
    top_p: nucleus sampling, keep the smallest set of tokens whose probability sums to >= top_p
        (1.0 disables it). top_k: keep the k most likely tokens (None disables it).
    seed: seeds this request's own torch.Generator, so its tokens do not depend on the batch.
    stop: strings that end generation; the text is cut before the first match.
    stop_token_ids: extra token ids that end generation (their text is not emitted).
    ignore_eos: keep generating past the model's EOS / end-of-turn tokens.
    """

    max_tokens: int = 16
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int | None = None
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    stop_token_ids: list[int] = field(default_factory=list)
    ignore_eos: bool = False

    @property
    def is_greedy(self) -> bool:
        return self.temperature == 0.0

    def validate(self, vocab_size: int) -> None:
        """Check every field against its range.

        Raises InvalidSamplingParamsError (a ValueError) whose message names the field.
        """
        _check_int("max_tokens", self.max_tokens, low=1)
        _check_float("temperature", self.temperature)
        if self.temperature < 0:
            raise InvalidSamplingParamsError(
                f"temperature must be >= 0 (0 means greedy), got {self.temperature}")
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
