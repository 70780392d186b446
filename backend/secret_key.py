"""The one server secret, and the keys derived from it.

Source, first found: ``CRESCENT_SECRET_KEY`` (Settings.secret_key, at least 32 characters,
checked by Settings), else the file ``crescent.secret`` in the data directory
(Settings.secret_dir: CRESCENT_DATA_DIR, else the SQLite file's directory, else ``.crescent/``
in the working directory), created once with mode 0600 and reused ever after. Every process
started with the same secret derives the same keys, so a CSRF token or a prefix-cache salt made
by one is valid in another and after a restart.

Each use gets its own key, HMAC-SHA256(secret, label) with a distinct label (the HKDF-Expand
idea of RFC 5869 in one block): a key leaked from one use says nothing of the others.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from backend.settings import SECRET_KEY_MIN, Settings, SettingsError

SECRET_FILE = "crescent.secret"
CSRF_LABEL = b"crescent/csrf/v1"
CACHE_SALT_LABEL = b"crescent/prefix-cache-salt/v1"
SECRET_ID_LABEL = b"crescent/secret-id/v1"


@dataclass(frozen=True)
class ServerKeys:
    """csrf: web.security.CsrfMiddleware's HMAC key; cache_salt: Generations' (32 bytes each).
    secret_id: a public fingerprint of the secret (16 hex characters of its own derived key,
    revealing nothing of the others), compared between processes sharing a Redis."""

    csrf: bytes
    cache_salt: bytes
    secret_id: str = ""


def derive_key(secret: bytes, label: bytes) -> bytes:
    """HMAC-SHA256(secret, label): 32 bytes, one key per label."""
    return hmac.new(secret, label, hashlib.sha256).digest()


def server_keys(settings: Settings) -> ServerKeys:
    """The keys of this server, from `settings.secret_key` or the secret file (made if absent).

    Raises:
        SettingsError: the file cannot be read or created, or holds fewer than
            SECRET_KEY_MIN characters.
    """
    if settings.secret_key is not None:
        secret = settings.secret_key.encode("utf-8")
    else:
        secret = load_or_create_secret_file(Path(settings.secret_dir) / SECRET_FILE)
    return ServerKeys(csrf=derive_key(secret, CSRF_LABEL), cache_salt=derive_key(secret, CACHE_SALT_LABEL),
                      secret_id=derive_key(secret, SECRET_ID_LABEL)[:8].hex())


def load_or_create_secret_file(path: Path) -> bytes:
    """The secret in `path`; a new random one (64 hex characters) when the file does not exist.

    The new file is written under a temporary name with mode 0600 and then hard-linked into
    place (atomic, and refused when `path` exists), so two processes starting together agree on
    one secret, neither reads a half-written file, and no other local user can read it.

    Raises:
        SettingsError: unreadable, uncreatable, or too short.
    """
    if not path.exists():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(fd, "w", encoding="ascii") as file:
                    file.write(secrets.token_hex(32) + "\n")
                os.link(temporary, path)
            except FileExistsError:
                pass  # another process made it first: use its secret
            finally:
                temporary.unlink(missing_ok=True)
        except OSError as exc:
            raise SettingsError(f"cannot create the secret file {path}: {exc.strerror or exc}") from None
    return _read(path)


def _read(path: Path) -> bytes:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise SettingsError(f"cannot read the secret file {path}: {exc.strerror or exc}") from None
    if len(text) < SECRET_KEY_MIN:
        raise SettingsError(f"the secret file {path} holds fewer than {SECRET_KEY_MIN} characters; "
                            "delete it to make a new one, or set CRESCENT_SECRET_KEY")
    return text.encode("utf-8")
