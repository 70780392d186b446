"""Settings an admin changes while the server runs: stored in the database, validated, cached.

The environment (:class:`backend.settings.Settings`) gives the defaults; a value the admin set
lives in ``app_settings`` as JSON (one row per field) and wins over the default. Every change is
validated field by field against :data:`FIELD_SPECS` (the admin page's form is generated from
:meth:`RuntimeSettingsStore.fields`) and applied all-or-nothing.

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
from backend.settings import Settings

log = logging.getLogger(__name__)

SIGNUP_MODES = ("open", "approval", "closed")
MAX_SYSTEM_PROMPT_CHARS = 8_000
# Without a known context window, the largest max_tokens the store accepts.
MAX_TOKENS_CEILING = 1_000_000
# Per-user limits above these are typos, not policies.
MAX_REQUESTS_PER_MINUTE = 100_000
MAX_TOKENS_PER_DAY = 10_000_000_000
MAX_CONCURRENT = 1_000
CACHE_TTL_S = 5.0
MAX_UNWATCHED_S = 24 * 3600
MAX_SOURCES = 50  # backend.rag.settings.RagSettings accepts top_k up to this
AGENT_ACCESS = ("off", "admins", "everyone")
AGENT_POLICIES = ("planned", "one_call", "auto")  # backend.agent.runs.POLICIES
MAX_AGENT_STEPS = 50
# The fewest steps a run may be given: one model call, its tool step and the answer (fewer ends
# every run that calls a tool on the step limit, with no answer).
MIN_AGENT_STEPS = 3
MAX_AGENT_WALL_S = 3600


@dataclass(frozen=True)
class RuntimeSettings:
    """One consistent snapshot of the runtime settings.

    system_prompt: None keeps the chat template's own default system prompt.
    default_max_tokens: reply length (tokens) when a request names none; <= max_max_tokens.
    max_max_tokens: the most a request may ask for (the API refuses more; chat uses the default).
    default_temperature: [0, 2]; default_top_p: (0, 1].
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
            requests_per_minute=0,
            tokens_per_day=0,
            max_concurrent_generations=0,
            signup_mode="open",
            sources_top_k=(rag or RagSettings()).top_k,
            sources_min_similarity=(rag or RagSettings()).min_similarity,
        )


@dataclass(frozen=True)
class FieldSpec:
    """How one setting is edited and checked; the admin form is generated from these.

    kind: "text" (str or None), "int", "float" or "choice". minimum/maximum are inclusive unless
    min_exclusive; choices for "choice"; max_length for "text". help: one line for the form.
    range_reason: why the range is what it is, ending an out-of-range error ("" none).
    """

    name: str
    label: str
    kind: str
    help: str
    minimum: float | None = None
    maximum: float | None = None
    min_exclusive: bool = False
    choices: tuple[str, ...] = ()
    max_length: int | None = None
    group: str = "general"
    range_reason: str = ""  # why the range is what it is, added to an out-of-range error

    def range_text(self) -> str:
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "text":
            return f"at most {self.max_length} characters"
        low = "(" if self.min_exclusive else "["
        return f"in {low}{_num(self.minimum)}, {_num(self.maximum)}]"


def _num(value: float | None) -> str:
    if value is None:
        return "?"
    return str(int(value)) if float(value).is_integer() else str(value)


def _field_specs(max_tokens_limit: int) -> tuple[FieldSpec, ...]:
    return (
        FieldSpec("system_prompt", "Default system prompt", "text",
                  "Sent before every chat. Empty: the model's own default.",
                  max_length=MAX_SYSTEM_PROMPT_CHARS, group="chat"),
        FieldSpec("default_max_tokens", "Default max tokens", "int",
                  "Reply length in tokens when a request names none.",
                  1, max_tokens_limit, group="sampling"),
        FieldSpec("max_max_tokens", "Maximum max tokens", "int",
                  "The most tokens one request may ask for.", 1, max_tokens_limit, group="sampling"),
        FieldSpec("default_temperature", "Default temperature", "float",
                  "0 is greedy; higher is more varied.", 0.0, 2.0, group="sampling"),
        FieldSpec("default_top_p", "Default top-p", "float",
                  "Nucleus sampling; 1 disables it.", 0.0, 1.0, min_exclusive=True, group="sampling"),
        FieldSpec("requests_per_minute", "Requests per minute", "int",
                  "Per user, chat and API together. 0: unlimited.", 0, MAX_REQUESTS_PER_MINUTE,
                  group="limits"),
        FieldSpec("tokens_per_day", "Tokens per day", "int",
                  "Per user, prompt + completion, per UTC day. 0: unlimited.", 0, MAX_TOKENS_PER_DAY,
                  group="limits"),
        FieldSpec("max_concurrent_generations", "Concurrent generations", "int",
                  "Replies one user may have generating at once, watched or not. 0: unlimited.",
                  0, MAX_CONCURRENT, group="limits"),
        FieldSpec("signup_mode", "Sign-up", "choice",
                  "open: anyone; approval: new accounts wait for an admin; closed: no sign-up.",
                  choices=SIGNUP_MODES, group="accounts"),
        FieldSpec("sources_top_k", "Sources per answer", "int",
                  "Passages of the user's documents put into a prompt that uses documents.",
                  1, MAX_SOURCES, group="documents"),
        FieldSpec("sources_min_similarity", "Relevance floor", "float",
                  "Cosine similarity a passage needs to be used as a source; -1 disables the floor.",
                  -1.0, 1.0, group="documents"),
        FieldSpec("unwatched_reply_s", "Reply with nobody watching (s)", "int",
                  "How long a chat reply goes on once no page shows it. -1: to its end; "
                  "0: it stops when the last page closes.", -1, MAX_UNWATCHED_S, group="chat"),
        FieldSpec("agent_tools", "Tools in chat", "choice",
                  "Who may turn on tools (search, calculator, notes...) in a conversation.",
                  choices=AGENT_ACCESS, group="agent"),
        FieldSpec("agent_side_effects", "Tools that write", "choice",
                  "Who, among those, may call tools that change data (save_note); a run offers such a tool "
                  "only when the person's own message asks for it (save_note: \"save a note …\", \"remember that …\").",
                  choices=AGENT_ACCESS, group="agent"),
        *_agent_budget_specs(),
        FieldSpec("agent_policy", "How the model uses tools", "choice",
                  "planned: the server picks the tools a message needs (arithmetic, the time, your "
                  "documents) and the model uses their results (small models, such as the default "
                  "SmolLM2-135M); one_call: one tool call on every turn, then the answer; auto: the "
                  "model chooses tools or the answer at every step (capable models).",
                  choices=AGENT_POLICIES, group="agent"),
    )


