"""The rough edges a newcomer hit in the CLI (issue 9), each through the real command."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run(env: dict[str, str]) -> Run:
    def run(
        *args: str,
        extra_env: dict[str, str] | None = None,
        timeout: float = 60,
        cwd: Path | None = None,
    ) -> Any:
        return subprocess.run(
            [sys.executable, "-m", "palimpsest", *args],
            env={**env, "COLUMNS": "80", **(extra_env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
        )

    return run


@pytest.fixture
def cli(run: Run, db_path: Path) -> Callable[..., Any]:
    def cli(*args: str, code: int = 0) -> Any:
        done = run("--db", str(db_path), *args, "--json")
        assert done.returncode == code, done.stdout + done.stderr
        return json.loads(done.stdout)

    return cli


# -- options of the whole command, before or after the subcommand -----------------------


def test_db_actor_and_json_work_after_the_subcommand(run: Run, db_path: Path) -> None:
    filed = run("remember", "-n", "ops", "We deploy on Fridays", "--db", str(db_path),
                "--actor", "agent:claude", "--json")  # fmt: skip
    assert filed.returncode == 0, filed.stderr
    memory_id = json.loads(filed.stdout)["id"]
    found = run("recall", "--json", "deploy", "--db", str(db_path))
    assert found.returncode == 0, found.stderr
    assert [h["id"] for h in json.loads(found.stdout)["hits"]] == [memory_id]
    before = run("--json", "--db", str(db_path), "recall", "deploy")
    assert json.loads(before.stdout)["hits"][0]["id"] == memory_id
    events = json.loads(run("history", memory_id, "--db", str(db_path), "--json").stdout)
    assert events["events"][0]["actor"] == "agent:claude"
    # history's own --actor still filters by actor
    other = run("history", "--actor", "user:nobody", "--db", str(db_path), "--json")
    assert json.loads(other.stdout)["events"] == []


def test_serve_takes_db_after_the_subcommand(run: Run, tmp_path: Path) -> None:
    store = tmp_path / "served.db"
    done = run("serve", "--db", str(store))  # stdin is empty: the client hung up at once
    assert done.returncode == 0, done.stderr
    assert store.exists()


# -- messages name the CLI's flags -------------------------------------------------------


def test_refusals_name_cli_flags_not_api_fields(run: Run, db_path: Path) -> None:
    run("--db", str(db_path), "migrate")  # a store to refuse in: reads never make one
    done = run("--db", str(db_path), "revise", "--text-match", "nope", "--title", "x")
    assert done.returncode == 1
    assert "--text-match" in done.stderr and "--notebook" in done.stderr
    assert "`texts`" not in done.stderr and "`notebook`" not in done.stderr
    done = run("--db", str(db_path), "revise", "--replace-from", "x")
    assert "`--id`" in done.stderr and "`ids`" not in done.stderr
    as_json = run("--db", str(db_path), "revise", "--text-match", "nope", "--title", "x", "--json")
    body = json.loads(as_json.stdout)
    assert body["field"] == "notebook"  # a program still gets the API's name


def test_a_time_that_cannot_be_read_shows_one_that_can(run: Run, db_path: Path) -> None:
    run("--db", str(db_path), "migrate")
    done = run("--db", str(db_path), "recall", "--as-of", "yesterday")
    assert done.returncode == 1
    assert "--as-of" in done.stderr and "2026-05-01" in done.stderr
    assert "yesterday" not in done.stderr  # the refused value is not echoed
    done = run("--db", str(db_path), "remember", "-n", "p", "x", "--occurred-at", "soon")
    assert "--occurred-at" in done.stderr and "2026-05-01" in done.stderr


# -- every target refused: exit 1 ----------------------------------------------------------


def test_a_command_that_changed_nothing_because_all_were_refused_exits_1(
    run: Run, cli: Callable[..., Any], db_path: Path
) -> None:
    run("--db", str(db_path), "migrate")
    done = run("--db", str(db_path), "revise", "--id", "m_a", "--id", "m_b", "--title", "x")
    assert done.returncode == 1
    assert "m_a" in done.stdout + done.stderr
    body = cli("revise", "--id", "m_a", "--id", "m_b", "--title", "x", code=1)
    assert [u["target"] for u in body["unmatched"]] == ["m_a", "m_b"]
    # one changed, one refused: something happened, so it is a success with a warning
    kept = cli("remember", "-n", "p", "Kept")
    partly = cli("revise", "--id", kept["id"], "--id", "m_b", "--title", "x")
    assert len(partly["results"]) == 1 and partly["unmatched"]


# -- copy ----------------------------------------------------------------------------------


def test_copy_from_a_store_that_does_not_exist_creates_nothing(run: Run, tmp_path: Path) -> None:
    source, target = tmp_path / "missing.db", tmp_path / "target.db"
    done = run("copy", "--from", str(source), "--to", str(target), "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["error_class"] == "not_found"
    assert not source.exists() and not target.exists()


def test_copy_of_a_workspace_that_does_not_exist_creates_nothing(
    run: Run, cli: Callable[..., Any], db_path: Path, tmp_path: Path
) -> None:
    cli("remember", "-n", "p", "Something")
    target = tmp_path / "target.db"
    done = run("copy", "--from", str(db_path), "--to", str(target), "--workspace", "nope")
    assert done.returncode == 1 and done.stderr.startswith("error (not_found): ")
    assert not target.exists()


def test_copy_to_a_bad_postgres_url_fails_fast_with_one_message(
    run: Run, cli: Callable[..., Any], db_path: Path
) -> None:
    cli("remember", "-n", "p", "Something")
    url = "postgresql://ana:pw@127.0.0.1:1/memory"
    done = run("copy", "--from", str(db_path), "--to", url, timeout=REFUSED_WITHIN_SECONDS)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error (validation): ")


def _a_port_where_nothing_listens() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again on leaving: nothing listens


# The pool alone would retry a refused connection in the background for 30 s; refused at
# once is what a user of a stopped server must see. The limit is generous for a busy machine.
REFUSED_WITHIN_SECONDS = 15


@pytest.mark.parametrize(
    "command",
    [["recall", "deploy"], ["remember", "-n", "p", "-k", "fact", "hi"], ["serve"]],
    ids=["recall", "remember", "serve"],
)
def test_a_postgres_that_refuses_connections_fails_fast_with_one_message(
    run: Run, command: list[str]
) -> None:
    url = f"postgresql://ana:hunter2secret@127.0.0.1:{_a_port_where_nothing_listens()}/memory"
    done = run("--db", url, *command, timeout=REFUSED_WITHIN_SECONDS)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error (validation): ")
    assert "hunter2secret" not in done.stderr
    as_json = run("--db", url, *command, "--json", timeout=REFUSED_WITHIN_SECONDS)
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["error_class"] == "validation"
    assert "hunter2secret" not in as_json.stdout + as_json.stderr


def test_a_store_name_that_looks_like_a_mistyped_url_is_refused(run: Run, tmp_path: Path) -> None:
    done = run("--db", "postgres:/memory", "notebook", "list", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.startswith("error (validation): ")
    assert list(tmp_path.iterdir()) == []


# -- merge-domains, serve, remember --supersedes ------------------------------------------


def test_merge_domains_without_because_is_a_validation_error(
    cli: Callable[..., Any],
) -> None:
    cli("notebook", "create", "a", "--domain", "ops")
    body = cli("notebook", "merge-domains", "ops", "infra", code=1)
    assert (body["error_class"], body["field"]) == ("validation", "because")


def test_serve_http_on_a_busy_port_says_so_without_a_url(run: Run, db_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = run("--db", str(db_path), "serve", "--http", "--port", port, timeout=30)
    assert done.returncode == 1
    assert "http://" not in done.stderr
    assert port in done.stderr and "--port" in done.stderr


def test_remember_superseding_a_retracted_memory_says_what_to_do(
    cli: Callable[..., Any], run: Run, db_path: Path
) -> None:
    old = cli("remember", "-n", "p", "Deploys happen on Mondays")
    cli("revise", old["id"], "--status", "retracted", "--note", "never true")
    done = run("--db", str(db_path), "remember", "-n", "p", "Deploys happen on Fridays",
               "--supersedes", old["id"])  # fmt: skip
    assert done.returncode == 1
    assert "without `--supersedes`" in done.stderr


# -- what a person reads ------------------------------------------------------------------

LONG = (
    "The staging cluster in the eu-west region is rebuilt every night from the base image "
    "and the deploy pipeline then replays the migrations; the password for the admin "
    "console is kept in the vault under the path ops/staging/console-admin-rotating"
)


def test_history_shows_the_part_of_a_long_text_that_changed(
    cli: Callable[..., Any], run: Run, db_path: Path
) -> None:
    filed = cli("remember", "-n", "p", LONG)
    cli("revise", filed["id"], "--replace-from", "every night", "--replace-to", "each Sunday")
    shown = run("--db", str(db_path), "history", filed["id"]).stdout
    assert "every night" in shown and "each Sunday" in shown


def test_recall_and_inspect_show_a_long_text_whole(
    cli: Callable[..., Any], run: Run, db_path: Path
) -> None:
    cli("remember", "-n", "p", LONG)
    for args in (("recall", "staging"), ("inspect", "-n", "p")):
        shown = run("--db", str(db_path), *args).stdout
        assert "ops/staging/console-admin-rotating" in "".join(shown.split()), args
        assert all(len(line) <= 80 for line in shown.splitlines()), args


# -- the demo --------------------------------------------------------------------------------


def test_demo_never_writes_to_the_users_store_and_can_run_twice(run: Run, tmp_path: Path) -> None:
    home = tmp_path / "home-dir"
    real = {"PALIMPSEST_HOME": str(home), "PALIMPSEST_DB": str(tmp_path / "real.db")}
    real["TMPDIR"] = str(tmp_path)  # where the demo's own stores go, cleaned with the test
    first, second = run("demo", extra_env=real), run("demo", extra_env=real)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert not (tmp_path / "real.db").exists() and not (home / "palimpsest.db").exists()
    named = first.stdout.splitlines()[0]  # Database: PATH (new, for this tour only: ...)
    store = named.split(": ", 1)[1].split(" (")[0]
    assert store.startswith(str(tmp_path)) and "not touched" in named
    found = json.loads(run("--db", store, "recall", "--json").stdout)
    assert len(found["hits"]) == 3  # the second run used a store of its own


def test_demo_on_a_given_store_twice_adds_nothing(run: Run, db_path: Path) -> None:
    assert run("--db", str(db_path), "demo").returncode == 0
    again = run("--db", str(db_path), "demo")
    assert again.returncode == 1 and "--notebook" in again.stderr
    found = json.loads(run("--db", str(db_path), "recall", "--json").stdout)
    assert len(found["hits"]) == 3


def test_a_fix_given_as_a_tool_call_prints_as_the_command_that_makes_it() -> None:
    """doctor's fixes are tool calls (what an agent makes); the CLI prints each as the
    command a person types for the same call."""
    from palimpsest.domain.views import command_for

    assert command_for({"tool": "forget", "arguments": {"id": "m_1", "version": 2,
                                                        "because": "a secret got in"}}) == (
        "palimpsest forget m_1 --version 2 --because 'a secret got in'"
    )  # fmt: skip
    assert command_for({"tool": "dispute", "arguments": {"action": "rule", "dispute": "dp_1",
                                                         "holds": "m_2"}}) == (
        "palimpsest dispute rule dp_1 --holds m_2"
    )  # fmt: skip
    assert command_for({"tool": "revise", "arguments": {"id": "m_3", "tags": ["a", "b"]}}) == (
        "palimpsest revise m_3 --tag a --tag b"
    )
    assert command_for("palimpsest reindex") == "palimpsest reindex"
