"""The process's configuration: a TOML file and environment variables, behind the flags.

Run as a user runs it: `palimpsest` as a subprocess, with a private home (the `env`
fixture), so no configuration of the machine's user reaches these tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from palimpsest.config import KEYS, is_loopback, load_config
from palimpsest.domain.errors import ValidationError

from ..agents.test_mcp_e2e import (
    accepts_connections,
    free_port,
    open_slow_clients,
    serving,
    wait_closed_by_server,
)

PASSWORD = "hunter2-not-a-real-one"


def run(env: dict[str, str], *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "palimpsest", *args],
        env={**env, **extra},
        capture_output=True,
        text=True,
        timeout=60,
    )


def shown_config(env: dict[str, str], *args: str, **extra: str) -> dict[str, Any]:
    done = run(env, *args, "config", "--json", **extra)
    assert done.returncode == 0, done.stdout + done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def refusal(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """A `validation` refusal, exit 1, as JSON and never a traceback."""
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    body: dict[str, Any] = json.loads(done.stdout)
    assert body["error_class"] == "validation"
    return body


def test_without_a_file_every_value_is_a_default(env: dict[str, str], tmp_path: Path) -> None:
    env = {k: v for k, v in env.items() if k != "PALIMPSEST_EMBEDDER"}  # conftest's choice
    shown = shown_config(env, PALIMPSEST_HOME=str(tmp_path / "home"))
    assert shown["file"] is None
    assert set(shown["keys"]) == set(KEYS)
    assert {k["from"] for k in shown["keys"].values()} == {"default"}
    assert shown["keys"]["db"]["value"] == str(tmp_path / "home" / "palimpsest.db")
    assert shown["keys"]["http.port"]["value"] == 8765
    assert shown["keys"]["actor"]["value"].startswith("user:")
    assert shown["keys"]["workspace"]["value"] == "default"


def test_a_flag_beats_the_environment_which_beats_the_file(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The file under PALIMPSEST_HOME is found without being named."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'db = "{tmp_path / "file.db"}"\nactor = "agent:from-file"\n[http]\nport = 9001\n'
    )
    where = {"PALIMPSEST_HOME": str(home)}
    shown = shown_config(env, **where)
    assert shown["file"] == str(home / "config.toml")
    keys = shown["keys"]
    assert (keys["db"]["from"], keys["actor"]["value"], keys["http.port"]["value"]) == (
        "file", "agent:from-file", 9001
    )  # fmt: skip
    assert keys["db"]["where"] == str(home / "config.toml")

    assert run(env, "remember", "-n", "p", "from the file", **where).returncode == 0
    assert (tmp_path / "file.db").exists()
    env_db = {**where, "PALIMPSEST_DB": str(tmp_path / "env.db"), "PALIMPSEST_ACTOR": "user:env"}
    assert run(env, "remember", "-n", "p", "from the env", **env_db).returncode == 0
    flag = ("--db", str(tmp_path / "flag.db"))
    assert run(env, *flag, "remember", "-n", "p", "from the flag", **env_db).returncode == 0

    def texts_and_authors(db: str) -> list[tuple[str, str]]:
        found = json.loads(run(env, "--db", db, "recall", "--json").stdout)["hits"]
        shown = [json.loads(run(env, "--db", db, "inspect", h["id"], "--json").stdout)
                 for h in found]  # fmt: skip
        return [(s["memory"]["text"], s["memory"]["author"]) for s in shown]

    assert texts_and_authors(str(tmp_path / "file.db")) == [("from the file", "agent:from-file")]
    assert texts_and_authors(str(tmp_path / "env.db")) == [("from the env", "user:env")]
    assert texts_and_authors(str(tmp_path / "flag.db")) == [("from the flag", "user:env")]

    keys = shown_config(env, *flag, "--actor", "user:flag", **env_db)["keys"]
    assert {name: (keys[name]["from"], keys[name]["where"]) for name in ("db", "actor")} == {
        "db": ("flag", "--db"),
        "actor": ("flag", "--actor"),
    }
    keys = shown_config(env, **env_db)["keys"]
    assert (keys["db"]["from"], keys["db"]["where"]) == ("env", "PALIMPSEST_DB")
    assert keys["http.port"]["from"] == "file"


def test_the_file_named_by_the_flag_or_the_variable_wins_and_must_exist(
    env: dict[str, str], tmp_path: Path
) -> None:
    home, named = tmp_path / "home", tmp_path / "named.toml"
    home.mkdir()
    (home / "config.toml").write_text("[http]\nport = 9001\n")
    named.write_text("[http]\nport = 9002\n")
    where = {"PALIMPSEST_HOME": str(home)}
    port = "http.port"
    assert shown_config(env, "--config", str(named), **where)["keys"][port]["value"] == 9002
    by_env = {**where, "PALIMPSEST_CONFIG": str(named)}
    assert shown_config(env, **by_env)["keys"][port]["value"] == 9002
    missing = run(env, "--config", str(tmp_path / "nowhere.toml"), "recall", "--json", **where)
    assert "nowhere.toml" in refusal(missing)["message"]
    assert not (home / "palimpsest.db").exists()  # refused before any store was opened


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("prot = 9000\n", ['"prot"', "http.port"]),  # unknown key: the allowed ones listed
        ("[http]\nport = 70000\n", ['"http.port"', "1 to 65535"]),
        ('[http]\nport = "high"\n', ['"http.port"', "whole number"]),
        ("[server]\nstore_threads = 0\n", ['"server.store_threads"', "1 to 64"]),
        ("[http]\nhead_seconds = true\n", ['"http.head_seconds"', "seconds"]),
        ("db = 5\n", ['"db"', "postgresql://"]),
        ("[http\nport = 1\n", ["not valid TOML"]),
        ("http = 5\n", ['"http"']),
    ],
)
def test_a_wrong_file_is_a_validation_error_naming_the_file_and_the_key(
    env: dict[str, str], tmp_path: Path, text: str, named: list[str]
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    body = refusal(run(env, "--config", str(path), "recall", "--json"))
    for part in [str(path), *named]:
        assert part in body["message"], body


def test_a_wrong_variable_is_named_and_its_value_not_repeated(env: dict[str, str]) -> None:
    body = refusal(run(env, "recall", "--json", PALIMPSEST_HTTP_PORT="port-hunter2"))
    assert "PALIMPSEST_HTTP_PORT" in body["message"] and "hunter2" not in body["message"]


def test_a_password_in_the_store_url_is_never_printed(env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    url = f"postgresql://palimpsest:{PASSWORD}@127.0.0.1:1/memory"
    path.write_text(f'db = "{url}"\n')
    for args in (("config", "--json"), ("config",)):
        done = run(env, "--config", str(path), *args)
        assert done.returncode == 0 and PASSWORD not in done.stdout + done.stderr
        assert "postgresql://palimpsest:***@127.0.0.1:1/memory" in done.stdout
    path.write_text(f'[http]\nhost = "{url}"\n')  # in the wrong place, refused unrepeated
    done = run(env, "--config", str(path), "serve", "--http", "--json")
    assert PASSWORD not in done.stdout + done.stderr
    assert refusal(done)["field"] == "http.host"


@pytest.mark.parametrize(
    ("args", "extra", "text"),
    [
        (("--host", "0.0.0.0"), {}, ""),
        ((), {"PALIMPSEST_HTTP_HOST": "192.168.1.5"}, ""),
        ((), {}, '[http]\nhost = "example.org"\n'),
        # this machine too, but the SDK checks `Host` headers (DNS rebinding) only on
        # 127.0.0.1, ::1 and localhost: without keys it would listen unguarded
        (("--host", "127.0.0.2"), {}, ""),
    ],
)
def test_listening_beyond_loopback_is_refused_until_keys_exist(
    env: dict[str, str], tmp_path: Path, args: tuple[str, ...], extra: dict[str, str], text: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    port = str(free_port())
    done = run(env, "--config", str(path), "serve", "--http", "--port", port, *args, "--json",
               **extra)  # fmt: skip
    body = refusal(done)
    assert body["field"] == "http.host" and "keys" in body["message"]
    assert not accepts_connections(int(port))


def test_a_host_is_a_name_or_an_address_and_the_loopback_names_are_spelled_one_way() -> None:
    for host in ("127.0.0.1", "::1", "[::1]", "localhost", "LOCALHOST"):
        assert is_loopback(load_config({"http.host": host}, {}).http_host)
    assert not is_loopback(load_config({"http.host": "127.0.0.2"}, {}).http_host)
    for bad in ("", "  ", "http://example.org", "a b", "-x"):
        with pytest.raises(ValidationError):
            load_config({"http.host": bad}, {})


@contextmanager
def served(env: dict[str, str], config: Path, db: Path) -> Iterator[int]:
    """`palimpsest serve --http` with only the configuration file saying the port."""
    port = int(load_config({}, {}, str(config)).http_port)
    process = subprocess.Popen(
        [sys.executable, "-m", "palimpsest", "--config", str(config), "--db", str(db),
         "serve", "--http"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    with serving(process, port):
        yield port


def test_the_server_takes_its_port_and_limits_from_the_file(
    env: dict[str, str], tmp_path: Path, db_path: Path
) -> None:
    """8 connections at most: of 12 that never finish their headers, 4 are closed at once;
    the other 8 wait for the head deadline, set far beyond the default 10 seconds."""
    config = tmp_path / "config.toml"
    config.write_text(f"[http]\nport = {free_port()}\nmax_connections = 8\nhead_seconds = 300\n")
    with served(env, config, db_path) as port:
        slow = open_slow_clients(port, 12)
        try:
            left_open = wait_closed_by_server(slow, 12)  # past the default head deadline
            # At most 8 (the start-up probe's connection may still count, closing one more);
            # with the default 256 and 10 s, all 12 would be open, then all closed.
            assert 1 <= len(left_open) <= 8
        finally:
            for client in slow:
                client.close()


@pytest.mark.parametrize(
    ("given", "chosen"),
    [("NONE", "none"), (" MiniLM ", "minilm"), ("all-minilm-l6-v2", "all-MiniLM-L6-v2")],
)
def test_an_embedder_is_named_whatever_its_case(given: str, chosen: str) -> None:
    assert load_config({}, {"PALIMPSEST_EMBEDDER": given}).embedder == chosen
    with pytest.raises(ValidationError):
        load_config({}, {"PALIMPSEST_EMBEDDER": "bert-huge"})
