"""The runtime settings' fields (backend.runtime_settings): their ranges, how the admin form shows
each (:class:`FieldSpec`, :func:`field_specs`) and how a submitted value is converted and checked
(:func:`parse_field`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

SIGNUP_MODES = ("open", "approval", "closed")
MAX_SYSTEM_PROMPT_CHARS = 8_000
# Without a known context window, the largest max_tokens the store accepts.
MAX_TOKENS_CEILING = 1_000_000
# Per-user limits above these are typos, not policies.
MAX_REQUESTS_PER_MINUTE = 100_000
MAX_TOKENS_PER_DAY = 10_000_000_000
MAX_CONCURRENT = 1_000
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


def field_specs(max_tokens_limit: int) -> tuple[FieldSpec, ...]:
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
        FieldSpec("default_frequency_penalty", "Frequency penalty (chat)", "float",
                  "Taken off a token's score once per time the reply has used it, so that a small model does "
                  "not repeat itself to the token limit; 0 turns it off. The API uses the client's.",
                  0.0, 2.0, group="sampling"),
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


def parse_field(spec: FieldSpec, raw: object) -> object:
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
