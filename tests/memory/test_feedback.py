"""Usefulness (DESIGN section 2): revise's `feedback` marks a memory helped or noise.

A mark is an event that leaves the memory's content and version as they are; recall and
orient rank by the marks; doctor lists memories marked noise repeatedly. On both stores,
through the service, plus the CLI's `--feedback` once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from palimpsest.domain.errors import PalimpsestError
from palimpsest.service import Service
from palimpsest.store import EventFilter

EVERY = EventFilter(limit=1_000_000)


def events(service: Service, target: str | None = None) -> list[str]:
    with service.store.read(service.workspace) as tx:
        return [e.op for e in tx.events(EventFilter(target_id=target, limit=1_000_000))]


def fact(service: Service, text: str, notebook: str = "shop") -> str:
    memory_id: str = service.remember(notebook=notebook, kind="fact", text=text)["id"]
    return memory_id


def test_a_mark_is_an_event_that_keeps_the_version(service: Service) -> None:
    memory_id = fact(service, "The pool size is 20")
    answer = service.revise(id=memory_id, feedback="helped", note="it was the answer")
    (result,) = answer["results"]
    assert (result["version"], result["feedback"], result["changed"]) == (1, "helped", [])
    assert events(service, memory_id) == ["remember", "feedback"]
    shown = service.inspect(id=memory_id)
    assert shown["memory"]["version"] == 1 and len(shown["versions"]) == 1
    history = service.history(id=memory_id)["events"]
    assert history[-1]["op"] == "feedback" and history[-1]["version"] is None
    assert history[-1]["data"] == {"feedback": "helped", "version": 1}
    # The next real change is version 2: a mark took no number.
    assert service.revise(id=memory_id, append="(measured)")["results"][0]["version"] == 2


def test_a_mark_with_a_change_or_an_unknown_value_is_refused_and_writes_nothing(
    service: Service,
) -> None:
    memory_id = fact(service, "Deploys run from make")
    for changes in (
        {"feedback": "helped", "text": "Deploys run from a script"},
        {"feedback": "noise", "status": "verified"},
        {"feedback": "noise", "clear": ["tags"]},
        {"feedback": "useful"},
    ):
        with pytest.raises(PalimpsestError) as refused:
            service.revise(id=memory_id, **changes)
        assert refused.value.error_class == "validation"
        assert refused.value.field == "feedback"
    assert events(service, memory_id) == ["remember"]


def test_marks_on_several_memories_and_a_dry_run(service: Service) -> None:
    first, second = fact(service, "Backups run nightly"), fact(service, "Logs rotate weekly")
    assert service.revise(ids=[first, second], feedback="noise", dry_run=True)["dry_run"]
    assert events(service) == ["notebook.create", "remember", "remember"]
    answer = service.revise(ids=[first, second], feedback="noise")
    assert [r["version"] for r in answer["results"]] == [1, 1]
    with service.store.read(service.workspace) as tx:
        marks = [e for e in tx.events(EVERY) if e.op == "feedback"]
        assert {e.target_id for e in marks} == {first, second}
        assert len({e.op_id for e in marks}) == 1  # one operation
        assert tx.feedback_counts([first, second, "m_none"]) == {first: (0, 1), second: (0, 1)}


def test_recall_ranks_a_helpful_memory_over_an_equal_one_and_sinks_noise(
    service: Service,
) -> None:
    one = fact(service, "Alpha deploy goes through staging first")
    two = fact(service, "Alpha deploy goes through canary first")
    before = [h["id"] for h in service.recall(query="alpha deploy first")["hits"]]
    assert set(before) == {one, two}
    last = before[-1]
    service.revise(id=last, feedback="helped")
    assert service.recall(query="alpha deploy first")["hits"][0]["id"] == last
    service.revise(id=last, feedback="noise")
    service.revise(id=last, feedback="noise")
    assert [h["id"] for h in service.recall(query="alpha deploy first")["hits"]][-1] == last


def test_doctor_lists_memories_marked_noise_repeatedly(service: Service) -> None:
    noisy, mixed, once = (fact(service, t) for t in ("Old VPN host", "Mixed note", "Once noise"))
    for memory_id, marks in ((noisy, ["noise", "noise"]), (mixed, ["noise", "noise", "helped",
                             "helped"]), (once, ["noise"])):  # fmt: skip
        for mark in marks:
            service.revise(id=memory_id, feedback=mark)
    listed = service.doctor()["noise"]
    assert [(line["id"], line["helped"], line["noise"]) for line in listed] == [(noisy, 0, 2)]
    service.revise(id=noisy, status="retracted", note="outdated")
    assert service.doctor()["noise"] == []  # retired: nothing left to fix


def test_a_forget_takes_the_marks_with_it(service: Service) -> None:
    memory_id = fact(service, "A note to erase")
    service.revise(id=memory_id, feedback="noise")
    service.revise(id=memory_id, feedback="noise")
    service.forget(id=memory_id, because="test")
    with service.store.read(service.workspace) as tx:
        assert tx.feedback_counts([memory_id]) == {}
        assert tx.all_feedback_counts() == {}


def test_the_cli_marks_with_feedback(tmp_path: Path) -> None:
    env = {**os.environ, "PALIMPSEST_DB": str(tmp_path / "p.db")}

    def run(*args: str) -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-m", "palimpsest", "--json", *args],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        answer: dict[str, object] = json.loads(done.stdout)
        return answer

    memory_id = str(run("remember", "-n", "shop", "-k", "fact", "The pool size is 20")["id"])
    marked = run("revise", memory_id, "--feedback", "helped")
    assert marked["results"] == [
        {"id": memory_id, "version": 1, "feedback": "helped", "changed": []}
    ]
    shouted = run("revise", memory_id, "--feedback", "NOISE")  # case forgiven, as elsewhere
    assert shouted["results"][0]["feedback"] == "noise"
