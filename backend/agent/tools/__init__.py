"""Built-in tools an agent run calls (issue 15): the contract the run loop codes against.

Integration (backend/agent/runs.py):
    registry = ToolRegistry(documents=..., retriever=..., notes=NoteService(...), session_factory=...)
    for spec in registry.allowed(user.role, enabled, role_grants):   # what this user's run offers
        ...  # spec.name / spec.description / spec.parameters -> the model's `tools`
    spec = registry.get(name)                      # None: the model named an unknown tool
    jsonschema.validate(arguments, spec.parameters) # the loop validates; tools trust their args
    result = spec.run(ToolContext(...), arguments)  # in a worker thread; ToolError: the model reads it

Tool results are untrusted data (document text, a note's title): the loop quotes/delimits
`content` before the model reads it, and the page escapes `summary`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Sequence

from backend.errors import DomainError


@dataclass(frozen=True)
class ToolContext:
    """Who calls and where. idempotency_key: f"{run_id}:{step_index}:{call_index}"; a tool with a
    side effect makes its write idempotent on it. now: aware UTC time (tests pass a fixed one)."""

    user_id: str
    conversation_id: str
    run_id: str
    idempotency_key: str
    now: datetime
    timezone: str = "UTC"  # the person's IANA zone (the browser's), where a clock is read by default
    # the id of the person's message the run answers ("" when none): a regenerated reply answers the same one, so a
    # side effect it asks for is made once for it (new-user pass: Regenerate saved a second note)
    request_id: str = ""


@dataclass(frozen=True)
class ToolResult:
    """content: what the model reads (untrusted data). summary: one line for the page.
    sources: backend.rag Source objects cited (search_documents, read_passage). data: a
    JSON-able structured result stored in the run's record."""

    content: str
    summary: str
    sources: tuple = ()
    data: dict | None = None


class ToolError(DomainError):
    """A call failed for a reason the model should read (bad expression, no such passage). The
    message is safe to show the user and to the model."""

    code = "tool_error"
    default_message = "the tool call failed"


@dataclass(frozen=True)
class ToolSpec:
    """One tool. parameters: JSON Schema (draft 2020-12) of the arguments object, with
    additionalProperties false. permission: the role grant it needs ("tools.<name>").
    side_effect: True only for tools that write (save_note). run(context, arguments): the
    arguments already validated against `parameters`; blocking (call it in a worker thread);
    raises ToolError. intent_words: for a side-effecting tool, the words (matched whole,
    case-insensitive) of which the person's own latest message must hold one for a run to offer
    or execute it (backend.agent.intent); a side-effecting tool without any is never offered.
    relevant(user_id, text): whether the person's message `text` calls for this tool (the
    "planned" policy: backend.agent.routing); blocking; None: never planned. planned_arguments(text):
    the arguments of a planned call that the program can write from the message itself (the
    search's query is the message; an expression typed in it), valid by `parameters`, or None
    when the model must write them. candidate_arguments(text, results): the arguments a planned
    call may take, written out by the program from the message and the contents of this run's
    earlier tool results, for the model to choose among by likelihood (backend.agent.choice);
    blocking; [] when it has none (the model then writes the call). stated_result(content): what
    an answer after this tool's result `content` must state (the calculator's value), enforced
    by the engine's grammar; None: nothing. answer_quote(question, content): (passage number,
    sentence), the sentence of this tool's result `content` that answers the person's question
    best, for an answer that quotes it (backend.agent.answer); blocking; None: none.
    confirmation(content): the answer after its successful result, written by the program ("Saved
    to your notes: “Gym code”."); None: the model answers."""

    name: str
    description: str
    parameters: dict
    permission: str
    side_effect: bool
    run: Callable[[ToolContext, dict[str, Any]], ToolResult]
    intent_words: tuple[str, ...] = ()
    relevant: Callable[[str, str], bool] | None = None
    planned_arguments: Callable[[str], dict[str, Any] | None] | None = None
    candidate_arguments: Callable[[str, Sequence[str]], list[dict[str, Any]]] | None = None
    stated_result: Callable[[str], str | None] | None = None
    answer_quote: Callable[[str, str], tuple[int, str] | None] | None = None
    confirmation: Callable[[str], str | None] | None = None


from backend.agent.tools.registry import ToolRegistry  # noqa: E402  (needs the types above)

__all__ = ["ToolContext", "ToolError", "ToolRegistry", "ToolResult", "ToolSpec"]
