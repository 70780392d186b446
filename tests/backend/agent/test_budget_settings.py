"""The admin's run budget: a step budget below one call and its answer is refused with a clear
message (an admin's 1 used to end every run before any answer); a value stored before the rule
is ignored; the token budget's help says what it counts. The smallest budget answers."""

from __future__ import annotations

import json

import pytest

from backend.agent.access import budget_of
from backend.agent.budget import Budget
from backend.agent.runs import POLICY_ONE_CALL
from backend.models import AppSetting
from backend.runtime_setting_fields import MIN_AGENT_STEPS
from backend.runtime_settings import RuntimeSettingsStore, SettingsInvalid
from backend.settings import Settings

from .scripted import ScriptedGenerator, call_text
from .test_runs import go


@pytest.fixture
def store(session_factory):
    return RuntimeSettingsStore(session_factory, Settings(), context_length=2048)


@pytest.mark.parametrize("steps", [1, 2, "2"])
def test_a_step_budget_that_cannot_allow_a_call_and_an_answer_is_refused(store, steps):
    with pytest.raises(SettingsInvalid) as caught:
        store.update({"agent_max_steps": steps}, actor_id=None)
    assert caught.value.errors["agent_max_steps"] == (
        f"Steps per run (maximum) must be in [3, 50], got {steps} (a run needs 3 steps for one tool call and an answer: "
        "the model's call, the tool step and the answer)")
    assert store.get().agent_max_steps == 8


def test_three_steps_are_allowed_and_a_stored_one_is_ignored(store, session_factory):
    assert MIN_AGENT_STEPS == 3
    assert store.update({"agent_max_steps": 3}, actor_id=None).agent_max_steps == 3
    with session_factory() as db:  # a value stored before the minimum: served as the default
        db.get(AppSetting, "agent_max_steps").value = json.dumps(1)
        db.commit()
    fresh = RuntimeSettingsStore(session_factory, Settings(), context_length=2048)
    assert fresh.get().agent_max_steps == 8


def test_the_help_says_what_the_budgets_count(store):
    fields = {f.name: f for f in store.fields()}
    assert fields["agent_max_steps"].minimum == 3 and "at least 3" in fields["agent_max_steps"].help
    tokens = fields["agent_max_tokens"].help
    assert "Prompt and completion tokens of every model step" in tokens and "850 tokens" in tokens
    assert "asks for it" in fields["agent_side_effects"].help


async def test_the_smallest_step_budget_gets_a_call_and_its_answer(make_runner, turn, stop, store, tools):
    budget = budget_of(store.update({"agent_max_steps": MIN_AGENT_STEPS}, actor_id=None))
    assert budget.max_steps == 3 and isinstance(budget, Budget)
    generator = ScriptedGenerator([[call_text(("add", {"a": 2, "b": 3}))], ["It is 5."]])
    result = await go(make_runner(generator, budget=budget, policy=POLICY_ONE_CALL), turn, stop)
    assert (result.status, result.text, result.ending) == ("done", "It is 5.", None)
    assert [e[0] for e in tools.executions] == ["add"]
