"""The harness itself: two processes sharing one secret, one database and one Redis."""

from __future__ import annotations

from tests.cluster.clients import INSTANCE_HEADER
from tests.cluster.processes import Cluster


def test_a_csrf_token_and_session_cookie_from_a_are_accepted_by_b(cluster: Cluster) -> None:
    browser = cluster.user(cluster.a.url)
    # Anonymous: the double-submit cookie and its token come from A; B accepts the sign-up form.
    token_from_a = browser.csrf_token(cluster.a.url)
    response = browser.form("/signup", {"username": "crossover" + token_from_a[:8], "password": browser.password},
                            base=cluster.b.url, csrf=token_from_a)
    assert response.status_code == 303, response.text[:300]
    assert response.headers[INSTANCE_HEADER] == "b"
    # Logged in on B: A knows the session (one database) and accepts B's CSRF token for it.
    session_token_from_b = browser.csrf_token(cluster.b.url)
    created = browser.post("/api/account/keys", base=cluster.a.url, csrf=session_token_from_b,
                           json={"name": "from-b-token"})
    assert created.status_code in (200, 201), created.text[:300]
    assert created.headers[INSTANCE_HEADER] == "a"
    # The session cookie alone: B shows the same account as A.
    assert browser.get("/api/conversations", base=cluster.b.url).status_code == 200


def test_a_token_forged_under_another_secret_is_refused_by_both(cluster: Cluster) -> None:
    browser = cluster.user()
    browser.sign_up()
    forged = "0" * 64
    for server in (cluster.a, cluster.b):
        response = browser.post("/api/account/keys", base=server.url, csrf=forged, json={"name": "x"})
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "csrf_failed"


def test_a_killed_process_is_started_again_for_the_next_test(cluster: Cluster) -> None:
    cluster.b.kill()
    assert not cluster.b.is_running()
    cluster.ensure_running()
    assert cluster.b.is_running()
    user = cluster.user(cluster.b.url)
    user.sign_up()
    assert user.get("/healthz").headers[INSTANCE_HEADER] == "b"


def test_chat_socket_on_b_streams_the_scripted_reply_started_by_a_user_of_a(cluster: Cluster) -> None:
    user = cluster.user(cluster.a.url)
    user.sign_up()
    cluster.b.control.set_tokens(["one ", "two ", "three"])
    with user.websocket(cluster.b.url) as socket:
        assert socket.instance == "b"
        socket.send_message("count")
        ack, *deltas, done = socket.receive_until(("done",))
    assert ack["type"] == "ack"
    assert "".join(d["text"] for d in deltas if d["type"] == "delta") == "one two three"
    assert done["status"] == "complete"
    # The reply is in the shared database: A serves it.
    view = user.get(f"/api/conversations/{ack['conversation_id']}", base=cluster.a.url).json()
    assert [m["content"] for m in view["messages"]][-1] == "one two three"
