"""One test per revise rule of DESIGN section 2, on a real SQLite file."""

from __future__ import annotations

import json
import random
import string
from typing import Any

import pytest

from palimpsest.domain.errors import Conflict, NotFound, PalimpsestError, ValidationError
from palimpsest.service import Service
from palimpsest.store import EventFilter


def event_count(service: Service) -> int:
    with service.store.read(service.workspace) as tx:
        return len(tx.events(EventFilter(limit=100_000)))


def current(service: Service, memory_id: str) -> dict[str, Any]:
    memory: dict[str, Any] = service.inspect(id=memory_id)["memory"]
    return memory


def refused(service: Service, error: type[PalimpsestError], call: Any) -> PalimpsestError:
    """Assert `call` is refused with `error` and wrote nothing."""
    before = event_count(service)
    with pytest.raises(error) as caught:
        call()
    assert event_count(service) == before
    return caught.value


def fact(service: Service, text: str = "The pool size is 20", **fields: Any) -> str:
    fields.setdefault("notebook", "proj")
    memory_id: str = service.remember(kind="fact", text=text, **fields)["id"]
    return memory_id


def rule(service: Service, **fields: Any) -> str:
    values = {
        "notebook": "proj",
        "kind": "rule",
        "text": "Never push to main directly",
        "falsifier": "a direct push to main that caused no harm",
        "severity": "costly",
        "check": {"kind": "forbidden", "literals": ["git push origin main"]},
        "bindings": {"moments": ["before_command"], "targets": ["git"]},
        "scope": "workspace",
    } | fields
    memory_id: str = service.remember(**values)["id"]
    return memory_id


def test_omitted_fields_keep_their_values(service: Service) -> None:
    mid = fact(service, title="Pool", why="sizing", tags=["db"], key="pool")
    service.revise(id=mid, why="load tests showed it")
    after = current(service, mid)
    assert (after["title"], after["tags"], after["key"]) == ("Pool", ["db"], "pool")
    assert after["why"] == "load tests showed it"
    assert after["version"] == 2


def test_clear_removes_only_the_listed_fields(service: Service) -> None:
    mid = fact(service, title="Pool", tags=["db"], key="pool")
    service.revise(id=mid, clear=["title", "tags"])
    after = current(service, mid)
    assert (after["title"], after["tags"], after["key"]) == (None, [], "pool")


def test_clear_and_set_of_one_field_is_refused(service: Service) -> None:
    mid = fact(service, title="Pool")
    error = refused(
        service, ValidationError, lambda: service.revise(id=mid, title="X", clear=["title"])
    )
    assert error.field == "title"


def test_an_empty_string_is_not_a_clear(service: Service) -> None:
    mid = fact(service, title="Pool")
    refused(service, ValidationError, lambda: service.revise(id=mid, title=""))
    assert current(service, mid)["title"] == "Pool"


def test_text_and_kind_cannot_be_cleared(service: Service) -> None:
    mid = fact(service)
    refused(service, ValidationError, lambda: service.revise(id=mid, clear=["text"]))


def test_append_adds_to_the_end(service: Service) -> None:
    mid = fact(service)
    service.revise(id=mid, append="(see config.py)")
    assert current(service, mid)["text"] == "The pool size is 20 (see config.py)"


def test_replace_changes_the_first_occurrence(service: Service) -> None:
    mid = fact(service, text="20 workers and 20 connections")
    service.revise(id=mid, replace_from="20", replace_to="30")
    assert current(service, mid)["text"] == "30 workers and 20 connections"


def test_remove_deletes_a_substring(service: Service) -> None:
    mid = fact(service, text="The pool size is 20 TEMP")
    service.revise(id=mid, remove=" TEMP")
    assert current(service, mid)["text"] == "The pool size is 20"


def test_small_edits_cannot_be_combined_with_text(service: Service) -> None:
    mid = fact(service)
    refused(service, ValidationError, lambda: service.revise(id=mid, text="x", append="y"))


def test_replace_from_missing_in_text_is_refused(service: Service) -> None:
    mid = fact(service)
    refused(
        service,
        ValidationError,
        lambda: service.revise(id=mid, replace_from="absent", replace_to="x"),
    )


def test_replace_from_needs_replace_to(service: Service) -> None:
    mid = fact(service)
    refused(service, ValidationError, lambda: service.revise(id=mid, replace_from="20"))


