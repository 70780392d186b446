"""Replies left streaming in a database shared by several processes (REDIS_URL): a process that
starts must not cut another's live replies, and the survivors end the replies of one that died.
"""

from __future__ import annotations

from dataclasses import replace

from starlette.testclient import TestClient

import web.app
from backend.cluster import relay
from backend.models import Message
from backend.rag import HashingEmbedder
from web.app import create_app

from .conftest import FakeGenerator, use_session, wait_until
from .test_live import ORIGIN, start_reply, stored, two_people, two_processes, until_done


def counting_running_replies(monkeypatch) -> list[set[str]]:
    """Record what every sweep learned (the real check, on the real Redis)."""
    answers: list[set[str]] = []

    def running(link, ids):
        found = relay.running_replies(link, ids)
        answers.append(found)
        return found

    monkeypatch.setattr(web.app, "running_replies", running)
    return answers


def test_a_process_starting_leaves_another_process_reply_streaming(settings, redis_url, monkeypatch) -> None:
    monkeypatch.setattr(web.app, "ORPHAN_SETTLED_S", 0.0)  # judge every row at once
    with two_processes(settings, redis_url) as (a, b):
        people = two_people(a)
        a.fake.hold_after = 1
        use_session(a.client, people["bob"])
        with a.client.websocket_connect("/ws", headers=ORIGIN) as ws:
            message_id = start_reply(ws)
            answers = counting_running_replies(monkeypatch)
            third = create_app(replace(settings, redis_url=redis_url, instance_name="c"),
                               generator=FakeGenerator(), embedder=HashingEmbedder())
            with TestClient(third):
                wait_until(lambda: any(message_id in found for found in answers), what="c's sweep")
            assert stored(a.client, message_id) == ("streaming", None)
            a.fake.release()
            done = until_done(ws)
        assert done["finish_reason"] == "stop"
        assert stored(a.client, message_id) == ("complete", None)


def test_the_survivors_end_the_replies_of_a_process_that_died(settings, redis_url, monkeypatch) -> None:
    """A row left streaming by a process that died (no relay stream any more) is ended by the
    others' periodic sweep; one whose stream lives is left alone."""
    monkeypatch.setattr(web.app, "ORPHAN_SETTLED_S", 0.0)
    monkeypatch.setattr(web.app, "ORPHAN_SWEEP_S", 0.2)
    with two_processes(settings, redis_url) as (a, b):
        people = two_people(a)
        conversation = b.state.conversations.create_conversation(people["bob_id"])
        with b.state.chat._sessions() as db:  # noqa: SLF001 - what the dead process left behind
            rows = [Message(conversation_id=conversation.id, user_id=people["bob_id"], position=i,
                            role="assistant", content=text, html="", status="streaming")
                    for i, text in enumerate(("dead", "alive"))]
            db.add_all(rows)
            db.flush()
            dead, alive = rows[0].id, rows[1].id
            # The live one's stream exists before its row can be seen by a sweep.
            b.state.redis.sync.xadd(relay.reply_key(b.state.redis, alive), {"seq": 0})
            db.commit()
        wait_until(lambda: stored(b.client, dead)[0] == "interrupted", what="the sweep ends the orphan")
        assert stored(a.client, alive) == ("streaming", None)
