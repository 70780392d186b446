"""Parsing and validating a /v1 request (the jsonschema meta-schema checks of a large schema or
many tools) runs off the event loop: a slow one does not hold up a concurrent /healthz."""

from __future__ import annotations

import threading

import web.openai_api
from tests.web.test_openai_api import HI, MODEL, keys, post  # noqa: F401 (fixtures)
from tests.web.test_openai_tools import ToolFake
import pytest


@pytest.fixture
def fake() -> ToolFake:
    return ToolFake()


def test_a_slow_validation_does_not_block_healthz(client, keys, fake, monkeypatch):
    entered, release = threading.Event(), threading.Event()
    timed_out = []
    real = web.openai_api.parse_request

    def slow_parse(*args, **kwargs):
        entered.set()
        # Held until /healthz has answered; on the event loop /healthz could not answer first.
        timed_out.append(not release.wait(10))
        return real(*args, **kwargs)

    monkeypatch.setattr(web.openai_api, "parse_request", slow_parse)
    responses = []
    worker = threading.Thread(target=lambda: responses.append(post(
        client, keys, "/v1/chat/completions", {"model": MODEL, "messages": HI})))
    worker.start()
    assert entered.wait(10)
    assert client.get("/healthz").status_code == 200
    release.set()
    worker.join(20)
    assert timed_out == [False]
    assert responses[0].status_code == 200


def test_building_a_new_grammar_does_not_block_healthz(client, keys, fake):
    # The engine builds a new constraint's grammar in its generator's prepare(): in a worker
    # thread, before the request is queued on the loop.
    entered, release = threading.Event(), threading.Event()
    prepared = []

    def slow_prepare(params):
        entered.set()
        prepared.append(release.wait(10))

    fake.prepare = slow_prepare
    body = {"model": MODEL, "messages": HI,
            "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}}
    responses = []
    worker = threading.Thread(target=lambda: responses.append(post(client, keys, "/v1/chat/completions", body)))
    worker.start()
    assert entered.wait(10)
    assert client.get("/healthz").status_code == 200
    release.set()
    worker.join(20)
    assert prepared == [True]
    assert responses[0].status_code == 200


def test_a_grammar_refused_while_prepared_is_a_400_naming_the_parameter(client, keys, fake):
    from backend.generator import InvalidOutputConstraint

    def refuse(params):
        raise InvalidOutputConstraint("response_format: allows no output", "response_format")

    fake.prepare = refuse
    body = {"model": MODEL, "messages": HI,
            "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}}
    response = post(client, keys, "/v1/chat/completions", body)
    assert response.status_code == 400 and response.json()["error"]["param"] == "response_format", response.text
