"""The installed `palimpsest` command, run as a real process against a temporary SQLite file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest

from palimpsest.cli import palimpsest
from palimpsest.cli.app import pick_data_dir

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run(env: dict[str, str]) -> Run:
    def run(*args: str, extra_env: dict[str, str] | None = None) -> Any:
        return subprocess.run(
            [sys.executable, "-m", "palimpsest", *args],
            env={**env, **(extra_env or {})},
            capture_output=True,
            text=True,
            timeout=60,
        )

    return run


@pytest.fixture
def cli(run: Run, db_path: Path) -> Callable[..., Any]:
    """Run a command with `--db` and `--json`, and return the parsed answer."""

    def cli(*args: str, code: int = 0) -> Any:
        done = run("--db", str(db_path), *args, "--json")
        assert done.returncode == code, done.stdout + done.stderr
        return json.loads(done.stdout)

    return cli


def test_remember_then_recall_finds_it(cli: Callable[..., Any]) -> None:
    filed = cli("remember", "-n", "myproj", "-k", "decision", "We use PostgreSQL 16",
                "--why", "pgvector needs it", "--tag", "db")  # fmt: skip
    found = cli("recall", "PostgreSQL", "-n", "myproj", "--kind", "decision")
    hit = next(h for h in found["hits"] if h["id"] == filed["id"])
    assert (hit["text"], hit["kind"], hit["notebook"], hit["tags"]) == (
        "We use PostgreSQL 16", "decision", "myproj", ["db"],
    )  # fmt: skip
    assert cli("recall", "PostgreSQL", "--kind", "fact")["hits"] == []


def test_revise_small_edit_shows_in_history_and_omitted_fields_keep(
    cli: Callable[..., Any],
) -> None:
    memory = cli("remember", "-n", "p", "Cache TTL is 60 seconds", "--title", "TTL", "--tag", "a")
    answer = cli("revise", "--id", memory["id"], "--replace-from", "60", "--replace-to", "120")
    assert answer["results"][0]["version"] == 2
    events = cli("history", memory["id"])["events"]
    assert [e["op"] for e in events] == ["remember", "revise"]
    assert events[1]["changes"]["text"] == {
        "old": "Cache TTL is 60 seconds",
        "new": "Cache TTL is 120 seconds",
    }
    shown = cli("inspect", memory["id"])["memory"]
    assert (shown["title"], shown["tags"]) == ("TTL", ["a"])
    diff = cli("history", memory["id"], "--diff", "1", "2")
    assert "+Cache TTL is 120 seconds" in diff["text_diff"]


def test_revise_retires_a_memory_as_superseded_by_one_filed_already(
    cli: Callable[..., Any],
) -> None:
    """`--superseded-by`, as revise's `superseded_by` on MCP: the CLI reaches every field."""
    old = cli("remember", "-n", "p", "Deploys run on Jenkins.")["id"]
    new = cli("remember", "-n", "p", "Deploys run on GitHub Actions.")["id"]
    cli("revise", old, "--status", "superseded", "--superseded-by", new, "--note", "moved CI")
    shown = cli("inspect", old)
    assert (shown["memory"]["status"], shown["memory"]["superseded_by"]) == ("superseded", new)
    assert [(link["source"], link["type"]) for link in shown["links"]] == [(new, "supersedes")]


def test_refusals_exit_1_with_the_error_class(
    cli: Callable[..., Any], run: Run, db_path: Path
) -> None:
    memory = cli("remember", "-n", "p", "Some fact")
    body = cli("revise", memory["id"], "--title", "", code=1)
    assert (body["error_class"], body["field"]) == ("validation", "title")
    assert cli("inspect", "m_missing", code=1)["error_class"] == "not_found"
    done = run("--db", str(db_path), "forget", memory["id"])  # no --because
    assert done.returncode == 1
    assert done.stderr.startswith("error (validation): ")
    assert done.stdout == ""


def test_usage_error_exits_2(run: Run, tmp_path: Path) -> None:
    done = run("--db", str(tmp_path / "x.db"), "recall", "--no-such-option")
    assert done.returncode == 2


