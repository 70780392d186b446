"""The Starlette application: routes, middleware, error handlers and the lifespan.

:func:`create_app` builds an app from explicit settings (no global state). Its lifespan opens the
database, marks replies left streaming by a previous process as ``interrupted``, and builds the
services; everything lives on ``app.state.crescent`` (:class:`web.state.AppState`) for the app's
lifetime. When no generator is given it owns the in-process engine: the port opens at once and the
model loads on a background thread, while :class:`web.startup.StartingGate` serves a "starting"
page with the progress, 503 on /healthz, /api and /v1, and closes WebSockets with 1013; the
services are built once the engine has started.

Migrations are not run here: ``make run`` runs ``alembic upgrade head`` before serving, and tests
call :func:`backend.db.run_migrations`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable, TypeVar

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from backend import tracing
from backend.agent.run_admin import RunAdmin
from backend.agent.step_views import StepViews
from backend.api_keys import ApiKeyService
from backend.auth import AuthService
from backend.chat import ChatService, UserChannels
from backend.cluster import RedisLink, RedisUnavailable
from backend.cluster.shared_traces import SharedTraces
from backend.cluster.relay import running_replies
from backend.cluster.account_events import SharedChannels
from backend.cluster.instances import InstanceRegistry, check_same_secret, instance_label, snapshot_of
from backend.conversation_export import ConversationTransfer
from backend.conversation_search import ConversationSearch
from backend.conversations import ConversationService
from backend.generation import Generations
from backend.db import create_db_engine, make_session_factory
from backend.generator import TextGenerator
from backend.admission import AdmissionController
from backend.limits import UsageLimiter
from backend.metrics import SAMPLE_INTERVAL_S, Metrics, stats_source
from backend.agent.tools import ToolRegistry
from backend.notes import NoteService
from backend.rag import DocumentService, Embedder, IngestionWorker, RagSettings, Retriever
from backend.runtime_settings import RuntimeSettingsStore
from backend.secret_key import server_keys
from backend.settings import Settings
from web import account_routes, admin_routes, api, auth_routes, documents_routes, metrics_routes, openai_api, pages, ws
from web import agent_run_routes, branch_routes, export_routes, notes_routes, search_routes
from web.errors import EXCEPTION_HANDLERS
from web.instance_header import InstanceHeaderMiddleware
from backend.throttle import LoginThrottle
from backend.users import UserAdminService
from web.security import CsrfMiddleware, OriginCheckMiddleware, SecurityHeadersMiddleware, template_context
from web.startup import Startup, StartingGate
from web.state import AppState

T = TypeVar("T")

# Replies left streaming by a dead process (several processes, REDIS_URL): checked this often
# (seconds), judged once their row has not been written for ORPHAN_SETTLED_S (a reply stored a
# moment ago may not have its relay stream yet).
ORPHAN_SWEEP_S = 30.0
ORPHAN_SETTLED_S = 10.0

log = logging.getLogger(__name__)

# Resolved from this file, not the working directory, so `python -m web` works from anywhere.
REPO_ROOT = Path(__file__).resolve().parent.parent
TEMPLATES_DIR = REPO_ROOT / "templates"
STATIC_DIR = REPO_ROOT / "static"


def _progress_logger(every: float = 0.1) -> Callable[[str, float], None]:
    """A model-loading progress callback (stage, fraction 0..1) that logs every 10 %."""
    last = {"fraction": -1.0}

    def progress(stage: str, fraction: float) -> None:
        if fraction >= 1.0 or fraction - last["fraction"] >= every:
            last["fraction"] = fraction
            log.info("loading model: %s %3.0f%%", stage, 100 * fraction)

    return progress


def _start_engine(settings: Settings, startup: Startup) -> TextGenerator:
    """Load and start the in-process engine (seconds; blocking, so run in a thread)."""
    # Imported here so that the web layer and its tests never load torch unless they serve
    # the real model.
    from backend.engine_adapter import create_generator

    log_progress = _progress_logger()

    def progress(stage: str, fraction: float) -> None:
        log_progress(stage, fraction)
        startup.loader_progress(stage, fraction)

    generator = create_generator(
        settings.model_path, progress=progress, queue_timeout_s=settings.queue_timeout_s,
        quantization=settings.quantization, kv_host_cache_gib=settings.kv_host_cache_gib,
    )
    startup.report("starting the engine", 0.95)
    generator.start()
    return generator


async def _in_thread(fn: Callable[[], T]) -> T:
    """fn() on a daemon thread of its own. Unlike run_in_threadpool, cancelling the await does
    not wait for fn to finish, so stopping the server while the model loads is immediate."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(ok: bool, value: object) -> None:
        if future.done():
            return
        if ok:
            future.set_result(value)  # type: ignore[arg-type]
        else:
            future.set_exception(value)  # type: ignore[arg-type]

    def run() -> None:
        try:
            result = fn()
        except BaseException as exc:  # handed to the awaiting task
            outcome: tuple[bool, object] = (False, exc)
        else:
            outcome = (True, result)
        try:
            loop.call_soon_threadsafe(settle, *outcome)
        except RuntimeError:  # the loop closed meanwhile: the server has stopped
            pass

    threading.Thread(target=run, name="model-loader", daemon=True).start()
    return await future


