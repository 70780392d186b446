"""A conversation's own run budget through /api/conversations/{id}/settings: the answer carries
the admin's defaults and maximums, a value above the maximum is refused naming the field, null
goes back to the default, and the run uses the conversation's value, capped by a maximum the
admin lowers later (the model is scripted: every step reports 10 prompt tokens)."""

from __future__ import annotations

from .conftest import app_state, csrf_headers, sign_up, wait_until
from .test_agent_runs import CALC, fake, runs, send, tools_on, until_done  # noqa: F401 (fake: the scripted model)

NO_BUDGET = {"agent_steps": None, "agent_tool_calls": None, "agent_tokens": None, "agent_wall_s": None}


def test_the_conversations_budget_is_checked_stored_and_used_by_its_runs(client, fake):
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token)
    url = f"/api/conversations/{conversation_id}/settings"
    runtime = app_state(client).runtime_settings
    runtime.update({"agent_default_tokens": 4_000, "agent_max_tokens": 6_000}, actor_id=None)
    first = client.get(url).json()
    assert {k: first["settings"][k] for k in NO_BUDGET} == NO_BUDGET
    assert first["agent_limits"]["agent_tokens"] == {"default": 4_000, "minimum": 1, "maximum": 6_000}
    assert first["agent_limits"]["agent_steps"] == {"default": 8, "minimum": 3, "maximum": 8}

    refused = client.patch(url, json={"agent_tokens": 6_001}, headers=csrf_headers(client))
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid_input"
    assert refused.json()["error"]["message"].startswith(
        "agent_tokens must be a whole number in [1, 6000] (the administrator's maximum)")
    saved = client.patch(url, json={"agent_tokens": 10, "agent_wall_s": 60}, headers=csrf_headers(client))
    assert saved.status_code == 200, saved.text
    assert (saved.json()["settings"]["agent_tokens"], saved.json()["settings"]["agent_wall_s"]) == (10, 60)

    fake.replies = [[CALC], [CALC]]  # each run's first step: 10 prompt tokens and 1 completion token
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id)
        until_done(ws)
        run = wait_until(lambda: runs(client)[0].status != "running" and runs(client)[0])
        assert (run.status, run.ending) == ("budget", "the token limit of the run (10) was reached"), run.budget_used
        runtime.update({"agent_max_tokens": 5}, actor_id=None)  # the admin lowers the maximum: it caps 10
        send(ws, conversation_id)
        until_done(ws)
    wait_until(lambda: all(run.status != "running" for run in runs(client)))
    assert sorted(run.ending for run in runs(client)) == ["the token limit of the run (10) was reached",
                                                          "the token limit of the run (5) was reached"]
    after = client.get(url).json()
    assert after["settings"]["agent_tokens"] == 10 and after["agent_limits"]["agent_tokens"]["maximum"] == 5

    reset = client.patch(url, json={"agent_tokens": None, "agent_wall_s": None}, headers=csrf_headers(client))
    assert {k: reset.json()["settings"][k] for k in NO_BUDGET} == NO_BUDGET
