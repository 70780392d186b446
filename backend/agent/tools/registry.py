"""ToolRegistry: the built-in tools of this deployment (backend/agent/tools/__init__.py is the
contract). Tools whose service is missing (no documents/retriever: an app built without RAG;
no notes) are not registered."""

from __future__ import annotations

from typing import Mapping

from sqlalchemy.orm import Session, sessionmaker

from backend.agent.tools import ToolSpec, calculator, current_time, read_passage, save_note, search_documents
from backend.notes import NoteService
from backend.rag import DocumentService, Retriever

# The order tools are offered to the model in.
TOOL_NAMES = ("search_documents", "read_passage", "calculator", "current_time", "save_note")


class ToolRegistry:
    """The tools, by name.

    Args:
        documents: DocumentService (read_passage), or None.
        retriever: Retriever (search_documents), or None.
        notes: NoteService (save_note), or None.
        session_factory: SQLAlchemy sessionmaker (kept for tools that need the database directly).
    """

    def __init__(
        self,
        *,
        documents: DocumentService | None,
        retriever: Retriever | None,
        notes: NoteService | None,
        session_factory: sessionmaker[Session] | None,
    ) -> None:
        self.session_factory = session_factory
        found: list[ToolSpec] = []
        if retriever is not None:
            found.append(search_documents.spec(retriever))
        if documents is not None:
            found.append(read_passage.spec(documents))
        # The calculator finds the fact sentence of a question with the chat's embedder, and is
        # planned for a quantity asked with a number the person's documents do not hold.
        embed = retriever.embedder.embed if retriever is not None else None
        passages = search_documents.make_passages(retriever) if retriever is not None else None
        found.extend((calculator.spec(embed, passages), current_time.SPEC))
        if notes is not None:
            found.append(save_note.spec(notes))
        self._specs = {spec.name: spec for spec in found}

    def specs(self) -> list[ToolSpec]:
        """Every registered tool, in TOOL_NAMES order."""
        return list(self._specs.values())

    def get(self, name: str) -> ToolSpec | None:
        """The tool called `name`, or None (unknown, or not registered here)."""
        return self._specs.get(name)

    def allowed(
        self, user_role: str, enabled: Mapping[str, bool], role_grants: Mapping[str, set[str]]
    ) -> list[ToolSpec]:
        """The tools a user with `user_role` may call: enabled for the deployment
        (`enabled[name]` true; a name missing from `enabled` is off) and whose `permission`
        is in `role_grants[user_role]` (a role missing from `role_grants` has none)."""
        grants = role_grants.get(user_role, set())
        return [s for s in self._specs.values() if enabled.get(s.name, False) and s.permission in grants]
