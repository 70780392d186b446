"""Settings an admin changes while the server runs: stored in the database, validated, cached.

The environment (:class:`backend.settings.Settings`) gives the defaults; a value the admin set
lives in ``app_settings`` as JSON (one row per field) and wins over the default. Every change is
validated field by field (backend.runtime_setting_fields: the ranges, :func:`field_specs`,
:func:`parse_field`; the admin page's form is generated from :meth:`RuntimeSettingsStore.fields`)
and applied all-or-nothing.

Readers call :meth:`RuntimeSettingsStore.get` on every request: it returns a cached snapshot,
refreshed at once by :meth:`~RuntimeSettingsStore.update` in this process, and re-read from the
database at most every ``cache_ttl_s`` so that other server processes sharing the database see
a change within that time (the cross-process seam: the database is the source of truth).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from dataclasses import dataclass, fields as dataclass_fields, replace
from typing import Any, Callable, Mapping

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from backend.errors import ValidationFailed
from backend.models import AppSetting, utcnow
from backend.rag.settings import RagSettings
from backend.runtime_setting_fields import AGENT_BUDGET_PAIRS, MAX_TOKENS_CEILING, FieldSpec, field_specs, parse_field
from backend.settings import Settings

log = logging.getLogger(__name__)

CACHE_TTL_S = 5.0


@dataclass(frozen=True)
class RuntimeSettings:
    """One consistent snapshot of the runtime settings.

    system_prompt: None keeps the chat template's own default system prompt.
    default_max_tokens: reply length (tokens) when a request names none; <= max_max_tokens.
    max_max_tokens: the most a request may ask for (the API refuses more; chat uses the default).
    default_temperature: [0, 2]; default_top_p: (0, 1]; default_frequency_penalty: [0, 2], the chat
        replies' (OpenAI's frequency_penalty: a token's logit less it once per time the reply has
        used it), on the free text only: an agent step that offers tools (it may write a call; under
        the "auto" policy every step does) or must state a value takes none.
    requests_per_minute, tokens_per_day (prompt + completion, per UTC day),
    max_concurrent_generations: per user; 0 means unlimited.
    signup_mode: "open" | "approval" | "closed".
    sources_top_k: how many document passages (sources) a turn that uses documents retrieves, [1, 50].
    sources_min_similarity: relevance floor, cosine similarity of question and passage in [-1, 1]
        (passages below it are not used; -1 disables it).
    unwatched_reply_s: how long a chat reply goes on with no page watching it: -1 to its end,
        0 it stops when the last page leaves, N > 0 after N seconds with nobody watching.
    agent_tools: who may turn on tools in a conversation (agent runs, issue 15): "off" (the
        deployment has none) | "admins" | "everyone". agent_side_effects: who may call tools that
        write (save_note), among those: same choices (and a run offers such a tool only when the
        person's own message asks for it: backend.agent.intent). agent_max_*: the most one run may
        spend: steps (model and tool steps, at least MIN_AGENT_STEPS), tool calls, tokens (prompt +
        completion of every model step, each step's prompt counted again), wall time in seconds
        (backend.agent.budget); a conversation may choose less or more up to them.
        agent_default_*: the run's budget in a conversation that chose none; never above its
        maximum (named above it: refused; a maximum lowered alone below it: the default is
        served at the maximum). A default not stored while its maximum is (a deployment upgraded
        from before the defaults, where the maximum was every run's budget) is that maximum.
        agent_policy: how the model uses tools
        (backend.agent.runs.AgentRunner): "planned" (the program picks the turn's tools from the
        person's message, backend.agent.routing; the model writes what the program cannot, then
        the answer) | "one_call" (one tool call on every turn, then the answer with no tools) |
        "auto" (the model chooses; the default model, SmolLM2-135M, then never calls a tool).
    """

    system_prompt: str | None
    default_max_tokens: int
    max_max_tokens: int
    default_temperature: float
    default_top_p: float
    requests_per_minute: int
    tokens_per_day: int
    max_concurrent_generations: int
    signup_mode: str
    sources_top_k: int = 5
    sources_min_similarity: float = 0.2
    unwatched_reply_s: int = -1
    agent_tools: str = "off"
    agent_side_effects: str = "off"
    agent_default_steps: int = 8
    agent_max_steps: int = 8
    agent_default_tool_calls: int = 8
    agent_max_tool_calls: int = 8
    agent_default_tokens: int = 16_000
    agent_max_tokens: int = 16_000
    agent_default_wall_s: int = 120
    agent_max_wall_s: int = 120
    agent_policy: str = "planned"
    default_frequency_penalty: float = 0.0

    @classmethod
    def from_settings(
        cls, settings: Settings, context_length: int | None = None, rag: RagSettings | None = None
    ) -> RuntimeSettings:
        """The defaults: the environment's values, no limits, open sign-up; the sources settings
        from `rag` (None: RagSettings' defaults).

        max_max_tokens defaults to the context window when known (the engine refuses more anyway),
        else to max(settings.max_tokens, 4096).
        """
        max_max = context_length if context_length else max(settings.max_tokens, 4096)
        return cls(
            system_prompt=settings.system_prompt,
            default_max_tokens=min(settings.max_tokens, max_max),
            max_max_tokens=max_max,
            default_temperature=settings.temperature,
            default_top_p=settings.top_p,
            default_frequency_penalty=settings.frequency_penalty,
            requests_per_minute=0,
            tokens_per_day=0,
            max_concurrent_generations=0,
            signup_mode="open",
            sources_top_k=(rag or RagSettings()).top_k,
            sources_min_similarity=(rag or RagSettings()).min_similarity,
        )


class SettingsInvalid(ValidationFailed):
    """One or more settings are out of range. `errors`: field name -> message; `message` joins
    them ("Default top-p must be in (0, 1], got 0"; each field named by its label)."""

    def __init__(self, errors: Mapping[str, str]) -> None:
        self.errors = dict(errors)
        super().__init__("; ".join(self.errors.values()))


class RuntimeSettingsStore:
    """Runtime settings over the ``app_settings`` table.

    Args:
        session_factory: SQLAlchemy sessionmaker (sync: call from a worker thread in async code,
            except get(), which reads the database only when the cache has expired).
        defaults: the environment's settings.
        context_length: the model's window in tokens; bounds the max_tokens fields when known.
        cache_ttl_s: how stale get() may be with respect to *other* processes' updates.
        clock: monotonic seconds (tests pass a fake).
        rag_defaults: the documents settings whose top_k / min_similarity are the defaults of
            sources_top_k / sources_min_similarity (None: RagSettings()).
    """

    def __init__(
        self,
        session_factory: sessionmaker[Session],
        defaults: Settings,
        context_length: int | None = None,
        cache_ttl_s: float = CACHE_TTL_S,
        clock: Callable[[], float] = time.monotonic,
        rag_defaults: RagSettings | None = None,
    ) -> None:
        self._sessions = session_factory
        self._defaults = RuntimeSettings.from_settings(defaults, context_length, rag_defaults)
        self._specs = {spec.name: spec for spec in field_specs(context_length or MAX_TOKENS_CEILING)}
        self._cache_ttl_s = cache_ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._cached: RuntimeSettings | None = None
        self._loaded_at = -math.inf

    @property
    def defaults(self) -> RuntimeSettings:
        """The values used where the admin set nothing."""
        return self._defaults

    def fields(self) -> list[FieldSpec]:
        """Every editable field, in form order, with its kind, range and help text."""
        return list(self._specs.values())

    def get(self) -> RuntimeSettings:
        """The current settings (cached; see the module docstring)."""
        cached = self._cached
        if cached is not None and self._clock() - self._loaded_at < self._cache_ttl_s:
            return cached
        with self._lock:
            if self._cached is None or self._clock() - self._loaded_at >= self._cache_ttl_s:
                self._cached = self._load()
                self._loaded_at = self._clock()
            return self._cached

    def update(self, changes: Mapping[str, object], actor_id: str | None) -> RuntimeSettings:
        """Validate and store `changes` (field -> value) all at once; returns the new settings.

        Values may be Python values or the strings a form posts ("0.7", "12", "" for no system
        prompt). Fields not named keep their value.

        Raises:
            SettingsInvalid (a ValidationFailed, code "invalid_input"): an unknown field, a value
                of the wrong type or out of range (the message names the field and the range), or
                default_max_tokens above max_max_tokens, or an agent_default_* named in `changes`
                above its agent_max_* (a maximum changed alone below its stored default is
                accepted: the default is then served at the maximum). Nothing is stored then.

        Changing an agent_max_* whose agent_default_* is not stored also stores that default at
        its current value (it would otherwise follow the new maximum: see RuntimeSettings).
        """
        errors: dict[str, str] = {}
        parsed: dict[str, object] = {}
        for name, raw in changes.items():
            spec = self._specs.get(name)
            if spec is None:
                errors[name] = f"{name} is not a setting"
                continue
            try:
                parsed[name] = parse_field(spec, raw)
            except ValueError as exc:
                errors[name] = str(exc)
        with self._lock:
            current = self._load()
            merged = replace(current, **{k: v for k, v in parsed.items()})
            if not errors and merged.default_max_tokens > merged.max_max_tokens:
                labels = {n: self._specs[n].label for n in ("default_max_tokens", "max_max_tokens")}
                errors["default_max_tokens"] = (
                    f"{labels['default_max_tokens']} ({merged.default_max_tokens}) must be at most "
                    f"{labels['max_max_tokens']} ({merged.max_max_tokens})"
                )
            for default, maximum in AGENT_BUDGET_PAIRS.items():
                if not errors and default in parsed and getattr(merged, default) > getattr(merged, maximum):
                    errors[default] = (
                        f"{self._specs[default].label} ({getattr(merged, default)}) must be at most "
                        f"{self._specs[maximum].label} ({getattr(merged, maximum)})")
            if errors:
                raise SettingsInvalid(errors)
            with self._sessions() as db:
                now = utcnow()
                stored = set(db.scalars(select(AppSetting.key)))
                # A maximum changed while its default is not stored: the default is stored as it is
                # served now, so that it does not follow the new maximum (see _load).
                pinned = {default: getattr(current, default) for default, maximum in AGENT_BUDGET_PAIRS.items()
                          if maximum in parsed and default not in parsed and default not in stored}
                for name, value in {**pinned, **parsed}.items():
                    row = db.get(AppSetting, name)
                    if row is None:
                        row = AppSetting(key=name)
                        db.add(row)
                    row.value = json.dumps(value)
                    row.updated_at = now
                    row.updated_by = actor_id
                db.commit()
            self._cached = self._load()
            self._loaded_at = self._clock()
            return self._cached

    def _load(self) -> RuntimeSettings:
        with self._sessions() as db:
            rows = {row.key: row.value for row in db.scalars(select(AppSetting))}
        values: dict[str, Any] = {}
        stored: set[str] = set()  # the fields read from a row (not a default)
        for f in dataclass_fields(RuntimeSettings):
            spec = self._specs[f.name]
            default = getattr(self._defaults, f.name)
            if f.name not in rows:
                values[f.name] = default
                continue
            try:
                values[f.name] = parse_field(spec, json.loads(rows[f.name]))
                stored.add(f.name)
            except ValueError as exc:  # edited by hand, or a range that shrank: keep serving
                log.warning("ignoring stored setting %s: %s", f.name, exc)
                values[f.name] = default
        # Stored before the defaults existed (migration 0012): a maximum was the budget of every
        # run, so its default is that maximum, not the dataclass's (which would lower the budget).
        for default_name, maximum in AGENT_BUDGET_PAIRS.items():
            if default_name not in stored and maximum in stored:
                values[default_name] = values[maximum]
        settings = RuntimeSettings(**values)
        if settings.default_max_tokens > settings.max_max_tokens:
            settings = replace(settings, default_max_tokens=settings.max_max_tokens)
        capped = {default: getattr(settings, maximum) for default, maximum in AGENT_BUDGET_PAIRS.items()
                  if getattr(settings, default) > getattr(settings, maximum)}
        return replace(settings, **capped) if capped else settings