# The run budget's dimensions: (name in agent_default_* / agent_max_*, label, help, minimum,
# maximum, range_reason). A conversation may choose its own value up to the maximum.
_AGENT_BUDGET = (
    ("steps", "Steps per run", f"Model calls and tool steps one agent run may take; at least {MIN_AGENT_STEPS}: "
     "a model call, its tool step and the answer.", MIN_AGENT_STEPS, MAX_AGENT_STEPS,
     f"a run needs {MIN_AGENT_STEPS} steps for one tool call and an answer: the model's call, the tool step and "
     "the answer"),
    ("tool_calls", "Tool calls per run", "Tool calls one agent run may make.", 1, MAX_AGENT_STEPS, ""),
    ("tokens", "Tokens per run", "Prompt and completion tokens of every model step of one run, summed: each "
     "step's prompt counts again (the first prompt with the tools is 700 to 850 tokens for the default model).",
     1, MAX_TOKENS_PER_DAY, ""),
    ("wall_s", "Time per run (s)", "Seconds one agent run may take.", 1, MAX_AGENT_WALL_S, ""),
)
# default field -> its maximum field
AGENT_BUDGET_PAIRS = {f"agent_default_{name}": f"agent_max_{name}" for name, *_ in _AGENT_BUDGET}
# Each dimension's (name, least value, largest maximum an admin may set).
AGENT_BUDGET_RANGES = tuple((name, low, high) for name, _, _, low, high, _ in _AGENT_BUDGET)


def _agent_budget_specs() -> list[FieldSpec]:
    specs = []
    for name, label, help_text, low, high, reason in _AGENT_BUDGET:
        specs.append(FieldSpec(f"agent_default_{name}", f"Default {label[0].lower()}{label[1:]}", "int",
                               help_text + " Used in a conversation that sets none of its own; at most the maximum.",
                               low, high, group="agent", range_reason=reason))
        specs.append(FieldSpec(f"agent_max_{name}", f"{label} (maximum)", "int",
                               help_text + " The most a conversation may choose (lowering it caps those that chose "
                               "more).", low, high, group="agent", range_reason=reason))
    return specs


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
        self._specs = {spec.name: spec for spec in _field_specs(context_length or MAX_TOKENS_CEILING)}
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
                parsed[name] = _parse(spec, raw)
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
                values[f.name] = _parse(spec, json.loads(rows[f.name]))
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


def _parse(spec: FieldSpec, raw: object) -> object:
    """One field's value, converted and range-checked. Raises ValueError naming the field by its
    label, as the admin sees it ("Requests per minute must be in [0, 100000], got -3")."""
    name = spec.label
    if spec.kind == "text":
        if raw is None:
            return None
        if not isinstance(raw, str):
            raise ValueError(f"{name} must be text")
        text = raw.replace("\r\n", "\n")
        if len(text) > (spec.max_length or 0):
            raise ValueError(f"{name} must be {spec.range_text()}, got {len(text)}")
        if "\x00" in text:
            raise ValueError(f"{name} must not contain NUL characters")
        return text if text.strip() else None
    if spec.kind == "choice":
        if raw not in spec.choices:
            raise ValueError(f"{name} must be {spec.range_text()}, got {raw!r}")
        return raw
    value = _number(spec, raw)
    low, high = spec.minimum, spec.maximum
    below = value <= low if spec.min_exclusive else value < low  # type: ignore[operator]
    if below or value > high:  # type: ignore[operator]
        reason = f" ({spec.range_reason})" if spec.range_reason else ""
        raise ValueError(f"{name} must be {spec.range_text()}, got {_num(value)}{reason}")
    return value


def _number(spec: FieldSpec, raw: object) -> int | float:
    kind = int if spec.kind == "int" else float
    if isinstance(raw, bool):
        raise ValueError(f"{spec.label} must be a number")
    if isinstance(raw, str):
        try:
            raw = kind(raw.strip())
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise ValueError(f"{spec.label} must be {what}, got {raw!r}") from None
    if kind is int:
        if isinstance(raw, float) and raw.is_integer():
            raw = int(raw)
        if not isinstance(raw, int):
            raise ValueError(f"{spec.label} must be a whole number, got {raw!r}")
        return raw
    if not isinstance(raw, (int, float)) or not math.isfinite(raw):
        raise ValueError(f"{spec.label} must be a finite number, got {raw!r}")
    return float(raw)
