"""The documented team set-up with replicas: two `serve --http` processes on PostgreSQL
behind docs/team.md's nginx, and two people's laptops each keeping a SQLite replica with
`palimpsest sync` through the proxy (docs/sync.md)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from ..agents.test_mcp_e2e import command, free_port
from ..conftest import needs_postgres
from ..team.test_access import cli
from ..team.test_team_server import nginx, servers, team_store  # noqa: F401 - a fixture

BO_TEXT = "The staging database is wiped every Sunday night"


def laptop(db: Path, env: dict[str, str], key: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`palimpsest --db DB ARGS --json` on a laptop whose replica uses `key`."""
    return subprocess.run(command(db, *args, "--json"), env={**env, "PALIMPSEST_SYNC_KEY": key},
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def answered(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def refusal(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode != 0, done.stdout
    return json.loads(done.stdout)


@needs_postgres
def test_two_laptops_keep_replicas_of_the_team_server_through_its_proxy(
    team_store: str,  # noqa: F811 - the fixture
    env: dict[str, str],
    tmp_path: Path,
) -> None:
    for name in ("ana", "bo"):
        cli(team_store, env, "user", "add", name, "--role", "editor")
    keys = {name: str(cli(team_store, env, "key", "create", "--user", name)["key"])
            for name in ("ana", "bo")}  # fmt: skip
    ana_db, bo_db = tmp_path / "ana.db", tmp_path / "bo.db"
    listen = free_port()
    proxy = f"http://127.0.0.1:{listen}"
    with servers(team_store, env, 2, "--stateless") as urls:
        ports = [int(url.split(":")[2].split("/")[0]) for url in urls]
        with nginx(tmp_path, ports, listen):
            for db, name in ((ana_db, "ana"), (bo_db, "bo")):
                assert answered(laptop(db, env, keys[name], "sync", "--server", proxy))["role"] == (
                    "editor"
                )
            queued = answered(laptop(ana_db, env, keys["ana"], "remember", "--notebook",
                                     "ops", "--kind", "decision",
                                     "Releases are cut on Tuesdays"))  # fmt: skip
            assert queued["pending"] is True
            answered(laptop(bo_db, env, keys["bo"], "remember", "--notebook", "ops", "--kind",
                            "fact", BO_TEXT))  # fmt: skip
            for db, name in ((ana_db, "ana"), (bo_db, "bo"), (ana_db, "ana")):
                answered(laptop(db, env, keys[name], "sync", "--server", proxy))
        # The proxy is down: the laptop reads its replica, and its writes wait.
        recalled = answered(laptop(ana_db, env, keys["ana"], "recall", "staging database"))
        assert [hit["text"] for hit in recalled["hits"]] == [BO_TEXT]
        answered(laptop(ana_db, env, keys["ana"], "remember", "--notebook", "ops", "--kind",
                        "fact", "Backups run nightly at two"))  # fmt: skip
        offline = refusal(laptop(ana_db, env, keys["ana"], "sync", "--server", proxy))
        assert offline["error_class"] == "retryable"
        # The server forgets Bo's memory meanwhile; the laptops learn it at the next round.
        (bo_memory,) = [h["id"] for h in recalled["hits"]]
        cli(team_store, env, "forget", bo_memory, "--because", "it named the wrong database")
        with nginx(tmp_path, ports, listen):
            for db, name in ((ana_db, "ana"), (bo_db, "bo")):
                answered(laptop(db, env, keys[name], "sync", "--server", proxy))
            cli(team_store, env, "key", "revoke", _key_id(team_store, env, "user:ana"))
            stopped = refusal(laptop(ana_db, env, keys["ana"], "sync", "--server", proxy))
            assert stopped["error_class"] == "forbidden"
    on_server = cli(team_store, env, "history", "--notebook", "ops")["events"]
    by_actor = {(e["actor"], e["op"]) for e in on_server}
    assert {("user:ana", "remember"), ("user:bo", "remember")} <= by_actor
    assert sum(1 for e in on_server if e["op"] == "remember" and e["actor"] == "user:ana") == 2
    for db, name in ((ana_db, "ana"), (bo_db, "bo")):
        texts = [m["text"] for m in answered(laptop(db, env, keys[name], "inspect",
                                                    "--notebook", "ops"))["memories"]]  # fmt: skip
        assert "Releases are cut on Tuesdays" in texts and BO_TEXT not in texts
        for path in tmp_path.glob(f"{db.name}*"):
            assert BO_TEXT.encode() not in path.read_bytes(), path
    status = answered(laptop(ana_db, env, keys["ana"], "sync", "--status"))
    assert "revoked" in status["replica"]["refused"]


def _key_id(store: str, env: dict[str, str], holder: str) -> str:
    (found,) = [k["id"] for k in cli(store, env, "key", "list")["keys"] if k["holder"] == holder]
    return str(found)
