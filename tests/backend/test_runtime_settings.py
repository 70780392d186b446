from __future__ import annotations

import json
from dataclasses import fields

import pytest
from sqlalchemy import select

from backend.auth import AuthService
from backend.errors import ValidationFailed
from backend.models import AppSetting
from backend.runtime_settings import RuntimeSettings, RuntimeSettingsStore, SettingsInvalid
from backend.settings import Settings

ENV = Settings(system_prompt="From the environment.", max_tokens=256, temperature=0.6, top_p=0.9)


@pytest.fixture
def store(session_factory):
    return RuntimeSettingsStore(session_factory, ENV, context_length=2048)


def stored_rows(session_factory) -> dict[str, str]:
    with session_factory() as db:
        return {row.key: row.value for row in db.scalars(select(AppSetting))}


def test_defaults_come_from_the_environment(store):
    assert store.get() == RuntimeSettings(
        system_prompt="From the environment.", default_max_tokens=256, max_max_tokens=2048,
        default_temperature=0.6, default_top_p=0.9, requests_per_minute=0, tokens_per_day=0,
        max_concurrent_generations=0, signup_mode="open", default_frequency_penalty=0.3,
    )  # fmt: skip


def test_without_a_context_length_the_maximum_is_generous(session_factory):
    assert RuntimeSettingsStore(session_factory, Settings(max_tokens=8000)).get().max_max_tokens == 8000
    assert RuntimeSettingsStore(session_factory, Settings(max_tokens=10)).get().max_max_tokens == 4096


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("default_max_tokens", 0, "Default max tokens must be in [1, 2048], got 0"),
        ("default_max_tokens", 2049, "Default max tokens must be in [1, 2048], got 2049"),
        ("max_max_tokens", "lots", "Maximum max tokens must be a whole number, got 'lots'"),
        ("max_max_tokens", 12.5, "Maximum max tokens must be a whole number, got 12.5"),
        ("default_temperature", 2.01, "Default temperature must be in [0, 2], got 2.01"),
        ("default_temperature", -0.5, "Default temperature must be in [0, 2], got -0.5"),
        ("default_temperature", "nan", "Default temperature must be a finite number, got nan"),
        ("default_top_p", 0, "Default top-p must be in (0, 1], got 0"),
        ("default_top_p", "1.5", "Default top-p must be in (0, 1], got 1.5"),
        ("default_frequency_penalty", 2.5, "Frequency penalty (chat) must be in [0, 2], got 2.5"),
        ("default_frequency_penalty", -0.1, "Frequency penalty (chat) must be in [0, 2], got -0.1"),
        ("requests_per_minute", -1, "Requests per minute must be in [0, 100000], got -1"),
        ("tokens_per_day", 1.5, "Tokens per day must be a whole number, got 1.5"),
        ("max_concurrent_generations", True, "Concurrent generations must be a number"),
        ("max_concurrent_generations", 1001, "Concurrent generations must be in [0, 1000], got 1001"),
        ("signup_mode", "maybe", "Sign-up must be one of open, approval, closed, got 'maybe'"),
        ("system_prompt", "x" * 8001, "Default system prompt must be at most 8000 characters, got 8001"),
        ("system_prompt", 42, "Default system prompt must be text"),
        ("temperature", 0.5, "temperature is not a setting"),
    ],
)
def test_a_bad_value_is_refused_with_the_field_and_its_range(store, session_factory, name, value, message):
    before = store.get()
    with pytest.raises(SettingsInvalid) as excinfo:
        store.update({name: value}, actor_id=None)
    assert isinstance(excinfo.value, ValidationFailed) and excinfo.value.code == "invalid_input"
    assert excinfo.value.errors == {name: message} and excinfo.value.message == message
    assert store.get() == before and stored_rows(session_factory) == {}


@pytest.mark.parametrize(
    "name, value, expected",
    [
        ("default_max_tokens", 1, 1),
        ("max_max_tokens", "2048", 2048),
        ("default_temperature", 0, 0.0),
        ("default_temperature", "2", 2.0),
        ("default_top_p", 1, 1.0),
        ("default_top_p", "0.001", 0.001),
        ("requests_per_minute", "0", 0),
        ("tokens_per_day", 10_000, 10_000),
        ("max_concurrent_generations", 3.0, 3),
        ("signup_mode", "approval", "approval"),
        ("system_prompt", "Be brief.\r\nUse lists.", "Be brief.\nUse lists."),
        ("system_prompt", "   ", None),  # an empty form field: the model's own default
        ("system_prompt", None, None),
    ],
)
def test_good_values_at_the_edges_are_stored(store, session_factory, name, value, expected):
    updated = store.update({name: value}, actor_id=None)
    assert getattr(updated, name) == expected
    assert json.loads(stored_rows(session_factory)[name]) == expected


def test_an_update_is_all_or_nothing(store, session_factory):
    before = store.get()
    with pytest.raises(SettingsInvalid) as excinfo:
        store.update({"requests_per_minute": 5, "default_top_p": 0, "signup_mode": "nope"}, actor_id=None)
    assert set(excinfo.value.errors) == {"default_top_p", "signup_mode"}
    assert store.get() == before and stored_rows(session_factory) == {}