async def _every(interval_s: float, one_round: Callable[[], Awaitable[None]], what: str) -> None:
    """Run `one_round` now and then every `interval_s` seconds, forever (until cancelled); a
    round that raises is logged and the next one runs as planned."""
    while True:
        try:
            await one_round()
        except Exception:  # keep going: one bad round must not end the task
            log.exception("%s failed", what)
        await asyncio.sleep(interval_s)


async def _sweep_orphaned_replies(conversations: ConversationService, link: RedisLink) -> None:
    """One round of the orphan sweep (with several processes on one database, run at start-up
    and every ORPHAN_SWEEP_S): mark `interrupted` the replies stored as streaming that no live
    process runs any more (their relay stream has expired: the process died). A Redis error
    skips the round (nothing is judged)."""
    try:
        count = await run_in_threadpool(conversations.interrupt_orphaned_replies,
                                        lambda ids: running_replies(link, ids), ORPHAN_SETTLED_S)
    except RedisUnavailable:
        log.warning("Redis unavailable: unfinished replies not checked this round")
        return
    if count:
        log.info("marked %d replies left by a stopped process as interrupted", count)


async def _sample(metrics: Metrics) -> None:
    """One point of the admin page's engine history (every SAMPLE_INTERVAL_S)."""
    metrics.sample()


def _base_url(settings: Settings) -> str:
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    return f"http://{host}:{settings.port}"


def _default_embedder() -> Embedder:
    """all-MiniLM-L6-v2 from its wheel. Lazy: the model (and torch) load on the first embedding.
    No thread count is set: torch.set_num_threads is process-wide and the engine shares it."""
    from backend.rag import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


