"""backend.cluster.leases: generation leases in Redis outlive their TTL while their process
renews them, and a process killed with SIGKILL frees them within the TTL.

Times here are Redis server milliseconds (the leases' own clock), read from the sorted set's
scores, so the checks do not depend on how fast this machine runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from backend.cluster import RedisLink
from backend.cluster.leases import GenerationLeases

ROOT = Path(__file__).resolve().parents[2]
# A TTL of 5 s: a holder stalled for a few seconds on a loaded machine still counts.
TTL_S, HEARTBEAT_S = 5.0, 0.5

HOLDER = """
import sys, time
from backend.cluster import RedisLink
from backend.cluster.leases import GenerationLeases
leases = GenerationLeases(RedisLink(sys.argv[1], "doomed"), ttl_s=float(sys.argv[3]), heartbeat_s=float(sys.argv[4]))
print(leases.try_acquire(sys.argv[2], 0), flush=True)
while True:
    time.sleep(60)
"""


def server_ms(client: redis.Redis) -> int:
    seconds, micros = client.time()
    return seconds * 1000 + micros // 1000


def wait_for(predicate, timeout_s: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def client(redis_url):
    c = redis.Redis.from_url(redis_url)
    yield c
    c.close()


def test_the_limit_holds_and_a_lease_outlives_its_ttl_while_renewed(redis_url, client):
    a = GenerationLeases(RedisLink(redis_url, "a"), ttl_s=TTL_S, heartbeat_s=HEARTBEAT_S)
    b = GenerationLeases(RedisLink(redis_url, "b"), ttl_s=TTL_S, heartbeat_s=HEARTBEAT_S)
    try:
        first = a.try_acquire("u1", 2)
        assert first is not None and first.startswith("a:")
        assert b.try_acquire("u1", 2) is not None
        assert a.try_acquire("u1", 2) is None and b.try_acquire("u1", 2) is None
        key = a.key("u1")
        taken_at = server_ms(client)
        # Renewed past one and a half TTLs: still counted, its expiry moved beyond the first one's.
        wait_for(lambda: client.zscore(key, first) > taken_at + 1.5 * TTL_S * 1000, what="renewals")
        assert a.count("u1") == 2 and client.pttl(key) > 0
        a.release("u1", first)
        a.release("u1", first)  # a no-op: not held any more
        assert a.count("u1") == 1 and a.held() == 0
        assert a.try_acquire("u1", 2) is not None
    finally:
        a.close()
        b.close()


def test_a_process_killed_with_sigkill_frees_its_leases_within_the_ttl(redis_url, client):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, redis_url, "u2", str(TTL_S), str(HEARTBEAT_S)],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        lease_id = holder.stdout.readline().strip()
        assert lease_id.startswith("doomed:")
        key = RedisLink.key("leases", "u2")
        started = server_ms(client)
        wait_for(lambda: client.zscore(key, lease_id) > started + 1.5 * TTL_S * 1000, what="the holder's renewals")
        # Another process sees it, and the user's limit of 1 is used up.
        other = GenerationLeases(RedisLink(redis_url, "b"), ttl_s=TTL_S, heartbeat_s=HEARTBEAT_S)
        assert other.count("u2") == 1 and other.try_acquire("u2", 1) is None
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        killed_at = server_ms(client)
        expiry = client.zscore(key, lease_id)
        assert expiry is not None and expiry <= killed_at + TTL_S * 1000  # free within the TTL
        wait_for(lambda: other.count("u2") == 0, what="the dead process's lease to expire")
        taken = other.try_acquire("u2", 1)
        assert taken is not None
        other.release("u2", taken)
        other.close()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=10)


def test_the_heartbeat_thread_stops_when_nothing_is_held(redis_url):
    leases = GenerationLeases(RedisLink(redis_url, "a"), ttl_s=TTL_S, heartbeat_s=HEARTBEAT_S)
    lease_id = leases.try_acquire("u3", 0)
    thread = leases._thread
    assert thread is not None and thread.is_alive()
    leases.release("u3", lease_id)
    thread.join(timeout=30)
    assert not thread.is_alive() and leases._thread is None
    again = leases.try_acquire("u3", 0)  # a new lease starts a new heartbeat
    assert leases._thread is not None and leases._thread.is_alive()
    leases.release("u3", again)
    leases.close()


def test_bad_timings_are_refused(redis_url):
    with pytest.raises(ValueError):
        GenerationLeases(RedisLink(redis_url, "a"), ttl_s=1.0, heartbeat_s=1.0)


def test_simultaneous_acquires_from_two_processes_never_pass_the_limit(redis_url):
    import threading

    holders = [GenerationLeases(RedisLink(redis_url, name), ttl_s=TTL_S, heartbeat_s=HEARTBEAT_S) for name in "ab"]
    start = threading.Barrier(16)
    taken: list[str | None] = []

    def attempt(leases: GenerationLeases) -> None:
        start.wait(timeout=30)
        taken.append(leases.try_acquire("race", 3))

    threads = [threading.Thread(target=attempt, args=(holders[i % 2],)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(taken) == 16 and sum(lease is not None for lease in taken) == 3
    assert holders[0].count("race") == 3
    for leases in holders:
        leases.close()


class SilentRedis:
    """A TCP server that accepts connections and never answers (a Redis that hangs); counts the
    bytes each connection sent, so a test sees whether a command was even tried."""

    def __init__(self) -> None:
        import socket
        import threading

        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.url = f"redis://127.0.0.1:{self.listener.getsockname()[1]}/0"
        self.received = bytearray()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn) -> None:
        while True:
            try:
                data = conn.recv(65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self.received += data

    def close(self) -> None:
        self.listener.close()


def test_with_redis_hanging_release_never_waits_and_acquire_fails_fast(redis_url, caplog):
    """Release and acquire run on the event loop: release hands the removal to the heartbeat
    thread, and after one unanswered acquire the next ones fail without touching Redis."""
    from backend.cluster import RedisUnavailable

    silent = SilentRedis()
    leases = GenerationLeases(RedisLink(silent.url, "a"), ttl_s=TTL_S, heartbeat_s=HEARTBEAT_S)
    try:
        leases._held["a:1"] = "u9"  # a lease taken before Redis began to hang
        leases.release("u9", "a:1")
        assert leases.held() == 0  # returned at once; the removal is the heartbeat's to send
        # The heartbeat thread, not the caller, waits for the hanging server, then gives up.
        wait_for(lambda: any(r.threadName == "lease-heartbeat" and "releasing 1 leases failed" in r.getMessage()
                             for r in caplog.records), what="the heartbeat thread's attempt")
        with pytest.raises(RedisUnavailable):
            leases.try_acquire("u9", 1)  # waits out the socket timeout once
        sent = len(silent.received)
        assert sent > 0
        with pytest.raises(RedisUnavailable):
            leases.try_acquire("u9", 1)
        assert len(silent.received) == sent  # failed fast: nothing sent to the hanging server
    finally:
        leases.close()
        silent.close()


def test_a_released_lease_is_removed_before_this_process_acquires_again(redis_url, client):
    leases = GenerationLeases(RedisLink(redis_url, "a"), ttl_s=TTL_S, heartbeat_s=HEARTBEAT_S)
    try:
        for _ in range(20):  # a user with a limit of 1 sending turn after turn
            lease_id = leases.try_acquire("u10", 1)
            assert lease_id is not None
            leases.release("u10", lease_id)
        leases.close()
        assert client.zcard(leases.key("u10")) == 0
    finally:
        leases.close()