def test_tags_replace_the_whole_set_and_an_empty_list_is_refused(service: Service) -> None:
    mid = fact(service, tags=["a", "b"])
    service.revise(id=mid, tags=["c"])
    assert current(service, mid)["tags"] == ["c"]
    refused(service, ValidationError, lambda: service.revise(id=mid, tags=[]))


def test_retire_and_reactivate_with_notes(service: Service) -> None:
    mid = fact(service)
    service.revise(id=mid, status="retracted", note="never true")
    after = current(service, mid)
    assert (after["status"], after["status_note"]) == ("retracted", "never true")
    assert service.recall(query="pool")["hits"] == []
    service.revise(id=mid, status="active", note="it was true after all")
    assert current(service, mid)["status"] == "active"
    assert [h["id"] for h in service.recall(query="pool")["hits"]] == [mid]


def test_targets_that_do_not_qualify_come_back_unmatched_unchanged(service: Service) -> None:
    mid = fact(service)
    before = event_count(service)
    answer = service.revise(id=mid, status="active")
    assert answer["results"] == []
    assert answer["unmatched"][0]["target"] == mid
    assert event_count(service) == before


def test_only_active_memories_are_verified(service: Service) -> None:
    mid = fact(service)
    service.revise(id=mid, status="verified")
    assert current(service, mid)["verified_at"] is not None
    service.revise(id=mid, status="superseded")
    assert service.revise(id=mid, status="verified")["unmatched"]


@pytest.mark.parametrize(
    "change",
    [
        {"clear": ["severity"]},
        {"severity": "house_style"},
        {"clear": ["check"]},
        {"check": {"kind": "forbidden", "literals": ["git push"]}},
        {"bindings": {"moments": ["before_command"]}},
        {"scope": "notebook"},
        {"kind": "note", "clear": ["severity", "falsifier", "check", "bindings", "scope"]},
        {"kind": "orientation"},
        {"status": "retracted"},
        {"expires_at": "2030-01-01"},
    ],
)
def test_weakening_a_rule_needs_because(service: Service, change: dict[str, Any]) -> None:
    mid = rule(service)
    error = refused(service, ValidationError, lambda: service.revise(id=mid, **change))
    assert error.field == "because"
    service.revise(id=mid, because="the team agreed", **change)
    assert current(service, mid)["version"] == 2


def test_strengthening_a_rule_needs_no_reason(service: Service) -> None:
    mid = rule(service, severity="house_style")
    service.revise(id=mid, severity="irreversible")
    assert current(service, mid)["severity"] == "irreversible"


def test_move_keeps_id_dates_key_and_history(service: Service) -> None:
    mid = fact(service, key="pool")
    before = current(service, mid)
    answer = service.revise(id=mid, move_to="infra")
    after = current(service, mid)
    assert answer["results"][0]["id"] == mid
    assert after["notebook"] == "infra"
    assert (after["recorded_at"], after["key"]) == (before["recorded_at"], "pool")
    assert len(service.history(id=mid)["events"]) == 2


def test_moving_into_another_domain_needs_because(service: Service) -> None:
    service.create_notebook(name="web", domain="web-projects")
    service.create_notebook(name="ops", domain="infra")
    mid = fact(service, notebook="web")
    refused(service, ValidationError, lambda: service.revise(id=mid, move_to="ops"))
    service.revise(id=mid, move_to="ops", because="it is an infra fact")
    assert current(service, mid)["notebook"] == "ops"


def test_supersede_files_a_successor_and_retires_the_original(service: Service) -> None:
    mid = fact(service, key="pool")
    answer = service.revise(id=mid, supersede=True, text="The pool size is 30")
    new_id = answer["results"][0]["id"]
    old, new = current(service, mid), current(service, new_id)
    assert (old["status"], old["superseded_by"], old["text"]) == (
        "superseded",
        new_id,
        "The pool size is 20",
    )
    assert (new["text"], new["key"]) == ("The pool size is 30", "pool")
    links = service.inspect(id=new_id)["links"]
    assert [(ln["source"], ln["target"], ln["type"]) for ln in links] == [
        (new_id, mid, "supersedes")
    ]


