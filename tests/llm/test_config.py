"""The config file: strict validation with clear errors, keys never written or repeated."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.llm.config import LLMConfigError, from_table, load_config
from tests.llm.helpers import KEY, KEY_ENV

BASE = {"provider": "openai", "model": "m"}
BASE_TOML = 'provider = "openai"\nmodel = "m"\n'


def test_a_full_config_is_read(tmp_path, monkeypatch):
    path = tmp_path / "c.toml"
    path.write_text(
        'provider = "anthropic"\nmodel = "claude-x"\nbase_url = "http://127.0.0.1:9/"\n'
        'api_key_env = "MY_KEY"\ntemperature = 0.2\nmax_output_tokens = 2000\n'
        'request_timeout = 20\n[extra]\ntop_p = 0.9\nmetadata = { user_id = "league" }\n'
    )
    c = load_config(path)
    assert (c.provider, c.model, c.temperature, c.max_output_tokens) == (
        "anthropic",
        "claude-x",
        0.2,
        2000,
    )
    assert c.extra == {"top_p": 0.9, "metadata": {"user_id": "league"}}
    with pytest.raises(LLMConfigError, match="MY_KEY is unset"):
        c.api_key()
    monkeypatch.setenv("MY_KEY", "value")
    assert c.api_key() == "value"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"model": "m"}, "missing required field 'provider': openai or anthropic (openai for any"),
        ({**BASE, "provider": "acme"}, "provider: 'acme' is not a provider: openai or anthropic"),
        ({**BASE, "provider": 3}, "provider: int is not a provider: openai or anthropic"),
        (
            {**BASE, "modle": "x", "tempreture": 1},
            "modle: unknown field (did you mean 'model'?); tempreture: unknown field (did you "
            "mean 'temperature'?) (the fields: provider, model, base_url, api_key_env, "
            "temperature, max_output_tokens, request_timeout, extra, input_price_per_mtok, "
            "output_price_per_mtok)",
        ),
        ({**BASE, "temperature": 3}, "Expected `float` <= 2"),
        ({**BASE, "max_output_tokens": 0}, "Expected `int` >= 1 - at `$.max_output_tokens`"),
        ({**BASE, "request_timeout": -1}, "Expected `float` > 0"),
        ({**BASE, "base_url": "ftp://x"}, "at `$.base_url`"),
        ({**BASE, "extra": {"model": "other"}}, "extra: model is set by the player"),
        ({**BASE, "extra": {"when": __import__("datetime").date(2026, 1, 1)}}, "only JSON values"),
    ],
)
def test_bad_fields_are_named(table, message):
    with pytest.raises(LLMConfigError) as info:
        from_table(table, "night.toml")
    text = str(info.value)
    assert text.startswith("night.toml: ")
    assert message in text


@pytest.mark.parametrize("field", ["api_key", "API_KEY", "token", "secret"])
def test_a_key_in_the_file_is_refused_without_being_repeated(field):
    with pytest.raises(LLMConfigError, match=f"{field}: a key never goes in a file") as info:
        from_table({**BASE, field: KEY})
    assert KEY not in str(info.value)


def test_a_key_pasted_as_the_variable_name_is_not_repeated():
    with pytest.raises(LLMConfigError, match="not the key itself") as info:
        from_table({**BASE, "api_key_env": KEY})
    assert KEY not in str(info.value)


def test_cli_reports_config_errors_cleanly_and_never_the_key(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(f'provider = "openai"\nmodel = "m"\napi_key = "{KEY}"\n')
    unset = tmp_path / "unset.toml"
    unset.write_text(f'provider = "openai"\nmodel = "m"\napi_key_env = "{KEY_ENV}_UNSET"\n')
    for argv, expected in (
        (["--llm", str(bad)], "api_key: a key never goes in a file"),
        (["--policy", f"llm:{unset}"], f"{KEY_ENV}_UNSET is unset"),
        (["--llm", str(tmp_path / "missing.toml")], "cannot read"),
    ):
        r = subprocess.run(
            [sys.executable, "-m", "cogolf", "bot", *argv, "--url", "ws://127.0.0.1:9"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 2, r.stderr
        assert expected in r.stderr and "Traceback" not in r.stderr
        assert KEY not in r.stderr + r.stdout


def test_nothing_of_the_clients_is_imported_until_an_llm_player_plays(tmp_path):
    """The CLI, the server, the bot runtime and the league load without openai/anthropic,
    and even a loaded LLM policy imports its client only when it is warmed."""
    cfg = tmp_path / "c.toml"
    cfg.write_text('provider = "anthropic"\nmodel = "m"\n')
    script = f"""
