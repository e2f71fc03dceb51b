"""Disputes (DESIGN section 2): two memories that contradict, as a review queue.

Opened, listed, ruled on and undone through the service on both stores; then the same
life cycle through the `dispute` MCP tool of a real `palimpsest serve` process, and the
`palimpsest dispute` command as a subprocess.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from palimpsest.domain.errors import PalimpsestError
from palimpsest.service import Service
from palimpsest.service.stores import copy_workspace
from palimpsest.store import EventFilter, Store, open_store

from ..agents.test_mcp_e2e import stdio
from ..conftest import POSTGRES_URL, needs_postgres
from ..mcp_helpers import call, refuse

EVERY = EventFilter(limit=1_000_000)
REASON = "Both give the pool size of the API"
WHY = "The config file in the repo says 20"
EVIDENCE = "setup.cfg line 12 reads pool_size = 20"


def events(service: Service) -> int:
    with service.store.read(service.workspace) as tx:
        return len(tx.events(EVERY))


def version(service: Service, memory_id: str) -> int:
    return int(service.inspect(id=memory_id)["memory"]["version"])


def refused(service: Service, error_class: str, **arguments: Any) -> dict[str, Any]:
    """The call must fail with `error_class` and write nothing."""
    before = events(service)
    with pytest.raises(PalimpsestError) as info:
        service.dispute(**arguments)
    assert info.value.error_class == error_class, info.value.to_dict()
    assert events(service) == before
    return info.value.to_dict()


@pytest.fixture
def pair(service: Service) -> tuple[str, str]:
    """Two active memories that contradict each other."""
    old = service.remember(notebook="api", kind="fact", text="The API pool size is 10")["id"]
    new = service.remember(notebook="api", kind="fact", text="The API pool size is 20")["id"]
    return old, new


def hit_of(service: Service, memory_id: str, **options: Any) -> dict[str, Any]:
    hits = service.recall(query="pool size", limit=50, **options)["hits"]
    return next(h for h in hits if h["id"] == memory_id)


# -- the life cycle ----------------------------------------------------------------------------


def test_an_open_dispute_flags_both_memories_each_naming_the_other(
    service: Service, pair: tuple[str, str]
) -> None:
    old, new = pair
    assert "disputed_with" not in hit_of(service, old)
    before = events(service)
    opened = service.dispute(action="open", ids=[new, old], reason=REASON)
    assert opened["status"] == "open" and opened["id"].startswith("dp_")
    assert {r["id"]: r["version"] for r in opened["results"]} == {old: 2, new: 2}
    assert events(service) == before + 2  # one event per memory it touches
    assert hit_of(service, old)["disputed_with"] == [new]
    assert hit_of(service, new)["disputed_with"] == [old]
    shown = service.inspect(id=old)
    assert shown["memory"]["disputed_with"] == [new]
    (dispute,) = shown["disputes"]
    assert (dispute["id"], dispute["status"], dispute["reason"]) == (opened["id"], "open", REASON)
    assert [m["id"] for m in dispute["memories"]] == sorted([old, new])
    history = service.history(id=old)["events"]
    assert history[-1]["op"] == "dispute.open" and history[-1]["note"] == REASON
    assert history[-1]["actor"] == service.actor
    assert history[-1]["data"] == {"dispute": opened["id"], "with": new}
    listed = service.dispute(action="list")["disputes"]
    assert [d["id"] for d in listed] == [opened["id"]]


def test_a_ruling_retires_the_loser_as_superseded_and_an_undo_puts_everything_back(
    service: Service, pair: tuple[str, str]
) -> None:
    old, new = pair
    dispute = service.dispute(action="open", ids=[old, new], reason=REASON)["id"]
    loser_before = service.inspect(id=old)["memory"]
    ruled = service.dispute(action="rule", dispute=dispute, holds=new, reason=WHY,
                            evidence=EVIDENCE)  # fmt: skip
    assert (ruled["status"], ruled["holds"], ruled["superseded"]) == ("ruled", new, old)
    loser = service.inspect(id=old)
    assert (loser["memory"]["status"], loser["memory"]["superseded_by"]) == ("superseded", new)
    assert loser["memory"]["version"] == 3 and version(service, new) == 3
    assert {"source": new, "target": old, "type": "supersedes"}.items() <= loser["links"][0].items()
    assert "disputed_with" not in loser["memory"]
    hits = service.recall(query="pool size")["hits"]
    assert [h["id"] for h in hits] == [new] and "disputed_with" not in hits[0]
    assert service.dispute(action="list")["disputes"] == []
    (closed,) = service.dispute(action="list", include_closed=True)["disputes"]
    assert closed["status"] == "ruled"
    assert {k: closed["ruling"][k] for k in ("holds", "loses", "reason", "evidence")} == {
        "holds": new, "loses": old, "reason": WHY, "evidence": EVIDENCE,
    }  # fmt: skip
    last = service.history(id=old)["events"][-1]
    assert (last["op"], last["note"], last["data"]["evidence"]) == ("dispute.rule", WHY, EVIDENCE)

    count = events(service)
    undone = service.dispute(action="undo", dispute=dispute, reason="The repo was out of date")
    assert undone["status"] == "open"
    assert events(service) == count + 2  # history only grows
    back = service.inspect(id=old)
    assert back["memory"]["version"] == 4 and version(service, new) == 4
    for name in ("status", "status_note", "superseded_by", "text"):
        assert back["memory"][name] == loser_before[name], name
    assert back["links"] == []
    assert back["memory"]["disputed_with"] == [new]
    assert hit_of(service, new)["disputed_with"] == [old]
    (reopened,) = service.dispute(action="list")["disputes"]
    assert (reopened["id"], reopened["status"], reopened["version"]) == (dispute, "open", 3)
    assert "ruling" not in reopened
    # It can be ruled again, the other way this time.
    service.dispute(action="rule", dispute=dispute, holds=old, reason="Measured again: 10")
    assert service.inspect(id=new)["memory"]["status"] == "superseded"


def test_a_ruling_against_a_rule_needs_because(service: Service) -> None:
    rule = service.remember(notebook="api", kind="rule", text="Never deploy on Fridays",
                            falsifier="a Friday deploy that went fine")["id"]  # fmt: skip
    fact = service.remember(notebook="api", kind="fact", text="We deploy on Fridays now")["id"]
    dispute = service.dispute(action="open", ids=[rule, fact], reason="They disagree")["id"]
    body = refused(service, "validation", action="rule", dispute=dispute, holds=fact,
                   reason="The team decided so")  # fmt: skip
    assert body["field"] == "because"
    service.dispute(action="rule", dispute=dispute, holds=fact, reason="The team decided so",
                    because="Fridays are staffed since May")  # fmt: skip
    assert service.inspect(id=rule)["memory"]["status"] == "superseded"


def test_as_of_recall_shows_the_disputes_of_that_time(
    service: Service, pair: tuple[str, str]
) -> None:
    times = iter(f"2030-06-0{day}T00:00:00.000000Z" for day in range(1, 10))
    service.clock = lambda: next(times)
    old, new = pair
    before = service.clock()  # day 1
    dispute = service.dispute(action="open", ids=[old, new], reason=REASON)["id"]  # day 2
    opened_at = service.clock()  # day 3
    service.dispute(action="rule", dispute=dispute, holds=new, reason=WHY)  # day 4
    ruled_at = service.clock()  # day 5
    assert "disputed_with" not in hit_of(service, old, as_of=before)
    assert hit_of(service, old, as_of=opened_at)["disputed_with"] == [new]
    assert hit_of(service, new, as_of=opened_at)["disputed_with"] == [old]
    assert "disputed_with" not in hit_of(service, new, as_of=ruled_at)
    assert hit_of(service, old, as_of=ruled_at, include_retired=True)["status"] == "superseded"


# -- refusals: structured, and nothing changes -------------------------------------------------


def test_bad_input_is_refused_and_changes_nothing(service: Service, pair: tuple[str, str]) -> None:
    old, new = pair
    retired = service.remember(notebook="api", kind="fact", text="Pool size was 5")["id"]
    service.revise(id=retired, status="retracted", note="never true")
    assert (
        refused(service, "validation", action="open", ids=[old, old], reason=REASON)["field"]
        == "ids"
    )
    assert refused(service, "validation", action="open", ids=[old], reason=REASON)["field"] == (
        "ids"
    )
    body = refused(service, "validation", action="open", ids=[old, retired], reason=REASON)
    assert retired in body["message"] and "retracted" in body["message"]
    body = refused(service, "not_found", action="open", ids=[old, "m_nothing"], reason=REASON)
    assert body["field"] == "ids"
    assert refused(service, "validation", action="open", ids=[old, new])["field"] == "reason"
    assert refused(service, "validation", action="open", ids=[old, new], reason=REASON,
                   holds=old)["field"] == "holds"  # fmt: skip
    assert refused(service, "validation", action="close")["field"] == "action"
    dispute = service.dispute(action="open", ids=[old, new], reason=REASON)["id"]
    body = refused(service, "conflict", action="open", ids=[new, old], reason="again")
    assert dispute in body["message"]
    assert refused(service, "conflict", action="undo", dispute=dispute, reason="x")["field"] == (
        "dispute"
    )
    body = refused(service, "validation", action="rule", dispute=dispute, holds=retired,
                   reason=WHY)  # fmt: skip
    assert body["field"] == "holds"
    assert refused(service, "not_found", action="rule", dispute="dp_nothing", holds=new,
                   reason=WHY)["field"] == "dispute"  # fmt: skip
    secret = "evidence: AKIA" + "IOSFODNN7EXAMPLQ"
    body = refused(service, "validation", action="rule", dispute=dispute, holds=new,
                   reason=WHY, evidence=secret)  # fmt: skip
    assert body["field"] == "evidence" and "AKIA" not in body["message"]
    service.dispute(action="rule", dispute=dispute, holds=new, reason=WHY)
    assert refused(service, "conflict", action="rule", dispute=dispute, holds=new,
                   reason=WHY)["field"] == "dispute"  # fmt: skip
    service.revise(id=old, status="active", note="the ruling was wrong")
    body = refused(service, "conflict", action="undo", dispute=dispute, reason="undo it")
    assert old in body["message"]


@pytest.mark.parametrize(
    ("field", "value"),
    [("because", 5), ("because", " "), ("because", "b" * 1_001), ("evidence", ""),
     ("include_closed", "yes"), ("include_closed", 1)],
)  # fmt: skip
def test_a_wrong_type_or_an_empty_text_on_any_field_is_validation(
    service: Service, pair: tuple[str, str], field: str, value: Any
) -> None:
    old, new = pair
    dispute = service.dispute(action="open", ids=[old, new], reason=REASON)["id"]
    if field == "include_closed":
        call: dict[str, Any] = {"action": "list", field: value}
    else:
        call = {"action": "rule", "dispute": dispute, "holds": new, "reason": WHY, field: value}
    assert refused(service, "validation", **call)["field"] == field
    assert service.inspect(id=old)["memory"]["status"] == "active"


def test_two_writers_ruling_at_once_one_rules_the_other_is_told(
    service: Service, pair: tuple[str, str]
) -> None:
    old, new = pair
    dispute = service.dispute(action="open", ids=[old, new], reason=REASON)["id"]
    start = threading.Barrier(2, timeout=30)
    answers: dict[str, Any] = {}

    def rule(holds: str) -> None:
        start.wait()
        try:
            answers[holds] = service.dispute(action="rule", dispute=dispute, holds=holds,
                                             reason=WHY)  # fmt: skip
        except PalimpsestError as exc:
            answers[holds] = exc.error_class

    threads = [threading.Thread(target=rule, args=(holds,)) for holds in (old, new)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(str(type(a).__name__) for a in answers.values()) == ["dict", "str"]
    (winner,) = [holds for holds, a in answers.items() if isinstance(a, dict)]
    (loser,) = {old, new} - {winner}
    assert answers[loser] == "conflict"
    statuses = {m: service.inspect(id=m)["memory"]["status"] for m in (old, new)}
    assert statuses == {winner: "active", loser: "superseded"}
    (ruled,) = service.dispute(action="list", include_closed=True)["disputes"]
    assert (ruled["status"], ruled["ruling"]["holds"]) == ("ruled", winner)


def retire_by(service: Service, path: str, old: str, new: str) -> str:
    """Take `old` out of `active` by a path other than a ruling; its status after."""
    if path == "retract":
        service.revise(id=old, status="retracted", note="never true")
    elif path == "supersede":
        service.revise(id=old, supersede=True, text="The API pool size is 12")
    elif path == "remember":
        service.remember(notebook="api", kind="fact", text="Pool size: 12", supersedes=[old])
    elif path == "batch":  # both in one batch: the second was read before the withdrawal
        service.revise(ids=[old, new], status="retracted", note="both wrong")
    else:  # the other one edited in the same batch, with the version read before it
        version = service.inspect(id=new)["memory"]["version"]
        edit = {"id": new, "append": "(checked)", "expected_version": version}
        service.revise(items=[{"id": old, "status": "retracted"}, edit])
        assert service.inspect(id=new)["memory"]["text"].endswith("(checked)")
    return "superseded" if path in ("supersede", "remember") else "retracted"


@pytest.mark.parametrize("path", ["retract", "supersede", "remember", "batch", "items"])
def test_a_disputed_memory_retired_by_another_path_withdraws_its_dispute(
    service: Service, pair: tuple[str, str], path: str
) -> None:
    old, new = pair
    dispute = service.dispute(action="open", ids=[old, new], reason=REASON)["id"]
    status = retire_by(service, path, old, new)
    assert service.dispute(action="list")["disputes"] == []
    (closed,) = service.dispute(action="list", include_closed=True)["disputes"]
    assert closed["status"] == "withdrawn"
    retiring = service.history(id=old)["events"][-1]
    assert retiring["data"]["withdraws"] == [dispute]
    told = [e for e in service.history(id=new)["events"] if e["op"] == "dispute.withdraw"]
    assert [e["data"] for e in told] == [{"dispute": dispute, "with": old, "with_status": status}]
    assert service.inspect(id=old)["memory"]["status"] == status
    assert all(e["op_id"] == retiring["op_id"] for e in told)  # one operation, one transaction
    if path != "batch":
        assert "disputed_with" not in hit_of(service, new, include_retired=True)
    body = refused(service, "conflict", action="rule", dispute=dispute, holds=new, reason=WHY)
    assert "withdrawn" in body["message"]


@pytest.mark.parametrize("path", ["supersede", "remember"])
def test_who_may_not_rule_against_a_disputed_memory_may_not_retire_it_either(
    service: Service, pair: tuple[str, str], path: str
) -> None:
    """An agent (it never overrides) would otherwise win a dispute by retiring a person's
    memory with `supersede(s)`, which withdraws the dispute: both paths answer alike."""
    old, new = pair
    dispute = service.dispute(action="open", ids=[old, new], reason=REASON)["id"]
    agent = Service(service.store, actor="agent:ci", workspace=service.workspace,
                    may_override=False)  # fmt: skip
    ruled = refused(agent, "forbidden", action="rule", dispute=dispute, holds=new, reason=WHY)
    before = events(service)
    with pytest.raises(PalimpsestError) as info:
        retire_by(agent, path, old, new)
    assert info.value.error_class == "forbidden" and dispute in info.value.message
    assert "rule" in ruled["message"] and events(service) == before
    assert service.dispute(action="list")["disputes"][0]["id"] == dispute
    # once the dispute is ruled on, or where no dispute stands, a supersede is the agent's right
    service.dispute(action="rule", dispute=dispute, holds=old, reason=WHY)
    assert service.inspect(id=old)["memory"]["status"] == "active"
    retire_by(agent, path, old, new)
    assert service.inspect(id=old)["memory"]["status"] == "superseded"


def test_an_undo_never_reopens_a_dispute_on_a_memory_retired_since(
    service: Service, pair: tuple[str, str]
) -> None:
    old, new = pair
    dispute = service.dispute(action="open", ids=[old, new], reason=REASON)["id"]
    service.dispute(action="rule", dispute=dispute, holds=new, reason=WHY)
    service.revise(id=new, status="retracted", note="both were wrong")
    body = refused(service, "conflict", action="undo", dispute=dispute, reason="too soon")
    assert new in body["message"] and body["field"] == "dispute"
    service.revise(id=new, status="active", note="it holds after all")
    assert service.dispute(action="undo", dispute=dispute, reason="too soon")["status"] == "open"


def test_disputes_of_an_unknown_memory_are_not_found_those_of_a_forgotten_one_listed(
    service: Service, pair: tuple[str, str]
) -> None:
    old, new = pair
    assert refused(service, "not_found", action="list", ids=["m_unknown"])["field"] == "ids"
    assert refused(service, "not_found", action="list", ids=[old, "m_unknown"])["field"] == "ids"
    dispute = service.dispute(action="open", ids=[old, new], reason=REASON)["id"]
    service.forget(id=old, because="a mistake")
    listed = service.dispute(action="list", ids=[old], include_closed=True)["disputes"]
    assert [d["id"] for d in listed] == [dispute]


def test_a_list_is_bounded_and_counts_what_it_leaves_out(service: Service) -> None:
    ids = [service.remember(notebook="api", kind="fact", text=f"Pool size {n}")["id"]
           for n in range(5)]  # fmt: skip
    for left, right in itertools.pairwise(ids):
        service.dispute(action="open", ids=[left, right], reason="which size?")
    listed = service.dispute(action="list", limit=3)
    assert (len(listed["disputes"]), listed["more"]) == (3, 1)
    assert "more" not in service.dispute(action="list", limit=4)
    assert len(service.dispute(action="list")["disputes"]) == 4  # under the default
    for bad in (0, 201, True, "3"):
        refused(service, "validation", action="list", limit=bad)


def test_doctor_lists_the_open_disputes_oldest_first_with_the_fix(service: Service) -> None:
    assert "open_disputes" not in service.doctor()
    ids = [service.remember(notebook="api", kind="fact", text=f"Pool size {n}")["id"]
           for n in range(7)]  # fmt: skip
    opened = [service.dispute(action="open", ids=[left, right], reason="which size?")["id"]
              for left, right in itertools.pairwise(ids)]  # fmt: skip
    service.dispute(action="rule", dispute=opened[0], holds=ids[1], reason=WHY)
    waiting = service.doctor()["open_disputes"]
    assert waiting["count"] == 5 and len(waiting["oldest"]) == 5
    assert [d["id"] for d in waiting["oldest"]] == opened[1:6]
    first = waiting["oldest"][0]
    assert sorted(first["memories"]) == sorted(ids[1:3])
    fix = first["fix"]
    assert (fix["tool"], fix["arguments"]["action"]) == ("dispute", "rule")
    assert fix["arguments"]["dispute"] == opened[1]
    assert all(memory_id in fix["arguments"]["holds"] for memory_id in ids[1:3])


def test_dry_runs_write_nothing_and_idempotency_keys_replay(
    service: Service, pair: tuple[str, str]
) -> None:
    old, new = pair
    before = events(service)
    tried = service.dispute(action="open", ids=[old, new], reason=REASON, dry_run=True)
    assert tried["dry_run"] is True and "seq" not in tried["results"][0]
    assert events(service) == before and service.dispute(action="list")["disputes"] == []
    first = service.dispute(action="open", ids=[old, new], reason=REASON, idempotency_key="k1")
    again = service.dispute(action="open", ids=[new, old], reason=REASON, idempotency_key="k1")
    assert again["replayed"] is True and again == {**first, "replayed": True}  # same shape
    assert events(service) == before + 2
    with pytest.raises(PalimpsestError) as info:
        service.dispute(action="open", ids=[old, new], reason="other", idempotency_key="k1")
    assert info.value.error_class == "conflict"
    dispute = first["id"]
    ruled = service.dispute(action="rule", dispute=dispute, holds=new, reason=WHY, dry_run=True)
    assert ruled["dry_run"] is True and events(service) == before + 2
    assert service.inspect(id=old)["memory"]["status"] == "active"


# -- forget, copy --------------------------------------------------------------------------------


def test_forgetting_a_disputed_memory_withdraws_the_dispute_and_leaves_none_of_its_text(
    service: Service, pair: tuple[str, str], store: Store
) -> None:
    old, new = pair
    dispute = service.dispute(action="open", ids=[old, new], reason="Quoting: pool size is 10")
    answer = service.forget(id=old, because="a mistake")
    assert answer["results"][0]["forgotten"] is True
    (withdrawn,) = answer["results"][0]["disputes_withdrawn"]
    assert (withdrawn["dispute"], withdrawn["id"], withdrawn["version"]) == (dispute["id"], new, 3)
    assert "disputed_with" not in hit_of(service, new)
    last = service.history(id=new)["events"][-1]
    assert (last["op"], last["data"]) == ("dispute.withdraw", {"dispute": dispute["id"],
                                                                "with": old})  # fmt: skip
    assert service.dispute(action="list")["disputes"] == []
    (closed,) = service.dispute(action="list", include_closed=True)["disputes"]
    assert (closed["status"], closed["reason"]) == ("withdrawn", None)
    assert closed["memories"][0 if old < new else 1] == {"id": old, "forgotten": True}
    with store.read(service.workspace) as tx:
        for event in tx.events(EVERY):
            assert "pool size is 10" not in json.dumps(event.to_dict()), event
        every = tx.disputes(statuses=()) + tx.disputes(at_seq=1)
        assert all(d.reason is None for d in every)


@pytest.mark.parametrize("forgotten", ["loser", "holder"])
def test_forgetting_either_memory_of_a_ruling_erases_the_ruling_s_texts_from_the_file(
    service: Service, pair: tuple[str, str], store: Store, db_path: Path, forgotten: str
) -> None:
    old, new = pair
    dispute = service.dispute(action="open", ids=[old, new], reason="Pool quarrel alpha")["id"]
    service.dispute(action="rule", dispute=dispute, holds=new, reason="Pool verdict bravo",
                    evidence="Pool evidence charlie", because="Pool because delta")  # fmt: skip
    service.forget(id=old if forgotten == "loser" else new, because="not to be kept")
    (closed,) = service.dispute(action="list", include_closed=True)["disputes"]
    assert closed["status"] == "ruled" and closed["ruling"]["reason"] is None
    assert closed["ruling"]["evidence"] is None and closed["ruling"]["holds"] == new
    texts = ("quarrel alpha", "verdict bravo", "evidence charlie", "because delta")
    with store.read(service.workspace) as tx:
        shown = json.dumps([e.to_dict() for e in tx.events(EVERY)])
    for text in texts:
        assert text not in shown
    if store.url.endswith(".db"):  # the bytes of the file: SQLite's (PostgreSQL: rewrite)
        store.close()
        data = b"".join(p.read_bytes() for p in db_path.parent.glob("palimpsest.db*"))
        for text in texts:
            assert text.encode() not in data, text


@pytest.mark.parametrize("target", ["sqlite", pytest.param("postgres", marks=needs_postgres)])
def test_copy_carries_the_disputes_and_their_past(target: str, tmp_path: Path) -> None:
    workspace = f"copy-{uuid.uuid4().hex[:12]}"
    source = open_store(str(tmp_path / "a.db"))
    copy = open_store(POSTGRES_URL or "" if target == "postgres" else str(tmp_path / "b.db"))
    try:
        ticks = itertools.count()
        service = Service(source, workspace=workspace)
        service.clock = lambda: f"2026-01-01T00:00:{next(ticks):02d}.000000Z"
        old = service.remember(notebook="api", kind="fact", text="The API pool size is 10")["id"]
        new = service.remember(notebook="api", kind="fact", text="The API pool size is 20")["id"]
        dispute = service.dispute(action="open", ids=[old, new], reason=REASON)["id"]
        flagged_at = service.clock()
        service.dispute(action="rule", dispute=dispute, holds=new, reason=WHY, evidence=EVIDENCE)
        copy_workspace(source, copy, workspace)
        copied = Service(copy, workspace=workspace)
        everything = {"action": "list", "include_closed": True}
        assert copied.dispute(**everything) == service.dispute(**everything)
        assert hit_of(copied, new, as_of=flagged_at)["disputed_with"] == [old]
        copied.dispute(action="undo", dispute=dispute, reason="copied, then undone")
        assert copied.inspect(id=old)["memory"]["status"] == "active"
        assert hit_of(copied, new)["disputed_with"] == [old]
    finally:
        source.close()
        copy.close()


# -- the MCP tool, on a real `palimpsest serve` process --------------------------------------


@pytest.mark.anyio
async def test_the_dispute_tool_over_stdio_runs_the_life_cycle(
    db_path: Path, env: dict[str, str]
) -> None:
    async with stdio(db_path, env) as client:
        (tool,) = [t for t in (await client.list_tools()).tools if t.name == "dispute"]
        assert len(json.dumps(tool.model_dump(by_alias=True, exclude_none=True))) <= 3_000
        assert tool.annotations is not None and tool.annotations.destructive_hint is False
        old = (await call(client, "remember", notebook="api", kind="fact",
                          text="The API pool size is 10"))["id"]  # fmt: skip
        new = (await call(client, "remember", notebook="api", kind="fact",
                          text="The API pool size is 20"))["id"]  # fmt: skip
        opened = await call(client, "dispute", action="open", ids=[old, new], reason=REASON)
        hits = (await call(client, "recall", query="pool size"))["hits"]
        assert {h["id"]: h["disputed_with"] for h in hits} == {old: [new], new: [old]}
        waiting = (await call(client, "doctor"))["open_disputes"]
        assert (waiting["count"], waiting["oldest"][0]["id"]) == (1, opened["id"])
        body = await refuse(client, "dispute", action="open", ids=[old, new], reason=REASON)
        assert (body["error_class"], body["field"]) == ("conflict", "ids")
        body = await refuse(client, "dispute", action="undo", dispute=opened["id"], reason="x",
                            holds=new)  # fmt: skip
        assert (body["error_class"], body["field"]) == ("validation", "holds")
        body = await refuse(client, "dispute", action="Close")
        assert (body["error_class"], body["field"]) == ("validation", "action")
        ruled = await call(client, "dispute", action="Rule", dispute=opened["id"], holds=new,
                           reason=WHY, evidence=EVIDENCE)  # fmt: skip
        assert (ruled["status"], ruled["superseded"]) == ("ruled", old)
        listed = await call(client, "dispute", action="list", include_closed=True)
        assert listed["disputes"][0]["ruling"]["evidence"] == EVIDENCE
        body = await refuse(client, "dispute", action="list", ids=["m_unknown"])
        assert (body["error_class"], body["field"]) == ("not_found", "ids")
        undone = await call(client, "dispute", action="undo", dispute=opened["id"],
                            reason="stale config")  # fmt: skip
        assert undone["status"] == "open"
        shown = await call(client, "inspect", id=old)
        assert (shown["memory"]["status"], shown["memory"]["version"]) == ("active", 4)
        assert shown["disputes"][0]["status"] == "open"


# -- the CLI, as a subprocess ------------------------------------------------------------------


@pytest.fixture
def cli(db_path: Path, env: dict[str, str]) -> Callable[..., Any]:
    def cli(*args: str, code: int = 0, as_json: bool = True) -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "palimpsest", "--db", str(db_path), *args]
            + (["--json"] if as_json else []),
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == code, done.stdout + done.stderr
        return json.loads(done.stdout or done.stderr) if as_json else done.stdout

    return cli


def test_the_dispute_command_opens_lists_rules_and_undoes(cli: Callable[..., Any]) -> None:
    old = cli("remember", "-n", "api", "-k", "fact", "The API pool size is 10")["id"]
    new = cli("remember", "-n", "api", "-k", "fact", "The API pool size is 20")["id"]
    dispute = cli("dispute", "open", old, new, "--reason", REASON)["id"]
    told = cli("doctor", as_json=False)
    assert f"palimpsest dispute rule {dispute} --holds" in told and "Open disputes" in told
    shown = cli("dispute", "list", as_json=False)
    assert dispute in shown and "The API pool size is 10" in shown
    assert "disputed" in cli("recall", "pool", as_json=False)
    refusal = cli("dispute", "rule", dispute, "--reason", WHY, code=1)
    assert (refusal["error_class"], refusal["field"]) == ("validation", "holds")
    cli("dispute", "rule", dispute, "--holds", new, "--reason", WHY, "--evidence", EVIDENCE)
    assert cli("dispute", "list")["disputes"] == []
    (closed,) = cli("dispute", "list", "--all", "--memory", old, "--limit", "1")["disputes"]
    assert closed["ruling"]["holds"] == new
    assert cli("dispute", "list", "--memory", "m_unknown", code=1)["error_class"] == "not_found"
    cli("dispute", "undo", dispute, "--reason", "stale config", "--dry-run")
    assert cli("inspect", old)["memory"]["status"] == "superseded"
    cli("dispute", "undo", dispute, "--reason", "stale config")
    assert cli("inspect", old)["memory"]["status"] == "active"
    help_text = cli("dispute", "rule", "--help", as_json=False)
    assert "Example:" in help_text and "--evidence" in help_text
