"""What the sync tests share: a team's server (`serve --http`) on a store filled in this
process, replicas synced by the real `palimpsest sync` in a subprocess, and comparisons of
what a replica and its server answer."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palimpsest.service import Service
from palimpsest.store import open_store

from ..agents.test_mcp_e2e import command, free_port, serving

WAIT_SECONDS = 60
FORCE = {"kind": "forbidden", "literals": ["git push --force"]}


@dataclass
class Team:
    """The server's workspace: its people's keys (by user name) and key ids, some memories."""

    keys: dict[str, str] = field(default_factory=dict)
    key_ids: dict[str, str] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)


def opened(url: str, actor: str = "user:ana") -> Any:
    """A service on `url` (its store closed by the caller: `service.store.close()`)."""
    return Service(open_store(url), workspace="default", actor=actor)


def team(url: str) -> Team:
    """Ana (owner), Ed (editor), Vic (viewer), each with a key; a fact revised, a rule with
    a forbidden check, a memory retired, two linked."""
    found = Team()
    service = opened(url)
    try:
        for name, role in (("ana", "owner"), ("ed", "editor"), ("vic", "viewer")):
            service.add_user(name=name, role=role)
            made = service.create_key(user=name)
            found.keys[name], found.key_ids[name] = made["key"], made["id"]
        pool = service.remember(notebook="ops", kind="fact", text="The pool holds 40")["id"]
        service.revise(id=pool, text="The pool holds 60 connections", expected_version=1)
        rule = service.remember(notebook="ops", kind="rule", text="Never force-push to main.",
                                falsifier="a force-push that harmed nothing", check=FORCE,
                                severity="irreversible")["id"]  # fmt: skip
        old = service.remember(notebook="web", kind="decision", text="Pages are cached a day")
        service.revise(id=old["id"], status="superseded", note="pages now expire hourly")
        hourly = service.remember(notebook="web", kind="decision",
                                  text="Pages are cached an hour")["id"]  # fmt: skip
        service.link(source=hourly, target=old["id"], type="relates_to")
        found.ids = {"pool": pool, "rule": rule, "old": old["id"], "hourly": hourly}
        return found
    finally:
        service.store.close()


@dataclass
class Server:
    base: str  # http://127.0.0.1:PORT
    port: int
    process: subprocess.Popen[str]


@contextmanager
def served(
    store: str | Path, env: dict[str, str], port: int | None = None, **settings: object
) -> Iterator[Server]:
    """`serve --http` on `store` (at `port` if given), with `settings` (NAME=value, as
    PALIMPSEST_NAME in its environment), stopped afterwards."""
    port = port or free_port()
    args = command(store, "serve", "--http", "--port", str(port))
    extra = {f"PALIMPSEST_{name.upper()}": str(value) for name, value in settings.items()}
    process = subprocess.Popen(args, env={**env, **extra}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    with serving(process, port):
        yield Server(f"http://127.0.0.1:{port}", port, process)


def palimpsest(
    db: Path | str, env: dict[str, str], *args: str, key: str | None = None,
    stdin: str | None = None,
) -> tuple[int, Any]:  # fmt: skip
    """`palimpsest --db DB ARGS --json`: its exit code and answer (an error's too)."""
    extra = {"PALIMPSEST_SYNC_KEY": key} if key is not None else {}
    done = subprocess.run(command(db, *args, "--json"), env={**env, **extra}, input=stdin,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        answer = {"stdout": done.stdout, "stderr": done.stderr}
    return done.returncode, answer


def sync(replica: Path, env: dict[str, str], server: Server, key: str) -> tuple[int, Any]:
    return palimpsest(replica, env, "sync", "--server", server.base, key=key)


def synced(replica: Path, env: dict[str, str], server: Server, key: str) -> dict[str, Any]:
    code, answer = sync(replica, env, server, key)
    assert code == 0, answer
    return dict(answer)


def position(replica: Path) -> int:
    """The server's sequence number the replica has reached (0 before its first answer)."""
    if not replica.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{replica}?mode=ro", uri=True, timeout=5) as raw:
            row = raw.execute("SELECT position_seq FROM replica_state").fetchone()
    except sqlite3.OperationalError:  # the schema is still being made
        return 0
    return int(row[0]) if row else 0


def events_of(replica: Path) -> list[tuple[Any, ...]]:
    """The replica's events as the server wrote them (its own sequence numbers aside)."""
    with sqlite3.connect(replica) as raw:
        return raw.execute(
            "SELECT op_id, target_id, op, version, at, actor FROM events ORDER BY seq"
        ).fetchall()


def wait_until(condition: Callable[[], bool], what: str, seconds: float = WAIT_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)  # a poll's pace, not a synchronisation


def reads(url: str, ids: list[str], queries: list[str]) -> dict[str, Any]:
    """What a user reads of `ids` and `queries` on the store at `url`."""
    service = opened(url)
    try:
        return {
            "inspect": {i: service.inspect(id=i) for i in ids},
            "history": {i: service.history(id=i)["events"] for i in ids},
            "recall": {q: hits(service.recall(query=q, include_retired=True)) for q in queries},
            "notebooks": sorted(n["name"] for n in service.notebooks()["notebooks"]),
            "settings": service.settings(),
        }
    finally:
        service.store.close()


def hits(answer: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(hit["id"], hit["text"], hit["status"]) for hit in answer["hits"]]


def counts(url: str) -> dict[str, int]:
    """The workspace's events and memory versions, on either store."""
    service = opened(url)
    try:
        with service.store.read(service.workspace) as tx:
            found = {}
            for table in ("events", "memory_versions", "links", "notebooks"):
                row = tx._row(f"SELECT count(*) AS n FROM {table} WHERE workspace = ?",
                              (service.workspace,))  # fmt: skip
                found[table] = int(row["n"])
        return found
    finally:
        service.store.close()


def file_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())