def test_remember_with_supersedes_retires_in_the_same_transaction(service: Service) -> None:
    old = fact(service)
    refused(
        service,
        NotFound,
        lambda: service.remember(
            notebook="proj", kind="fact", text="new", supersedes=[old, "m_missing"]
        ),
    )
    assert current(service, old)["status"] == "active"
    new = service.remember(notebook="proj", kind="fact", text="new", supersedes=[old])["id"]
    assert current(service, old)["superseded_by"] == new


def test_batch_is_all_or_nothing(service: Service) -> None:
    a, b = fact(service, text="alpha"), fact(service, text="beta")
    error = refused(
        service,
        ValidationError,
        lambda: service.revise(
            items=[
                {"id": a, "append": "one"},
                {"id": b, "replace_from": "absent", "replace_to": "x"},
            ]
        ),
    )
    assert error.item == 1
    assert current(service, a)["text"] == "alpha"
    answer = service.revise(items=[{"id": a, "append": "one"}, {"id": b, "tags": ["x"]}])
    assert [r["version"] for r in answer["results"]] == [2, 2]


def test_ids_apply_to_qualifying_targets_and_list_the_rest(service: Service) -> None:
    a, b = fact(service, text="alpha"), fact(service, text="beta")
    service.revise(id=b, status="retracted")
    answer = service.revise(ids=[a, b, "m_nope"], status="superseded")
    assert [r["id"] for r in answer["results"]] == [a]
    assert {u["target"] for u in answer["unmatched"]} == {b, "m_nope"}


def test_texts_match_exactly_and_ambiguity_is_not_guessed(service: Service) -> None:
    a = fact(service, text="Alpha beta")
    service.remember(notebook="proj", kind="decision", text="alpha BETA ")
    answer = service.revise(texts=["  alpha beta"], notebook="proj", tags=["x"])
    assert answer["results"] == []
    assert len(answer["unmatched"][0]["ids"]) == 2
    b = fact(service, text="Gamma")
    answer = service.revise(texts=["gamma"], notebook="proj", tags=["x"])
    assert [r["id"] for r in answer["results"]] == [b]
    assert a != b


def test_expected_version_mismatch_is_a_conflict(service: Service) -> None:
    mid = fact(service)
    service.revise(id=mid, append="x")
    error = refused(
        service, Conflict, lambda: service.revise(id=mid, append="y", expected_version=1)
    )
    assert "2" in error.message
    service.revise(id=mid, append="y", expected_version=2)


def test_revising_to_what_is_there_writes_nothing(service: Service) -> None:
    mid = fact(service, title="Pool")
    before = event_count(service)
    answer = service.revise(id=mid, title="Pool")
    assert answer["results"][0]["unchanged"] is True
    assert event_count(service) == before


def test_idempotency_key_replays_the_first_answer(service: Service) -> None:
    mid = fact(service)
    first = service.revise(id=mid, append="x", idempotency_key="k1")
    before = event_count(service)
    again = service.revise(id=mid, append="x", idempotency_key="k1")
    assert again["results"] == first["results"] and again["replayed"] is True
    assert event_count(service) == before
    refused(service, Conflict, lambda: service.revise(id=mid, append="z", idempotency_key="k1"))


def test_dry_run_writes_nothing_and_returns_the_diff(service: Service) -> None:
    mid = fact(service)
    before = event_count(service)
    answer = service.revise(id=mid, replace_from="20", replace_to="30", dry_run=True)
    assert answer["results"][0]["diff"]["text"] == {
        "old": "The pool size is 20",
        "new": "The pool size is 30",
    }
    assert event_count(service) == before
    assert current(service, mid)["version"] == 1


def test_a_key_stays_unique_among_active_memories(service: Service) -> None:
    a = fact(service, text="alpha", key="k")
    error = refused(
        service,
        ValidationError,
        lambda: service.remember(notebook="proj", kind="fact", text="b", key="k"),
    )
    assert a in error.message
    service.revise(id=a, status="superseded")
    b = fact(service, text="beta", key="k")
    assert (
        refused(
            service, ValidationError, lambda: service.revise(id=a, status="active")
        ).message.count(b)
        == 1
    )


def test_a_move_into_a_notebook_holding_the_key_is_refused(service: Service) -> None:
    fact(service, text="alpha", key="k", notebook="one")
    b = fact(service, text="beta", key="k", notebook="two")
    refused(service, ValidationError, lambda: service.revise(id=b, move_to="one"))


