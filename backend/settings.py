"""The one settings object of the server, validated at start-up and passed explicitly.

No import-time singleton: `Settings.from_env()` is called once (by `python -m web serve`, by
Alembic's env.py) and the object is handed to whoever needs it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

from limits import parse_many
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError


class SettingsError(ValueError):
    """A setting is missing its expected shape; the message names the variable."""


# CRESCENT_SECRET_KEY's minimum length: 32 characters of a random token carry at least 128 bits.
SECRET_KEY_MIN = 32
# Where the secret file goes when the database is not a SQLite file.
DEFAULT_DATA_DIR = ".crescent"

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


@dataclass(frozen=True)
class Settings:
    """Server configuration.

    Environment variables (see `from_env`): DATABASE_URL, HOST, PORT, CRESCENT_MODEL,
    CRESCENT_SYSTEM_PROMPT, CRESCENT_MAX_TOKENS, CRESCENT_TEMPERATURE, CRESCENT_TOP_P,
    CRESCENT_SESSION_TTL_S, COOKIE_SECURE, CRESCENT_ALLOWED_ORIGINS (comma-separated),
    CRESCENT_MAX_WAITING_REQUESTS, CRESCENT_MAX_WAITING_PROMPT_TOKENS, CRESCENT_QUEUE_TIMEOUT_S,
    CRESCENT_METRICS_TOKEN, CRESCENT_SIGNUP_RATE, CRESCENT_QUANTIZATION, CRESCENT_SECRET_KEY,
    CRESCENT_DATA_DIR, CRESCENT_KV_HOST_CACHE_GIB, CRESCENT_TRACE_STORE_SIZE.

    database_url: a plain SQLAlchemy URL (``sqlite:///path.db``, ``postgresql://...``).
    system_prompt: None keeps the chat template's own default system prompt.
    max_tokens, temperature, top_p: sampling defaults for every reply; frequency_penalty: the chat
        replies' (OpenAI semantics, [0, 2]; the /v1 API takes the client's, 0 by default).
    session_ttl_s: log-in session lifetime in seconds.
    max_waiting_requests, max_waiting_prompt_tokens: the admission queue's bounds (requests
        admitted but not yet given a first token, and their prompt tokens); past them a new
        request is refused at once as overloaded.
    queue_timeout_s: the engine's queue deadline in seconds; a request not scheduled within it
        ends with finish_reason "error" (error "queue_timeout: ...").
    metrics_token: a bearer token that may read /metrics without an admin session (None: admins
        only); at least 16 characters.
    signup_rate: sign-up attempts allowed per client IP, in the `limits` library's notation
        ("5/hour", "20 per day"); raise it for test rigs that sign many users up from one IP.
    quantization: the engine's weights: "auto" (the CPU fast path with the GGUF file's
        quantized blocks and int8 kernels; float on CUDA), "none" (the float32 reference path)
        or "int8" (float checkpoints quantized at load).
    secret_key: the server secret (at least SECRET_KEY_MIN characters) from which the CSRF and
        prefix-cache salt keys derive (backend/secret_key.py); None: the file in `secret_dir`.
    data_dir: where the secret file lives (None: see `secret_dir`).
    redis_url: REDIS_URL, the Redis server that several server processes share (rate-limit
        windows, log-in throttles, generation leases, live-work events, reply relay:
        backend/cluster). None: one process keeps that state in memory.
    instance_name: CRESCENT_INSTANCE, this process's name among several (admin panel, leases,
        ingestion jobs, the X-Crescent-Instance header). Empty (unset): no header, and
        "<hostname>:<port>" where a name is needed (backend.cluster.instances.instance_label).
    kv_host_cache_gib: CRESCENT_KV_HOST_CACHE_GIB, the engine's host-memory tier under the
        prefix cache in GiB (EngineConfig.kv_host_cache_gib: evicted KV blocks are kept there and
        restored on a prefix hit, e.g. a conversation waiting on a tool); 0 (default): disabled.
    live_recheck_s: CRESCENT_LIVE_RECHECK_S, seconds between two re-checks of the live work
        against the database, the backstop of lost live events with REDIS_URL
        (backend/cluster/recheck.py; None: its RECHECK_INTERVAL_S, 2 s).
    trace_store_size: CRESCENT_TRACE_STORE_SIZE, how many traces (chat turns, /v1 requests)
        this process keeps in memory for the admin waterfall when OTEL_EXPORTER_OTLP_ENDPOINT is
        unset (backend/tracing.py TraceStore; the oldest goes first); 1 to 10,000, default 200.

    Raises:
        SettingsError: on construction, when a value is out of range.
    """

    database_url: str = "sqlite:///crescent.db"
    host: str = "127.0.0.1"
    port: int = 8000
    model_path: str | None = None
    system_prompt: str | None = None
    max_tokens: int = 512
    temperature: float = 0.7
    top_p: float = 0.95
    frequency_penalty: float = 0.3
    session_ttl_s: int = 14 * 24 * 3600
    cookie_secure: bool = False
    allowed_origins: tuple[str, ...] = field(default_factory=tuple)
    max_waiting_requests: int = 64
    max_waiting_prompt_tokens: int = 65536
    queue_timeout_s: float = 300.0
    metrics_token: str | None = field(default=None, repr=False)
    signup_rate: str = "5/hour"
    quantization: str = "auto"
    secret_key: str | None = field(default=None, repr=False)
    data_dir: str | None = None
    redis_url: str | None = field(default=None, repr=False)
    instance_name: str = ""
    live_recheck_s: float | None = None
    kv_host_cache_gib: float = 0.0
    trace_store_size: int = 200

    @property
    def secret_dir(self) -> str:
        """data_dir, else the SQLite file's directory, else DEFAULT_DATA_DIR (relative to the
        working directory): a PostgreSQL or in-memory database has no directory of its own."""
        if self.data_dir is not None:
            return self.data_dir
        url = make_url(self.database_url)
        if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
            return os.path.dirname(os.path.abspath(url.database))
        return DEFAULT_DATA_DIR

    def __post_init__(self) -> None:
        try:
            url = make_url(self.database_url)
        except ArgumentError as exc:
            raise SettingsError(f"DATABASE_URL is not a SQLAlchemy URL: {exc}") from None
        try:
            url.get_dialect()  # the dialect (and driver name) must be known; the driver loads later
        except NoSuchModuleError:
            raise SettingsError(
                f"DATABASE_URL names an unknown database {url.drivername!r}; "
                "use sqlite:///path.db or postgresql://user:password@host/db"
            ) from None
        if not self.host:
            raise SettingsError("HOST must not be empty")
        if not 1 <= self.port <= 65535:
            raise SettingsError(f"PORT must be in 1..65535, got {self.port}")
        if self.max_tokens < 1:
            raise SettingsError(f"CRESCENT_MAX_TOKENS must be >= 1, got {self.max_tokens}")
        if not 0.0 <= self.temperature <= 2.0:
            raise SettingsError(f"CRESCENT_TEMPERATURE must be in [0, 2], got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise SettingsError(f"CRESCENT_TOP_P must be in (0, 1], got {self.top_p}")
        if not 0.0 <= self.frequency_penalty <= 2.0:
            raise SettingsError(f"CRESCENT_FREQUENCY_PENALTY must be in [0, 2], got {self.frequency_penalty}")
        if self.session_ttl_s < 60:
            raise SettingsError(f"CRESCENT_SESSION_TTL_S must be >= 60, got {self.session_ttl_s}")
        if self.max_waiting_requests < 1:
            raise SettingsError(
                f"CRESCENT_MAX_WAITING_REQUESTS must be >= 1, got {self.max_waiting_requests}")
        if self.max_waiting_prompt_tokens < 1:
            raise SettingsError(
                f"CRESCENT_MAX_WAITING_PROMPT_TOKENS must be >= 1, got {self.max_waiting_prompt_tokens}")
        if not 0.0 < self.queue_timeout_s <= 86400.0:  # also refuses NaN
            raise SettingsError(f"CRESCENT_QUEUE_TIMEOUT_S must be in (0, 86400], got {self.queue_timeout_s}")
        if self.metrics_token is not None and (len(self.metrics_token) < 16 or not self.metrics_token.isprintable()
                                               or any(c.isspace() for c in self.metrics_token)):
            raise SettingsError("CRESCENT_METRICS_TOKEN must be at least 16 printable characters without spaces")
        try:
            parse_many(self.signup_rate)
        except ValueError:
            raise SettingsError(f"CRESCENT_SIGNUP_RATE must be like '5/hour', got {self.signup_rate!r}") from None
        if self.quantization not in ("auto", "none", "int8"):
            raise SettingsError(f"CRESCENT_QUANTIZATION must be auto, none or int8, got {self.quantization!r}")
        if self.secret_key is not None and len(self.secret_key.strip()) < SECRET_KEY_MIN:
            raise SettingsError(f"CRESCENT_SECRET_KEY must be at least {SECRET_KEY_MIN} characters "
                                "(e.g. python3 -c 'import secrets; print(secrets.token_hex(32))')")
        if not (0 <= self.kv_host_cache_gib <= 4096):
            raise SettingsError(f"CRESCENT_KV_HOST_CACHE_GIB must be in [0, 4096], got {self.kv_host_cache_gib}")
        if self.data_dir is not None and not self.data_dir.strip():
            raise SettingsError("CRESCENT_DATA_DIR must not be empty")
        if self.redis_url is not None and not self.redis_url.startswith(("redis://", "rediss://", "unix://")):
            raise SettingsError(f"REDIS_URL must be redis://host:port/db, rediss://… or unix://…, got {self.redis_url!r}")
        if self.live_recheck_s is not None and not 0.0 < self.live_recheck_s <= 86400.0:
            raise SettingsError(f"CRESCENT_LIVE_RECHECK_S must be in (0, 86400], got {self.live_recheck_s}")
        if not 1 <= self.trace_store_size <= 10_000:
            raise SettingsError("CRESCENT_TRACE_STORE_SIZE must be between 1 and 10000")
        if len(self.instance_name) > 64 or not self.instance_name.isprintable():
            raise SettingsError("CRESCENT_INSTANCE must be at most 64 printable characters")
        for origin in self.allowed_origins:
            if not origin.startswith(("http://", "https://")):
                raise SettingsError(f"CRESCENT_ALLOWED_ORIGINS entry must be http(s)://..., got {origin!r}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Build settings from `env` (default: os.environ); unset variables keep the defaults.

        Raises:
            SettingsError: a variable does not parse or is out of range.
        """
        env = os.environ if env is None else env
        kwargs: dict[str, object] = {}
        if "DATABASE_URL" in env:
            kwargs["database_url"] = env["DATABASE_URL"]
        if "HOST" in env:
            kwargs["host"] = env["HOST"]
        if "PORT" in env:
            kwargs["port"] = _parse(env, "PORT", int)
        if env.get("CRESCENT_MODEL"):
            kwargs["model_path"] = env["CRESCENT_MODEL"]
        if "CRESCENT_SYSTEM_PROMPT" in env:
            kwargs["system_prompt"] = env["CRESCENT_SYSTEM_PROMPT"] or None
        if "CRESCENT_MAX_TOKENS" in env:
            kwargs["max_tokens"] = _parse(env, "CRESCENT_MAX_TOKENS", int)
        if "CRESCENT_TEMPERATURE" in env:
            kwargs["temperature"] = _parse(env, "CRESCENT_TEMPERATURE", float)
        if "CRESCENT_TOP_P" in env:
            kwargs["top_p"] = _parse(env, "CRESCENT_TOP_P", float)
        if "CRESCENT_FREQUENCY_PENALTY" in env:
            kwargs["frequency_penalty"] = _parse(env, "CRESCENT_FREQUENCY_PENALTY", float)
        if "CRESCENT_SESSION_TTL_S" in env:
            kwargs["session_ttl_s"] = _parse(env, "CRESCENT_SESSION_TTL_S", int)
        if "COOKIE_SECURE" in env:
            kwargs["cookie_secure"] = _parse_bool(env, "COOKIE_SECURE")
        if "CRESCENT_ALLOWED_ORIGINS" in env:
            origins = (o.strip().rstrip("/") for o in env["CRESCENT_ALLOWED_ORIGINS"].split(","))
            kwargs["allowed_origins"] = tuple(o for o in origins if o)
        if "CRESCENT_MAX_WAITING_REQUESTS" in env:
            kwargs["max_waiting_requests"] = _parse(env, "CRESCENT_MAX_WAITING_REQUESTS", int)
        if "CRESCENT_MAX_WAITING_PROMPT_TOKENS" in env:
            kwargs["max_waiting_prompt_tokens"] = _parse(env, "CRESCENT_MAX_WAITING_PROMPT_TOKENS", int)
        if "CRESCENT_QUEUE_TIMEOUT_S" in env:
            kwargs["queue_timeout_s"] = _parse(env, "CRESCENT_QUEUE_TIMEOUT_S", float)
        if env.get("CRESCENT_METRICS_TOKEN", "").strip():
            kwargs["metrics_token"] = env["CRESCENT_METRICS_TOKEN"].strip()
        if env.get("CRESCENT_SIGNUP_RATE", "").strip():
            kwargs["signup_rate"] = env["CRESCENT_SIGNUP_RATE"].strip()
        if env.get("CRESCENT_QUANTIZATION", "").strip():
            kwargs["quantization"] = env["CRESCENT_QUANTIZATION"].strip()
        if env.get("CRESCENT_SECRET_KEY", "").strip():
            kwargs["secret_key"] = env["CRESCENT_SECRET_KEY"].strip()
        if env.get("CRESCENT_DATA_DIR", "").strip():
            kwargs["data_dir"] = env["CRESCENT_DATA_DIR"].strip()
        if env.get("REDIS_URL", "").strip():
            kwargs["redis_url"] = env["REDIS_URL"].strip()
        if env.get("CRESCENT_LIVE_RECHECK_S", "").strip():
            kwargs["live_recheck_s"] = _parse(env, "CRESCENT_LIVE_RECHECK_S", float)
        if env.get("CRESCENT_KV_HOST_CACHE_GIB", "").strip():
            kwargs["kv_host_cache_gib"] = _parse(env, "CRESCENT_KV_HOST_CACHE_GIB", float)
        if env.get("CRESCENT_TRACE_STORE_SIZE", "").strip():
            kwargs["trace_store_size"] = _parse(env, "CRESCENT_TRACE_STORE_SIZE", int)
        if env.get("CRESCENT_INSTANCE", "").strip():
            kwargs["instance_name"] = env["CRESCENT_INSTANCE"].strip()
        return cls(**kwargs)  # type: ignore[arg-type]


def _parse(env: Mapping[str, str], name: str, kind: type) -> object:
    try:
        return kind(env[name].strip())
    except ValueError:
        raise SettingsError(f"{name} must be a {kind.__name__}, got {env[name]!r}") from None


def _parse_bool(env: Mapping[str, str], name: str) -> bool:
    value = env[name].strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsError(f"{name} must be 0 or 1, got {env[name]!r}")
