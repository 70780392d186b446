from __future__ import annotations

import pytest

from backend.settings import Settings, SettingsError


def test_defaults_match_the_contract():
    s = Settings.from_env({})
    assert s.database_url == "sqlite:///crescent.db"
    assert (s.host, s.port) == ("127.0.0.1", 8000)
    assert s.model_path is None and s.system_prompt is None
    assert (s.max_tokens, s.temperature, s.top_p) == (512, 0.7, 0.95)
    assert s.session_ttl_s == 14 * 24 * 3600
    assert s.cookie_secure is False and s.allowed_origins == ()


def test_from_env_reads_every_variable():
    s = Settings.from_env(
        {
            "DATABASE_URL": "postgresql://u:p@db/crescent",
            "HOST": "0.0.0.0",
            "PORT": "9000",
            "CRESCENT_MODEL": "/models/x.gguf",
            "CRESCENT_SYSTEM_PROMPT": "Be brief.",
            "CRESCENT_MAX_TOKENS": "64",
            "CRESCENT_TEMPERATURE": "0",
            "CRESCENT_TOP_P": "0.5",
            "CRESCENT_FREQUENCY_PENALTY": "0.4",
            "CRESCENT_SESSION_TTL_S": "3600",
            "COOKIE_SECURE": "1",
            "CRESCENT_ALLOWED_ORIGINS": "https://a.example, https://b.example/ ,",
            "CRESCENT_QUANTIZATION": "none",
        }
    )
    assert s.quantization == "none"
    assert s.database_url == "postgresql://u:p@db/crescent"
    assert (s.host, s.port, s.model_path) == ("0.0.0.0", 9000, "/models/x.gguf")
    assert s.system_prompt == "Be brief."
    assert (s.max_tokens, s.temperature, s.top_p, s.session_ttl_s) == (64, 0.0, 0.5, 3600)
    assert s.frequency_penalty == 0.4
    assert s.cookie_secure is True
    assert s.allowed_origins == ("https://a.example", "https://b.example")


@pytest.mark.parametrize(
    "env, names",
    [
        ({"PORT": "eighty"}, "PORT"),
        ({"PORT": "70000"}, "PORT"),
        ({"CRESCENT_MAX_TOKENS": "0"}, "CRESCENT_MAX_TOKENS"),
        ({"CRESCENT_TEMPERATURE": "-1"}, "CRESCENT_TEMPERATURE"),
        ({"CRESCENT_TOP_P": "0"}, "CRESCENT_TOP_P"),
        ({"CRESCENT_FREQUENCY_PENALTY": "3"}, "CRESCENT_FREQUENCY_PENALTY"),
        ({"CRESCENT_SESSION_TTL_S": "5"}, "CRESCENT_SESSION_TTL_S"),
        ({"COOKIE_SECURE": "maybe"}, "COOKIE_SECURE"),
        ({"DATABASE_URL": "not a url"}, "DATABASE_URL"),
        ({"CRESCENT_ALLOWED_ORIGINS": "evil.example"}, "CRESCENT_ALLOWED_ORIGINS"),
        ({"CRESCENT_QUANTIZATION": "int4"}, "CRESCENT_QUANTIZATION"),
    ],
)
def test_bad_values_raise_a_typed_error_naming_the_variable(env, names):
    with pytest.raises(SettingsError, match=names):
        Settings.from_env(env)


def test_direct_construction_is_validated_too():
    with pytest.raises(SettingsError):
        Settings(top_p=1.5)


def test_settings_are_immutable():
    s = Settings()
    with pytest.raises(AttributeError):
        s.port = 1  # type: ignore[misc]


def test_serving_control_variables():
    defaults = Settings.from_env({})
    assert (defaults.max_waiting_requests, defaults.max_waiting_prompt_tokens) == (64, 65536)
    assert (defaults.queue_timeout_s, defaults.metrics_token) == (300.0, None)
    s = Settings.from_env({
        "CRESCENT_MAX_WAITING_REQUESTS": "8", "CRESCENT_MAX_WAITING_PROMPT_TOKENS": "4096",
        "CRESCENT_QUEUE_TIMEOUT_S": "2.5", "CRESCENT_METRICS_TOKEN": " scrape-me-0123456789 ",
    })  # fmt: skip
    assert (s.max_waiting_requests, s.max_waiting_prompt_tokens, s.queue_timeout_s) == (8, 4096, 2.5)
    assert s.metrics_token == "scrape-me-0123456789"
    assert "scrape-me" not in repr(s)  # a secret stays out of logs
    assert Settings.from_env({"CRESCENT_METRICS_TOKEN": "  "}).metrics_token is None


@pytest.mark.parametrize(
    "name, value",
    [
        ("CRESCENT_MAX_WAITING_REQUESTS", "0"),
        ("CRESCENT_MAX_WAITING_REQUESTS", "many"),
        ("CRESCENT_MAX_WAITING_PROMPT_TOKENS", "0"),
        ("CRESCENT_QUEUE_TIMEOUT_S", "0"),
        ("CRESCENT_QUEUE_TIMEOUT_S", "-3"),
        ("CRESCENT_QUEUE_TIMEOUT_S", "nan"),
        ("CRESCENT_QUEUE_TIMEOUT_S", "inf"),
        ("CRESCENT_METRICS_TOKEN", "short"),
        ("CRESCENT_METRICS_TOKEN", "has a space inside it"),
    ],
)
def test_bad_serving_control_values_name_the_variable(name, value):
    with pytest.raises(SettingsError, match=name):
        Settings.from_env({name: value})


def test_signup_rate_is_read_and_validated():
    assert Settings.from_env({"CRESCENT_SIGNUP_RATE": "100/hour"}).signup_rate == "100/hour"
    assert Settings.from_env({}).signup_rate == "5/hour"
    with pytest.raises(SettingsError, match="CRESCENT_SIGNUP_RATE"):
        Settings.from_env({"CRESCENT_SIGNUP_RATE": "lots"})
