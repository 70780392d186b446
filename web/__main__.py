"""``python -m web serve [--host H] [--port P]``: serve Crescent with uvicorn; and the admin CLI.

Settings come from the environment (:meth:`backend.settings.Settings.from_env`); ``--host`` and
``--port`` override ``HOST`` and ``PORT``. One worker, always: the process owns the model.

Admin commands (for automation; they work on the database at ``DATABASE_URL``):

- ``python -m web admin create-user NAME [--admin]``: the password is one line of standard input
  (prompted without echo on a terminal). An active account; the first account ever is an admin
  even without ``--admin``. Prints ``created user NAME (role)`` on standard error.
- ``python -m web admin create-key USERNAME [--name KEYNAME]``: prints only the new API key's
  secret on standard output (so ``KEY=$(python -m web admin create-key alice)`` works).

Both check that the database can be reached (see ``check-db``), then run the migrations (``alembic upgrade head``, a no-op when up to date), so they work on a fresh
database before the server ever started. Exit status: 0 done, 1 refused (name taken, bad
password, unknown user), 2 bad settings or usage, or a database that cannot be reached.

``python -m web check-db``: connect to ``DATABASE_URL`` once (``make migrate`` runs it before
``alembic upgrade head``). Exit status 0 and no output when it works; otherwise one line on
standard error naming the cause (the database does not exist, connection refused, authentication
failed; the URL's password masked: :class:`backend.db.DatabaseUnreachable`) and exit status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys

from backend.settings import Settings

log = logging.getLogger("web")

# Frames are at most ~200 kB (web.ws.MAX_FRAME_CHARS); refuse bigger ones in the server itself.
WS_MAX_SIZE_BYTES = 1 << 20
# Whose X-Forwarded-For / X-Forwarded-Proto headers are believed (uvicorn's own default).
DEFAULT_FORWARDED_ALLOW_IPS = "127.0.0.1,::1"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m web", description="Crescent web server")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the chat UI and API")
    serve.add_argument("--host", help="interface to bind (default: HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="TCP port (default: PORT or 8000)")
    commands.add_parser("check-db", help="check that DATABASE_URL can be reached (exit 2 if not)")
    admin = commands.add_parser("admin", help="manage accounts and API keys")
    admin_commands = admin.add_subparsers(dest="admin_command", required=True)
    create_user = admin_commands.add_parser("create-user", help="create an account (password on stdin)")
    create_user.add_argument("name")
    create_user.add_argument("--admin", action="store_true", help="make the account an admin")
    create_key = admin_commands.add_parser("create-key", help="create an API key; prints the secret")
    create_key.add_argument("username")
    create_key.add_argument("--name", default="cli", help="the key's name (default: cli)")
    return parser


def _read_password() -> str:
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass("Password: ")
    line = sys.stdin.readline()
    return line[:-1] if line.endswith("\n") else line


def _check_db(settings: Settings) -> int:
    """0 when the database at DATABASE_URL can be reached; else one line on stderr and 2."""
    from backend.db import DatabaseUnreachable, check_database

    try:
        check_database(settings.database_url)
    except ImportError as exc:  # e.g. postgresql:// without its driver installed
        print(f"invalid settings: DATABASE_URL: {exc}", file=sys.stderr)
        return 2
    except DatabaseUnreachable as exc:
        print(f"DATABASE_URL: {exc}", file=sys.stderr)
        return 2
    return 0


def _admin(args: argparse.Namespace, settings: Settings) -> int:
    from backend.api_keys import ApiKeyService
    from backend.auth import AuthService
    from backend.db import create_db_engine, make_session_factory, run_migrations
    from backend.errors import DomainError

    if (status := _check_db(settings)) != 0:
        return status
    run_migrations(settings.database_url)
    engine = create_db_engine(settings.database_url)
    try:
        factory = make_session_factory(engine)
        auth = AuthService(factory, settings.session_ttl_s)
        if args.admin_command == "create-user":
            user = auth.create_user(args.name, _read_password().rstrip("\r"), "admin" if args.admin else "user")
            print(f"created user {user.username} ({user.role})", file=sys.stderr)
            return 0
        user = auth.find_user(args.username)
        if user is None:
            print(f"no user named {args.username!r}", file=sys.stderr)
            return 1
        if user.status != "active":
            print(f"warning: {user.username} is {user.status}; the key works once the account is active",
                  file=sys.stderr)
        _view, secret = ApiKeyService(factory).create_key(user.id, args.name)
        print(secret)
        return 0
    except DomainError as exc:
        print(f"refused: {exc.message}", file=sys.stderr)
        return 1
    finally:
        engine.dispose()


def log_format(instance: str = "") -> str:
    """The log line format; with several processes (CRESCENT_INSTANCE set) every line names
    its process: `... [a] INFO web: ...`; a line logged during a traced request (a chat turn, a
    /v1 request) names its trace: `... INFO backend.chat.service trace_id=<32 hex>: ...`
    (backend.tracing.install_log_records gives every record `trace`)."""
    return "%(asctime)s " + (f"[{instance}] " if instance else "") + "%(levelname)s %(name)s%(trace)s: %(message)s"


def log_handler(instance: str = "") -> logging.Handler:
    """stderr with log_format(instance); a record made without the record factory (no
    `trace`) prints without a trace id."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(log_format(instance), defaults={"trace": ""}))
    return handler


def uvicorn_log_config(instance: str = "") -> dict:
    """uvicorn's own logging configuration (server and access lines), its lines prefixed
    with `[instance]` when CRESCENT_INSTANCE is set."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    if instance:
        for formatter in config["formatters"].values():
            formatter["fmt"] = f"[{instance}] " + formatter["fmt"]
    return config


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from backend.tracing import install_log_records

    install_log_records()  # before the first line: the format reads %(trace)s
    logging.basicConfig(level=logging.INFO, handlers=[log_handler()])
    logging.getLogger("alembic").setLevel(logging.WARNING)  # plugin set-up chatter on import
    overrides = {k: v for k in ("host", "port") if (v := getattr(args, k, None)) is not None}
    try:
        # replace() runs the validation again, so a bad --port is refused like a bad PORT.
        settings = dataclasses.replace(Settings.from_env(), **overrides)
    except ValueError as exc:
        print(f"invalid settings: {exc}", file=sys.stderr)
        return 2
    if settings.instance_name:
        logging.basicConfig(level=logging.INFO, handlers=[log_handler(settings.instance_name)], force=True)
    if args.command == "check-db":
        return _check_db(settings)
    if args.command == "admin":
        return _admin(args, settings)

    import uvicorn

    from web.app import create_app

    try:
        app = create_app(settings)  # reads or creates the secret file (backend/secret_key.py)
    except ValueError as exc:
        print(f"invalid settings: {exc}", file=sys.stderr)
        return 2
    log.info("starting Crescent on http://%s:%d (the model loads first)", settings.host, settings.port)
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        workers=1,
        ws_max_size=WS_MAX_SIZE_BYTES,
        log_level="info",
        log_config=uvicorn_log_config(settings.instance_name),
        # The client IP (log-in throttling) is the peer's unless a trusted proxy forwards it:
        # X-Forwarded-For is believed only from FORWARDED_ALLOW_IPS (README, "Behind a proxy").
        proxy_headers=True,
        forwarded_allow_ips=os.environ.get("FORWARDED_ALLOW_IPS", DEFAULT_FORWARDED_ALLOW_IPS),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
