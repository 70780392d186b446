"""One Crescent server process with the scripted generator, for the cluster tests.

``python -m tests.cluster.scripted_server`` (from the repository root) serves
``web.app.create_app(Settings.from_env(), generator=ScriptedGenerator(...))`` with uvicorn on
HOST:PORT, the way ``python -m web serve`` does (one worker, proxy headers believed from
loopback). Settings come from the environment (DATABASE_URL, REDIS_URL, CRESCENT_SECRET_KEY,
CRESCENT_INSTANCE, ...); the generator's control directory is SCRIPTED_CONTROL_DIR
(tests/cluster/scripted_generator.py). Documents are embedded by the hashing embedder, held
while the control directory has a file ``hold_embedding`` (``embedding`` is created while a
call waits there), so a test can restart another process mid-ingestion. Test code only.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from pathlib import Path

import uvicorn

from backend.rag import HashingEmbedder
from backend.settings import Settings
from tests.cluster.scripted_generator import ScriptedGenerator
from web.__main__ import DEFAULT_FORWARDED_ALLOW_IPS, WS_MAX_SIZE_BYTES
from web.app import create_app


def _exit_with_parent() -> None:
    """The test session's pytest is this process's parent: when it dies without its teardown
    (killed by a timeout), exit too rather than linger on the port."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


class HeldEmbedder(HashingEmbedder):
    """HashingEmbedder whose embed() waits while `control`/hold_embedding exists (at most
    HOLD_LIMIT_S), with `control`/embedding present meanwhile."""

    HOLD_LIMIT_S = 60.0

    def __init__(self, control: Path) -> None:
        super().__init__()
        self._control = control

    def embed(self, texts):  # type: ignore[no-untyped-def]
        hold, waiting = self._control / "hold_embedding", self._control / "embedding"
        if hold.exists():
            waiting.touch()
            deadline = time.monotonic() + self.HOLD_LIMIT_S
            while hold.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            waiting.unlink(missing_ok=True)
        return super().embed(texts)


def main() -> int:
    _exit_with_parent()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings.from_env()
    generator = ScriptedGenerator(os.environ["SCRIPTED_CONTROL_DIR"], settings.instance_name)
    app = create_app(settings, generator=generator, embedder=HeldEmbedder(generator.control))
    uvicorn.run(app, host=settings.host, port=settings.port, workers=1, ws_max_size=WS_MAX_SIZE_BYTES,
                log_level="warning", proxy_headers=True,
                forwarded_allow_ips=os.environ.get("FORWARDED_ALLOW_IPS", DEFAULT_FORWARDED_ALLOW_IPS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
