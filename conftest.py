"""Suite-wide pytest hooks: tests marked `gpu` run only where CUDA is present."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except ImportError:  # pragma: no cover - torch is a hard dependency
        has_cuda = False
    if has_cuda:
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


# --- Redis (backend/cluster) ----------------------------------------------------------------
# `make test` installs Debian's redis-server; a test needing Redis starts its own throwaway
# server (no persistence, loopback, a free port) once per session. Without the binary such tests
# skip, except under CI=true, where a missing service is a failure.

import os as _os
import shutil as _shutil
import socket as _socket
import subprocess as _subprocess
import time as _time


def _free_port() -> int:
    with _socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """A redis-server on 127.0.0.1 for the session: yields its base URL ``redis://127.0.0.1:PORT``.

    Tests use :func:`redis_url` (a flushed database) rather than this directly."""
    binary = _shutil.which("redis-server")
    if binary is None:
        if _os.environ.get("CI") == "true":
            pytest.fail("redis-server is not installed (make test installs it)")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    port = _free_port()
    workdir = tmp_path_factory.mktemp("redis")
    proc = _subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(workdir), "--databases", "16", "--loglevel", "warning"],
        stdout=_subprocess.DEVNULL, stderr=_subprocess.DEVNULL)
    deadline = _time.monotonic() + 10
    while True:
        try:
            with _socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            if _time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail("redis-server did not start")
            _time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def redis_url(redis_server) -> str:
    """REDIS_URL of an empty database (database 0 flushed before the test)."""
    import redis

    client = redis.Redis.from_url(redis_server + "/0")
    client.flushdb()
    client.close()
    return redis_server + "/0"
