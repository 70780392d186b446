"""web.metrics_routes: who may read /metrics, and that a chat turn moves the numbers (read back
with prometheus_client's own parser)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Iterator

import pytest
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from backend.settings import Settings
from web.app import create_app

from .conftest import FakeGenerator, app_state, sign_up, use_session, user_id

METRICS_TOKEN = "scrape-token-0123456789abcdef"


@pytest.fixture
def token_client(settings: Settings, fake: FakeGenerator) -> Iterator[TestClient]:
    app = create_app(replace(settings, metrics_token=METRICS_TOKEN), generator=fake)
    with TestClient(app, follow_redirects=False) as test_client:
        yield test_client


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def chat_once(client: TestClient, text: str = "hello there") -> dict:
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "send", "client_msg_id": uuid.uuid4().hex, "conversation_id": None, "text": text})
        while True:
            frame = ws.receive_json()
            if frame["type"] in ("done", "error"):
                return frame


def test_anonymous_gets_401_with_a_bearer_challenge(client: TestClient) -> None:
    response = client.get("/metrics")
    assert response.status_code == 401
    assert response.headers["www-authenticate"].lower().startswith("bearer")
    assert "crescent_" not in response.text


def test_a_user_who_is_not_admin_gets_403(client: TestClient) -> None:
    sign_up(client, "alice")  # the first account: admin
    bob = sign_up(client, "bob")
    use_session(client, bob)
    response = client.get("/metrics")
    assert response.status_code == 403
    assert "crescent_" not in response.text


def test_admin_reads_engine_gauges_in_prometheus_format(client: TestClient) -> None:
    use_session(client, sign_up(client, "alice"))
    response = client.get("/metrics")
    assert response.status_code == 200
    # The content type generate_latest's format goes with, in the installed prometheus_client.
    assert response.headers["content-type"] == CONTENT_TYPE_LATEST
    values = samples(response.text)
    # FakeGenerator.stats(): running 1, waiting 2, KV 0.3, prefix cache 40 queries / 16 hits.
    assert values[("crescent_num_requests_running", ())] == 1
    assert values[("crescent_num_requests_waiting", ())] == 2
    assert values[("crescent_kv_cache_usage_perc", ())] == pytest.approx(0.3)
    assert values[("crescent_prefix_cache_queries_total", ())] == 40
    assert values[("crescent_prefix_cache_hits_total", ())] == 16


def test_a_chat_turn_moves_the_histograms_and_the_finished_counter(client: TestClient) -> None:
    use_session(client, sign_up(client, "alice"))
    before = samples(client.get("/metrics").text)
    finished = ("crescent_requests_finished_total", (("finish_reason", "stop"), ("source", "chat")))
    assert finished not in before
    assert before[("crescent_time_to_first_token_seconds_count", ())] == 0

    done = chat_once(client)
    assert done["type"] == "done" and done["finish_reason"] == "stop"

    after = samples(client.get("/metrics").text)
    assert after[finished] == 1
    # FakeGenerator's done: ttft 2.5 ms, e2e 9.5 ms, 4 tokens -> 3 gaps of 2 ms each.
    assert after[("crescent_time_to_first_token_seconds_count", ())] == 1
    assert after[("crescent_time_to_first_token_seconds_sum", ())] == pytest.approx(0.0025)
    assert after[("crescent_e2e_request_latency_seconds_sum", ())] == pytest.approx(0.0095)
    assert after[("crescent_inter_token_latency_seconds_count", ())] == 3
    assert after[("crescent_request_completion_tokens_total", (("source", "chat"),))] == 4


def test_rate_limited_chat_counts_a_rejection(client: TestClient) -> None:
    use_session(client, sign_up(client, "alice"))
    app_state(client).runtime_settings.update({"requests_per_minute": 1}, actor_id=None)
    assert chat_once(client)["type"] == "done"
    refused = chat_once(client)
    assert refused["type"] == "error" and refused["code"] == "rate_limited"
    values = samples(client.get("/metrics").text)
    assert values[("crescent_requests_rejected_total", (("kind", "rate_limited"),))] == 1
    assert values[("crescent_requests_rejected_total", (("kind", "overloaded"),))] == 0


def test_the_configured_bearer_token_reads_metrics_without_a_session(token_client: TestClient) -> None:
    response = token_client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert response.status_code == 200
    assert ("crescent_num_requests_running", ()) in samples(response.text)


@pytest.mark.parametrize("header", [f"Bearer {METRICS_TOKEN}x", "Bearer wrong", f"Bearer {METRICS_TOKEN[:-1]}"])
def test_a_wrong_bearer_token_is_401_even_with_an_admin_session(token_client: TestClient, header: str) -> None:
    use_session(token_client, sign_up(token_client, "alice"))
    response = token_client.get("/metrics", headers={"Authorization": header})
    assert response.status_code == 401


def test_without_a_configured_token_no_bearer_value_is_accepted(client: TestClient) -> None:
    for header in ("Bearer ", "Bearer None", "Bearer null"):
        assert client.get("/metrics", headers={"Authorization": header}).status_code == 401


def test_a_disabled_admin_loses_access_at_once(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    bob = sign_up(client, "bob")
    state = app_state(client)
    state.users.set_role(user_id(client, alice), user_id(client, bob), "admin")
    use_session(client, alice)
    assert client.get("/metrics").status_code == 200
    state.users.set_status(user_id(client, bob), user_id(client, alice), "disabled")
    assert client.get("/metrics").status_code == 401