def create_app(
    settings: Settings,
    generator: TextGenerator | None = None,
    embedder: Embedder | None = None,
    rag_settings: RagSettings | None = None,
) -> Starlette:
    """Build the Crescent app.

    Args:
        settings: validated settings (``Settings.from_env()`` in production).
        generator: the text generator to serve. None: the lifespan loads the model at
            ``settings.model_path`` (the packaged GGUF when None) in-process, starts it and shuts
            it down on exit. A generator passed in is used as is: its owner starts and stops it.
        embedder: the documents' embedder (tests pass a ``HashingEmbedder``). None: the
            sentence-transformers model, loaded on first use.
        rag_settings: upload limit, chunking and retrieval knobs (None: the defaults).

    Raises:
        SettingsError: the secret file cannot be read or created (backend/secret_key.py).
    """
    # The CSRF and prefix-cache salt keys derive from the one server secret: the same in every
    # process started with it, and after a restart.
    keys = server_keys(settings)
    # This process's name among several (CRESCENT_INSTANCE, else "<host>:<port>").
    instance = instance_label(settings.instance_name, settings.port)
    # Traces: OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set, else the last N in memory.
    tracing.configure(settings.trace_store_size)
    # template_context gives every template `csrf_token` and `nav_user` (the logged-in user).
    templates = Jinja2Templates(directory=str(TEMPLATES_DIR), context_processors=[template_context])

    startup = Startup()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        db_engine = create_db_engine(settings.database_url)
        # Shared state of several processes (backend/cluster); None: this process's memory.
        redis_link = RedisLink(settings.redis_url, instance) if settings.redis_url else None
        # With Redis and no OTLP: every process's spans also go to Redis, for any process's waterfall.
        shared_traces = (SharedTraces(redis_link, settings.trace_store_size)
                         if redis_link is not None and tracing.store() is not None else None)
        if shared_traces is not None:
            tracing.add_exporter(shared_traces)
        owned: TextGenerator | None = None
        sampler: asyncio.Task[None] | None = None
        publisher: asyncio.Task[None] | None = None
        instances = (InstanceRegistry(redis_link, instance)
                     if redis_link is not None else None)
        ingestion: IngestionWorker | None = None
        limiter: UsageLimiter | None = None
        orphans: asyncio.Task[None] | None = None
        chat: ChatService | None = None
        loading: asyncio.Task[None] | None = None

        async def build(active: TextGenerator) -> None:
            """The services around a started generator, then the app is ready."""
            nonlocal sampler, ingestion, chat, publisher, limiter
            metrics = Metrics(stats_source(active))
            sampler = asyncio.create_task(_every(SAMPLE_INTERVAL_S, lambda: _sample(metrics), "metrics sample"),
                                      name="metrics-sampler")
            if instances is not None:  # the admin's list of processes (backend/cluster/instances.py)
                publisher = asyncio.create_task(instances.run(
                    lambda: snapshot_of(instances.instance, active.model_name, metrics.latest(), time.time())),
                    name="instance-publisher")
            # Limits and admission (docs/INTERFACES.md 6.2): the admin's settings live in the
            # database; the limiter reads them on every request.
            runtime_settings = RuntimeSettingsStore(session_factory, settings, active.context_length,
                                                    rag_defaults=rag_settings)
            # With REDIS_URL the per-minute window and the concurrency leases are shared by every
            # process; the admission queue guards this process's engine, so it stays local.
            limiter = UsageLimiter(session_factory, runtime_settings, redis_link=redis_link)
            admission = AdmissionController(settings.max_waiting_requests, settings.max_waiting_prompt_tokens)
            # Documents (docs/INTERFACES.md 7, 8): ingestion runs on the worker's one thread, off
            # the request path, as jobs leased to this instance; the worker takes over the jobs of
            # stopped processes (expired leases) and never another live process's.
            doc_embedder = embedder if embedder is not None else _default_embedder()
            documents = DocumentService(session_factory, doc_embedder, rag_settings, instance=instance)
            recovered = await run_in_threadpool(documents.recover_interrupted)
            if recovered:
                log.info("marked %d documents that can no longer be indexed as failed", recovered)
            ingestion = IngestionWorker(documents)
            retriever = Retriever(session_factory, doc_embedder, documents.settings)
            # One lifecycle for every generation, chat and /v1 alike (backend/generation.py).
            generations = Generations(active, session_factory, limiter=limiter, admission=admission,
                                      metrics=metrics, cache_salt_key=keys.cache_salt)
            # With redis_link: live-work events, their re-check and the reply relay across processes.
            # Agent runs (issue 15): the built-in tools a conversation with tools on may call.
            notes = NoteService(session_factory)
            tools = ToolRegistry(documents=documents, retriever=retriever, notes=notes, session_factory=session_factory)
            chat = ChatService(session_factory, active, settings, runtime_settings=runtime_settings,
                               retriever=retriever, generations=generations, channels=channels, redis=redis_link,
                               agent_tools=tools.specs)
            chat.start()
            app.state.crescent = AppState(
                settings=settings,
                templates=templates,
                auth=AuthService(session_factory, settings.session_ttl_s),
                conversations=conversations,
                chat=chat,
                generator=active,
                api_keys=ApiKeyService(session_factory),
                users=UserAdminService(session_factory),
                throttle=LoginThrottle(signup_per_ip=settings.signup_rate, redis_link=redis_link),
                metrics=metrics,
                runtime_settings=runtime_settings,
                limiter=limiter,
                admission=admission,
                ready=True,
                embedder=doc_embedder,
                documents=documents,
                ingestion=ingestion,
                retriever=retriever,
                notes=notes,
                search=ConversationSearch(session_factory),
                transfer=ConversationTransfer(session_factory, channels.publish),
                redis=redis_link,
                shared_traces=shared_traces,
                instances=instances,
                step_views=StepViews(session_factory),
                run_admin=RunAdmin(session_factory),
            )
            startup.set_ready()
            log.info("Crescent ready with %s at %s", active.model_name, _base_url(settings))

        async def load_then_build() -> None:
            nonlocal owned
            try:
                owned = await _in_thread(lambda: _start_engine(settings, startup))
                await build(owned)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # The port stays open: the starting page and /healthz say it failed.
                log.exception("the model could not be loaded; fix the cause and restart the server")
                startup.fail(str(exc) or type(exc).__name__)

        try:
            if instances is not None:
                try:  # SettingsError: another live process runs with another secret
                    await check_same_secret(instances, keys.secret_id)
                except RedisUnavailable:
                    log.warning("Redis unavailable at start-up: the server secret was not compared "
                                "with the other processes'")
            session_factory = make_session_factory(db_engine)
            # Account events to every open page of a user (with Redis: on every process).
            channels = SharedChannels() if redis_link is not None else UserChannels()
            conversations = ConversationService(session_factory, channels.publish)
            if redis_link is None:
                interrupted = await run_in_threadpool(conversations.interrupt_orphaned_replies)
                if interrupted:
                    log.info("marked %d unfinished replies from a previous run as interrupted", interrupted)
            else:
                # Other processes may be streaming replies stored in this database: end only
                # those no live process runs, now and periodically.
                orphans = asyncio.create_task(
                    _every(ORPHAN_SWEEP_S, lambda: _sweep_orphaned_replies(conversations, redis_link),
                           "sweeping orphaned replies"), name="orphaned-replies")
            if generator is not None:
                await build(generator)
            else:
                # The port opens now; until the model is loaded web.startup.StartingGate answers
                # (the starting page, /healthz 503, WebSocket close 1013, /v1 503).
                log.info("loading the model in the background; %s shows the progress", _base_url(settings))
                loading = asyncio.create_task(load_then_build(), name="model-loader")
            yield
        finally:
            if loading is not None and not loading.done():
                # The loading thread runs on (a daemon); the task stops waiting for it now.
                loading.cancel()
                await asyncio.gather(loading, return_exceptions=True)
                log.info("stopped while the model was loading")
            if chat is not None:
                # Replies run in their own tasks: end them (stored "interrupted") while the
                # engine and the database still serve.
                await chat.shutdown()
            if sampler is not None:
                sampler.cancel()
            if orphans is not None:
                orphans.cancel()
                await asyncio.gather(orphans, return_exceptions=True)
            if limiter is not None:  # stops renewing generation leases before Redis closes
                limiter.close()
            if publisher is not None:  # withdraws this process from the list before Redis closes
                publisher.cancel()
                await asyncio.gather(publisher, return_exceptions=True)
            if ingestion is not None:
                # Finishes the queued documents; the database must outlive it.
                await run_in_threadpool(ingestion.shutdown, True)
            if owned is not None:
                await run_in_threadpool(owned.shutdown)
            if redis_link is not None:
                await redis_link.aclose()
            db_engine.dispose()

    return Starlette(
        debug=False,
        routes=[
            *pages.routes,
            *auth_routes.routes,
            *account_routes.routes,
            *admin_routes.routes,
            *agent_run_routes.routes,
            *metrics_routes.routes,
            *api.routes,
            *branch_routes.routes,
            *search_routes.routes,
            *export_routes.routes,
            *documents_routes.routes,
            *notes_routes.routes,
            *openai_api.routes,
            *ws.routes,
            Mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static"),
        ],
        # Listed outermost first: the security headers also cover the origin check's 403.
        middleware=[
            # Which process answered (CRESCENT_INSTANCE), for the router's users and tests.
            *([Middleware(InstanceHeaderMiddleware, instance=settings.instance_name)]
              if settings.instance_name else []),
            Middleware(SecurityHeadersMiddleware),
            # Until the model has loaded: the starting page, 503s and WebSocket close 1013.
            Middleware(StartingGate, startup=startup, templates=templates),
            Middleware(OriginCheckMiddleware, allowed_origins=settings.allowed_origins),
            # Every unsafe request outside /v1/ needs a CSRF token (docs/INTERFACES.md 6.5).
            Middleware(CsrfMiddleware, secret=keys.csrf, cookie_secure=settings.cookie_secure),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=lifespan,
    )
