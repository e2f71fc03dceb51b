"""The web page behind a load balancer: two `serve --http` processes on one store, each
request going to either. A session opened on one is known to the other; a sign-out, a
revocation or the per-key bound on one holds on both; the store holds no cookie, no form
token and no key in the clear (issue 32)."""

from __future__ import annotations

import io
import json
import signal
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest

from palimpsest.embed import NullEmbedder
from palimpsest.formats import native
from palimpsest.service import copy_between, open_service
from palimpsest.service.web_sessions import cookie_hash

from ..agents.test_mcp_e2e import command, free_port, serving
from ..conftest import needs_postgres, own_postgres_database
from .site import base_env, cookie_of, form_token, make_store

PER_KEY = 2


@dataclass
class Pair:
    """One store, two processes serving it, and the keys `make_store` made."""

    location: str
    a: str  # the base URL of each process
    b: str
    made: dict[str, Any]
    processes: list[subprocess.Popen[str]]


@contextmanager
def serve(location: str, tmp: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = free_port()
    env = base_env(tmp) | {"PALIMPSEST_HTTP_WEB_SESSIONS_PER_KEY": str(PER_KEY)}
    args = command(location, "serve", "--http", "--stateless", "--port", str(port))
    process = subprocess.Popen(
        args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    with serving(process, port):
        yield f"http://127.0.0.1:{port}", process


@contextmanager
def two_processes(location: str, tmp: Path) -> Iterator[Pair]:
    made = make_store(location)  # type: ignore[arg-type]  # a URL names a store as a path does
    with ExitStack() as stack:
        a, first = stack.enter_context(serve(location, tmp))
        b, second = stack.enter_context(serve(location, tmp))
        yield Pair(location, a, b, made, [first, second])


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    with two_processes(str(tmp_path / "shared.db"), tmp_path) as running:
        yield running


def sign_in(base: str, key: str) -> httpx2.Response:
    return httpx2.post(f"{base}/sign-in", data={"key": key}, headers={"Origin": base},
                       timeout=30)  # fmt: skip


def signed_in(base: str, key: str) -> str:
    answer = sign_in(base, key)
    assert answer.status_code == 303, answer.text
    return cookie_of(answer)


def get(base: str, path: str, cookie: str) -> httpx2.Response:
    return httpx2.get(f"{base}{path}", headers={"Cookie": cookie}, timeout=30)


def sign_out(base: str, cookie: str, token: str) -> httpx2.Response:
    return httpx2.post(f"{base}/sign-out", data={"csrf": token},
                       headers={"Origin": base, "Cookie": cookie}, timeout=30)  # fmt: skip


def revoke(location: str, key_id: str) -> None:
    """As `palimpsest key revoke` does it: a third process, the store's owner."""
    service = open_service(location, actor="user:owner", embedder=NullEmbedder())
    try:
        service.revoke_key(id=key_id)
    finally:
        service.close()


def test_a_session_opened_on_one_process_is_known_to_the_other_and_ends_on_both(
    pair: Pair,
) -> None:
    cookie = signed_in(pair.a, pair.made["editor_key"])
    on_b = get(pair.b, "/?q=pool", cookie)
    assert on_b.status_code == 200 and "Sign out" in on_b.text
    token = form_token(on_b.text)
    assert form_token(get(pair.a, "/", cookie).text) == token  # one token, whichever serves
    out = sign_out(pair.b, cookie, token)
    assert out.status_code == 303 and "Max-Age=0" in out.headers["set-cookie"]
    for base in (pair.a, pair.b):  # a copy of the cookie kept after sign-out names nothing
        assert get(base, "/", cookie).status_code == 401


def test_a_revoked_key_ends_its_sessions_on_every_process_at_their_next_request(
    pair: Pair,
) -> None:
    editor = signed_in(pair.a, pair.made["editor_key"])
    viewer = signed_in(pair.b, pair.made["viewer_key"])
    assert get(pair.b, "/", editor).status_code == get(pair.a, "/", viewer).status_code == 200
    revoke(pair.location, pair.made["editor_key_id"])
    for base in (pair.a, pair.b):
        ended = get(base, f"/memories/{pair.made['memory_id']}", editor)
        assert ended.status_code == 401 and "session has ended" in ended.text
        assert pair.made["memory_id"] not in ended.text
        assert get(base, "/", viewer).status_code == 200  # another key's go on


def test_the_bound_of_sessions_per_key_holds_across_processes(pair: Pair) -> None:
    key = pair.made["viewer_key"]
    first, second = signed_in(pair.a, key), signed_in(pair.b, key)
    third = signed_in(pair.a, key)
    for base in (pair.a, pair.b):
        assert get(base, "/", first).status_code == 401  # the least recently used ended
        assert get(base, "/", second).status_code == get(base, "/", third).status_code == 200


def test_sign_ins_of_one_key_on_both_processes_at_once_keep_its_bound(pair: Pair) -> None:
    key = pair.made["viewer_key"]
    bases = [pair.a, pair.b] * 4
    with ThreadPoolExecutor(len(bases)) as pool:
        cookies = list(pool.map(lambda base: signed_in(base, key), bases))
    live = [c for c in cookies if get(pair.a, "/", c).status_code == 200]
    assert len(live) == PER_KEY
    assert all(get(pair.b, "/", c).status_code == 200 for c in live)


def test_a_session_outlives_the_process_that_opened_it_killed_mid_work(pair: Pair) -> None:
    cookie = signed_in(pair.a, pair.made["editor_key"])
    pair.processes[0].send_signal(signal.SIGKILL)
    pair.processes[0].wait(timeout=10)
    assert get(pair.b, "/?q=pool", cookie).status_code == 200


def test_the_store_holds_no_cookie_no_form_token_and_no_key(tmp_path: Path, pair: Pair) -> None:
    keys = [pair.made["editor_key"], pair.made["viewer_key"]]
    cookies = [signed_in(base, key) for base in (pair.a, pair.b) for key in keys]
    tokens = [form_token(get(pair.a, "/", c).text) for c in cookies]
    secrets = [c.split("=", 1)[1] for c in cookies] + tokens + keys
    db = Path(pair.location)
    held = b"".join(p.read_bytes() for p in db.parent.glob(f"{db.name}*"))  # the WAL too
    assert b"web_sessions" in held  # the table is there, and read below
    assert [s for s in secrets if s.encode() in held] == []
    assert cookie_hash(secrets[0]).encode() in held  # what it holds instead


def test_an_export_or_a_copy_carries_no_session_and_brings_none_back(
    tmp_path: Path, pair: Pair
) -> None:
    cookie = signed_in(pair.a, pair.made["editor_key"]).split("=", 1)[1]
    owner = open_service(pair.location, actor="user:owner", embedder=NullEmbedder())
    out = io.StringIO()
    try:
        owner.export(out)
    finally:
        owner.close()
    assert {json.loads(line)["record"] for line in out.getvalue().splitlines()} <= {
        "header", *native.RECORDS
    }  # fmt: skip
    assert cookie_hash(cookie) not in out.getvalue()
    file, restored_db = tmp_path / "export.jsonl", tmp_path / "restored.db"
    file.write_text(out.getvalue())
    restored = open_service(str(restored_db), actor="user:owner", embedder=NullEmbedder())
    try:
        assert restored.import_file(file)["mode"] == "restore"
        assert restored.web_session(cookie) is None
    finally:
        restored.close()
    copied = str(tmp_path / "copied.db")  # a copy takes the keys (hashes) along, not sessions
    copy_between(pair.location, copied, "default")
    again = open_service(copied, actor="user:owner", embedder=NullEmbedder())
    try:
        assert again.authenticate(pair.made["editor_key"]) is not None
        assert again.web_session(cookie) is None
    finally:
        again.close()


def key_id(key: str) -> str:
    """The id a key carries: palimpsest_k_..._SECRET."""
    return "_".join(key.split("_")[1:3])


@needs_postgres
def test_on_postgresql_a_session_is_shared_and_ends_on_both_processes(tmp_path: Path) -> None:
    with own_postgres_database("websessions") as url, two_processes(url, tmp_path) as pair:
        cookie = signed_in(pair.a, pair.made["editor_key"])
        viewer = signed_in(pair.b, pair.made["viewer_key"])
        on_b = get(pair.b, "/?q=pool", cookie)
        assert on_b.status_code == 200 and get(pair.a, "/", viewer).status_code == 200
        with psycopg.connect(url) as conn:
            held = repr(conn.execute("SELECT * FROM web_sessions").fetchall())
        secrets = [cookie.split("=", 1)[1], viewer.split("=", 1)[1], form_token(on_b.text),
                   pair.made["editor_key"], pair.made["viewer_key"]]  # fmt: skip
        assert cookie_hash(secrets[0]) in held and [s for s in secrets if s in held] == []
        assert sign_out(pair.b, cookie, form_token(on_b.text)).status_code == 303
        assert get(pair.a, "/", cookie).status_code == 401
        revoke(url, key_id(pair.made["viewer_key"]))
        assert get(pair.a, "/", viewer).status_code == get(pair.b, "/", viewer).status_code == 401
        bases = [pair.a, pair.b] * 3  # at once on both: the bound still holds
        with ThreadPoolExecutor(len(bases)) as pool:
            cookies = list(pool.map(lambda base: signed_in(base, pair.made["editor_key"]), bases))
        assert sum(get(pair.b, "/", c).status_code == 200 for c in cookies) == PER_KEY
