"""/ws: replies outlive their socket; any socket of the owner attaches from a sequence number;
every socket of a user sees his messages and conversation changes (docs/INTERFACES.md 4). With
two processes sharing Redis, a socket on one attaches to a reply streaming on the other
(backend/cluster/relay.py) and gets the same frames."""

from __future__ import annotations

import random
import uuid
from contextlib import ExitStack
from typing import Any

from starlette.testclient import TestClient

from .conftest import FakeGenerator, app_state, csrf_headers, sign_up, use_session, wait_until


def send_frame(text: str, conversation_id: str | None = None) -> dict[str, Any]:
    return {"type": "send", "client_msg_id": uuid.uuid4().hex, "conversation_id": conversation_id, "text": text}


def frames_until_done(ws, limit: int = 5000) -> list[dict[str, Any]]:
    frames = []
    for _ in range(limit):
        frames.append(ws.receive_json())
        if frames[-1]["type"] in ("done", "error"):
            return frames
    raise AssertionError("no done frame")


def stored(client: TestClient, conversation_id: str, message_id: str) -> dict[str, Any]:
    view = client.get(f"/api/conversations/{conversation_id}").json()
    return next(m for m in view["messages"] if m["id"] == message_id)


def settled(client: TestClient, conversation_id: str, message_id: str) -> dict[str, Any]:
    return wait_until(lambda: (m := stored(client, conversation_id, message_id))["status"] != "streaming" and m,
                      what="the reply to be stored")


def test_closing_the_socket_mid_stream_lets_the_reply_finish_and_be_stored(client: TestClient, fake: FakeGenerator):
    fake.hold_after = 2
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame("tell me a story"))
        ack = ws.receive_json()
        assert [ws.receive_json()["type"] for _ in range(2)] == ["delta", "delta"]
    fake.release()
    reply = settled(client, ack["conversation_id"], ack["assistant_message_id"])
    assert (reply["status"], reply["finish_reason"], reply["content"]) == ("complete", "stop", "".join(fake.tokens))
    assert fake.abort_calls == [] and fake.closed_early == []
    assert app_state(client).chat.generations.counts["closed"] == 1


def test_closing_the_socket_mid_stream_stores_a_reply_cut_at_its_length(client: TestClient, fake: FakeGenerator):
    sign_up(client, "alice")
    app_state(client).runtime_settings.update({"default_max_tokens": 3}, actor_id=None)
    fake.hold_after = 1
    with client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame("tell me a story"))
        ack = ws.receive_json()
        assert ws.receive_json()["type"] == "delta"
    fake.release()
    reply = settled(client, ack["conversation_id"], ack["assistant_message_id"])
    assert (reply["status"], reply["finish_reason"], reply["content"]) == ("complete", "length", "".join(fake.tokens[:3]))


def test_reattaching_from_any_seq_joins_to_the_stored_text(client: TestClient, fake: FakeGenerator):
    """50 sockets attach while the reply streams, each from a random seq it has the text of;
    each one's text joined with what it got equals the stored reply: no gap, no duplicate."""
    fake.tokens = [f"t{i} " if i % 7 else f"\n\n- item {i}\n" for i in range(300)]
    fake.budget = 0  # tokens the fake may emit: the test paces the reply, a few ahead of its reads
    rng = random.Random(11)
    sign_up(client, "alice")
    app_state(client).runtime_settings.update({"default_max_tokens": 400}, actor_id=None)
    with ExitStack() as stack:
        sender = stack.enter_context(client.websocket_connect("/ws"))
        sender.send_json(send_frame("count"))
        ack = sender.receive_json()
        message_id = ack["assistant_message_id"]
        seen: list[str] = []  # the sender's deltas, by seq
        watchers: list[tuple[Any, str]] = []
        for _ in range(50):
            ahead = rng.randint(1, 3)
            fake.budget += ahead + 2  # two more stream while this watcher connects and attaches
            for _ in range(ahead):
                frame = sender.receive_json()
                assert frame["type"] == "delta" and frame["seq"] == len(seen) + 1
                seen.append(frame["text"])
            seq = rng.randint(0, len(seen))
            ws = stack.enter_context(client.websocket_connect("/ws"))
            ws.send_json({"type": "ping"})
            assert ws.receive_json() == {"type": "pong"}  # subscribed: no account event comes later
            ws.send_json({"type": "attach", "message_id": message_id, "seq": seq})
            watchers.append((ws, "".join(seen[:seq])))
        fake.budget = None
        rest = frames_until_done(sender)
        text = "".join(seen) + "".join(f["text"] for f in rest if f["type"] == "delta")
        for ws, prefix in watchers:
            frames = frames_until_done(ws)
            seqs = [f["seq"] for f in frames if f["type"] == "delta"]
            assert seqs == sorted(set(seqs)), "a delta came twice or out of order"
            assert frames[0]["type"] != "delta" or frames[0].get("reset") or frames[0]["seq"] == 1
            assert all(not f.get("reset") for f in frames[1:])
            joined = prefix + "".join(f["text"] for f in frames if f["type"] == "delta")
            assert joined == text
            assert frames[-1]["type"] == "done" and frames[-1]["seq"] == len(fake.tokens)
    reply = stored(client, ack["conversation_id"], message_id)
    assert reply["content"] == text == "".join(fake.tokens)


