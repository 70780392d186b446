"""The `read_passage` tool: one passage by id, owner-checked exactly as the citation routes
(DocumentService.chunk: the user's own or shared, ready documents; anything else is "no such
passage", never its text)."""

from __future__ import annotations

from typing import Any, Callable

from backend.agent.tools import ToolContext, ToolError, ToolResult, ToolSpec
from backend.agent.tools.passages import PASSAGE_ID_PATTERN, format_passages, parse_passage_id, passage_records
from backend.errors import NotFound
from backend.rag import DocumentService

PARAMETERS = {
    "type": "object",
    "properties": {
        "passage_id": {"type": "string", "pattern": PASSAGE_ID_PATTERN, "maxLength": 64,
                       "description": "a passage id from search_documents, like 3f2a...:17"},
    },
    "required": ["passage_id"],
    "additionalProperties": False,
}


def make_run(documents: DocumentService) -> Callable[[ToolContext, dict[str, Any]], ToolResult]:
    def run(context: ToolContext, arguments: dict[str, Any]) -> ToolResult:
        parsed = parse_passage_id(arguments["passage_id"])
        if parsed is None:
            raise ToolError("no such passage")
        try:
            source = documents.chunk(context.user_id, *parsed)
        except NotFound:
            raise ToolError("no such passage") from None
        return ToolResult(content=format_passages([source]), summary=f"Read a passage of {source.document_name}",
                          sources=(source,), data={"passages": passage_records([source])})

    return run


def spec(documents: DocumentService) -> ToolSpec:
    return ToolSpec(
        name="read_passage",
        description="Read one passage of the user's documents in full, by the passage id "
                    "search_documents returned.",
        parameters=PARAMETERS,
        permission="tools.read_passage",
        side_effect=False,
        run=make_run(documents),
    )