def test_a_revert_taking_a_held_key_is_refused(service: Service) -> None:
    a = fact(service, text="alpha", key="k")
    service.revise(id=a, key="k2")
    fact(service, text="beta", key="k")
    refused(service, ValidationError, lambda: service.revert(id=a, version=1))


def test_versions_grow_by_one_per_event(service: Service) -> None:
    mid = fact(service)
    other = fact(service, text="other")
    service.revise(id=mid, append="x")
    service.link(source=mid, target=other, type="relates_to")
    service.revise(id=mid, status="verified")
    versions = [v["version"] for v in service.inspect(id=mid)["versions"]]
    assert versions == [1, 2, 3, 4]


def test_one_operation_on_several_memories_shares_an_op_id(service: Service) -> None:
    a, b = fact(service, text="alpha"), fact(service, text="beta")
    service.revise(ids=[a, b], tags=["shared"])
    events = service.history(notebook="proj")["events"][-2:]
    assert {e["target_id"] for e in events} == {a, b}
    assert events[0]["op_id"] == events[1]["op_id"]


def test_tags_are_a_set_so_a_new_order_changes_nothing(service: Service) -> None:
    mid = fact(service, tags=["a", "b"])
    assert service.revise(id=mid, tags=["b", "a"])["results"][0]["unchanged"] is True


def test_a_missing_substring_is_reported_without_quoting_it(service: Service) -> None:
    a, b = fact(service, text="alpha"), fact(service, text="beta")
    answer = service.revise(ids=[a, b], remove="zz-private-zz")
    assert len(answer["unmatched"]) == 2 and "zz-private-zz" not in str(answer)
    error = refused(service, ValidationError, lambda: service.revise(id=a, remove="zz-private-zz"))
    assert "zz-private-zz" not in error.message


# -- a note or reason is read with the record it is stored with ---------------------------

_RNG = random.Random(9)
KEY = "ghp_" + "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(36))


def refused_as_split_key(service: Service, call: Any, field: str) -> None:
    """Refused on `field` for a secret, writing nothing and echoing neither half of it."""
    error = refused(service, ValidationError, call)
    assert (error.field, "secret" in error.message) == (field, True)
    body = json.dumps(error.to_dict())
    assert KEY[:20] not in body and KEY[20:] not in body


def test_a_retire_note_that_completes_a_key_in_the_text_is_refused(service: Service) -> None:
    mid = fact(service, text=f"The CI key starts {KEY[:20]}")
    for status in ("retracted", "superseded"):
        call = lambda: service.revise(id=mid, status=status, note=KEY[20:])  # noqa: B023, E731
        refused_as_split_key(service, call, "note")
    assert current(service, mid)["status"] == "active"
    service.revise(id=mid, status="retracted", note="the key was rotated")
    assert current(service, mid)["status_note"] == "the key was rotated"


def test_a_reason_that_completes_a_key_in_a_rule_is_refused(service: Service) -> None:
    mid = rule(service, text=f"CI signs releases with {KEY[:20]}")
    call = lambda: service.revise(id=mid, status="retracted", because=KEY[20:])  # noqa: E731
    refused_as_split_key(service, call, "because")
    assert current(service, mid)["status"] == "active"


def test_a_supersede_reason_that_completes_a_key_in_the_retired_text_is_refused(
    service: Service,
) -> None:
    old = fact(service, text=f"The CI key starts {KEY[:20]}")
    refused_as_split_key(
        service,
        lambda: service.remember(
            notebook="proj", kind="fact", text="The CI key is in the vault", supersedes=[old],
            because=KEY[20:],
        ),
        "because",
    )  # fmt: skip
    refused_as_split_key(
        service,
        lambda: service.revise(
            id=old, supersede=True, text="The CI key is in the vault", note=KEY[20:]
        ),
        "note",
    )
    assert current(service, old)["status"] == "active"


