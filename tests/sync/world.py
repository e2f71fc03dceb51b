"""A server and a replica driven by real service operations, and what a user can read of
each, for the sync tests: the replica must read as the server does after every pull."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hypothesis

from palimpsest.domain.errors import PalimpsestError
from palimpsest.service import Service
from palimpsest.store import EventFilter, Store, open_store

SERVER = "https://palimpsest.example"
WORDS = ("pool", "cache", "deploy", "queue", "index")
NAMES = ("alpha", "beta", "gamma", "delta", "epsilon")  # memories go to the first two


def token() -> str:
    """A word of its own (lowercase, ending in a digit: the stemmer leaves it whole)."""
    return f"zqxj{uuid.uuid4().hex[:10]}7"


class World:
    """A server's service and a replica following it, both on real stores."""

    def __init__(self, server: Store, replica_path: Path, workspace: str = "default") -> None:
        self.server = Service(server, workspace=workspace)
        self.replica_path = replica_path
        self.replica = Service(open_store(str(replica_path)))
        self.ids: list[str] = []
        self.tokens: set[str] = set()
        self.disputes: list[str] = []
        self.times: list[str] = []
        self.last: dict[str, Any] | None = None

    def close(self) -> None:
        self.replica.store.close()

    # -- the server's side --------------------------------------------------------------

    def text(self, *words: str) -> str:
        word = token()
        self.tokens.add(word)
        return f"{' '.join(words)} note {word}"

    def attempt(self, call: Callable[[], Any]) -> Any:
        """A write that may be refused (bad input changes nothing, so the run goes on)."""
        try:
            return call()
        except PalimpsestError as exc:
            hypothesis.event(f"refused: {exc.error_class}")
            return None

    def remember(self, notebook: str, *words: str) -> str | None:
        text = self.text(*words)
        filed = self.attempt(lambda: self.server.remember(notebook=notebook, kind="fact",
                                                          text=text))  # fmt: skip
        if filed is not None and filed["id"] not in self.ids:
            self.ids.append(filed["id"])
        return filed["id"] if filed else None

    # -- sync ----------------------------------------------------------------------------

    def pull(self, limit: int, twice: bool = False) -> bool:
        """One round; whether more waits."""
        since = self.last["position"] if self.last else None
        answer = self.server.sync_pull(since=since, limit=limit)
        self.replica.apply_pulled(answer, SERVER)
        self.view(self.replica)  # readable between batches too, if not yet the server's
        if twice:
            self.replica.apply_pulled(answer, SERVER)
        self.last = answer
        return answer["more"]

    def pull_all(self, limit: int = 1000) -> None:
        while self.pull(limit):
            pass

    # -- what a user reads ----------------------------------------------------------------

    def view(self, service: Service) -> dict[str, Any]:
        def recalled(query: str, **options: Any) -> list[str]:
            hits = service.recall(query=query, include_retired=True, limit=50, **options)
            return sorted(hit["id"] for hit in hits["hits"])

        return {
            "memories": {i: _without_seqs(_read(service.inspect, id=i)) for i in self.ids},
            "history": {i: _without_seqs(_read(service.history, id=i)) for i in self.ids},
            "recall": {word: recalled(word) for word in WORDS},
            "active": sorted(h["id"] for h in service.recall(query="note", limit=50)["hits"]),
            "as_of": {time: recalled("note", as_of=time) for time in self.times[-3:]},
            "notebooks": service.notebooks(),
            "in notebooks": {n: _read(service.inspect, notebook=n) for n in NAMES},
            "notebook history": {
                n: _without_seqs(_read(service.history, notebook=n)) for n in NAMES
            },
            "disputes": _without_seqs(service.list_disputes(include_closed=True)),
            "settings": service.settings(),
        }

    def forgotten_tokens(self) -> set[str]:
        """The words no version on the server still holds: forgotten ones."""
        with self.server.store.read(self.server.workspace) as tx:
            held = " ".join(
                [m.text or "" for m in tx.all_versions()]
                + [repr(e.data) for e in tx.events(EventFilter())]
                + [nb.summary or "" for nb in tx.list_notebooks()]
            )
        return {word for word in self.tokens if word not in held}

    def replica_bytes(self) -> bytes:
        folder = self.replica_path.parent
        return b"".join(
            p.read_bytes() for p in folder.glob(f"{self.replica_path.name}*") if p.is_file()
        )

    def assert_converged(self) -> None:
        assert self.view(self.replica) == self.view(self.server)
        on_disk = self.replica_bytes()
        kept = {word for word in self.forgotten_tokens() if word.encode() in on_disk}
        assert not kept, "forgotten text left in the replica's files"


def _read(call: Callable[..., Any], **arguments: Any) -> Any:
    try:
        return call(**arguments)
    except PalimpsestError as exc:
        return {"refused": exc.error_class}


def _without_seqs(value: Any) -> Any:
    """Sequence numbers are each store's own; everything else must be the same."""
    if isinstance(value, dict):
        return {k: _without_seqs(v) for k, v in value.items() if k not in ("seq", "event_seq")}
    if isinstance(value, list):
        return [_without_seqs(v) for v in value]
    return value
