"""Stateful property test: random histories of writes against a model kept in plain dicts.

A hypothesis state machine drives a `Service` over a real SQLite file through remember
(with duplicates and `supersedes`), revise (text edits, tags, keys), retire, reactivate,
verify, move, supersede, merge, revert, forget (whole memories and single versions), stale
`expected_version` revises, and the dispute life cycle (open, rule, undo, and the
withdrawal that a forget, or any retirement but a ruling, makes). The model predicts
every outcome — the new content and version, `duplicate_of`, `unmatched`, the error class
of a refusal, and how many events the call writes — and after every step the store must
agree with it and with itself:

1. the current state equals the replay of the events (each memory event's version row, a
   forget removing the memory), at every event sequence, with tombstones in place of
   forgotten versions and no forgotten text anywhere (not even in the file's bytes);
2. each memory's versions run 1..n with no gap, the current one is n, and n never drops
   (a usefulness mark, revise's `feedback`, is an event that makes no version);
3. no memory disappears except through forget;
4. the state at any past event (by sequence, by `as_of` time through `seq_at`, and through
   `Service.recall(as_of=...)`) is the state the model had then, less what was forgotten;
5. no two active memories of a notebook hold the same key, now or at any past event;
6. a revise with a stale `expected_version` is a `conflict` and changes nothing;
7. the disputes (their status, which memory holds) are the model's, and the memories
   flagged as disputed at every past event are those the model had in open disputes then.

Texts are drawn from five words so that duplicates, key collisions and shared words are
common. The clock is the machine's own: it only moves on `tick`, so several steps often
share one event time, which is what makes `as_of` (inclusive, by time) interesting.
"""

from __future__ import annotations

import itertools
import shutil
import sys
import tempfile
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import event as note_outcome
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from palimpsest.domain.errors import PalimpsestError
from palimpsest.domain.model import Memory, format_time
from palimpsest.service import Service
from palimpsest.service.roles import Principal
from palimpsest.store import EventFilter, StoreReader, open_store

from ..conftest import POSTGRES_URL, needs_postgres
from ..transfer.test_transfer import canonical

# Porter stems of these are the words themselves and no word is inside another, so a word
# query finds exactly the texts holding that word, and string edits never merge words.
WORDS = ("oak", "elm", "ash", "fir", "yew")
NOTEBOOKS = ("nb-red", "nb-green", "nb-blue")
KINDS = ("fact", "note")
KEYS = ("key-1", "key-2")
TAGS = ("t-1", "t-2", "t-3")
NOTES = ("why-1", "why-2")
ALL_EVENTS = EventFilter(limit=1_000_000)
START = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)

words = st.sampled_from(WORDS)
texts = st.builds(
    lambda ws, cap: " ".join(ws).capitalize() if cap else " ".join(ws),
    st.lists(words, min_size=1, max_size=3),
    st.booleans(),
)
tag_lists = st.lists(st.sampled_from(TAGS), min_size=1, max_size=3)
picks = st.integers(min_value=0, max_value=10_000)
notes = st.none() | st.sampled_from(NOTES)


# What importing a file a second time may say: nothing new, nothing refused.
MERGE_LEAVES_ALONE = {
    "unchanged", "links_unchanged", "links_to_forgotten", "forgotten_in_source",
    "events_not_merged", "disputes_not_merged", "users_not_merged", "settings_not_merged",
    "notebook_tombstones_not_merged",
}  # fmt: skip


@dataclass(frozen=True)
class Snap:
    """What the model knows of one version of a memory."""

    notebook: str
    kind: str
    text: str
    tags: tuple[str, ...] = ()
    key: str | None = None
    status: str = "active"
    status_note: str | None = None
    superseded_by: str | None = None
    verified_at: str | None = None
    version: int = 1

    def same_content(self, other: Snap) -> bool:
        return replace(self, version=0) == replace(other, version=0)


@dataclass(frozen=True)
class Moment:
    """The model's state right after a step that wrote events."""

    at: str
    seq: int
    versions: dict[str, int]  # memory id -> version current then
    open_pairs: frozenset[tuple[str, str]] = frozenset()  # memories in open disputes then


@dataclass
class DisputeModel:
    """What the model knows of one dispute."""

    pair: tuple[str, str]  # in id order, as the store keeps it
    status: str = "open"
    holds: str | None = None
    # The loser's version the ruling made by retiring it (None: it was retired already).
    retired_version: int | None = None


def norm(text: str) -> str:
    return text.strip().casefold()


def has_word(text: str, word: str) -> bool:
    return word in text.casefold().split()


def as_set(old: Snap, tags: list[str]) -> tuple[str, ...]:
    """Tags are a set: the same tags in another order leave the stored order as it was."""
    given = dedupe(list(tags))
    return old.tags if set(given) == set(old.tags) else given


def dedupe(values: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))


