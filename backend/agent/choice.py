"""A model step that chooses one of the calls the program wrote out, by likelihood (issue 15).

Each candidate is the whole call block the model would write (backend.tool_prompt.call_block).
The generator decodes it under a one-string constraint with logprobs on, so the sum of the
sampled tokens' log-probabilities (the engine reports them from the raw logits, before the
constraint's mask) is the candidate's log-likelihood after the step's prompt. Raw likelihood
favours what is likely anywhere (short numbers, the first number seen), so each candidate is
scored by its pointwise mutual information with the prompt: its log-likelihood after the prompt
minus its log-likelihood after NEUTRAL_PROMPT (domain-conditional PMI, Holtzman et al. 2021,
"Surface Form Competition: Why the Highest Probability Answer Isn't Always Right"). On the agent
eval's questions this picked the passage's number where raw likelihood picked "1 + 2".

The requests run side by side as one batch (at most 2 x MAX_CANDIDATES, 16, of the engine's
32 sequences) and share the step's prompt, which the prefix cache keeps once computed. They run
in one task group: cancelling the choice (Stop, the wall time) or one request failing cancels the
others, and a cancelled request's stream is closed, which aborts it in the engine. A single
candidate is chosen without asking the model, so that whether a step is the model's does not
depend on how many candidates there were (a retried run keeps its step indexes); so is the first
of several while FIRST_PRIOR is infinite (the default: measured, see there).
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, replace
from typing import Sequence

from backend.generator import ChatMessage, GenerationDone, GenerationParams, TextDelta, TextGenerator
from backend.generator import prepare as prepare_generation
from backend.output_constraint import OutputConstraint

NEUTRAL_PROMPT = (ChatMessage("user", "Write an arithmetic expression."),)
# The program's first candidate is its best guess (the operation the question names over the best
# ranked sentence's number, a conversion, a basket): another must beat its PMI by this many nats
# to be chosen. Measured on blind sets 15-20 (72 questions, docs/BENCHMARKS.md): the model's PMI
# alone 20 right, with 3 nats for the first 21, the first always 25 (the 135M model's PMI
# overrode it 7 times and was right once). So the default is the first, asked of no model (no
# request: what a capable model's deployment may set lower to let it choose).
FIRST_PRIOR = math.inf
# The token limit of a forced candidate: a call block of a tool whose arguments are at most 100
# characters is far shorter; the run's budget counts what was generated.
FORCED_MAX_TOKENS = 256


@dataclass
class Scored:
    """One candidate's log-likelihoods (natural log) after the step's prompt and after
    NEUTRAL_PROMPT, and the final events of its two requests (None: no request)."""

    text: str
    logprob: float
    neutral_logprob: float
    done: GenerationDone | None
    neutral_done: GenerationDone | None = None

    @property
    def pmi(self) -> float:
        return self.logprob - self.neutral_logprob


@dataclass
class Choice:
    """The chosen candidate (index into the candidates), every candidate's score, and the
    tokens the choice cost: the step's prompt once, NEUTRAL_PROMPT once, every generated token."""

    index: int
    scored: list[Scored]
    prompt_tokens: int
    completion_tokens: int

    @property
    def text(self) -> str:
        return self.scored[self.index].text


async def _loglikelihood(generator: TextGenerator, request_id: str, messages: Sequence[ChatMessage],
                         params: GenerationParams, text: str) -> tuple[float, GenerationDone | None, str]:
    forced = replace(params, temperature=0.0, top_p=1.0, top_k=None, logprobs=0, n=1, stop=(), max_tokens=FORCED_MAX_TOKENS,
                     presence_penalty=0.0, frequency_penalty=0.0,
                     structured_output=OutputConstraint(choice=(text,), param="agent choice"))
    await prepare_generation(generator, forced)
    total, done, written = 0.0, None, []
    stream = generator.stream(request_id, list(messages), forced)
    try:
        async for event in stream:
            if isinstance(event, TextDelta):
                written.append(event.text)
                total += sum(entry.logprob for entry in event.logprobs)
            elif isinstance(event, GenerationDone):
                done = event
    finally:
        await stream.aclose()  # type: ignore[attr-defined]
    return total, done, "".join(written)


async def choose(generator: TextGenerator, request_id: str, messages: Sequence[ChatMessage],
                 params: GenerationParams, candidates: Sequence[str]) -> Choice:
    """The candidate (a whole reply text) with the highest PMI after `messages`, the first's
    raised by FIRST_PRIOR (ties: the first; an infinite prior: the first, with no request). params: the step's (its tools are rendered into the prompt, as for a written call);
    sampling is replaced by forced decoding. Request ids: "{request_id}:c{i}" and
    "{request_id}:n{i}". One candidate is returned as chosen with no request. Raises ValueError
    for no candidates or a candidate decoded differently, and GenerationError as generator.stream
    does (as an ExceptionGroup's only member unwrapped: the first failure, the rest cancelled)."""
    if not candidates:
        raise ValueError("no candidates to choose from")
    if len(candidates) == 1 or FIRST_PRIOR == math.inf:  # the first, with no request
        return Choice(0, [Scored(text, 0.0, 0.0, None) for text in candidates], 0, 0)
    try:
        async with asyncio.TaskGroup() as group:  # the first failure cancels the rest
            tasks = [group.create_task(_loglikelihood(generator, f"{request_id}:c{i}", messages, params, text))
                     for i, text in enumerate(candidates)]
            tasks += [group.create_task(_loglikelihood(generator, f"{request_id}:n{i}", NEUTRAL_PROMPT, params, text))
                      for i, text in enumerate(candidates)]
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None
    results = [task.result() for task in tasks]
    scored: list[Scored] = []
    for i, text in enumerate(candidates):
        (logprob, done, written), (neutral_logprob, neutral_done, _) = results[i], results[len(candidates) + i]
        if written != text:
            raise ValueError(f"candidate {i} decoded as {written!r}, not {text!r}")
        scored.append(Scored(text, logprob, neutral_logprob, done, neutral_done))
    best = max(range(len(scored)), key=lambda i: (scored[i].pmi + (FIRST_PRIOR if i == 0 else 0.0), -i))
    n = len(candidates)
    prompts = [r[1].prompt_tokens for r in results[:n] if r[1] is not None]
    neutral_prompts = [r[1].prompt_tokens for r in results[n:] if r[1] is not None]
    completion = sum(r[1].completion_tokens for r in results if r[1] is not None)
    return Choice(best, scored, max(prompts, default=0) + max(neutral_prompts, default=0), completion)