def test_a_file_that_is_no_store_is_refused_without_a_traceback(run: Run, tmp_path: Path) -> None:
    broken = tmp_path / "broken.db"
    broken.write_text("not a database, " * 100)
    done = run("--db", str(broken), "recall", "anything")
    assert done.returncode == 1
    assert done.stderr.startswith("error (validation): ")
    assert "--db" in done.stderr and "Traceback" not in done.stderr
    as_json = run("--db", str(broken), "recall", "anything", "--json")
    assert json.loads(as_json.stdout)["error_class"] == "validation"


def test_store_selection_order(run: Run, tmp_path: Path) -> None:
    """--db, else PALIMPSEST_DB, else palimpsest.db under PALIMPSEST_HOME."""
    flag, env_db, home = tmp_path / "flag.db", tmp_path / "env.db", tmp_path / "home-dir"
    both = {"PALIMPSEST_DB": str(env_db), "PALIMPSEST_HOME": str(home)}
    assert run("--db", str(flag), "remember", "-n", "p", "one", extra_env=both).returncode == 0
    assert flag.exists() and not env_db.exists()
    assert run("remember", "-n", "p", "two", extra_env=both).returncode == 0
    assert env_db.exists() and not (home / "palimpsest.db").exists()
    home_only = {"PALIMPSEST_HOME": str(home)}
    assert run("remember", "-n", "p", "three", extra_env=home_only).returncode == 0
    texts = {}
    for db in (flag, env_db, home / "palimpsest.db"):
        found = json.loads(run("--db", str(db), "recall", "--json").stdout)
        texts[db.name] = [h["text"] for h in found["hits"]]
    assert texts == {"flag.db": ["one"], "env.db": ["two"], "palimpsest.db": ["three"]}


def _command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = []
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            paths += _command_paths(command, (*prefix, name))
        else:
            paths.append((*prefix, name))
    return paths


def test_every_command_has_json_and_ends_its_help_with_an_example(run: Run) -> None:
    paths = _command_paths(palimpsest)
    assert len(paths) >= 13
    for path in paths:
        done = run(*path, "--help")
        assert done.returncode == 0, path
        assert "--json" in done.stdout, path
        tail = done.stdout.rstrip().splitlines()[-2:]
        assert tail[0].strip() == "Example:" and f"palimpsest {' '.join(path)}" in tail[1], path


