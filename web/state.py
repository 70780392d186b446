"""What the lifespan builds and every route reads: settings, services, the generator, templates.

Stored on ``app.state.crescent`` (no module-level globals), so several apps (tests) can live in
one process.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from starlette.requests import HTTPConnection
from starlette.templating import Jinja2Templates

from backend.agent.run_admin import RunAdmin
from backend.agent.step_views import StepViews
from backend.api_keys import ApiKeyService
from backend.auth import AuthService
from backend.chat import ChatService
from backend.cluster import RedisLink
from backend.cluster.shared_traces import SharedTraces
from backend.cluster.instances import InstanceRegistry
from backend.conversation_export import ConversationTransfer
from backend.conversation_search import ConversationSearch
from backend.conversations import ConversationService
from backend.generator import TextGenerator
from backend.admission import AdmissionController
from backend.limits import UsageLimiter
from backend.metrics import Metrics
from backend.rag import DocumentService, Embedder, IngestionWorker, Retriever
from backend.notes import NoteService
from backend.runtime_settings import RuntimeSettingsStore
from backend.settings import Settings
from backend.throttle import LoginThrottle
from backend.users import UserAdminService
from web.flash import FlashStore


@dataclass
class AppState:
    """The services of one running app. `ready` turns true once the generator has started."""

    settings: Settings
    templates: Jinja2Templates
    auth: AuthService
    conversations: ConversationService
    chat: ChatService
    generator: TextGenerator
    api_keys: ApiKeyService
    users: UserAdminService
    throttle: LoginThrottle
    metrics: Metrics
    runtime_settings: RuntimeSettingsStore
    limiter: UsageLimiter
    admission: AdmissionController
    ready: bool = False
    # Documents (issue 6): one embedder (the model loads on first use) shared by ingestion and
    # retrieval; None only in apps built without them.
    embedder: Embedder | None = None
    documents: DocumentService | None = None
    ingestion: IngestionWorker | None = None
    retriever: Retriever | None = None
    # The user's notes (the save_note agent tool writes them; /notes lists them).
    notes: NoteService | None = None
    # Conversation search, export and import (docs/INTERFACES.md 9).
    search: ConversationSearch | None = None
    transfer: ConversationTransfer | None = None
    # Redis shared by several server processes (REDIS_URL); None: one process, state in memory.
    redis: RedisLink | None = None
    # Every process's finished spans in Redis, for the waterfall (None: no Redis, or OTLP).
    shared_traces: SharedTraces | None = None
    # Every live process's stats snapshot (admin engine panel); None without REDIS_URL.
    instances: InstanceRegistry | None = None
    # The stored agent steps of a page's replies (backend/agent/step_views.py); None: none shown.
    step_views: StepViews | None = None
    # The admin's pages of agent runs (backend/agent/run_admin.py); None: no such pages.
    run_admin: RunAdmin | None = None
    # Notices carried across a form's redirect (web/flash.py).
    flash: FlashStore = field(default_factory=FlashStore)


def app_state(conn: HTTPConnection) -> AppState:
    """The :class:`AppState` of the app serving `conn` (a Request or a WebSocket).

    Raises RuntimeError when called outside the lifespan (the app was not started).
    """
    state = getattr(conn.app.state, "crescent", None)
    if state is None:
        raise RuntimeError("the app's lifespan has not run: use the app under an ASGI server")
    return state
