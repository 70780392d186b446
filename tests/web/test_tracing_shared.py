"""Traces shared by several processes (backend/cluster/shared_traces.py): with REDIS_URL, the
admin's waterfall on one process shows a reply's trace made on another; the shared store is
bounded; a Redis outage is a clear 404, never a 500."""

from __future__ import annotations

import json

import redis

from backend import tracing
from backend.cluster.redis_link import RedisLink
from backend.cluster.shared_traces import SharedTraces
from backend.trace_store import SpanRecord

from .conftest import use_session, wait_until
from .test_live import ORIGIN, two_people, two_processes
from .test_tracing import TURN_STAGES, stored_trace_id


def test_the_waterfall_on_b_shows_a_trace_made_on_a(settings, redis_url):
    with two_processes(settings, redis_url) as (a, b):
        people = two_people(a)  # alice: the admin
        use_session(a.client, people["alice"])
        use_session(b.client, people["alice"])
        with a.client.websocket_connect("/ws", headers=ORIGIN) as ws:
            ws.send_json({"type": "send", "client_msg_id": "m1", "conversation_id": None, "text": "hello"})
            frames = [ws.receive_json()]
            while frames[-1]["type"] not in ("done", "error"):
                frames.append(ws.receive_json())
        assert frames[-1]["type"] == "done"
        trace_id = stored_trace_id(a.client, frames[0]["conversation_id"], frames[-1]["message_id"])
        raw = redis.Redis.from_url(redis_url)
        key = f"crescent:trace:{trace_id}"
        wait_until(lambda: any(json.loads(x)["name"] == "chat.turn" for x in raw.lrange(key, 0, -1)),
                   what="the turn's root span in Redis")
        raw.close()
        # Both apps live in this test's one Python process and share its in-memory store: empty
        # it, so that the page can only come from Redis, as on a separate process.
        tracing.store().clear()
        response = b.client.get(f"/admin/traces/{trace_id}")
        assert response.status_code == 200
        names = [chunk.split('data-name="', 1)[1].split('"', 1)[0] for chunk in response.text.split('class="span-row')[1:]]
        # (The plain scripted generator gives no engine timeline, so no engine.* spans.)
        assert names[0] == "chat.turn" and {s for s in TURN_STAGES if not s.startswith("engine.")} <= set(names)
        assert b.client.get(f"/admin/traces/{'0' * 31}1").status_code == 404


def test_the_shared_store_keeps_the_newest_traces_only(redis_url):
    link = RedisLink(redis_url, "t")
    shared = SharedTraces(link, max_traces=2)
    provider_store = tracing.TraceStore(10)
    ids = []
    for n in range(3):
        root = tracing.start_root(f"root{n}", {"n": n})
        with tracing.use(root), tracing.span("child"):
            pass
        root.end()
        ids.append(tracing.trace_id_of(root))
    for trace_id in ids:
        records = tracing.store().records(trace_id)
        assert records
        spans = tracing.store().get(trace_id)
        provider_store.export(spans)
        assert shared.export(spans).name == "SUCCESS"
    assert shared.records(ids[0]) is None  # the oldest trimmed, its list deleted
    assert not link.sync.exists(f"crescent:trace:{ids[0]}")
    for trace_id in ids[1:]:
        assert shared.records(trace_id) == provider_store.records(trace_id)
    assert link.sync.zcard("crescent:traces") == 2
    link.sync.rpush(f"crescent:trace:{ids[2]}", "not json", json.dumps({"name": "x"}))
    assert [r.name for r in shared.records(ids[2])] == [r.name for r in provider_store.records(ids[2])]
    assert all(isinstance(r, SpanRecord) for r in shared.records(ids[2]))


def test_with_redis_down_the_waterfall_is_a_404_saying_so(settings, own_redis):
    from dataclasses import replace

    from starlette.testclient import TestClient

    from backend.rag import HashingEmbedder
    from web.app import create_app

    from .conftest import FakeGenerator, sign_up

    app = create_app(replace(settings, redis_url=own_redis.url), generator=FakeGenerator(), embedder=HashingEmbedder())
    with TestClient(app, follow_redirects=False) as client:
        sign_up(client, "alice")
        own_redis.stop()
        response = client.get(f"/admin/traces/{'ab' * 16}")
        assert response.status_code == 404 and "No trace" in response.text


def test_a_trace_past_the_span_cap_keeps_its_root_in_redis(redis_url, monkeypatch):
    from backend.cluster import shared_traces

    monkeypatch.setattr(shared_traces, "MAX_SPANS_PER_TRACE", 5)
    shared = SharedTraces(RedisLink(redis_url, "t"), max_traces=10)
    root = tracing.start_root("big")
    with tracing.use(root):
        for _ in range(20):
            with tracing.span("s"):
                pass
    root.end()
    spans = tracing.store().get(tracing.trace_id_of(root))
    shared.export(spans[1:])  # the children first, as the batch thread gets them
    shared.export(spans[:1])  # then the root, which ends last
    kept = shared.records(tracing.trace_id_of(root))
    assert len(kept) == 6 and [r.name for r in kept].count("big") == 1 and kept[0].name == "big"
