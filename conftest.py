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
# `make test` installs Debian's redis-server; a test needing Redis uses a throwaway server
# (tests/redis_server.py: no persistence, loopback, a free port), one per session, or its own one
# to stop and start. Without the binary such tests skip, except under CI=true, where a missing
# service is a failure.

from tests.redis_server import RedisProcess as _RedisProcess  # noqa: E402


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """A redis-server on 127.0.0.1 for the session: yields its base URL ``redis://127.0.0.1:PORT``.

    Tests use :func:`redis_url` (a flushed database) rather than this directly."""
    server = _RedisProcess(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server.base_url
    server.stop()


@pytest.fixture
def redis_url(redis_server) -> str:
    """REDIS_URL of an empty database (database 0 flushed before the test)."""
    import redis

    client = redis.Redis.from_url(redis_server + "/0")
    client.flushdb()
    client.close()
    return redis_server + "/0"


@pytest.fixture
def own_redis(tmp_path):
    """A redis-server of this test's own (:class:`tests.redis_server.RedisProcess`), started; the
    test may stop and start it again on the same port. Stopped after the test."""
    server = _RedisProcess(tmp_path)
    server.start()
    yield server
    server.stop()
