"""The engine step's structured-output work: the allowed-token masks of the constrained rows
(`allowed_tokens`), advancing a sequence's matcher past its sampled token (`advance`), and
whether its output is complete (`is_complete`). engine.llm_engine calls these; the sequences
are engine.sequence.Sequence objects whose `grammar` is a GrammarMatcher."""

from __future__ import annotations

import logging
from collections.abc import Sequence as SequenceABC

import numpy as np
import torch

from engine.sequence import Sequence
from engine.structured_output.bitmask import bitmask_words
from engine.structured_output.matcher import GrammarMatcher, fill_bitmask, short_error

logger = logging.getLogger(__name__)


def allowed_tokens(seqs: SequenceABC[Sequence], rows: list[int], vocab_size: int,
                   ) -> tuple[list[int], torch.Tensor]:
    """(rows, int32 bitmask [k, ceil(vocab_size / 32)] on the CPU) for the grammar-constrained
    sampling rows `rows` (seqs[j] samples row rows[j]; layout: engine.structured_output.bitmask).

    Each matcher is first brought back to its sequence's output tokens: a matcher never runs
    ahead of the tokens the sequence keeps (preemption by recompute keeps them all, so this
    rolls back only if a sequence ever drops some). A matcher that fails while its mask is
    computed does not affect the others: its row is left as the library wrote it (at most the
    stop tokens) and `advance` then ends that sequence with an error.
    """
    matchers = [seq.grammar for seq in seqs]
    for seq, matcher in zip(seqs, matchers):
        excess = matcher.num_consumed - seq.num_output_tokens
        if excess > 0:
            matcher.rollback(excess)
    try:
        return rows, fill_bitmask(matchers, vocab_size)
    except Exception:  # noqa: BLE001 - isolate the failing matcher: fill one by one
        logger.exception("structured output: batched mask failed; filling row by row")
    bitmask = torch.from_numpy(np.zeros((len(matchers), bitmask_words(vocab_size)), dtype=np.int32))
    for j, matcher in enumerate(matchers):
        try:
            bitmask[j] = fill_bitmask([matcher], vocab_size)[0]
        except Exception as exc:  # noqa: BLE001
            matcher.fail(f"mask computation failed: {exc}")
    return rows, bitmask


def advance(matcher: GrammarMatcher, token_id: int) -> str | None:
    """Consume `token_id`; None on success, else a short error message (one line, at most
    200 characters of the library's text, no parser state and no grammar text) for the
    sequence's "error" event."""
    if matcher.failed_reason is None and matcher.consume(token_id):
        return None
    reason = matcher.failed_reason or short_error(matcher.error)
    return f"structured output failed at output token {matcher.num_consumed + 1}: {reason}"


def is_complete(matcher: GrammarMatcher) -> bool:
    """Nothing but EOS can follow: the output is complete."""
    return matcher.is_terminated()