def test_demo_runs_on_an_empty_home_in_a_store_of_its_own(run: Run, tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    done = run("demo", extra_env={"PALIMPSEST_HOME": str(home), "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "PostgreSQL 16" in done.stdout
    assert not (home / "palimpsest.db").exists()  # the user's memory is left alone


def test_forget_then_inspect_shows_only_the_tombstone(
    cli: Callable[..., Any], run: Run, db_path: Path
) -> None:
    memory = cli("remember", "-n", "p", "Ana lives at 12 hunter2 street")
    cli("forget", memory["id"], "--because", "pasted by mistake")
    shown = cli("inspect", memory["id"])
    assert shown["tombstone"]["reason"] == "pasted by mistake"
    assert "hunter2" not in json.dumps(shown)
    assert cli("recall", "hunter2", "--include-retired")["hits"] == []
    printed = run("--db", str(db_path), "inspect", memory["id"])
    assert printed.returncode == 0 and "tombstone" in printed.stdout


def test_notebook_rename_keeps_the_id(cli: Callable[..., Any]) -> None:
    created = cli("notebook", "create", "alpha", "--domain", "work")["notebook"]
    edited = cli("notebook", "edit", "alpha", "--name", "beta", "--summary", "API server")
    assert edited["notebook"]["id"] == created["id"]
    listed = {nb["id"]: nb for nb in cli("notebook", "list")["notebooks"]}
    assert (listed[created["id"]]["name"], listed[created["id"]]["domain"]) == ("beta", "work")


def test_redact_and_doctor(cli: Callable[..., Any]) -> None:
    token = "ghp_" + "".join(chr(ord("a") + (i * 7) % 26) for i in range(20)) + "Q9x8W7v6U5t4S3r2"
    created = cli("notebook", "create", "ops", "--summary", f"key {token}", "--redact")
    assert token not in created["notebook"]["summary"]
    refused = cli("remember", "-n", "ops", f"key {token}", code=1)
    assert refused["error_class"] == "validation" and token not in json.dumps(refused)
    report = cli("doctor")
    assert report["secrets"] == [] and report["scrub_pending"] is False


def test_copy_and_migrate(cli: Callable[..., Any], run: Run, tmp_path: Path) -> None:
    filed = cli("remember", "-n", "p", "Copied with its history")
    cli("revise", filed["id"], "--append", "(twice revised)")
    target = tmp_path / "copy.db"
    source = next(tmp_path.glob("*.db"))
    done = run("copy", "--from", str(source), "--to", str(target), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["copied"]["memory_versions"] == 2
    shown = run("--db", str(target), "inspect", filed["id"], "--json")
    assert [v["version"] for v in json.loads(shown.stdout)["versions"]] == [1, 2]
    migrated = run("--db", str(target), "migrate", "--json")
    assert json.loads(migrated.stdout)["schema_version"] >= 2


def test_a_store_url_is_never_printed_with_its_password(run: Run) -> None:
    for url in (
        "postgresql://ana:Hunter2Secret@127.0.0.1:1/memory",
        "postgresql://ana@127.0.0.1:1/memory?password=Hunter2Secret",
    ):
        done = run("--db", url, "notebook", "list")
        assert done.returncode == 1 and "Hunter2Secret" not in done.stdout + done.stderr


def test_a_reader_that_goes_away_ends_the_command_quietly(
    env: dict[str, str], db_path: Path
) -> None:
    """`palimpsest demo | head -1`: no error when nobody reads the rest."""
    with subprocess.Popen(
        [sys.executable, "-m", "palimpsest", "--db", str(db_path), "demo"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # the reader is gone before the first line is written
        assert process.wait(timeout=60) == 0
        assert process.stderr.read() == b""


def test_the_default_store_is_in_the_platform_data_directory(run: Run, env: dict[str, str]) -> None:
    assert run("remember", "-n", "n", "Filed in the default store").returncode == 0
    assert (Path(env["XDG_DATA_HOME"]) / "palimpsest" / "palimpsest.db").exists()


def test_a_store_at_the_earlier_default_place_is_still_used(tmp_path: Path) -> None:
    platform_dir, earlier = tmp_path / "platform", tmp_path / "earlier"
    assert pick_data_dir(platform_dir, earlier) == platform_dir  # nothing anywhere yet
    earlier.mkdir()
    (earlier / "palimpsest.db").touch()
    assert pick_data_dir(platform_dir, earlier) == earlier  # never an empty one beside it
    platform_dir.mkdir()
    (platform_dir / "palimpsest.db").touch()
    assert pick_data_dir(platform_dir, earlier) == platform_dir  # both: the platform's wins


def _modules_defining(command: click.Command) -> set[str]:
    """The cli modules whose functions make `command` and its subcommands."""
    found = {command.callback.__module__.rsplit(".", 1)[1]} if command.callback else set()
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            found |= _modules_defining(sub)
    return found


def test_each_command_loads_the_modules_that_define_it() -> None:
    """A command imports only the modules COMMANDS names for it (`palimpsest serve` starts
    without the rest): they must be all that define it and its subcommands."""
    from palimpsest.cli import COMMANDS

    assert set(COMMANDS) == set(palimpsest.commands)
    for name, command in palimpsest.commands.items():
        assert _modules_defining(command) <= set(COMMANDS[name]), name


def test_serve_loads_no_other_command(tmp_path: Path) -> None:
    code = (
        "import sys; from palimpsest.cli.app import palimpsest; "
        "palimpsest.main(['--db', sys.argv[1], 'serve', '--help'], standalone_mode=False); "
        "others = {'palimpsest.cli.memories', 'palimpsest.cli.bench', 'palimpsest.cli.guard'}; "
        "assert not others & set(sys.modules), others & set(sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "s.db")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "streamable HTTP" in done.stdout


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_the_default_store_is_readable_by_its_owner_only(run: Run, tmp_path: Path) -> None:
    """The store holds every workspace's text, its users and their keys' hashes."""
    done = run("remember", "-n", "infra", "The staging database is wiped every Sunday night.")
    assert done.returncode == 0, done.stderr
    (store,) = (tmp_path / "xdg").rglob("palimpsest.db")
    assert _mode(store.parent) == 0o700
    files = [p for p in store.parent.iterdir() if p.name.startswith("palimpsest.db")]
    assert store in files
    assert {p.name: _mode(p) for p in files} == {p.name: 0o600 for p in files}


def test_a_store_others_could_read_is_made_private_when_opened(
    cli: Callable[..., Any], db_path: Path
) -> None:
    cli("remember", "-n", "infra", "Deploys go out with make release.")
    for path in db_path.parent.iterdir():
        path.chmod(0o644)
    cli("recall", "deploy")
    tightened = {
        p.name: _mode(p) for p in db_path.parent.iterdir() if p.name.startswith(db_path.name)
    }
    assert tightened == {name: 0o600 for name in tightened}


def test_opening_a_store_never_changes_the_mode_of_what_a_link_beside_it_points_to(
    run: Run, tmp_path: Path
) -> None:
    """In a shared folder (/tmp), another user may plant `x.db` or `x.db-wal` as a link to
    a folder of yours: following it made that folder 600, shutting you out of it."""
    home = tmp_path / "mine"
    home.mkdir(mode=0o755)
    home.chmod(0o755)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "a.db-wal").symlink_to(home)
    done = run("--db", str(shared / "a.db"), "remember", "-n", "infra", "Deploys use make.")
    assert done.returncode == 0, done.stderr
    (shared / "b.db").symlink_to(home)
    run("--db", str(shared / "b.db"), "remember", "-n", "infra", "Deploys use make.")
    assert _mode(home) == 0o755
    (shared / "c.db").symlink_to(shared / "c.db")  # a loop: refused, not an internal error
    looped = run("--db", str(shared / "c.db"), "remember", "-n", "infra", "Deploys use make.")
    assert looped.returncode == 1, looped.stderr


@pytest.mark.skipif(os.getuid() != 0, reason="only root can give a file to another user")
def test_a_store_file_another_user_left_writable_to_all_is_refused(
    run: Run, tmp_path: Path
) -> None:
    """In /tmp, another user may create `x.db-wal` (or `x.db`) open to all before you first
    use `x.db`: SQLite would then write your memory into their file."""
    shared = tmp_path / "shared"
    shared.mkdir()
    for planted in ("a.db", "b.db-wal"):
        trap = shared / planted
        trap.touch()
        trap.chmod(0o666)
        os.chown(trap, 65534, 65534)  # nobody's
        store = shared / planted.removesuffix("-wal")
        done = run("--db", str(store), "remember", "-n", "infra", "Deploys use make.", "--json")
        assert done.returncode == 1, done.stdout + done.stderr
        refusal = json.loads(done.stdout)
        assert refusal["error_class"] == "validation" and planted in refusal["message"]
        assert trap.stat().st_size == 0  # nothing of ours went into it


def test_a_terminal_is_never_sent_the_control_characters_a_memory_holds(
    cli: Callable[..., Any], run: Run, db_path: Path
) -> None:
    """A teammate's (or an agent's) memory is printed to your terminal: an escape in it
    could set your clipboard (OSC 52), hide text or rewrite the line above. Shown, not sent."""
    osc52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
    mid = cli("remember", "-n", "infra", f"Builds are cached{osc52} in S3.\x1b[2K\rfine",
              "--title", "Cache\x1b[8m hidden", "--tag", "ci\u202e")["id"]  # fmt: skip
    for args in (("recall", "cached"), ("inspect", mid), ("history", mid)):
        done = run("--db", str(db_path), *args)
        assert done.returncode == 0, done.stderr
        assert not set("\x1b\x07\r\u202e") & set(done.stdout), args
    assert "\\x1b]52" in run("--db", str(db_path), "inspect", mid).stdout