import sys
import cogolf.cli, cogolf.commands.bot, cogolf.bots.client, cogolf.server.app, cogolf.league.night
import cogolf.league.play, cogolf.league.checks, cogolf.commands.play
cogolf.cli.build_parser()
from cogolf.bots.policy import load_policy
policy = load_policy("llm:{cfg}")
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("openai", "anthropic"))
assert not heavy, heavy
policy.warm()
assert "anthropic" in sys.modules and "openai" not in sys.modules
print("ok")
"""
    r = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert r.stdout.strip() == "ok", r.stderr


SECRET = "hunter2-" + KEY


@pytest.mark.parametrize(
    ("base_url", "message"),
    [
        (f"https://user:{SECRET}@llm.example.org/v1", "base_url: credentials in the URL"),
        (f"https://{SECRET}@llm.example.org/v1", "base_url: credentials in the URL"),
        (f"https://llm.example.org/v1?key={SECRET}", "base_url: a query (?...) or fragment"),
        (f"https://llm.example.org/v1#{SECRET}", "base_url: a query (?...) or fragment"),
        (f"file:///etc/{SECRET}", "at `$.base_url`"),
        (f"http+unix://%2Frun%2F{SECRET}/v1", "at `$.base_url`"),
        (f"unix:/run/{SECRET}.sock", "at `$.base_url`"),
        (f"https://llm.example.org:{SECRET}/v1", "base_url: not a valid URL"),
        ("https:///v1", "base_url: no host"),
    ],
)
def test_a_base_url_with_credentials_or_off_http_is_refused_without_repeating_it(base_url, message):
    with pytest.raises(LLMConfigError) as info:
        from_table({**BASE, "base_url": base_url}, "night.toml")
    assert message in str(info.value) and SECRET not in str(info.value)


def test_hostile_files_get_a_clear_error_naming_the_limit(tmp_path):
    huge = tmp_path / "huge.toml"
    huge.write_text('provider = "openai"\nmodel = "m"\n# ' + "x" * (1 << 20) + "\n")
    deep_toml = tmp_path / "deep.toml"
    deep_toml.write_text(BASE_TOML + "[extra]\nx = " + "[" * 5000 + "]" * 5000)
    deep_extra = tmp_path / "deep_extra.toml"
    deep_extra.write_text('provider = "openai"\nmodel = "m"\n[extra]\nx = ' + "[" * 40 + "]" * 40)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b'provider = "openai"\nmodel = "\xff"\n')
    for path, message in (
        (huge, "over 65536 bytes; a config is a few lines"),
        (deep_toml, "nested"),
        (deep_extra, "extra: nested deeper than 32 levels"),
        (binary, "cannot read (not UTF-8)"),
    ):
        with pytest.raises(LLMConfigError) as info:
            load_config(path)
        assert str(info.value).startswith(f"{path}: ") and message in str(info.value), info.value


def test_cli_and_night_refuse_a_url_with_credentials_without_echoing_them(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text(f'provider = "openai"\nmodel = "m"\nbase_url = "https://u:{SECRET}@h/v1"\n')
    night = tmp_path / "n.toml"
    night.write_text(
        'name = "n"\nseed = 1\nholes = 1\n\n[[entrant]]\nname = "a"\npolicy = "pedant"\n\n'
        '[[entrant]]\nname = "b"\n'
        f'llm = {{ provider = "openai", model = "m", base_url = "https://u:{SECRET}@h/v1" }}\n'
    )
    for argv in (
        ["bot", "--llm", str(config), "--url", "ws://127.0.0.1:9"],
        ["league", "check", str(night)],
    ):
        r = subprocess.run(
            [sys.executable, "-m", "cogolf", *argv],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert r.returncode == 2, r.stderr
        assert "base_url: credentials in the URL" in r.stderr and "Traceback" not in r.stderr
        assert SECRET not in r.stderr + r.stdout


@pytest.mark.parametrize("field", ["api_key", "token", "password"])
def test_a_key_in_extra_is_refused_too_as_it_would_sit_in_argv(field):
    with pytest.raises(LLMConfigError, match=f"extra.{field}: a key never goes in a file") as info:
        from_table({**BASE, "extra": {field: KEY}})
    assert KEY not in str(info.value)
