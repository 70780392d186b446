"""Planning a turn's prompt: the settings that apply, the documents searched, the messages sent.

The chat service (backend/chat/service.py) reads the branch (backend/chat/turns.py locate) and
asks a :class:`TurnPlanner` for the prompt before anything is stored; the planner talks to the
model only to count tokens.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Protocol, Sequence

from backend.generator import ChatMessage, GenerationError, PromptTooLong, TextGenerator, ToolFunction
from backend.models import Conversation
from backend.prompt import build_prompt_messages
from backend.rag.sources import Source, build_prompt_with_sources
from backend.runtime_settings import RuntimeSettings

log = logging.getLogger(__name__)


class DocumentSearch(Protocol):
    """Where a turn finds sources in the user's documents (backend.rag.retrieval.Retriever)."""

    def search(self, user_id: str, query: str, *, k: int | None = None,
               min_similarity: float | None = None) -> list[Source]: ...


class TurnPlanner:
    """The prompt of a turn under the settings of its conversation.

    generator: counts tokens and gives the window. retriever: searches the user's documents
    (None: no turn does). sources_from_settings: pass the runtime settings' top_k and floor to
    the retriever (False: its own defaults).
    """

    def __init__(self, generator: TextGenerator, retriever: DocumentSearch | None,
                 sources_from_settings: bool) -> None:
        self._generator = generator
        self._retriever = retriever
        self._sources_from_settings = sources_from_settings

    def prompt(self, settings: RuntimeSettings, history: list[ChatMessage], sources: Sequence[Source] = (),
               continuing: ChatMessage | None = None
               ) -> tuple[list[ChatMessage], int, GenerationError | None, list[Source]]:
        """The prompt for `history` (sources quoted in its last user turn) under `settings`, its
        token count and the sources kept in it; or why it cannot be built (stored as the reply's
        error after the Ack). continuing: a partial reply that ends the prompt (a continue); it
        counts against the budget and is never cut."""
        count = self._generator.count_prompt_tokens
        if continuing is not None:
            def count(messages: Sequence[ChatMessage]) -> int:
                return self._generator.count_prompt_tokens([*messages, continuing])
        try:
            messages, used = build_prompt_with_sources(
                settings.system_prompt, history, sources, count,
                self._generator.context_length, settings.default_max_tokens)
            if continuing is not None:
                messages = [*messages, continuing]
            return messages, self._generator.count_prompt_tokens(messages), None, used
        except GenerationError as exc:
            return [], 0, exc, []
        except Exception as exc:
            log.exception("building the prompt failed")
            return [], 0, GenerationError(f"generation failed: {exc}"), []

    def fit_with_tools(self, planned: Sequence[ChatMessage], tools: Sequence[ToolFunction],
                       max_tokens: int, restated: int = 0) -> list[ChatMessage]:
        """A prompt planned by :meth:`prompt` fitted again for a generation that also puts
        `tools` in the prompt (an agent run: their definitions and the template's tool
        instructions take window tokens the plan did not count). The same cut as the plain
        path (backend.prompt.build_prompt_messages): the system message and the newest message
        are kept, older turns dropped, oldest first, until the prompt counted with the tools
        (generator.count_prompt_tokens(messages, tools)) fits context_length - max_tokens.
        A plan that already fits is returned as it is (same messages). Sync (it tokenizes).

        Raises:
            PromptTooLong: the newest message alone does not fit with the tools; its message
                reads "your message is too long for the model's window (N tokens, at most M)"
                (N: the prompt with the system prompt and the tools, M: the window minus
                max_tokens for the reply, of which `restated` tokens are for the question the run
                reads again after its tools: said apart).
        """
        def count(messages: Sequence[ChatMessage]) -> int:
            return self._generator.count_prompt_tokens(messages, tools)

        window = self._generator.context_length
        planned = list(planned)
        head = planned[:1] if planned and planned[0].role == "system" else []
        history = planned[len(head):]
        if not history or count(planned) <= window - max_tokens:
            return planned
        try:
            return build_prompt_messages(head[0].content if head else None, history, count, window, max_tokens)
        except PromptTooLong:
            needed = count([*head, history[-1]])
            kept = (f"{max_tokens} for the reply" if not restated else
                    f"{max_tokens - restated} for the reply and {restated} for your message, which the run reads "
                    "again after its tools")
            raise PromptTooLong(f"your message is too long for the model's window with tools on ({needed} tokens "
                                f"with the instructions and the tools' definitions, at most {window - max_tokens}: "
                                f"the {window}-token window minus {kept}); shorten it "
                                "or send it with tools off") from None

    def retrieve(self, user_id: str, text: str, settings: RuntimeSettings) -> list[Source] | None:
        """The sources for `text` among `user_id`'s documents; None when nothing was searched
        (no retriever, or the search failed: a document problem never blocks chatting)."""
        if self._retriever is None:
            return None
        try:
            if not self._sources_from_settings:
                return list(self._retriever.search(user_id, text))
            return list(self._retriever.search(
                user_id, text, k=settings.sources_top_k, min_similarity=settings.sources_min_similarity))
        except Exception:
            log.exception("searching the documents of user %s failed; answering without sources", user_id)
            return None


def effective_settings(settings: RuntimeSettings, conversation: Conversation) -> RuntimeSettings:
    """The runtime settings with the conversation's own settings applied: its system prompt
    after the admin's (the admin's instructions stay first and are never dropped), its
    temperature, its max_tokens within the admin's maximum."""
    changes: dict[str, object] = {}
    if conversation.system_prompt:
        base = settings.system_prompt
        changes["system_prompt"] = f"{base}\n\n{conversation.system_prompt}" if base else conversation.system_prompt
    if conversation.temperature is not None:
        changes["default_temperature"] = conversation.temperature
    if conversation.max_tokens is not None:
        changes["default_max_tokens"] = max(1, min(conversation.max_tokens, settings.max_max_tokens))
    return replace(settings, **changes) if changes else settings