class MemoryMachine(RuleBasedStateMachine):
    # None: a fresh SQLite file per run; else a PostgreSQL URL, with a workspace per run.
    POSTGRES: str | None = None

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="palimpsest-props-"))
        self.db = self.folder / "palimpsest.db"
        self.store = open_store(self.POSTGRES or str(self.db))
        workspace = f"props-{uuid.uuid4().hex[:12]}" if self.POSTGRES else "default"
        self.now = START
        self.service = Service(self.store, workspace=workspace, clock=lambda: format_time(self.now))
        self.current: dict[str, Snap] = {}  # live memories
        self.history: dict[str, dict[int, Snap | None]] = {}  # None: forgotten version
        self.order: list[str] = []  # every memory id, in creation order
        self.forgotten: set[str] = set()
        self.notebooks: set[str] = set()
        self.moments: list[Moment] = []
        self.last_seq = 0
        self.high_water: dict[str, int] = {}
        self.scrubbed_texts: set[str] = set()
        self.scan_bytes = False
        self.checks = 0
        self.disputes: dict[str, DisputeModel] = {}
        # Several people: the local owner (`service`), an editor and, refused their writes,
        # a viewer and a workspace key. Each memory is changed by whoever owns it.
        self.ana = self.service.acting_as(Principal("user:ana", "editor", "k_" + "a" * 20))
        self.viewer = self.service.acting_as(Principal("user:vic", "viewer", "k_" + "b" * 20))
        self.agent = self.service.acting_as(Principal("agent:ci", "agent", "k_" + "c" * 20))
        self.owners: dict[str, str | None] = {}  # memory id -> who owns it

    def by(self, memory_id: str) -> Service:
        """The service acting as the memory's owner (the local owner for an ownerless one)."""
        return self.ana if self.owners[memory_id] == self.ana.actor else self.service

    def teardown(self) -> None:
        try:
            self.survives_a_round_trip()
        finally:
            self.store.close()
            shutil.rmtree(self.folder, ignore_errors=True)

    def survives_a_round_trip(self) -> None:
        """Export -> import into a fresh store -> export is the identity (export time
        aside), and importing the file again changes nothing."""
        first, again = self.folder / "first.jsonl", self.folder / "again.jsonl"
        with first.open("w", encoding="utf-8") as out:
            self.service.export(out)
        fresh = open_store(str(self.folder / "fresh.db"))
        try:
            restored = Service(fresh, workspace=self.service.workspace)
            assert "refused" not in restored.import_file(first)
            with again.open("w", encoding="utf-8") as out:
                restored.export(out)
            assert canonical(again) == canonical(first)
            replayed = restored.import_file(first)
            assert set(replayed["counts"]) <= MERGE_LEAVES_ALONE, replayed
        finally:
            fresh.close()

    # -- helpers -----------------------------------------------------------------------

    @property
    def stamp(self) -> str:
        return format_time(self.now)

    def live(self) -> list[str]:
        return [i for i in self.order if i in self.current]

    def pick(self, n: int) -> str:
        ids = self.live()
        return ids[n % len(ids)]

    def event_count(self) -> int:
        with self.store.read(self.service.workspace) as tx:
            return len(tx.events(ALL_EVENTS))

    def call(self, events: int, fn: Any, **kwargs: Any) -> dict[str, Any]:
        """Call the service; it must succeed and write exactly `events` events."""
        before = self.event_count()
        result: dict[str, Any] = fn(**kwargs)
        written = self.event_count() - before
        note_outcome(f"{sys._getframe(1).f_code.co_name}: {written} events")
        assert written == events, (fn.__name__, kwargs, result, written, events)
        return result

    def refused(self, error_class: str, fn: Any, **kwargs: Any) -> None:
        """Call the service; it must refuse with `error_class` and write nothing."""
        before = self.event_count()
        with pytest.raises(PalimpsestError) as info:
            fn(**kwargs)
        assert info.value.error_class == error_class, (kwargs, info.value.to_dict())
        note_outcome(f"{sys._getframe(1).f_code.co_name}: refused {error_class}")
        assert self.event_count() == before

    def key_taken(self, notebook: str, key: str | None, me: str, gone: set[str]) -> bool:
        """Another active live memory of `notebook` (not in `gone`) holds `key`."""
        if key is None:
            return False
        return any(
            s.notebook == notebook and s.key == key and s.status == "active"
            for i, s in self.current.items()
            if i != me and i not in gone
        )

    def put(self, memory_id: str, snap: Snap) -> None:
        self.current[memory_id] = snap
        self.history.setdefault(memory_id, {})[snap.version] = snap

    def bump(self, memory_id: str, **changes: Any) -> Snap:
        old = self.current[memory_id]
        return replace(old, version=old.version + 1, **changes)

    def apply_text_edit(self, text: str, edit: tuple[Any, ...] | None) -> str | None:
        """The text after `edit`, or None when the edit is refused."""
        if edit is None:
            return text
        if edit[0] == "text":
            return str(edit[1])
        if edit[0] == "append":
            return f"{text.rstrip()} {edit[1]}"
        if edit[0] == "replace":
            return text.replace(edit[1], edit[2], 1) if edit[1] in text else None
        assert edit[0] == "remove"
        if edit[1] not in text:
            return None
        left = text.replace(edit[1], "", 1).strip()
        return left or None

    @staticmethod
    def edit_args(edit: tuple[Any, ...] | None) -> dict[str, Any]:
        if edit is None:
            return {}
        if edit[0] == "replace":
            return {"replace_from": edit[1], "replace_to": edit[2]}
        return {edit[0]: edit[1]}

    # -- rules -------------------------------------------------------------------------

    @initialize(
        seed=st.lists(
            st.tuples(
                st.sampled_from(NOTEBOOKS),
                st.sampled_from(KINDS),
                texts,
                st.none() | st.sampled_from(KEYS),
            ),
            min_size=1,
            max_size=4,
        )
    )
    def start(self, seed: list[tuple[str, str, str, str | None]]) -> None:
        assert self.event_count() == 0
        for notebook, kind, text, key in seed:
            self.file_memory(notebook, kind, text, None, key, [])

    @rule(amount=st.sampled_from([1, 250_000, 86_400_000_000]))
    def tick(self, amount: int) -> None:
        self.now += timedelta(microseconds=amount)

    @rule(
        notebook=st.sampled_from(NOTEBOOKS),
        kind=st.sampled_from(KINDS),
        text=texts,
        tags=st.none() | tag_lists,
        key=st.none() | st.sampled_from(KEYS),
        supersedes=st.lists(picks, max_size=2),
        by_ana=st.booleans(),
    )
    def remember(
        self,
        notebook: str,
        kind: str,
        text: str,
        tags: list[str] | None,
        key: str | None,
        supersedes: list[int],
        by_ana: bool,
    ) -> None:
        old_ids = list(dict.fromkeys(self.pick(n) for n in supersedes)) if self.current else []
        self.file_memory(notebook, kind, text, tags, key, old_ids, self.ana if by_ana else None)

    @precondition(lambda self: self.current)
    @rule(n=picks, recase=st.booleans(), elsewhere=st.sampled_from((None, *NOTEBOOKS)))
    def remember_again(self, n: int, recase: bool, elsewhere: str | None) -> None:
        """File the text and kind of an existing memory again: often a duplicate."""
        old = self.current[self.pick(n)]
        text = old.text.swapcase() if recase else old.text
        self.file_memory(elsewhere or old.notebook, old.kind, text, None, None, [])

    def file_memory(
        self,
        notebook: str,
        kind: str,
        text: str,
        tags: list[str] | None,
        key: str | None,
        old_ids: list[str],
        filer: Service | None = None,
    ) -> None:
        filer = filer or self.service
        args = {"notebook": notebook, "kind": kind, "text": text, "tags": tags, "key": key}
        if old_ids:
            args["supersedes"] = old_ids
        same = [
            i
            for i in self.live()
            if (s := self.current[i]).notebook == notebook
            and s.kind == kind
            and s.status == "active"
            and norm(s.text) == norm(text)
        ]
        if same and old_ids:  # filing nothing new cannot supersede anything
            self.refused("validation", filer.remember, **args)
            return
        if same:
            result = self.call(0, filer.remember, **args)
            assert result["duplicate_of"] == min(same), (result, same)
            assert result["written"] is False
            return
        if any(self.current[i].status != "active" for i in old_ids):
            self.refused("validation", filer.remember, **args)
            return
        if self.key_taken(notebook, key, "", set(old_ids)):
            self.refused("validation", filer.remember, **args)
            return
        created = notebook not in self.notebooks
        withdrawn = self.open_disputes_of(old_ids)
        events = int(created) + len(old_ids) + 1 + len(withdrawn)
        result = self.call(events, filer.remember, **args)
        new_id = result["id"]
        assert result["version"] == 1
        assert [r["id"] for r in result["superseded"]] == old_ids
        for old_id in old_ids:  # in order: a withdrawal may touch one retired after it
            retired = self.bump(old_id, status="superseded", status_note=None, superseded_by=new_id)
            self.put(old_id, retired)
            self.withdraw(old_id)
        self.notebooks.add(notebook)
        self.order.append(new_id)
        self.put(new_id, Snap(notebook, kind, text, dedupe(tags or []), key))
        self.owners[new_id] = filer.actor

    @precondition(lambda self: self.current)
    @rule(
        n=picks,
        edit=st.none()
        | st.tuples(st.just("text"), texts)
        | st.tuples(st.just("append"), words)
        | st.tuples(st.just("replace"), words, words)
        | st.tuples(st.just("remove"), words),
        tags=st.none() | st.just("clear") | tag_lists,
        key=st.none() | st.just("clear") | st.sampled_from(KEYS),
        with_version=st.booleans(),
    )
    def revise(
        self,
        n: int,
        edit: tuple[Any, ...] | None,
        tags: list[str] | str | None,
        key: str | None,
        with_version: bool,
    ) -> None:
        memory_id = self.pick(n)
        old = self.current[memory_id]
        args: dict[str, Any] = {"id": memory_id, **self.edit_args(edit)}
        clear = []
        if with_version:
            args["expected_version"] = old.version
        if tags == "clear":
            clear.append("tags")
        elif tags is not None:
            args["tags"] = tags
        if key == "clear":
            clear.append("key")
        elif key is not None:
            args["key"] = key
        if clear:
            args["clear"] = clear
        if edit is None and tags is None and key is None:
            self.refused("validation", self.by(memory_id).revise, **args)
            return
        text = self.apply_text_edit(old.text, edit)
        if text is None:
            self.refused("validation", self.by(memory_id).revise, **args)
            return
        new = replace(
            old,
            text=text,
            tags=old.tags if tags is None else () if tags == "clear" else as_set(old, tags),
            key=old.key if key is None else None if key == "clear" else key,
        )
        if (
            new.status == "active"
            and (old.key, old.notebook) != (new.key, new.notebook)
            and self.key_taken(new.notebook, new.key, memory_id, set())
        ):
            self.refused("validation", self.by(memory_id).revise, **args)
            return
        if new.same_content(old):
            result = self.call(0, self.by(memory_id).revise, **args)
            assert result["results"] == [
                {"id": memory_id, "version": old.version, "unchanged": True}
            ]
            return
        result = self.call(1, self.by(memory_id).revise, **args)
        new = replace(new, version=old.version + 1)
        assert result["results"][0]["version"] == new.version
        self.put(memory_id, new)

    @precondition(lambda self: self.current)
    @rule(n=picks, status=st.sampled_from(["superseded", "retracted"]), note=notes)
    def retire(self, n: int, status: str, note: str | None) -> None:
        memory_id = self.pick(n)
        old = self.current[memory_id]
        args = {"id": memory_id, "status": status, "note": note}
        if old.status != "active":
            result = self.call(0, self.by(memory_id).revise, **args)
            assert result["results"] == []
            assert [u["target"] for u in result["unmatched"]] == [memory_id]
            return
        withdrawn = self.open_disputes_of([memory_id])
        result = self.call(1 + len(withdrawn), self.by(memory_id).revise, **args)
        self.put(memory_id, self.bump(memory_id, status=status, status_note=note))
        assert result["results"][0]["version"] == self.current[memory_id].version
        self.withdraw(memory_id)

    @precondition(lambda self: self.current)
    @rule(n=picks, m=picks, note=notes, any_memory=st.booleans())
    def retire_for(self, n: int, m: int, note: str | None, any_memory: bool) -> None:
        """Status superseded with `superseded_by`: a memory filed already replaces it."""
        memory_id, successor = self.pick_pair(n, m, any_memory)
        old = self.current[memory_id]
        args = {"id": memory_id, "status": "superseded", "superseded_by": successor,
                "note": note}  # fmt: skip
        if old.status != "active":
            result = self.call(0, self.by(memory_id).revise, **args)
            assert [u["target"] for u in result["unmatched"]] == [memory_id]
            return
        if successor == memory_id or self.current[successor].status != "active":
            self.refused("validation", self.by(memory_id).revise, **args)
            return
        withdrawn = self.open_disputes_of([memory_id])
        self.call(1 + len(withdrawn), self.by(memory_id).revise, **args)
        retired = self.bump(memory_id, status="superseded", status_note=note,
                            superseded_by=successor)  # fmt: skip
        self.put(memory_id, retired)
        self.withdraw(memory_id)

    @precondition(lambda self: len(self.current) >= 2)
    @rule(
        n=picks,
        others=st.lists(picks, min_size=1, max_size=3),
        who=st.sampled_from(["owner", "editor", "agent"]),
        loose=st.booleans(),
    )
    def merge(self, n: int, others: list[int], who: str, loose: bool) -> None:
        """Keep one memory, retire the others as superseded by it: one event each (and one
        per dispute withdrawn), or a refusal that writes nothing, predicted in the order
        the service checks. Mostly among active memories (it can succeed); sometimes any."""
        service = {"owner": self.service, "editor": self.ana, "agent": self.agent}[who]
        active = [i for i in self.live() if self.current[i].status == "active"]
        if loose or len(active) < 2:
            keep, ids = self.pick(n), list(dedupe([self.pick(m) for m in others]))
        else:
            keep = active[n % len(active)]
            rest = [i for i in active if i != keep]
            ids = list(dedupe([rest[m % len(rest)] for m in others]))
        args = {"keep": keep, "ids": ids, "because": NOTES[0]}
        if keep in ids or self.current[keep].status != "active":
            self.refused("validation", service.merge, **args)
            return
        for memory_id in ids:
            if self.current[memory_id].status != "active":
                self.refused("conflict", service.merge, **args)
                return
            foreign = self.owners[memory_id] not in (None, service.actor)
            if foreign and not service.may_override:
                self.refused("forbidden", service.merge, **args)
                return
        withdrawn = self.open_disputes_of(ids)
        result = self.call(len(ids) + len(withdrawn), service.merge, **args)
        for memory_id in ids:
            self.put(memory_id, self.bump(memory_id, status="superseded", status_note=NOTES[0],
                                          superseded_by=keep))  # fmt: skip
            self.withdraw(memory_id)
        assert [(r["id"], r["version"]) for r in result["superseded"]] == [
            (memory_id, self.current[memory_id].version) for memory_id in ids
        ]
        assert result["version"] == self.current[keep].version

    @precondition(lambda self: self.current)
    @rule(n=picks, note=notes)
    def reactivate(self, n: int, note: str | None) -> None:
        memory_id = self.pick(n)
        old = self.current[memory_id]
        args = {"id": memory_id, "status": "active", "note": note}
        if old.status == "active":
            result = self.call(0, self.by(memory_id).revise, **args)
            assert result["results"] == []
            assert [u["target"] for u in result["unmatched"]] == [memory_id]
            return
        if self.key_taken(old.notebook, old.key, memory_id, set()):
            self.refused("validation", self.by(memory_id).revise, **args)
            return
        self.call(1, self.by(memory_id).revise, **args)
        self.put(
            memory_id,
            self.bump(memory_id, status="active", status_note=note, superseded_by=None),
        )

    @precondition(lambda self: self.current)
    @rule(n=picks)
    def verify(self, n: int) -> None:
        memory_id = self.pick(n)
        old = self.current[memory_id]
        if old.status != "active":
            result = self.call(0, self.by(memory_id).revise, id=memory_id, status="verified")
            assert [u["target"] for u in result["unmatched"]] == [memory_id]
            return
        if old.verified_at == self.stamp:
            result = self.call(0, self.by(memory_id).revise, id=memory_id, status="verified")
            assert result["results"][0].get("unchanged") is True
            return
        self.call(1, self.by(memory_id).revise, id=memory_id, status="verified")
        self.put(memory_id, self.bump(memory_id, verified_at=self.stamp))

    @precondition(lambda self: self.current)
    @rule(n=picks, mark=st.sampled_from(["helped", "noise"]))
    def feedback(self, n: int, mark: str) -> None:
        """A usefulness mark: one event, and the memory's content and version stay."""
        memory_id = self.pick(n)
        result = self.call(1, self.by(memory_id).revise, id=memory_id, feedback=mark)
        assert result["results"][0]["version"] == self.current[memory_id].version

    @precondition(lambda self: self.current)
    @rule(n=picks, notebook=st.sampled_from(NOTEBOOKS))
    def move(self, n: int, notebook: str) -> None:
        memory_id = self.pick(n)
        old = self.current[memory_id]
        args = {"id": memory_id, "move_to": notebook}
        if old.notebook == notebook:
            result = self.call(0, self.by(memory_id).revise, **args)
            assert result["results"][0].get("unchanged") is True
            return
        if old.status == "active" and self.key_taken(notebook, old.key, memory_id, set()):
            self.refused("validation", self.by(memory_id).revise, **args)
            return
        created = notebook not in self.notebooks
        self.call(int(created) + 1, self.by(memory_id).revise, **args)
        self.notebooks.add(notebook)
        self.put(memory_id, self.bump(memory_id, notebook=notebook))

    @precondition(lambda self: self.current)
    @rule(
        n=picks,
        edit=st.none()
        | st.tuples(st.just("text"), texts)
        | st.tuples(st.just("append"), words)
        | st.tuples(st.just("replace"), words, words),
        key=st.none() | st.just("clear") | st.sampled_from(KEYS),
        note=notes,
    )
    def supersede(
        self, n: int, edit: tuple[Any, ...] | None, key: str | None, note: str | None
    ) -> None:
        memory_id = self.pick(n)
        old = self.current[memory_id]
        args: dict[str, Any] = {"id": memory_id, "supersede": True, **self.edit_args(edit)}
        if note is not None:
            args["note"] = note
        if key == "clear":
            args["clear"] = ["key"]
        elif key is not None:
            args["key"] = key
        text = self.apply_text_edit(old.text, edit)
        new_key = old.key if key is None else None if key == "clear" else key
        if (
            old.status != "active"
            or text is None
            or self.key_taken(old.notebook, new_key, memory_id, set())
        ):
            self.refused("validation", self.by(memory_id).revise, **args)
            return
        withdrawn = self.open_disputes_of([memory_id])
        result = self.call(2 + len(withdrawn), self.by(memory_id).revise, **args)
        successor = result["results"][0]["id"]
        assert successor not in self.history
        assert result["results"][0]["superseded"]["id"] == memory_id
        self.put(
            memory_id,
            self.bump(memory_id, status="superseded", status_note=note, superseded_by=successor),
        )
        self.withdraw(memory_id)
        self.order.append(successor)
        self.put(successor, Snap(old.notebook, old.kind, text, old.tags, new_key))
        self.owners[successor] = self.by(memory_id).actor

    @precondition(lambda self: self.current)
    @rule(n=picks, v=picks, past=st.booleans())
    def revert(self, n: int, v: int, past: bool) -> None:
        memory_id = self.pick(n)
        old = self.current[memory_id]
        if past and old.version > 1:
            version = v % (old.version - 1) + 1
        else:
            version = v % (old.version + 1) + 1  # sometimes one past the last: not found
        args = {"id": memory_id, "version": version}
        if version > old.version:
            self.refused("not_found", self.by(memory_id).revert, **args)
            return
        then = self.history[memory_id][version]
        if then is None:
            self.refused("validation", self.by(memory_id).revert, **args)
            return
        new = replace(old, kind=then.kind, text=then.text, tags=then.tags, key=then.key)
        if (
            new.status == "active"
            and new.key != old.key
            and self.key_taken(new.notebook, new.key, memory_id, set())
        ):
            self.refused("validation", self.by(memory_id).revert, **args)
            return
        if new.same_content(old):
            result = self.call(0, self.by(memory_id).revert, **args)
            assert result["results"][0].get("unchanged") is True
            return
        self.call(1, self.by(memory_id).revert, **args)
        self.put(memory_id, replace(new, version=old.version + 1))

    @precondition(lambda self: self.current)
    @rule(n=picks, delta=st.sampled_from([-3, -2, -1, 1, 2]))
    def stale_revise(self, n: int, delta: int) -> None:
        memory_id = self.pick(n)
        old = self.current[memory_id]
        expected = old.version + delta if old.version + delta >= 1 else old.version + 1
        for changes in ({"append": "oak"}, {"status": "retracted"}, {"supersede": True}):
            self.refused(
                "conflict",
                self.by(memory_id).revise,
                id=memory_id,
                expected_version=expected,
                **changes,
            )

    @precondition(lambda self: self.current)
    @rule(n=picks)
    def forget(self, n: int) -> None:
        memory_id = self.pick(n)
        withdrawn = self.open_disputes_of([memory_id])
        self.call(1 + len(withdrawn), self.service.forget, id=memory_id, because="test")
        self.withdraw(memory_id)
        for version, snap in self.history[memory_id].items():
            if snap is not None:
                self.scrubbed_texts.add(snap.text)
            self.history[memory_id][version] = None
        del self.current[memory_id]
        self.forgotten.add(memory_id)
        self.scan_bytes = True

    @precondition(lambda self: self.current)
    @rule(n=picks, v=picks)
    def forget_version(self, n: int, v: int) -> None:
        memory_id = self.pick(n)
        old = self.current[memory_id]
        version = v % old.version + 1
        args = {"id": memory_id, "version": version, "because": "test"}
        if version == old.version:
            self.refused("validation", self.service.forget, **args)
            return
        snap = self.history[memory_id][version]
        self.call(0 if snap is None else 1, self.service.forget, **args)
        if snap is not None:
            self.scrubbed_texts.add(snap.text)
        self.history[memory_id][version] = None
        self.scan_bytes = True

    @precondition(lambda self: self.current)
    @rule(n=picks, word=words)
    def dry_runs(self, n: int, word: str) -> None:
        """A dry run checks and answers but writes nothing, whatever the operation."""
        memory_id = self.pick(n)
        old = self.current[memory_id]
        result = self.call(0, self.by(memory_id).revise, id=memory_id, append=word, dry_run=True)
        assert result["results"][0]["version"] == old.version + 1
        self.call(0, self.service.forget, id=memory_id, because="test", dry_run=True)
        first = self.history[memory_id][1]
        if first is not None and (
            old.status != "active"
            or first.key == old.key
            or not self.key_taken(old.notebook, first.key, memory_id, set())
        ):
            self.call(0, self.by(memory_id).revert, id=memory_id, version=1, dry_run=True)

    # -- people and roles --------------------------------------------------------------

    @precondition(lambda self: self.current)
    @rule(n=picks, attempt=st.sampled_from(["remember", "append", "retire", "forget", "revert",
                                            "mark", "others_forget", "others_revert",
                                            "override"]))  # fmt: skip
    def a_weaker_role_is_refused(self, n: int, attempt: str) -> None:
        """A viewer writes nothing; an editor forgets and reverts only what it owns; a
        workspace key never overrides. Each refusal writes nothing."""
        memory_id = self.pick(n)
        theirs = [i for i in self.live() if self.owners[i] == self.service.actor]
        viewer = self.viewer
        calls: dict[str, tuple[Any, dict[str, Any]]] = {
            "remember": (viewer.remember, {"notebook": "ops", "kind": "fact", "text": "oak"}),
            "append": (viewer.revise, {"id": memory_id, "append": "oak"}),
            "retire": (viewer.revise, {"id": memory_id, "status": "retracted"}),
            "forget": (viewer.forget, {"id": memory_id, "because": "test"}),
            "revert": (viewer.revert, {"id": memory_id, "version": 1}),
            "mark": (viewer.revise, {"id": memory_id, "feedback": "noise"}),
        }
        if theirs:  # the local owner's own: not the editor's, nor the agent's
            other = theirs[n % len(theirs)]
            calls["others_forget"] = (self.ana.forget, {"id": other, "because": "test"})
            calls["others_revert"] = (self.ana.revert, {"id": other, "version": 1})
            calls["override"] = (self.agent.revise, {"id": other, "tags": ["oak"],
                                                     "override_reason": "test",
                                                     "override_confirm": True})  # fmt: skip
        if attempt in calls:
            fn, args = calls[attempt]
            self.refused("forbidden", fn, **args)

    @rule()
    def remove_ana(self) -> None:
        """Removing a user leaves each memory they own ownerless: one new version each."""
        hers = [i for i in self.live() if self.owners[i] == self.ana.actor]
        self.service.add_user(name="ana", role="editor")  # one event (a role kept: still one)
        result = self.call(1 + len(hers), self.service.remove_user, name="ana")
        assert sorted(result["ownerless"]) == sorted(hers)
        for memory_id in hers:
            self.put(memory_id, self.bump(memory_id))
            self.owners[memory_id] = None

    # -- disputes ------------------------------------------------------------------------

    def open_disputes_of(self, memory_ids: list[str]) -> set[str]:
        """The open disputes naming any of `memory_ids`: leaving `active` withdraws them."""
        return {
            i
            for i, d in self.disputes.items()
            if d.status == "open" and set(d.pair) & set(memory_ids)
        }

    def withdraw(self, memory_id: str) -> None:
        """`memory_id` left `active` (or was forgotten): each open dispute naming it is
        withdrawn, with an event on the other memory, whose flag goes."""
        for dispute in self.disputes.values():
            if dispute.status == "open" and memory_id in dispute.pair:
                dispute.status = "withdrawn"
                other = dispute.pair[1] if dispute.pair[0] == memory_id else dispute.pair[0]
                self.put(other, self.bump(other))

    def open_between(self, pair: tuple[str, str]) -> str | None:
        return next(
            (i for i, d in self.disputes.items() if d.pair == pair and d.status == "open"), None
        )

    def pick_pair(self, n: int, m: int, any_memory: bool) -> tuple[str, str]:
        """Mostly two different active memories (the step can succeed); sometimes any two."""
        active = [i for i in self.live() if self.current[i].status == "active"]
        if any_memory or len(active) < 2:
            return self.pick(n), self.pick(m)
        first = n % len(active)
        return active[first], active[(first + 1 + m % (len(active) - 1)) % len(active)]

    @precondition(lambda self: self.current)
    @rule(
        action=st.sampled_from(["open", "rule", "undo", "cycle"]),
        n=picks,
        m=picks,
        loose=st.booleans(),
    )
    def dispute(self, action: str, n: int, m: int, loose: bool) -> None:
        """One step of the dispute life cycle. One rule for all three, so that a run which
        draws disputes at all goes through the whole cycle; `loose` picks its targets
        without regard to whether the step can succeed, so the refusals are met too.
        `cycle` opens a dispute and rules on it at once (and undoes the ruling unless
        `loose`): a random walk rarely meets those three in order."""
        if action == "cycle":
            before = set(self.disputes)
            self.open_dispute(n, m, False)
            (opened,) = set(self.disputes) - before or {None}
            if opened is not None:
                at = sorted(self.disputes).index(opened)  # among all disputes (any status)
                self.rule_dispute(at, m % 2, True)
                if not loose:
                    self.undo_ruling(at, True)
        elif action == "open":
            self.open_dispute(n, m, loose)
        elif self.disputes and action == "rule":
            self.rule_dispute(n, m % 2, loose)
        elif self.disputes:
            self.undo_ruling(n, loose)

    def open_dispute(self, n: int, m: int, any_memory: bool) -> None:
        first, second = self.pick_pair(n, m, any_memory)
        args = {"action": "open", "ids": [first, second], "reason": "they disagree"}
        if first == second:
            self.refused("validation", self.service.dispute, **args)
            return
        if any(self.current[i].status != "active" for i in (first, second)):
            self.refused("validation", self.service.dispute, **args)
            return
        pair = (min(first, second), max(first, second))
        if self.open_between(pair) is not None:
            self.refused("conflict", self.service.dispute, **args)
            return
        result = self.call(2, self.service.dispute, **args)
        assert result["id"] not in self.disputes
        self.disputes[result["id"]] = DisputeModel(pair)
        for memory_id in pair:
            self.put(memory_id, self.bump(memory_id))

    def pick_dispute(self, n: int, status: str, any_status: bool) -> str:
        """Mostly a dispute in `status` (the step can succeed); sometimes any dispute."""
        fitting = sorted(i for i, d in self.disputes.items() if d.status == status)
        chosen = fitting if fitting and not any_status else sorted(self.disputes)
        return chosen[n % len(chosen)]

    def rule_dispute(self, n: int, which: int, any_status: bool) -> None:
        dispute_id = self.pick_dispute(n, "open", any_status)
        dispute = self.disputes[dispute_id]
        holds, loses = dispute.pair[which], dispute.pair[1 - which]
        args = {"action": "rule", "dispute": dispute_id, "holds": holds, "reason": "decided"}
        if dispute.status != "open":
            self.refused("conflict", self.service.dispute, **args)
            return
        if self.current[holds].status != "active":
            self.refused("validation", self.service.dispute, **args)
            return
        result = self.call(2, self.service.dispute, **args)
        # The loser is named superseded only when the ruling retired it.
        outcome = "superseded" if self.current[loses].status == "active" else "loses"
        assert (result["status"], result["holds"], result[outcome]) == ("ruled", holds, loses)
        retired = None
        if self.current[loses].status == "active":
            lost = self.bump(loses, status="superseded", status_note=f"lost dispute {dispute_id}",
                             superseded_by=holds)  # fmt: skip
            retired = lost.version
        else:
            lost = self.bump(loses)
        self.put(loses, lost)
        self.put(holds, self.bump(holds))
        dispute.status, dispute.holds, dispute.retired_version = "ruled", holds, retired

    def undo_ruling(self, n: int, any_status: bool) -> None:
        dispute_id = self.pick_dispute(n, "ruled", any_status)
        dispute = self.disputes[dispute_id]
        args = {"action": "undo", "dispute": dispute_id, "reason": "ruled too soon"}
        if dispute.status != "ruled" or self.open_between(dispute.pair) is not None:
            self.refused("conflict", self.service.dispute, **args)
            return
        if any(i in self.forgotten for i in dispute.pair):
            self.refused("not_found", self.service.dispute, **args)
            return
        holds = dispute.holds
        assert holds is not None
        loses = dispute.pair[1] if dispute.pair[0] == holds else dispute.pair[0]
        loser = self.current[loses]
        if dispute.retired_version is None:
            back = self.bump(loses)
        elif (loser.status, loser.superseded_by) != ("superseded", holds) or self.key_taken(
            loser.notebook, loser.key, loses, set()
        ):
            self.refused("conflict", self.service.dispute, **args)
            return
        else:
            before = self.history[loses].get(dispute.retired_version - 1)
            back = self.bump(
                loses,
                status="active",
                status_note=before.status_note if before else None,
                superseded_by=before.superseded_by if before else None,
            )
        if back.status != "active" or self.current[holds].status != "active":
            self.refused("conflict", self.service.dispute, **args)  # never reopened so
            return
        result = self.call(2, self.service.dispute, **args)
        assert result["status"] == "open"
        self.put(loses, back)
        self.put(holds, self.bump(holds))
        dispute.status, dispute.holds, dispute.retired_version = "open", None, None

    @precondition(lambda self: self.forgotten)
    @rule(n=picks)
    def touch_forgotten(self, n: int) -> None:
        gone = sorted(self.forgotten)[n % len(self.forgotten)]
        self.refused("not_found", self.service.revise, id=gone, append="oak")
        self.refused("not_found", self.service.forget, id=gone, because="again")
        self.refused("not_found", self.service.revert, id=gone, version=1)

    # -- invariants --------------------------------------------------------------------

    def expected_at(self, moment: Moment) -> dict[str, Snap]:
        """The model state at `moment`, less everything forgotten since."""
        state = {}
        for memory_id, version in moment.versions.items():
            snap = self.history[memory_id].get(version)
            if memory_id not in self.forgotten and snap is not None:
                state[memory_id] = snap
        return state

    @staticmethod
    def project(memories: list[Memory], names: dict[str, str]) -> dict[str, Snap]:
        found = {}
        for m in memories:
            assert m.id not in found, f"{m.id} appears twice in one state"
            found[m.id] = Snap(
                names[m.notebook_id],
                m.kind,
                m.text,
                m.tags,
                m.key,
                m.status,
                m.status_note,
                m.superseded_by,
                m.verified_at,
                m.version,
            )
        return found

    @staticmethod
    def assert_keys_unique(state: dict[str, Snap], where: str) -> None:
        holders: dict[tuple[str, str], str] = {}
        for memory_id, snap in state.items():
            if snap.status == "active" and snap.key is not None:
                slot = (snap.notebook, snap.key)
                assert slot not in holders, (
                    f"{where}: key {snap.key} held by {holders[slot]} and {memory_id}"
                )
                holders[slot] = memory_id

    @invariant()
    def store_agrees(self) -> None:
        with self.store.read(self.service.workspace) as tx:
            names = {nb.id: nb.name for nb in tx.list_notebooks()}
            assert set(names.values()) == self.notebooks
            events = tx.events(ALL_EVENTS)
            self.record_moment(events)
            self.check_versions(tx, names)
            self.check_replay(tx, events, names)
            self.check_moments(tx, names)
            self.check_disputes(tx)
        self.check_recall()
        if self.scan_bytes and not self.POSTGRES:  # the bytes of a file: SQLite's alone
            self.scan_file()
            self.scan_bytes = False
        self.checks += 1

    def record_moment(self, events: list[Any]) -> None:
        new = [e for e in events if e.seq > self.last_seq]
        if not new:
            return
        assert all(e.at == self.stamp for e in new), "events of one step carry its time"
        assert [e.seq for e in events] == sorted(e.seq for e in events)
        assert all(a.at <= b.at for a, b in itertools.pairwise(events))
        self.last_seq = new[-1].seq
        versions = {i: s.version for i, s in self.current.items()}
        pairs = frozenset(d.pair for d in self.disputes.values() if d.status == "open")
        self.moments.append(Moment(self.stamp, self.last_seq, versions, pairs))

    def check_versions(self, tx: StoreReader, names: dict[str, str]) -> None:
        for memory_id in self.order:
            rows = tx.memory_versions(memory_id)
            numbers = [r.version for r in rows]
            top = max(self.history[memory_id])
            assert numbers == list(range(1, top + 1)), (memory_id, numbers)
            assert top >= self.high_water.get(memory_id, 0), "a version went down"
            self.high_water[memory_id] = top
            assert [r.seq for r in rows] == sorted(r.seq for r in rows)
            for row in rows:
                expected = self.history[memory_id][row.version]
                if expected is None:
                    assert row.memory is None, f"{memory_id} v{row.version} should be scrubbed"
                else:
                    assert row.memory is not None, f"{memory_id} v{row.version} lost"
                    got = self.project([row.memory], names)[memory_id]
                    assert got == expected, (memory_id, row.version, got, expected)
            current = tx.get_memory(memory_id)
            if memory_id in self.forgotten:
                assert current is None
                assert tx.get_tombstone(memory_id) is not None
            else:
                assert current is not None, f"{memory_id} vanished without a forget"
                assert current.version == top
                assert tx.get_tombstone(memory_id) is None

    def check_replay(self, tx: StoreReader, events: list[Any], names: dict[str, str]) -> None:
        rows = {i: {r.version: r for r in tx.memory_versions(i)} for i in self.order}
        state: dict[str, Memory] = {}
        scrubbed = self.scrubbed_only()
        for event in events:
            if event.target_type != "memory":
                continue
            if event.op == "forget":
                state.pop(event.target_id, None)
            elif event.op not in ("forget_version", "feedback"):  # a mark makes no version
                row = rows[event.target_id][event.version]
                assert row.seq == event.seq, (event, row)
                if row.memory is None:
                    state.pop(event.target_id, None)
                else:
                    state[event.target_id] = row.memory
            at_seq = tx.memories_at(event.seq)
            assert {m.id: m for m in at_seq} == state, f"state at seq {event.seq} != replay"
            replayed = self.project(list(state.values()), names)
            self.assert_keys_unique(replayed, f"seq {event.seq}")
            assert not {s.text for s in replayed.values()} & scrubbed
        now = tx.memories_at(None)
        assert {m.id: m for m in now} == state, "current state != replay of the events"
        assert self.project(now, names) == self.current
        self.assert_keys_unique(self.current, "now")

    def unique_moments(self) -> list[Moment]:
        """The last moment of each event time: what `as_of` that time must answer."""
        last: dict[str, Moment] = {}
        for moment in self.moments:
            last[moment.at] = moment
        return list(last.values())

    def check_moments(self, tx: StoreReader, names: dict[str, str]) -> None:
        for moment in self.moments:
            got = self.project(tx.memories_at(moment.seq), names)
            assert got == self.expected_at(moment), f"state at seq {moment.seq}"
        for moment in self.unique_moments():
            assert tx.seq_at(moment.at) == moment.seq, moment.at
        before = format_time(START - timedelta(microseconds=1))
        assert tx.memories_at(tx.seq_at(before)) == []

    def check_disputes(self, tx: StoreReader) -> None:
        """The disputes are the model's, now; and at every past event, the memories flagged
        as disputed are those of the model's open disputes then (less the forgotten)."""
        stored = {d.id: d for d in tx.disputes()}
        assert set(stored) == set(self.disputes)
        for dispute_id, model in self.disputes.items():
            got = stored[dispute_id]
            assert (got.memory_ids, got.status) == (model.pair, model.status), dispute_id
            assert (got.ruling.holds if got.ruling else None) == model.holds, dispute_id
        every = self.order
        for moment in self.moments:
            pairs = [p for p in moment.open_pairs if not set(p) & self.forgotten]
            want: dict[str, list[str]] = {}
            for first, second in pairs:
                want.setdefault(first, []).append(second)
                want.setdefault(second, []).append(first)
            want = {i: sorted(others) for i, others in want.items()}
            assert tx.disputed_with(every, moment.seq) == want, f"disputes at seq {moment.seq}"

    def check_recall(self) -> None:
        moments = self.unique_moments()
        if not moments:
            return
        moment = moments[self.checks % len(moments)]
        expected = self.expected_at(moment)
        for word in WORDS:
            # near_misses: every match, the weak ones the relevance floor leaves out too
            answer = self.service.recall(
                query=word, as_of=moment.at, include_retired=True, limit=200, near_misses=True
            )
            got = {h["id"]: (h["text"], h["status"], h["version"]) for h in answer["hits"]}
            want = {
                i: (s.text, s.status, s.version)
                for i, s in expected.items()
                if has_word(s.text, word)
            }
            assert got == want, (word, moment.at)
        word = WORDS[self.checks % len(WORDS)]
        now = self.service.recall(query=word, limit=200, near_misses=True)
        assert {h["id"] for h in now["hits"]} == {
            i for i, s in self.current.items() if s.status == "active" and has_word(s.text, word)
        }
        floored = self.service.recall(query=word, limit=200)["hits"]
        assert [h["id"] for h in floored] == [h["id"] for h in now["hits"]][: len(floored)]
        flagged = {h["id"]: h["disputed_with"] for h in now["hits"] if "disputed_with" in h}
        opened = [d.pair for d in self.disputes.values() if d.status == "open"]
        for memory_id, others in flagged.items():
            assert others == sorted(
                p[1] if p[0] == memory_id else p[0] for p in opened if memory_id in p
            ), memory_id

    def scrubbed_only(self) -> set[str]:
        """Texts that were in forgotten versions only, never in a surviving one."""
        kept = {s.text for v in self.history.values() for s in v.values() if s is not None}
        return self.scrubbed_texts - kept

    def scan_file(self) -> None:
        kept = {s.text for v in self.history.values() for s in v.values() if s is not None}
        kept |= {norm(t) for t in kept}
        wanted = [t for t in self.scrubbed_only() if " " in t and not any(t in k for k in kept)]
        if not wanted:
            return
        data = b"".join(
            p.read_bytes() for p in self.folder.iterdir() if p.name.startswith("palimpsest.db")
        )
        for text in wanted:
            assert text.encode() not in data, f"forgotten text {text!r} is still in the file"


MemoryMachine.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestMemoryMachine = MemoryMachine.TestCase


@needs_postgres
class TestMemoryMachineOnPostgres(MemoryMachine.TestCase):
    def setUp(self) -> None:
        MemoryMachine.POSTGRES = POSTGRES_URL

    def tearDown(self) -> None:
        MemoryMachine.POSTGRES = None