def test_retiring_a_memory_an_existing_one_replaces_records_its_successor(
    service: Service,
) -> None:
    """`superseded_by` with status superseded: the retired memory names its successor, as
    remember's `supersedes` does, a supersedes link joins them, and the event says so."""
    old = service.remember(notebook="ops", kind="fact", text="Deploys run on Jenkins.")["id"]
    new = service.remember(notebook="ops", kind="fact", text="Deploys run on GitHub Actions.")
    service.revise(id=old, status="superseded", superseded_by=new["id"], note="moved CI")
    retired = service.inspect(id=old)
    assert retired["memory"]["status"] == "superseded"
    assert retired["memory"]["superseded_by"] == new["id"]
    assert [(link["source"], link["type"]) for link in retired["links"]] == [
        (new["id"], "supersedes")
    ]
    event = service.history(id=old)["events"][-1]
    assert event["data"]["superseded_by"] == new["id"] and event["note"] == "moved CI"
    service.revise(id=old, status="active", note="back after all")
    assert service.inspect(id=old)["memory"]["superseded_by"] is None


@pytest.mark.parametrize(
    "changes",
    [
        {"status": "retracted"},  # only a superseded memory has a successor
        {},  # nor does a memory whose status is not changing
        {"status": "superseded", "supersede": True},
    ],
)
def test_superseded_by_needs_status_superseded(service: Service, changes: dict[str, Any]) -> None:
    old = service.remember(notebook="ops", kind="fact", text="Port 8080.")["id"]
    new = service.remember(notebook="ops", kind="fact", text="Port 9090.")["id"]
    with pytest.raises(ValidationError) as refused:
        service.revise(id=old, superseded_by=new, **changes)
    assert refused.value.field == "superseded_by"
    assert service.inspect(id=old)["memory"]["status"] == "active"


def test_superseded_by_must_name_another_active_memory(service: Service) -> None:
    old = service.remember(notebook="ops", kind="fact", text="Port 8080.")["id"]
    gone = service.remember(notebook="ops", kind="fact", text="Port 7070.")["id"]
    service.revise(id=gone, status="retracted")
    for successor, error in ((old, ValidationError), (gone, ValidationError),
                             ("m_nosuchmemory0000000", NotFound)):  # fmt: skip
        with pytest.raises(error) as refused:
            service.revise(id=old, status="superseded", superseded_by=successor)
        assert refused.value.field == "superseded_by"
    with pytest.raises(ValidationError):
        service.revise(ids=[old, gone], status="superseded", superseded_by=old)
    assert service.inspect(id=old)["memory"]["status"] == "active"


def test_a_revert_keeps_its_note(service: Service) -> None:
    memory = service.remember(notebook="ops", kind="fact", text="Timeout 30 s.")["id"]
    service.revise(id=memory, text="Timeout 60 s.")
    service.revert(id=memory, version=1, note="60 s was a typo")
    event = service.history(id=memory)["events"][-1]
    assert (event["op"], event["note"]) == ("revert", "60 s was a typo")
    assert service.inspect(id=memory)["memory"]["text"] == "Timeout 30 s."


@pytest.mark.parametrize("name", ["note", "because"])
@pytest.mark.parametrize("value", [5, ["moved"], {"why": "x"}, True])
def test_a_revert_refuses_a_note_or_reason_that_is_no_string(
    service: Service, name: str, value: Any
) -> None:
    """A caller of the service (not only MCP, which types it) gets a refusal naming the
    field, not an internal error."""
    memory = service.remember(notebook="ops", kind="fact", text="Timeout 30 s.")["id"]
    service.revise(id=memory, text="Timeout 60 s.")
    with pytest.raises(ValidationError) as refused:
        service.revert(id=memory, version=1, **{name: value})
    assert refused.value.field == name
    assert service.inspect(id=memory)["memory"]["text"] == "Timeout 60 s."


def test_a_reason_to_weaken_a_rule_is_kept_beside_a_note(service: Service) -> None:
    """Given with a `note`, the `because` a rule's weakening needs stays in history too."""
    rule = service.remember(notebook="ops", kind="rule", text="Never deploy on Fridays.",
                            falsifier="a Friday deploy that broke nothing",
                            severity="costly")["id"]  # fmt: skip
    service.revise(id=rule, clear=["severity"], note="house style now",
                   because="the on-call rota covers Fridays")  # fmt: skip
    event = service.history(id=rule)["events"][-1]
    assert event["note"] == "house style now"
    assert event["data"]["because"] == "the on-call rota covers Fridays"
    service.revert(id=rule, version=1, note="back to costly", because="not weakening")
    assert service.history(id=rule)["events"][-1]["data"]["because"] == "not weakening"
