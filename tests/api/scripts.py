"""What the HTTP API tests share: a keyed `serve --http` and a script's calls to it."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import jsonschema

from palimpsest.service import Service
from palimpsest.store import open_store

from ..agents.test_mcp_e2e import command, free_port, read_status, serving

API = "/api/v1/"
WAIT_SECONDS = 20


@dataclass
class Served:
    base: str  # http://127.0.0.1:PORT
    port: int

    def post(
        self, operation: str, body: Any, key: str | None = None, **headers: str
    ) -> httpx2.Response:
        """A script's call: `body` sent as JSON (bytes as they are)."""
        sent = {"Content-Type": "application/json", **headers}
        if key is not None:
            sent["Authorization"] = f"Bearer {key}"
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return httpx2.post(f"{self.base}{API}{operation}", content=content, headers=sent,
                           timeout=30)  # fmt: skip

    def document(self, key: str | None = None) -> dict[str, Any]:
        headers = {} if key is None else {"Authorization": f"Bearer {key}"}
        got = httpx2.get(f"{self.base}{API}openapi.json", headers=headers, timeout=30)
        assert got.status_code == 200, got.text
        found: dict[str, Any] = got.json()
        return found


LAB_TEXT = "Only the lab knows the vault pin rotation"


@dataclass
class Team:
    """Two workspaces, their people's keys, and a memory each (made in this process: a
    command a call would take seconds each)."""

    mine: str  # a memory of the default workspace
    theirs: str  # one of the workspace "lab"
    viewer: str
    editor: str
    agent: str  # a key of the workspace itself
    stranger: str  # the owner's key of "lab"


def team(store: Path | str) -> Team:
    opened = open_store(str(store))
    try:
        here = Service(opened, workspace="default")
        mine = here.remember(notebook="ops", kind="fact", text="The pool holds 40")["id"]
        for name, role in (("vic", "viewer"), ("ed", "editor")):
            here.add_user(name=name, role=role)
        lab = here.with_workspace(here.create_workspace(name="lab")["workspace"]["id"])
        lab.add_user(name="mallory", role="owner")
        theirs = lab.remember(notebook="lab", kind="fact", text=LAB_TEXT)["id"]
        return Team(mine, theirs, here.create_key(user="vic")["key"],
                    here.create_key(user="ed")["key"], here.create_key(agent="ci")["key"],
                    lab.create_key(user="mallory")["key"])  # fmt: skip
    finally:
        opened.close()


@contextmanager
def api_server(
    store: Path | str, env: dict[str, str], *, port: int | None = None, **settings: object
) -> Iterator[Served]:
    """`serve --http` on `store` (a SQLite file or a PostgreSQL URL), on `port` (else a free
    one), with `settings` (http.NAME=value) through the environment."""
    port = port or free_port()
    extra = {f"PALIMPSEST_HTTP_{name.upper()}": str(value) for name, value in settings.items()}
    process = subprocess.Popen(command(store, "serve", "--http", "--port", str(port)),
                               env={**env, **extra}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    with serving(process, port):
        yield Served(f"http://127.0.0.1:{port}", port)


def answer_schema(document: dict[str, Any], operation: str, status: str = "200") -> dict[str, Any]:
    """The schema the document gives `operation`'s answer of `status`, closed: every key an
    answer holds must be typed, at every depth (components closed too)."""
    post = document["paths"][f"{API}{operation}"]["post"]
    schema = post["responses"][status]["content"]["application/json"]["schema"]
    return {**closed(schema), "components": {"schemas": closed(document["components"]["schemas"])}}


def closed(node: Any) -> Any:
    if isinstance(node, list):
        return [closed(item) for item in node]
    if not isinstance(node, dict):
        return node
    shut = {k: closed(v) for k, v in node.items()}
    if "properties" in node and "additionalProperties" not in node:
        shut["additionalProperties"] = False
    if "properties" in node:  # property names, not schemas' keywords
        shut["properties"] = {k: closed(v) for k, v in node["properties"].items()}
    return shut


def answers_as_documented(document: dict[str, Any], operation: str, got: httpx2.Response) -> Any:
    """`got`'s JSON, checked against what the document says `operation` answers."""
    status = str(got.status_code)
    body = got.json()
    jsonschema.validate(body, answer_schema(document, operation, status))
    return body


def wait_for(
    call: Callable[[], httpx2.Response], done: Callable[[httpx2.Response], bool]
) -> httpx2.Response:
    """`call` again until its answer is `done` (each call is its own wait), for at most
    WAIT_SECONDS."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        got = call()
        if done(got):
            return got
        assert time.monotonic() < deadline, f"still {got.status_code}: {got.text}"


def status_before_body(port: int, path: str, key: str | None) -> int:
    """The status a request's head alone gets: a body of 50 MB announced and never sent,
    so an answer proves the key was judged before any body was awaited."""
    client = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        head += "Content-Type: application/json\r\nContent-Length: 50000000\r\n"
        if key is not None:
            head += f"Authorization: Bearer {key}\r\n"
        client.sendall(f"{head}\r\n".encode())
        return read_status(client)
    finally:
        client.close()