def test_default_max_tokens_may_not_exceed_the_maximum(store, session_factory):
    with pytest.raises(SettingsInvalid) as excinfo:
        store.update({"max_max_tokens": 100}, actor_id=None)  # the default is 256
    assert excinfo.value.errors == {
        "default_max_tokens": "Default max tokens (256) must be at most Maximum max tokens (100)"
    }
    assert stored_rows(session_factory) == {}
    # Both in one update: checked together.
    updated = store.update({"max_max_tokens": 100, "default_max_tokens": 80}, actor_id=None)
    assert (updated.max_max_tokens, updated.default_max_tokens) == (100, 80)


def test_an_update_shows_at_once_and_survives_a_restart(store, session_factory, fast_hasher):
    admin = AuthService(session_factory, 3600, fast_hasher).sign_up("root", "password one")
    store.get()  # cached
    updated = store.update({"system_prompt": "Answer in French.", "tokens_per_day": 5000}, actor_id=admin.id)
    assert store.get() == updated
    assert (updated.system_prompt, updated.tokens_per_day) == ("Answer in French.", 5000)
    assert updated.default_temperature == 0.6  # untouched fields keep their values
    restarted = RuntimeSettingsStore(session_factory, ENV, context_length=2048)
    assert restarted.get() == updated
    with session_factory() as db:
        row = db.get(AppSetting, "tokens_per_day")
        assert (row.value, row.updated_by) == ("5000", admin.id)


def test_another_process_sees_a_change_within_the_cache_ttl(session_factory):
    now = [100.0]
    reader = RuntimeSettingsStore(session_factory, ENV, cache_ttl_s=5.0, clock=lambda: now[0])
    writer = RuntimeSettingsStore(session_factory, ENV)
    assert reader.get().requests_per_minute == 0
    writer.update({"requests_per_minute": 7}, actor_id=None)
    now[0] += 4.9
    assert reader.get().requests_per_minute == 0  # still the cached snapshot
    now[0] += 0.2
    assert reader.get().requests_per_minute == 7


def test_a_bad_stored_value_falls_back_to_the_default(store, session_factory, caplog):
    with session_factory() as db:
        db.add(AppSetting(key="default_top_p", value="7"))
        db.add(AppSetting(key="signup_mode", value='"closed"'))
        db.add(AppSetting(key="retired_setting", value="1"))
        db.commit()
    current = store.get()
    assert (current.default_top_p, current.signup_mode) == (0.9, "closed")
    assert "default_top_p" in caplog.text


def test_fields_describe_every_setting_for_the_form(store):
    specs = store.fields()
    assert [s.name for s in specs] == [f.name for f in fields(RuntimeSettings)]
    by_name = {s.name: s for s in specs}
    assert all(s.help and s.label for s in specs)
    assert (by_name["default_max_tokens"].minimum, by_name["default_max_tokens"].maximum) == (1, 2048)
    assert by_name["default_top_p"].min_exclusive and by_name["default_top_p"].maximum == 1.0
    assert by_name["signup_mode"].choices == ("open", "approval", "closed")
    assert by_name["requests_per_minute"].kind == "int" and by_name["requests_per_minute"].minimum == 0
    assert by_name["system_prompt"].kind == "text" and by_name["system_prompt"].max_length == 8000


def test_maximums_stored_before_the_defaults_existed_stay_every_runs_budget(store, session_factory):
    """An upgrade from before agent_default_* (migration 0012): the stored maximum was the budget of
    every run, so the default that is not stored is that maximum, not the built-in 8 steps / 16000
    tokens (which would lower the budget of every run)."""
    with session_factory() as db:  # what the admin page stored before the upgrade
        db.add(AppSetting(key="agent_max_tokens", value="64000"))
        db.add(AppSetting(key="agent_max_steps", value="20"))
        db.commit()
    current = store.get()
    assert (current.agent_default_tokens, current.agent_max_tokens) == (64_000, 64_000)
    assert (current.agent_default_steps, current.agent_max_steps) == (20, 20)
    assert (current.agent_default_tool_calls, current.agent_default_wall_s) == (8, 120)  # nothing stored
    # Raising a maximum later leaves the default where it was (stored as served), not at the new maximum.
    raised = store.update({"agent_max_steps": 30}, actor_id=None)
    assert (raised.agent_default_steps, raised.agent_max_steps) == (20, 30)
    assert json.loads(stored_rows(session_factory)["agent_default_steps"]) == 20
    assert RuntimeSettingsStore(session_factory, ENV, context_length=2048).get() == raised  # after a restart


def test_a_maximum_set_on_a_fresh_deployment_leaves_the_built_in_default(store, session_factory):
    assert store.update({"agent_max_tokens": 50_000}, actor_id=None).agent_default_tokens == 16_000
    assert json.loads(stored_rows(session_factory)["agent_default_tokens"]) == 16_000
    assert store.update({"agent_default_tokens": 40_000}, actor_id=None).agent_default_tokens == 40_000
