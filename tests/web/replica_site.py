"""A real `palimpsest web` over a replica (docs/sync.md) for the page's tests, signed in
as its local owner through the one-time link, as a person on the laptop is.

The replica follows a server's workspace (pulled in this process: the server is never
asked again, so every write made on it waits in its queue). It holds one memory with a
revise of it queued, and a remember queued that a search for "pool" matches; each test
adds the refused writes it settles (`refused`), as a sync round writes the server's
refusals.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from palimpsest.embed import NullEmbedder
from palimpsest.service import Service
from palimpsest.store import open_store

from ..agents.test_mcp_e2e import command, free_port, serving
from .site import IMAGE, SCRIPT, base_env, cookie_of

SERVER = "http://127.0.0.1:9"  # the server followed: unreachable, so writes wait
MEMORY = "The pool holds 40 connections"
REVISED = "The pool holds 60 connections"
QUEUED_TEXT = f"The pool warms up in ten seconds {IMAGE}"  # remembered here, not sent
# What a server's refusal may say: its message is the server's text, shown, never run.
REFUSAL = f"Refused by the server {SCRIPT} {IMAGE}"


@dataclass
class Replica:
    base: str  # http://127.0.0.1:PORT
    port: int
    db: Path
    cookie: str  # the local owner's session (`name=value`)
    memory_id: str  # a memory of the server's, with a revise of it queued here
    revise_queued: str
    remember_queued: str

    def service(self) -> Service:
        """The replica opened in this process, as the CLI opens it."""
        return Service(open_store(str(self.db)), embedder=NullEmbedder())

    def refused(self, text: str, message: str = REFUSAL) -> str:
        """A remember queued here that the server then refused with `message`."""
        service = self.service()
        try:
            queued: str = service.remember(notebook="ops", kind="fact", text=text)["queued"]
            service.settle(queued, "refused", {"error_class": "forbidden", "message": message})
            return queued
        finally:
            service.close()

    def queue(self) -> dict[str, dict[str, Any]]:
        """Every queued write, by its id, as the store holds it now."""
        service = self.service()
        try:
            states = ("pending", "accepted", "refused", "conflict", "dropped")
            return {w["queued"]: w for w in service.queued_writes(states=states)["writes"]}
        finally:
            service.close()

    def get(self, path: str) -> httpx2.Response:
        return httpx2.get(f"{self.base}{path}", headers={"Cookie": self.cookie}, timeout=30)

    def post(self, path: str, form: dict[str, str], **headers: str) -> httpx2.Response:
        sent = {"Cookie": self.cookie, "Origin": self.base, **headers}
        return httpx2.post(f"{self.base}{path}", data=form, headers=sent, timeout=30)


def make_replica(tmp: Path) -> dict[str, Any]:
    server = Service(open_store(str(tmp / "server.db")), embedder=NullEmbedder())
    try:
        memory_id = server.remember(notebook="ops", kind="fact", text=MEMORY)["id"]
        pulled = server.sync_pull()
    finally:
        server.close()
    db = tmp / "replica.db"
    here = Service(open_store(str(db)), embedder=NullEmbedder())
    try:
        here.apply_pulled(pulled, SERVER)
        revise = here.revise_with_reason(id=memory_id, text=REVISED, note="measured again")
        remember = here.remember(notebook="ops", kind="fact", text=QUEUED_TEXT)
    finally:
        here.close()
    return {"db": db, "memory_id": memory_id, "revise_queued": revise["queued"],
            "remember_queued": remember["queued"]}  # fmt: skip


@contextmanager
def running_replica(tmp: Path) -> Iterator[Replica]:
    """`palimpsest web` on a new replica in `tmp`, its one-time link opened."""
    made = make_replica(tmp)
    port = free_port()
    process = subprocess.Popen(command(made["db"], "web", "--no-open", "--json", "--port",
                                       str(port)), env=base_env(tmp), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stderr is not None
    link = json.loads(process.stderr.readline())["url"]
    with serving(process, port):
        opened = httpx2.get(link, headers={"Sec-Fetch-Site": "none"}, timeout=30)
        assert opened.status_code == 303, opened.text
        yield Replica(f"http://127.0.0.1:{port}", port, cookie=cookie_of(opened), **made)
