"""merge: one memory kept, the others retired as superseded by it, in one transaction with
one event each; every refusal leaves everything as it was. On both stores."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from palimpsest.domain.errors import PalimpsestError
from palimpsest.service import Service
from palimpsest.service.roles import Principal
from palimpsest.store import EventFilter, Store

WHY = "the same fact filed three times by three sessions"


def ticking() -> Callable[[], str]:
    """A clock one second further at every reading: `as_of` can name the time between."""
    seconds = itertools.count()
    return lambda: f"2026-06-01T10:{(s := next(seconds)) // 60:02d}:{s % 60:02d}.000000Z"


@pytest.fixture
def clocked(store: Store, workspace: str) -> Service:
    return Service(store, workspace=workspace, clock=ticking())


def fact(service: Service, text: str, notebook: str = "proj", **fields: Any) -> str:
    memory_id: str = service.remember(notebook=notebook, kind="fact", text=text, **fields)["id"]
    return memory_id


def memory(service: Service, memory_id: str) -> dict[str, Any]:
    shown: dict[str, Any] = service.inspect(id=memory_id)["memory"]
    return shown


def state(service: Service) -> list[tuple[Any, ...]]:
    """Every event, and every memory as it stands: what a refusal must leave as it was."""
    with service.store.read(service.workspace) as tx:
        events = [(e.seq, e.op, e.target_id) for e in tx.events(EventFilter(limit=100_000))]
        memories = [(m.id, m.version, m.status, m.superseded_by) for m in tx.memories_at(None)]
    return [*events, *memories]


def refused(service: Service, error_class: str, **args: Any) -> PalimpsestError:
    """Assert the merge is refused with `error_class` and changes nothing."""
    before = state(service)
    with pytest.raises(PalimpsestError) as caught:
        service.merge(**{"because": WHY} | args)
    assert caught.value.error_class == error_class, caught.value.message
    assert state(service) == before
    return caught.value


@pytest.fixture
def three(clocked: Service) -> tuple[str, str, str]:
    return (
        fact(clocked, "Staging deploys run from the release branch"),
        fact(clocked, "Deploys to staging are made from the release branch", tags=["ci"]),
        fact(clocked, "Staging is deployed from the release branch."),
    )


def test_a_merge_retires_the_rest_as_superseded_by_the_one_kept(
    clocked: Service, three: tuple[str, str, str]
) -> None:
    keep, *rest = three
    answer = clocked.merge(keep=keep, ids=rest, because=WHY)
    assert answer["id"] == keep and answer["version"] == 1
    assert [(r["id"], r["version"]) for r in answer["superseded"]] == [(m, 2) for m in rest]
    kept = clocked.inspect(id=keep)
    assert kept["memory"]["status"] == "active" and kept["memory"]["version"] == 1
    for retired in rest:
        shown = memory(clocked, retired)
        assert (shown["status"], shown["superseded_by"]) == ("superseded", keep)
    links = {(link["source"], link["target"], link["type"]) for link in kept["links"]}
    assert links == {(keep, retired, "supersedes") for retired in rest}
    assert {hit["id"] for hit in clocked.recall(query="staging release branch")["hits"]} == {keep}
    # the retired one keeps its own tags: a merge changes nothing of what it says
    assert memory(clocked, rest[0])["tags"] == ["ci"]


def test_a_merge_writes_one_event_per_retired_memory_naming_who_and_why(
    clocked: Service, three: tuple[str, str, str]
) -> None:
    keep, *rest = three
    clocked.merge(keep=keep, ids=rest, because=WHY)
    events = [clocked.history(id=retired)["events"][-1] for retired in rest]
    assert len({event["op_id"] for event in events}) == 1  # one operation
    for event in events:
        assert (event["op"], event["actor"], event["note"]) == ("retire", "user:local", WHY)
        assert event["data"]["superseded_by"] == keep
    assert len(clocked.history(id=keep)["events"]) == 1  # the kept one: its filing only


def test_as_of_before_the_merge_shows_them_active_and_a_revert_undoes_it(
    clocked: Service, three: tuple[str, str, str]
) -> None:
    keep, *rest = three
    before = clocked.history(id=rest[-1])["events"][-1]["at"]
    clocked.merge(keep=keep, ids=rest, because=WHY)
    past = clocked.recall(query="staging release branch", as_of=before, limit=10)["hits"]
    assert {hit["id"]: hit["status"] for hit in past} == dict.fromkeys(three, "active")
    # a revert of the notebook to that time undoes the merge, as new events
    clocked.revert(notebook="proj", as_of=before, because="merged too eagerly")
    for retired in rest:
        shown = memory(clocked, retired)
        assert (shown["status"], shown["superseded_by"], shown["version"]) == ("active", None, 3)
    # and one merged away is reactivated as any retired memory is
    clocked.merge(keep=keep, ids=rest, because=WHY)
    clocked.revise(id=rest[0], status="active", note="it says more than the kept one")
    assert memory(clocked, rest[0])["status"] == "active"
    assert memory(clocked, rest[1])["status"] == "superseded"


def test_a_retired_rule_keeps_the_merge_s_reason_as_any_retired_rule_does(
    service: Service,
) -> None:
    values = {"notebook": "proj", "kind": "rule", "falsifier": "a push that harmed nothing"}
    keep = service.remember(text="Never push to main", **values)["id"]
    other = service.remember(text="Do not push straight to main", **values)["id"]
    service.merge(keep=keep, ids=[other], because=WHY)
    event = service.history(id=other)["events"][-1]
    assert event["note"] == WHY and event["data"]["because"] == WHY


def test_a_dry_run_shows_each_change_and_writes_nothing(
    clocked: Service, three: tuple[str, str, str]
) -> None:
    keep, *rest = three
    before = state(clocked)
    answer = clocked.merge(keep=keep, ids=rest, because=WHY, dry_run=True)
    assert answer["dry_run"] is True
    for result in answer["superseded"]:
        assert result["diff"]["status"] == {"old": "active", "new": "superseded"}
        assert result["diff"]["superseded_by"] == {"old": None, "new": keep}
    assert state(clocked) == before


def test_a_retry_under_the_same_idempotency_key_writes_nothing_more(
    clocked: Service, three: tuple[str, str, str]
) -> None:
    keep, *rest = three
    first = clocked.merge(keep=keep, ids=rest, because=WHY, idempotency_key="merge-1")
    after = state(clocked)
    again = clocked.merge(keep=keep, ids=rest, because=WHY, idempotency_key="merge-1")
    assert again["replayed"] is True
    assert [r["id"] for r in again["superseded"]] == [r["id"] for r in first["superseded"]]
    assert state(clocked) == after
    other = fact(clocked, "Something else entirely")
    error = refused(clocked, "conflict", keep=keep, ids=[other], idempotency_key="merge-1")
    assert error.field == "idempotency_key"


def test_a_merge_withdraws_the_open_dispute_of_a_memory_it_retires_as_revise_does(
    service: Service,
) -> None:
    keep = fact(service, "The pool size is 20")
    copy = fact(service, "Pool size: 20")
    rival = fact(service, "The pool size is 50")
    dispute = service.dispute(action="open", ids=[copy, rival], reason="which size?")["id"]
    answer = service.merge(keep=keep, ids=[copy], because=WHY)
    assert answer["superseded"][0]["disputes_withdrawn"][0]["dispute"] == dispute
    assert service.dispute(action="list")["disputes"] == []
    assert memory(service, rival)["status"] == "active"


# -- refusals: each changes nothing ----------------------------------------------------------


def test_an_unknown_or_forgotten_id_is_not_found(service: Service) -> None:
    keep, other = fact(service, "Kept"), fact(service, "Other")
    gone = fact(service, "Gone")
    service.forget(id=gone, because="filed by mistake")
    assert refused(service, "not_found", keep=keep, ids=[other, "m_nosuchmemory"]).field == "ids"
    assert refused(service, "not_found", keep=keep, ids=[other, gone]).field == "ids"
    assert refused(service, "not_found", keep="m_nosuchmemory", ids=[other]).field == "keep"
    assert refused(service, "not_found", keep=gone, ids=[other]).field == "keep"


def test_a_memory_retired_already_is_refused_and_names_its_successor(service: Service) -> None:
    keep, other, old = fact(service, "Kept"), fact(service, "Other"), fact(service, "Old")
    service.revise(id=old, status="superseded", superseded_by=other, note="replaced")
    error = refused(service, "conflict", keep=keep, ids=[other, old])
    assert old in error.message and other in error.message
    assert refused(service, "validation", keep=old, ids=[other]).field == "keep"


def test_the_kept_memory_among_the_retired_is_refused(service: Service) -> None:
    keep, other = fact(service, "Kept"), fact(service, "Other")
    assert refused(service, "validation", keep=keep, ids=[other, keep]).field == "ids"
    assert refused(service, "validation", keep=keep, ids=[other, other]).field == "ids"
    assert refused(service, "validation", keep=keep, ids=[]).field == "ids"


@pytest.mark.parametrize("because", [None, "", "   "])
def test_a_merge_without_a_reason_is_refused(service: Service, because: str | None) -> None:
    keep, other = fact(service, "Kept"), fact(service, "Other")
    assert refused(service, "validation", keep=keep, ids=[other], because=because).field == (
        "because"
    )


def test_a_memory_of_another_workspace_is_not_found(service: Service) -> None:
    keep = fact(service, "Kept")
    elsewhere = service.with_workspace(service.workspace + "-other")
    theirs = fact(elsewhere, "Theirs")
    assert refused(service, "not_found", keep=keep, ids=[theirs]).field == "ids"
    assert memory(elsewhere, theirs)["status"] == "active"


def test_who_may_not_retire_another_s_memory_may_not_merge_it_away(service: Service) -> None:
    keep = fact(service, "Kept")
    ana = service.acting_as(Principal("user:ana", "editor", "k_" + "a" * 20))
    hers = fact(ana, "Hers")
    agent = service.acting_as(Principal("agent:ci", "agent", "k_" + "c" * 20))
    viewer = service.acting_as(Principal("user:vic", "viewer", "k_" + "b" * 20))
    assert hers in refused(agent, "forbidden", keep=keep, ids=[hers]).message
    refused(viewer, "forbidden", keep=keep, ids=[hers])
    # an editor or owner may: the reason stands as the override's, kept in the event
    bob = service.acting_as(Principal("user:bob", "editor", "k_" + "d" * 20))
    bob.merge(keep=keep, ids=[hers], because=WHY)
    event = service.history(id=hers)["events"][-1]
    assert (event["actor"], event["data"]["override_reason"]) == ("user:bob", WHY)


def test_a_disputed_memory_of_another_is_refused_to_whoever_may_not_rule(
    service: Service,
) -> None:
    keep = fact(service, "The pool size is 20")
    rival = fact(service, "The pool size is 50")
    ana = service.acting_as(Principal("user:ana", "editor", "k_" + "a" * 20))
    hers = fact(ana, "Pool size: 20")
    service.dispute(action="open", ids=[hers, rival], reason="which size?")
    agent = service.acting_as(Principal("agent:ci", "agent", "k_" + "c" * 20))
    refused(agent, "forbidden", keep=keep, ids=[hers])
    assert len(service.dispute(action="list")["disputes"]) == 1


def test_one_refused_memory_leaves_the_others_of_the_merge_active(service: Service) -> None:
    keep, first, second = fact(service, "Kept"), fact(service, "First"), fact(service, "Second")
    service.revise(id=second, status="retracted", note="never true")
    refused(service, "conflict", keep=keep, ids=[first, second])
    assert memory(service, first)["status"] == "active"


def test_a_dispute_between_the_kept_and_a_retired_memory_is_withdrawn(service: Service) -> None:
    """The merge settles it as a ruling for the kept one would: the kept memory gets the
    withdrawal's event (its version is the answer's), the other retires."""
    keep, copy = fact(service, "The pool size is 20"), fact(service, "Pool size: 20")
    service.dispute(action="open", ids=[keep, copy], reason="the same, or not?")
    answer = service.merge(keep=keep, ids=[copy], because=WHY)
    assert answer["version"] == memory(service, keep)["version"] == 3  # filed, opened, withdrawn
    assert service.history(id=keep)["events"][-1]["op"] == "dispute.withdraw"
    assert service.dispute(action="list")["disputes"] == []
