"""backend.secret_key: one server secret, from the environment or a 0600 file made once."""

from __future__ import annotations

import threading

import pytest

from backend.secret_key import (
    CACHE_SALT_LABEL,
    CSRF_LABEL,
    SECRET_FILE,
    derive_key,
    load_or_create_secret_file,
    server_keys,
)
from backend.settings import Settings, SettingsError

SECRET = "s" * 32


def test_keys_derive_from_the_env_secret_with_distinct_labels(tmp_path) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path}/a.db", secret_key=SECRET)
    keys = server_keys(settings)
    assert keys == server_keys(Settings(database_url="sqlite://", secret_key=SECRET))
    assert keys.csrf != keys.cache_salt and len(keys.csrf) == len(keys.cache_salt) == 32
    assert keys.csrf == derive_key(SECRET.encode(), CSRF_LABEL)
    assert keys.cache_salt == derive_key(SECRET.encode(), CACHE_SALT_LABEL)
    assert server_keys(Settings(database_url="sqlite://", secret_key="t" * 32)) != keys
    assert not (tmp_path / SECRET_FILE).exists()  # an env secret writes no file


def test_the_secret_file_is_made_once_with_mode_0600_and_reused(tmp_path) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path}/crescent.db")
    assert settings.secret_dir == str(tmp_path)
    first = server_keys(settings)
    path = tmp_path / SECRET_FILE
    assert path.stat().st_mode & 0o777 == 0o600
    content = path.read_bytes()
    assert len(content.strip()) == 64
    assert server_keys(settings) == first  # a restart reads the same file
    assert path.read_bytes() == content
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left


def test_processes_starting_together_agree_on_one_secret(tmp_path) -> None:
    path = tmp_path / "data" / SECRET_FILE
    barrier = threading.Barrier(8)
    secrets: list[bytes] = []

    def start() -> None:
        barrier.wait()
        secrets.append(load_or_create_secret_file(path))

    threads = [threading.Thread(target=start) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(secrets) == 8 and len(set(secrets)) == 1


def test_data_dir_chooses_where_the_file_goes(tmp_path) -> None:
    settings = Settings.from_env({"DATABASE_URL": "postgresql://u@db/crescent",
                                  "CRESCENT_DATA_DIR": str(tmp_path / "state")})
    server_keys(settings)
    assert (tmp_path / "state" / SECRET_FILE).exists()
    assert Settings(database_url="postgresql://u@db/crescent").secret_dir == ".crescent"
    assert Settings(database_url="sqlite://").secret_dir == ".crescent"


def test_a_short_env_secret_is_refused() -> None:
    with pytest.raises(SettingsError, match="CRESCENT_SECRET_KEY must be at least 32 characters"):
        Settings.from_env({"CRESCENT_SECRET_KEY": "x" * 31})
    assert Settings.from_env({"CRESCENT_SECRET_KEY": " "}).secret_key is None  # empty: unset
    assert Settings.from_env({"CRESCENT_SECRET_KEY": SECRET}).secret_key == SECRET


def test_a_short_or_unreadable_secret_file_is_refused(tmp_path) -> None:
    path = tmp_path / SECRET_FILE
    path.write_text("short\n")
    with pytest.raises(SettingsError, match="fewer than 32 characters"):
        load_or_create_secret_file(path)
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(SettingsError, match="cannot create the secret file"):
        load_or_create_secret_file(blocked / "sub" / SECRET_FILE)


def test_the_secret_is_not_in_the_settings_repr() -> None:
    assert SECRET not in repr(Settings(secret_key=SECRET))
