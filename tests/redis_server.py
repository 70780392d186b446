"""A throwaway redis-server for tests: :class:`RedisProcess` (loopback, a free port, no
persistence) that a test may stop and start again on the same port, to see Redis go down and come
back. The root conftest.py builds its fixtures on it: ``redis_server`` (one for the session),
``redis_url`` (its database 0, flushed) and ``own_redis`` (one per test, to stop).

Without the redis-server binary a test skips, except under CI=true, where a missing service is a
failure (`make test` installs Debian's redis-server).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

START_TIMEOUT_S = 10.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the OS's choice)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def redis_binary() -> str:
    """The redis-server binary's path; skips the test (fails it under CI=true) when absent."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("redis-server is not installed (make test installs it)")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    return binary


class RedisProcess:
    """A redis-server on 127.0.0.1:`port` (a free port chosen once) keeping nothing on disk
    (`workdir` is its directory); :meth:`start` again after :meth:`stop` uses the same port, so a
    client made with :attr:`url` reconnects to it."""

    def __init__(self, workdir: Path) -> None:
        self.binary = redis_binary()
        self.port = free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """``redis://127.0.0.1:PORT`` (no database)."""
        return f"redis://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0``."""
        return self.base_url + "/0"

    def start(self) -> None:
        """Start it and return once it accepts connections; the test fails if it does not within
        START_TIMEOUT_S seconds."""
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.workdir), "--databases", "16",
             "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.proc.kill()
                    pytest.fail("redis-server did not start")
                time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM, then wait for it to exit (nothing is kept: started again, it is empty)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
