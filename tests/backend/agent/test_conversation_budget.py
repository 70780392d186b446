"""A run's budget per conversation: the admin's defaults and maximums (runtime settings
agent_default_* / agent_max_*), the conversation's own values (its ⚙ "Tool run limits",
migration 0012), checked against the admin's current maximum when set, and capped by it again when
a run starts (an admin lowering a maximum caps the conversations that chose more)."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, text

from backend.agent.access import BUDGET_FIELDS, budget_limits, budget_of
from backend.agent.budget import Budget, BudgetLimit
from backend.conversations import ConversationService
from backend.db import alembic_config, engine_url, run_migrations
from backend.errors import ValidationFailed
from backend.runtime_settings import RuntimeSettingsStore, SettingsInvalid
from backend.settings import Settings


@pytest.fixture
def store(session_factory):
    return RuntimeSettingsStore(session_factory, Settings(), context_length=2048)


@pytest.fixture
def conversations(session_factory):
    return ConversationService(session_factory)


# -- the effective budget ---------------------------------------------------------------------

def test_a_conversation_without_its_own_values_gets_the_admins_defaults(store):
    settings = store.update({"agent_default_steps": 5, "agent_default_tool_calls": 2, "agent_default_tokens": 900,
                             "agent_default_wall_s": 30}, actor_id=None)
    expected = Budget(max_steps=5, max_tool_calls=2, max_tokens=900, max_wall_s=30.0)
    assert budget_of(settings) == expected
    assert budget_of(settings, {name: None for name in BUDGET_FIELDS}) == expected


def test_the_conversations_values_override_the_defaults_within_the_maximums(store):
    settings = store.update({"agent_default_steps": 5, "agent_max_steps": 20}, actor_id=None)
    budget = budget_of(settings, {"agent_steps": 12, "agent_tool_calls": 3, "agent_tokens": None,
                                  "agent_wall_s": 60})
    assert budget == Budget(max_steps=12, max_tool_calls=3, max_tokens=16_000, max_wall_s=60.0)


def test_an_admin_lowering_a_maximum_caps_a_conversation_that_chose_more(store):
    chosen = {"agent_steps": 12, "agent_tool_calls": 6, "agent_tokens": 9_000, "agent_wall_s": 100}
    settings = store.update({"agent_max_steps": 20}, actor_id=None)
    assert budget_of(settings, chosen).max_steps == 12
    lowered = store.update({"agent_max_steps": 4, "agent_max_tool_calls": 2, "agent_max_tokens": 1_000,
                            "agent_max_wall_s": 10}, actor_id=None)
    assert budget_of(lowered, chosen) == Budget(max_steps=4, max_tool_calls=2, max_tokens=1_000, max_wall_s=10.0)


# -- the admin's defaults and maximums --------------------------------------------------------

def test_a_default_named_above_its_maximum_is_refused_with_both_labels(store):
    with pytest.raises(SettingsInvalid) as caught:
        store.update({"agent_default_tool_calls": 9, "agent_max_tool_calls": 4}, actor_id=None)
    assert caught.value.errors == {
        "agent_default_tool_calls": "Default tool calls per run (9) must be at most Tool calls per run (maximum) (4)"}
    assert (store.get().agent_default_tool_calls, store.get().agent_max_tool_calls) == (8, 8)  # nothing stored


def test_a_maximum_lowered_alone_brings_its_default_down_and_back(store):
    assert store.update({"agent_max_wall_s": 30}, actor_id=None).agent_default_wall_s == 30
    assert store.update({"agent_max_wall_s": 600}, actor_id=None).agent_default_wall_s == 120  # the stored default


def test_the_defaults_are_fields_of_the_agent_group_beside_their_maximums(store):
    fields = {f.name: f for f in store.fields()}
    for dimension in ("steps", "tool_calls", "tokens", "wall_s"):
        default, maximum = fields[f"agent_default_{dimension}"], fields[f"agent_max_{dimension}"]
        assert default.group == maximum.group == "agent"
        assert (default.minimum, default.maximum) == (maximum.minimum, maximum.maximum)
        assert maximum.label.endswith("(maximum)") and default.label.startswith("Default ")
    with pytest.raises(SettingsInvalid) as caught:
        store.update({"agent_default_steps": 2}, actor_id=None)
    assert caught.value.errors["agent_default_steps"].startswith("Default steps per run must be in [3, 50], got 2")


def test_the_limits_a_conversation_may_choose_follow_the_admin(store):
    settings = store.update({"agent_default_tokens": 2_000, "agent_max_tokens": 5_000}, actor_id=None)
    limits = budget_limits(settings)
    assert limits["agent_tokens"] == BudgetLimit(default=2_000, minimum=1, maximum=5_000)
    assert limits["agent_steps"] == BudgetLimit(default=8, minimum=3, maximum=8)


# -- a conversation's own values --------------------------------------------------------------

def test_a_conversation_stores_its_budget_and_null_resets_it(store, conversations, turn):
    limits = budget_limits(store.update({"agent_max_steps": 20}, actor_id=None))
    chosen = {"agent_steps": 15, "agent_tool_calls": 1, "agent_tokens": 4_000, "agent_wall_s": 45}
    stored = conversations.update_settings(turn.user_id, turn.conversation_id, chosen, 2048, limits)
    assert {name: getattr(stored, name) for name in BUDGET_FIELDS} == chosen
    again = conversations.get_conversation(turn.user_id, turn.conversation_id).settings
    assert {name: getattr(again, name) for name in BUDGET_FIELDS} == chosen
    reset = conversations.update_settings(turn.user_id, turn.conversation_id, {"agent_steps": None}, 2048, limits)
    assert reset.agent_steps is None and reset.agent_tool_calls == 1


@pytest.mark.parametrize("name, value, message", [
    ("agent_steps", 9, "agent_steps must be a whole number in [3, 8] (the administrator's maximum) or null "
                       "(the default, 8), got 9"),
    ("agent_steps", 2, "agent_steps must be a whole number in [3, 8]"),
    ("agent_tool_calls", 0, "agent_tool_calls must be a whole number in [1, 8]"),
    ("agent_tokens", 16_001, "agent_tokens must be a whole number in [1, 16000]"),
    ("agent_wall_s", 4.5, "agent_wall_s must be a whole number in [1, 120]"),
    ("agent_wall_s", True, "agent_wall_s must be a whole number"),
    ("agent_tokens", "100", "agent_tokens must be a whole number"),
])
def test_a_value_outside_the_admins_range_is_refused_naming_the_field(store, conversations, turn, name, value,
                                                                      message):
    limits = budget_limits(store.get())
    with pytest.raises(ValidationFailed) as caught:
        conversations.update_settings(turn.user_id, turn.conversation_id, {"agent_steps": 5, name: value}, 2048,
                                      limits)
    assert caught.value.message.startswith(message)
    assert conversations.get_conversation(turn.user_id, turn.conversation_id).settings.agent_steps is None


# -- migration 0012 ---------------------------------------------------------------------------

def test_0012_adds_the_budget_columns_and_round_trips(db_url):
    engine = create_engine(engine_url(db_url))
    try:
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO users (id, username, username_key, password_hash, created_at) "
                              "VALUES ('u', 'u', 'u', 'x', '2026-01-01 00:00:00')"))
            conn.execute(text("INSERT INTO conversations (id, user_id, title, created_at, updated_at, agent_steps, "
                              "agent_tokens) VALUES ('c', 'u', 'kept', '2026-01-01', '2026-01-01', 5, 10000000000)"))
        command.downgrade(alembic_config(db_url), "0011")
        assert not set(BUDGET_FIELDS) & {c["name"] for c in inspect(engine).get_columns("conversations")}
        with engine.connect() as conn:  # the conversation survived the downgrade
            assert conn.execute(text("SELECT title FROM conversations")).all() == [("kept",)]
        run_migrations(db_url)
        with engine.connect() as conn:  # existing conversations follow the defaults
            row = conn.execute(text("SELECT agent_steps, agent_tool_calls, agent_tokens, agent_wall_s "
                                    "FROM conversations")).one()
        assert tuple(row) == (None, None, None, None)
    finally:
        engine.dispose()


@pytest.mark.parametrize("value, shown", [(True, "got true"), ("5", 'got "5"'), (2.5, "got 2.5")])
def test_a_refused_budget_value_is_named_as_the_client_wrote_it(value, shown):
    # New-user run (2026-12-02): the message said "got True" (Python's spelling of JSON's true).
    from backend.conversation_settings import validate_settings

    with pytest.raises(ValidationFailed) as refused:
        validate_settings({"agent_steps": value}, 4096)
    assert refused.value.message.endswith(shown)
