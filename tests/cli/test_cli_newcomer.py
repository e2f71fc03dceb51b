"""What a newcomer typed, and stumbled on: each case through the CLI as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from palimpsest.store import shown

from ..conftest import POSTGRES_URL, needs_postgres

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run(env: dict[str, str], tmp_path: Path) -> Run:
    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "palimpsest", *args],
            env={**env, "COLUMNS": "80"},
            capture_output=True,
            text=True,
            timeout=60,
            input=stdin,
            cwd=tmp_path,
        )

    return run


def refusal(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 1, done.stdout + done.stderr
    body: dict[str, Any] = json.loads(done.stdout)
    return body


def test_a_json_file_that_is_not_utf8_is_a_validation_error(run: Run, db_path: Path) -> None:
    items = db_path.parent / "items.json"
    items.write_bytes(b'[{"id": "m_x", "tags": ["caf\xe9"]}]')
    body = refusal(run("--db", str(db_path), "revise", "--items", f"@{items}", "--json"))
    assert (body["error_class"], body["field"]) == ("validation", "items")
    assert "UTF-8" in body["message"]


def test_a_missing_required_option_is_called_missing(run: Run, db_path: Path) -> None:
    done = run("--db", str(db_path), "remember", "x")
    assert done.returncode == 2
    assert "--notebook" in done.stderr and "missing" in done.stderr.lower()
    assert "takes a text value" not in done.stderr


def test_options_of_the_whole_command_work_after_a_subgroup_too(run: Run, db_path: Path) -> None:
    run("--db", str(db_path), "notebook", "create", "ops")
    done = run("notebook", "--json", "--db", str(db_path), "list")
    assert done.returncode == 0, done.stderr
    assert [nb["name"] for nb in json.loads(done.stdout)["notebooks"]] == ["ops"]


def test_serve_port_without_http_is_refused(run: Run, db_path: Path) -> None:
    done = run("--db", str(db_path), "serve", "--port", "9000")
    assert done.returncode == 1 and "--http" in done.stderr


def test_an_empty_store_name_is_refused(run: Run) -> None:
    done = run("--db", "", "recall", "x", "--json")
    body = refusal(done)
    assert (body["error_class"], body["field"]) == ("validation", "db")


@pytest.mark.parametrize(
    "command",
    [["recall", "x"], ["inspect", "m_x"], ["history"], ["notebook", "list"], ["doctor"]],
)
def test_a_read_of_a_store_that_does_not_exist_creates_nothing(
    run: Run, tmp_path: Path, command: list[str]
) -> None:
    done = run("--db", str(tmp_path / "typo.db"), *command, "--json")
    body = refusal(done)
    assert (body["error_class"], body["field"]) == ("not_found", "db")
    assert not (tmp_path / "typo.db").exists()


def test_text_from_standard_input_loses_its_final_newline(run: Run, db_path: Path) -> None:
    filed = run("--db", str(db_path), "remember", "-n", "n", "-", "--json", stdin="Backups\n")
    memory = json.loads(filed.stdout)
    shown_ = run("--db", str(db_path), "inspect", memory["id"], "--json")
    assert json.loads(shown_.stdout)["memory"]["text"] == "Backups"


def test_a_url_without_a_password_is_shown_without_stars() -> None:
    assert shown("postgresql://ana@db.example/memory") == "postgresql://ana@db.example/memory"
    assert "secret" not in shown("postgresql://ana:secret@db.example/memory")


def test_every_option_says_what_it_takes(run: Run) -> None:
    """Each option of each command has a help line; times say their form."""
    from palimpsest.cli import palimpsest

    def commands(group: Any, path: list[str]) -> Any:
        for name, command in group.commands.items():
            if hasattr(command, "commands"):
                yield from commands(command, [*path, name])
            else:
                yield [*path, name], command

    for path, command in commands(palimpsest, []):
        for param in command.params:
            if param.param_type_name == "option" and param.name != "help":
                assert param.help, f"{' '.join(path)} {param.opts[0]} has no help"
                if param.name in ("since", "until", "as_of", "expires_at", "occurred_at"):
                    assert "RFC 3339" in param.help, f"{' '.join(path)} {param.opts[0]}"


def test_a_wrong_choice_lists_the_choices(run: Run, db_path: Path) -> None:
    done = run("--db", str(db_path), "forget", "--notebook", "n", "--field", "title")
    assert done.returncode == 2 and "summary" in done.stderr and "name" in done.stderr


def test_history_says_what_a_link_or_a_notebook_edit_changed(run: Run, db_path: Path) -> None:
    def filed(text: str) -> str:
        done = run("--db", str(db_path), "remember", "-n", "ops", text, "--json")
        return str(json.loads(done.stdout)["id"])

    first, second = filed("Deploys need the VPN"), filed("The VPN runs on the bastion")
    run("--db", str(db_path), "link", first, second, "--type", "depends_on")
    run("--db", str(db_path), "notebook", "edit", "ops", "--name", "infra")
    lines = " ".join(run("--db", str(db_path), "history").stdout.split())  # cells wrap
    link_line = lines[lines.index(" link ") :]
    assert first in link_line and "depends_on" in link_line
    assert "name: 'ops' -> 'infra'" in lines


@needs_postgres
def test_a_postgres_that_refuses_the_login_says_which_part_is_wrong(run: Run) -> None:
    assert POSTGRES_URL
    parts = urlsplit(POSTGRES_URL)
    wrong_password = parts._replace(netloc=f"{parts.username}:not-it@{parts.hostname}:{parts.port}")
    no_database = parts._replace(path="/no_such_database")
    for url, says in [(wrong_password, "user or password"), (no_database, "no such database")]:
        body = refusal(run("--db", urlunsplit(url), "recall", "x", "--json"))
        assert says in body["message"] and "not-it" not in body["message"]


def test_scrub_says_what_it_did_even_when_nothing_waited(run: Run, db_path: Path) -> None:
    stores = [str(db_path)] + ([POSTGRES_URL] if POSTGRES_URL else [])
    run("--db", str(db_path), "migrate")
    for store in stores:
        done = run("--db", store, "scrub")
        assert done.returncode == 0 and done.stdout.startswith(("Scrubbed", "Nothing waited"))


def test_config_works_after_the_subcommand_too(run: Run, tmp_path: Path) -> None:
    store = tmp_path / "from-config.db"
    config = tmp_path / "mine.toml"
    config.write_text(f'db = "{store}"\n', encoding="utf-8")
    run("remember", "-n", "ops", "Backups run nightly", "--config", str(config))
    assert store.exists()
    done = run("recall", "backups", "--json", "--config", str(config))
    assert len(json.loads(done.stdout)["hits"]) == 1


STORE_NAMES_WITH_A_PASSWORD = [
    "postgresql://admin:s3cretPW/x@db.internal/prod",  # unencoded / in the password
    "postgresql://u:pa#s3cretPW@127.0.0.1/db",  # unencoded #
    "postgresql://u:s3cretPW@h:abc/db",  # a port that is no number
    "postgresql://u:p@s3cretPW@host/db",  # unencoded @
    "postgresql://u@127.0.0.1:1/db?sslpassword=s3cretPW",
    "jdbc:postgresql://h/db?user=u&password=s3cretPW",
    "postgresql:/u:s3cretPW@h/db",  # one slash
    "mysql://u:s3cretPW@h/db",
    "host=127.0.0.1 password=s3cretPW dbname=x",  # libpq key=value
]


@pytest.mark.parametrize("name", STORE_NAMES_WITH_A_PASSWORD)
def test_a_store_name_never_shows_its_password(run: Run, tmp_path: Path, name: str) -> None:
    assert "s3cretPW" not in shown(name)
    for args in (["config"], ["recall", "x"], ["config", "--json"]):
        done = subprocess.run(
            [sys.executable, "-m", "palimpsest", *args],
            env={**os.environ, "PALIMPSEST_DB": name, "PALIMPSEST_HOME": str(tmp_path)},
            capture_output=True, text=True, timeout=60, cwd=tmp_path,
        )  # fmt: skip
        assert "s3cretPW" not in done.stdout + done.stderr
        assert "error (internal)" not in done.stderr and '"internal"' not in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no file named after it


def test_a_key_value_connection_string_is_refused_as_a_file_name(run: Run, tmp_path: Path) -> None:
    body = refusal(run("--db", "host=127.0.0.1 password=s3cretPW dbname=x", "remember",
                       "-n", "n", "x", "--json"))  # fmt: skip
    assert "URL" in body["message"] and "s3cretPW" not in body["message"]
    assert list(tmp_path.iterdir()) == []


def test_a_wrong_actor_in_the_configuration_names_the_file_and_key(
    run: Run, tmp_path: Path
) -> None:
    config = tmp_path / "c.toml"
    config.write_text('actor = "bob"\n', encoding="utf-8")
    done = run("--config", str(config), "config", "--json")
    body = refusal(done)
    assert "c.toml" in body["message"] and "actor" in body["message"]


def test_settings_read_only_plain_digits_and_forgive_case(run: Run, db_path: Path) -> None:
    run("--db", str(db_path), "migrate")
    for value in ("²", "١٢"):
        body = refusal(run("--db", str(db_path), "settings", "set", "freshness_days.fact",
                           value, "--because", "x", "--json"))  # fmt: skip
        assert "invalid literal" not in body["message"] and value not in body["message"]
    done = run("--db", str(db_path), "settings", "set", "Freshness_Days.Fact", "Never",
               "--because", "facts here do not age", "--json")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    shown_ = json.loads(run("--db", str(db_path), "settings", "--json").stdout)
    assert shown_["settings"]["freshness_days.fact"]["value"] is None


def test_serve_host_without_http_reads_well(run: Run, db_path: Path) -> None:
    done = run("--db", str(db_path), "serve", "--host", "127.0.0.1")
    assert done.returncode == 1 and "Add it, or leave them out" in done.stderr


def test_history_shows_a_settings_change_with_both_sides_on_one_line(
    run: Run, db_path: Path
) -> None:
    run("--db", str(db_path), "migrate")
    run("--db", str(db_path), "settings", "set", "freshness_days.fact", "30",
        "--because", "first line\nsecond line")  # fmt: skip
    lines = run("--db", str(db_path), "history").stdout
    flat = " ".join(lines.split())
    assert "freshness_days.fact: 90 -> 30 (first line second line)" in flat


def test_history_says_why_a_text_was_changed(run: Run, db_path: Path) -> None:
    done = run("--db", str(db_path), "remember", "-n", "ops", "Deploy with ops/deploy.sh", "--json")
    memory = json.loads(done.stdout)["id"]
    run("--db", str(db_path), "revise", "--id", memory, "--replace-from", "ops/deploy.sh",
        "--replace-to", "make deploy", "--note", "the Makefile replaced the script")  # fmt: skip
    flat = " ".join(run("--db", str(db_path), "history", memory).stdout.split())  # cells wrap
    assert "make deploy" in flat and "the Makefile replaced the script" in flat


def test_serve_on_a_terminal_says_it_waits_for_an_agent(db_path: Path, env: dict[str, str]) -> None:
    """Typed by hand, `serve` would wait in silence for JSON-RPC: it says what it is for."""
    import pty
    import select
    import time

    pid, terminal = pty.fork()
    if pid == 0:  # the child: stdin, stdout and stderr are the terminal
        os.execve(sys.executable, [sys.executable, "-m", "palimpsest", "--db", str(db_path),
                                   "serve"], env)  # fmt: skip
    said, deadline = b"", time.monotonic() + 30
    try:
        while b"Ctrl-C" not in said and time.monotonic() < deadline:
            if select.select([terminal], [], [], 1)[0]:
                said += os.read(terminal, 1024)
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    assert b"Ctrl-C" in said and b"README" in said


def test_recall_that_finds_nothing_names_the_cli_s_own_flag(run: Run, db_path: Path) -> None:
    run("--db", str(db_path), "remember", "-n", "ops", "Deploys need the VPN")
    done = run("--db", str(db_path), "recall", "weather on mars")
    assert "--near-misses" in done.stdout + done.stderr