def test_a_catch_up_renders_what_the_page_missed(client: TestClient, fake: FakeGenerator):
    fake.tokens = ["# Title\n\n", "First *para*.\n\n", "Second", " and last."]
    fake.hold_after = 3
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as sender, client.websocket_connect("/ws") as other:
        sender.send_json(send_frame("go"))
        ack = sender.receive_json()
        deltas = [sender.receive_json() for _ in range(3)]
        assert [other.receive_json()["type"] for _ in range(2)] == ["conversation", "turn"]
        other.send_json({"type": "attach", "message_id": ack["assistant_message_id"], "seq": 1})
        catch_up = other.receive_json()
        assert (catch_up["type"], catch_up.get("reset"), catch_up["seq"]) == ("delta", True, 3), catch_up
        assert catch_up["text"] == "First *para*.\n\nSecond"
        committed = "".join(d["committed_html"] for d in deltas)
        assert (catch_up["committed_html"], catch_up["tail_html"]) == (committed, deltas[-1]["tail_html"])
        fake.release()
        done = frames_until_done(other)[-1]
        assert done == frames_until_done(sender)[-1]


def test_stop_from_a_second_socket_ends_the_reply_for_both(client: TestClient, fake: FakeGenerator):
    fake.hold_after = 2
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as first, client.websocket_connect("/ws") as second:
        first.send_json(send_frame("a long story"))
        ack = first.receive_json()
        assert second.receive_json()["type"] == "conversation"  # created
        turn = second.receive_json()
        assert turn["type"] == "turn" and turn["assistant_message_id"] == ack["assistant_message_id"]
        second.send_json({"type": "attach", "message_id": turn["assistant_message_id"], "seq": 0})
        second.send_json({"type": "stop", "message_id": turn["assistant_message_id"]})
        done_first, done_second = frames_until_done(first)[-1], frames_until_done(second)[-1]
    assert done_first == done_second
    assert (done_first["status"], done_first["finish_reason"]) == ("complete", "abort")
    reply = settled(client, ack["conversation_id"], ack["assistant_message_id"])
    assert (reply["status"], reply["finish_reason"], reply["content"]) == ("complete", "abort", "".join(fake.tokens[:2]))


def test_every_socket_of_the_user_sees_messages_and_conversation_changes(client: TestClient, fake: FakeGenerator):
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as here, client.websocket_connect("/ws") as there:
        here.send_json(send_frame("hello from here"))
        ack = here.receive_json()
        created, turn = there.receive_json(), there.receive_json()
        assert created == {"type": "conversation", "event": "created", "conversation_id": ack["conversation_id"],
                           "title": ack["title"]}
        assert turn == {"type": "turn", "conversation_id": ack["conversation_id"], "title": ack["title"],
                        "client_msg_id": ack["client_msg_id"], "user_message_id": ack["user_message_id"],
                        "user_text": "hello from here", "assistant_message_id": ack["assistant_message_id"],
                        "new_conversation": True, "action": "send", "parent_id": None}
        frames_until_done(here)
        response = client.patch(f"/api/conversations/{ack['conversation_id']}", json={"title": "  Renamed   here "},
                                 headers=csrf_headers(client))
        assert response.status_code == 204
        for ws in (here, there):
            assert ws.receive_json() == {"type": "conversation", "event": "renamed",
                                         "conversation_id": ack["conversation_id"], "title": "Renamed here"}
        assert client.delete(f"/api/conversations/{ack['conversation_id']}", headers=csrf_headers(client)).status_code == 204
        for ws in (here, there):
            assert ws.receive_json() == {"type": "conversation", "event": "deleted",
                                         "conversation_id": ack["conversation_id"], "title": ""}


