"""backend.live.LiveRegistry: who gets ended, in which order, and that one failure spares nobody."""

from __future__ import annotations

import asyncio

from backend.live import KIND_GENERATION, KIND_SOCKET, LiveRegistry


def _ender(log: list[tuple[str, str]], name: str, fail: bool = False):
    async def end(reason: str) -> None:
        log.append((name, reason))
        if fail:
            raise RuntimeError("boom")

    return end


def test_end_user_ends_generations_first_then_sockets_and_only_his():
    registry, log = LiveRegistry(), []
    registry.add("bob", KIND_SOCKET, _ender(log, "socket"), session="s1")
    registry.add("bob", KIND_GENERATION, _ender(log, "reply", fail=True))
    registry.add("bob", KIND_GENERATION, _ender(log, "api"))
    registry.add("carol", KIND_GENERATION, _ender(log, "carol"))
    assert asyncio.run(registry.end_user("bob", "disabled")) == 3
    assert log == [("reply", "disabled"), ("api", "disabled"), ("socket", "disabled")]


def test_end_sessions_keeps_one_session_or_ends_only_one_and_never_api_runs():
    registry, log = LiveRegistry(), []
    registry.add("bob", KIND_SOCKET, _ender(log, "here"), session="h1")
    registry.add("bob", KIND_SOCKET, _ender(log, "there"), session="h2")
    registry.add("bob", KIND_GENERATION, _ender(log, "api"))
    assert asyncio.run(registry.end_sessions("bob", "pw", keep="h1")) == 1
    assert asyncio.run(registry.end_sessions("bob", "out", only="h1")) == 1
    assert log == [("there", "pw"), ("here", "out")]


def test_discard_forgets_and_is_idempotent():
    registry, log = LiveRegistry(), []
    entry = registry.add("bob", KIND_GENERATION, _ender(log, "reply"))
    assert registry.count("bob") == 1 and registry.count("bob", KIND_SOCKET) == 0
    registry.discard(entry)
    registry.discard(entry)
    registry.discard(None)
    assert registry.count("bob") == 0
    assert asyncio.run(registry.end_user("bob", "x")) == 0 and log == []
