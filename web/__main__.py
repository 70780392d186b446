"""``python -m web serve [--host H] [--port P]``: serve Crescent with uvicorn.

Settings come from the environment (:meth:`backend.settings.Settings.from_env`); ``--host`` and
``--port`` override ``HOST`` and ``PORT``. One worker, always: the process owns the model.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys

from backend.settings import Settings

log = logging.getLogger("web")

# Frames are at most ~200 kB (web.ws.MAX_FRAME_CHARS); refuse bigger ones in the server itself.
WS_MAX_SIZE_BYTES = 1 << 20


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m web", description="Crescent web server")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the chat UI and API")
    serve.add_argument("--host", help="interface to bind (default: HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="TCP port (default: PORT or 8000)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)  # plugin set-up chatter on import
    overrides = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    try:
        # replace() runs the validation again, so a bad --port is refused like a bad PORT.
        settings = dataclasses.replace(Settings.from_env(), **overrides)
    except ValueError as exc:
        print(f"invalid settings: {exc}", file=sys.stderr)
        return 2

    import uvicorn

    from web.app import create_app

    log.info("starting Crescent on http://%s:%d (the model loads first)", settings.host, settings.port)
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        workers=1,
        ws_max_size=WS_MAX_SIZE_BYTES,
        log_level="info",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