def test_another_users_reply_cannot_be_watched_stopped_or_renamed(client: TestClient, fake: FakeGenerator):
    fake.hold_after = 1
    alice = sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame("mine"))
        ack = ws.receive_json()
        use_session(client, None)
        sign_up(client, "bob")
        with client.websocket_connect("/ws") as bob:
            bob.send_json({"type": "attach", "message_id": ack["assistant_message_id"], "seq": 0})
            error = bob.receive_json()
            assert (error["type"], error["code"], error["message_id"]) == ("error", "not_found", ack["assistant_message_id"])
            bob.send_json({"type": "stop", "message_id": ack["assistant_message_id"]})
            bob.send_json({"type": "ping"})
            assert bob.receive_json() == {"type": "pong"}
        assert client.patch(f"/api/conversations/{ack['conversation_id']}", json={"title": "x"},
                            headers=csrf_headers(client)).status_code == 404
        use_session(client, alice)
        assert fake.abort_calls == []
        fake.release()
        assert frames_until_done(ws)[-1]["status"] == "complete"


def test_bad_attach_frames_get_typed_errors(client: TestClient, fake: FakeGenerator):
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame("hi"))
        ack = ws.receive_json()
        done = frames_until_done(ws)[-1]
        for bad in ({"type": "attach"}, {"type": "attach", "message_id": "x", "seq": -1},
                    {"type": "attach", "message_id": "x", "seq": "3"}, {"type": "attach", "message_id": "a b"}):
            error = ws.receive_json() if ws.send_json(bad) is None else None
            assert (error["type"], error["code"]) == ("error", "bad_frame"), bad
        # A reply that already ended: its stored outcome, at once.
        ws.send_json({"type": "attach", "message_id": ack["assistant_message_id"], "seq": 0})
        again = ws.receive_json()
        assert {k: again[k] for k in ("type", "message_id", "status", "finish_reason", "html")} == \
               {k: done[k] for k in ("type", "message_id", "status", "finish_reason", "html")}
        ws.send_json({"type": "attach", "message_id": "0" * 32, "seq": 0})
        assert ws.receive_json()["code"] == "not_found"


# --- Two processes (REDIS_URL): attaching to a reply streaming on the other one -----------------


def test_a_socket_on_b_attached_to_a_reply_on_a_joins_to_the_stored_text(settings, redis_url):
    """Sockets on B attach from every seq while the reply streams on A: the catch-up, the live
    deltas and the done frame are those a socket on A gets, and each one's text joined with
    what it had equals the text A stores."""
    import redis

    from backend.models import Message

    from .test_live import ORIGIN, two_people, two_processes

    with two_processes(settings, redis_url) as (a, b):
        people = two_people(a)
        a.fake.tokens = ["# Title\n\n", "First *para*.\n\n", "```py\n", "x = 1\n", "```\n", "tail", " end."]
        a.fake.hold_after = 4
        use_session(a.client, people["bob"])
        use_session(b.client, people["bob"])
        with ExitStack() as stack:
            sender = stack.enter_context(a.client.websocket_connect("/ws", headers=ORIGIN))
            sender.send_json(send_frame("go"))
            message_id = sender.receive_json()["assistant_message_id"]
            seen = [sender.receive_json() for _ in range(4)]
            assert [f["seq"] for f in seen] == [1, 2, 3, 4]
            raw = redis.Redis.from_url(redis_url)
            wait_until(lambda: raw.xlen(f"crescent:reply:{message_id}") == 5, what="the 4 deltas relayed")
            catch_ups = {}
            for seq in range(4):
                ws = stack.enter_context(a.client.websocket_connect("/ws", headers=ORIGIN))
                ws.send_json({"type": "attach", "message_id": message_id, "seq": seq})
                catch_ups[seq] = ws.receive_json()
            watchers = []
            for seq in range(5):
                ws = stack.enter_context(b.client.websocket_connect("/ws", headers=ORIGIN))
                ws.send_json({"type": "attach", "message_id": message_id, "seq": seq})
                if seq < 4:
                    first = ws.receive_json()
                    assert first == catch_ups[seq]  # the text after seq, and the whole rendering
                    assert (first["reset"], first["seq"], first["text"]) == (True, 4, "".join(f["text"] for f in seen[seq:]))
                watchers.append((ws, seq))
            # The seq-4 watcher has nothing to catch up, and its socket may answer a ping before
            # its attach has read the stream (the attach runs beside the frame loop; released
            # then, it would get only the done frame): each viewer joins the reply's watcher set
            # once it has read its catch-up.
            wait_until(lambda: raw.zcard(f"crescent:reply:{message_id}:watchers") == 5,
                       what="the 5 viewers on B registered")
            raw.close()
            a.fake.release()
            rest = frames_until_done(sender)
            text = "".join(f["text"] for f in seen + rest if f["type"] == "delta")
            for ws, seq in watchers:
                assert frames_until_done(ws) == rest  # deltas 5.. with their rendering, then done
                assert "".join(f["text"] for f in seen) + "".join(f["text"] for f in rest if f["type"] == "delta") == text
        assert rest[-1]["content"] == text == "".join(a.fake.tokens)
        with a.state.chat._sessions() as db:  # noqa: SLF001 - the stored row is the oracle
            assert db.get(Message, message_id).content == text


def test_a_retried_send_on_b_of_a_turn_streaming_on_a_watches_it(settings, redis_url):
    """The page resends an unacknowledged send after reconnecting, now to B: it is answered as a
    duplicate and gets the reply's frames from A."""
    from .test_live import ORIGIN, two_people, two_processes

    with two_processes(settings, redis_url) as (a, b):
        people = two_people(a)
        a.fake.hold_after = 2
        use_session(a.client, people["bob"])
        use_session(b.client, people["bob"])
        frame = send_frame("hello")
        with a.client.websocket_connect("/ws", headers=ORIGIN) as sender, \
                b.client.websocket_connect("/ws", headers=ORIGIN) as retry:
            sender.send_json(frame)
            ack = sender.receive_json()
            first = [sender.receive_json() for _ in range(2)]
            retry.send_json(frame)
            answer = retry.receive_json()
            while answer["type"] in ("turn", "conversation"):  # account events, if any
                answer = retry.receive_json()
            assert (answer["type"], answer["duplicate"]) == ("ack", True)
            assert answer["assistant_message_id"] == ack["assistant_message_id"]
            a.fake.release()
            rest = frames_until_done(sender)
            relayed = frames_until_done(retry)
            assert relayed[-1] == rest[-1]
            deltas = [f for f in relayed if f["type"] == "delta"]
            assert "".join(a.fake.tokens) == "".join(f["text"] for f in first + rest if f["type"] == "delta")
            # B's relay looks at the reply only once its ack is sent, and the release races it: when
            # A had finished by then, B gets the finished reply (its done frame, equal to A's,
            # above) and no deltas (fresh-clone CI, 2026-12-02: deltas[0] raised IndexError).
            if deltas:
                assert [f["seq"] for f in deltas] == list(range(deltas[0]["seq"], len(a.fake.tokens) + 1))
                assert "".join(f["text"] for f in deltas) == "".join(a.fake.tokens)


def test_a_page_on_b_sees_the_turn_sent_on_a_and_follows_its_reply(settings, redis_url):
    """Account events reach the user's sockets on the other process, in order: a page on B
    learns of the conversation and the turn sent from A, attaches as chat.js does, and sees
    the rename and the deletion made on A."""
    from .test_live import ORIGIN, two_people, two_processes

    with two_processes(settings, redis_url) as (a, b):
        people = two_people(a)
        use_session(a.client, people["bob"])
        use_session(b.client, people["bob"])
        with a.client.websocket_connect("/ws", headers=ORIGIN) as here, \
                b.client.websocket_connect("/ws", headers=ORIGIN) as there:
            here.send_json({"type": "ping"})
            assert here.receive_json() == {"type": "pong"}
            there.send_json({"type": "ping"})
            assert there.receive_json() == {"type": "pong"}  # both subscribed
            a.fake.hold_after = 2
            here.send_json(send_frame("hello from A"))
            ack = here.receive_json()
            # A wait that fails, rather than a read that would block, if B is never told.
            wait_until(lambda: there._send_rx.statistics().current_buffer_used >= 2,  # noqa: SLF001
                       what="the account events on B")
            created, turn = there.receive_json(), there.receive_json()
            assert created == {"type": "conversation", "event": "created", "conversation_id": ack["conversation_id"],
                               "title": ack["title"]}
            assert (turn["type"], turn["assistant_message_id"], turn["user_text"]) == \
                ("turn", ack["assistant_message_id"], "hello from A")
            there.send_json({"type": "attach", "message_id": ack["assistant_message_id"], "seq": 0})
            first = there.receive_json()
            assert first["type"] == "delta", first
            a.fake.release()
            on_a, on_b = frames_until_done(here), [first] + frames_until_done(there)
            assert on_b[-1] == on_a[-1]
            assert "".join(f["text"] for f in on_b if f["type"] == "delta") == "".join(a.fake.tokens)
            response = a.client.patch(f"/api/conversations/{ack['conversation_id']}", json={"title": "Renamed"},
                                      headers=csrf_headers(a.client))
            assert response.status_code == 204
            assert there.receive_json() == {"type": "conversation", "event": "renamed",
                                            "conversation_id": ack["conversation_id"], "title": "Renamed"}
            response = a.client.delete(f"/api/conversations/{ack['conversation_id']}", headers=csrf_headers(a.client))
            assert response.status_code == 204
            assert there.receive_json() == {"type": "conversation", "event": "deleted",
                                            "conversation_id": ack["conversation_id"], "title": ""}
