"""What a newcomer stumbled on in the service (issue 9), on both stores.

Messages name each API field in backticks on its own, so the CLI can show its flag; keys
inside a check or a batch item are not backticked bare (they are no flags). Fixed values
are read regardless of case by the service itself, so every adapter agrees.
"""

from __future__ import annotations

import re

import pytest

from palimpsest.domain.errors import Conflict, Forbidden, NotFound, PalimpsestError, ValidationError
from palimpsest.domain.ids import new_id
from palimpsest.domain.model import Event
from palimpsest.service import Service

from .test_revise_rules import current, event_count, fact, refused, rule

BARE_NAME = re.compile(r"`([a-z_]+)`")


def backticked(error: PalimpsestError) -> set[str]:
    """The names a message backticks bare: those the CLI turns into its flags."""
    return set(BARE_NAME.findall(error.message))


# -- 1. messages the CLI can translate -------------------------------------------------------


def test_revising_anothers_memory_names_each_way_out_as_a_field(service: Service) -> None:
    mid = fact(service)
    other = Service(service.store, workspace=service.workspace, actor="agent:other")
    error = refused(other, Forbidden, lambda: other.revise(id=mid, tags=["x"]))
    assert {"override_reason", "override_confirm", "supersede"} <= backticked(error)
    assert "override_reason (" not in error.message and "supersede: true" not in error.message
    error = refused(
        other, Forbidden, lambda: other.revise(id=mid, tags=["x"], override_reason="typo")
    )
    assert "override_confirm" in backticked(error)
    error = refused(
        other,
        Forbidden,
        lambda: other.revise(id=mid, text="New", override_reason="typo", override_confirm=True),
    )
    assert "supersede" in backticked(error)


def test_a_stale_version_names_expected_version_as_a_field(service: Service) -> None:
    mid = fact(service)
    service.revise(id=mid, tags=["a"])
    error = refused(
        service, Conflict, lambda: service.revise(id=mid, expected_version=1, tags=["b"])
    )
    assert "`expected_version` 2" in error.message


def test_an_empty_value_says_what_to_do_instead(service: Service) -> None:
    on_remember = refused(
        service,
        ValidationError,
        lambda: service.remember(notebook="web", kind="fact", text="A", title=""),
    )
    assert "clear" not in on_remember.message  # remember has no `clear`
    assert on_remember.field == "title" and "leave it out" in on_remember.message
    mid = fact(service)
    on_revise = refused(service, ValidationError, lambda: service.revise(id=mid, title=" "))
    assert "`clear`" in on_revise.message
    text = refused(service, ValidationError, lambda: service.revise(id=mid, text=""))
    assert "clear" not in text.message  # a text cannot be cleared
    assert {"status"} <= backticked(text) and "forget" in text.message


def test_keys_inside_a_check_are_not_named_as_flags(service: Service) -> None:
    error = refused(
        service,
        ValidationError,
        lambda: rule(service, check={"kind": "sometimes", "path": "a"}),
    )
    assert backticked(error) == {"check"}
    assert "`check.kind`" in error.message
    error = refused(service, ValidationError, lambda: rule(service, check={"kind": "contains"}))
    assert backticked(error) == set() and "`check.path`" in error.message


def test_keys_inside_a_batch_item_are_not_named_as_flags(service: Service) -> None:
    mid = fact(service)
    error = refused(
        service,
        ValidationError,
        lambda: service.revise(items=[{"id": mid, "tags": ["a"], "supersede": True}]),
    )
    assert error.item == 0 and error.field == "supersede"
    assert error.message.startswith("items[0]: ") and backticked(error) == set()
    assert '"supersede"' in error.message


# -- 2. the same memory named twice ----------------------------------------------------------


def test_the_same_id_twice_in_ids_is_refused(service: Service) -> None:
    mid = fact(service)
    error = refused(service, ValidationError, lambda: service.revise(ids=[mid, mid], tags=["a"]))
    assert error.field == "ids"
    assert current(service, mid)["version"] == 1


# -- 3. fixed values read regardless of case, `-` for `_` ------------------------------------


def test_fixed_values_are_read_regardless_of_case_by_the_service(service: Service) -> None:
    rid = rule(
        service,
        kind="Rule",
        severity="COSTLY",
        scope="Workspace",
        check={"kind": "Path_Exists", "path": "setup.cfg"},
        bindings={"moments": ["Before-Commit"]},
    )
    stored = current(service, rid)
    assert (stored["kind"], stored["severity"], stored["scope"]) == ("rule", "costly", "workspace")
    assert stored["check"]["kind"] == "path_exists"
    assert stored["bindings"]["moments"] == ["before_commit"]
    mid = fact(service)
    service.revise(id=mid, status="Retracted", note="wrong")
    assert current(service, mid)["status"] == "retracted"
    assert service.recall(kind="FACT", status="Retracted")["hits"][0]["id"] == mid
    link = service.link(source=mid, target=rid, type="Relates-To")["link"]
    assert link["type"] == "relates_to"
    service.revise(id=mid, expires_at="2099-01-01")
    service.revise(id=mid, clear=["Expires-At"])
    assert current(service, mid)["expires_at"] is None


# -- 4. dry runs that show what would change -------------------------------------------------


def test_forgetting_one_version_in_a_dry_run_names_what_it_would_erase(service: Service) -> None:
    mid = fact(service, text="The token is in the vault", why="ops asked")
    service.revise(id=mid, text="The token is elsewhere")
    before = event_count(service)
    answer = service.forget(id=mid, version=1, because="a slip", dry_run=True)
    erase = answer["results"][0]["would_erase"]
    assert erase == {"versions": 1, "fields": ["text", "why"]}
    assert "vault" not in str(answer)
    assert event_count(service) == before


def test_forgetting_a_notebook_field_in_a_dry_run_counts_the_values(service: Service) -> None:
    service.create_notebook(name="web", summary="For ACME Corp")
    service.edit_notebook(notebook="web", summary="For a customer")
    before = event_count(service)
    answer = service.forget(notebook="web", field="summary", because="a name", dry_run=True)
    assert answer["results"][0]["would_erase"] == {"field": "summary", "values": 2}
    assert "ACME" not in str(answer)
    assert event_count(service) == before


def test_a_move_dry_run_names_the_notebook_it_would_create(service: Service) -> None:
    mid = fact(service, notebook="web")
    answer = service.revise(id=mid, move_to="ops", dry_run=True)
    diff = answer["results"][0]["diff"]
    assert "notebook_id" not in diff
    assert diff["notebook"] == {"old": "web", "new": "ops", "created": True}
    assert [nb["name"] for nb in service.notebooks()["notebooks"]] == ["web"]
    service.create_notebook(name="ops")
    diff = service.revise(id=mid, move_to="ops", dry_run=True)["results"][0]["diff"]
    assert diff["notebook"] == {"old": "web", "new": "ops"}


# -- 5. a query with no word -----------------------------------------------------------------


@pytest.mark.parametrize("query", ["?", "🚀", " -- "])
def test_a_query_with_no_word_is_refused(service: Service, query: str) -> None:
    fact(service)
    with pytest.raises(ValidationError) as caught:
        service.recall(query=query)
    assert caught.value.field == "query"
    assert service.recall(query="")["hits"]  # an empty query still lists


# -- 6. a single string for a list; the field a missing id came from -------------------------


def test_a_single_string_is_a_list_of_one(service: Service) -> None:
    old = fact(service)
    mid = service.remember(
        notebook="proj", kind="fact", text="Pool is 30", tags="infra", supersedes=old
    )["id"]
    assert current(service, mid)["tags"] == ["infra"]
    assert current(service, old)["status"] == "superseded"


def test_superseding_a_missing_memory_names_supersedes(service: Service) -> None:
    error = refused(
        service,
        NotFound,
        lambda: service.remember(notebook="proj", kind="fact", text="A", supersedes=["m_nope"]),
    )
    assert error.field == "supersedes"


# -- 7. recall hits carry why ----------------------------------------------------------------


def test_a_recall_hit_carries_its_why(service: Service) -> None:
    fact(service, text="We deploy with make", why="it runs the migrations")
    (hit,) = service.recall(query="deploy")["hits"]
    assert hit["why"] == "it runs the migrations"


# -- 9. a rule's fields belong to rules and orientations -------------------------------------


@pytest.mark.parametrize(
    "field, value",
    [
        ("severity", "costly"),
        ("falsifier", "a counterexample"),
        # Any kind may carry a file check as evidence (issue 11); a command pattern is a rule's.
        ("check", {"kind": "forbidden", "literals": ["git push --force"]}),
        ("bindings", {"always": True}),
        ("scope", "workspace"),
    ],
)
def test_a_rules_field_on_another_kind_is_refused(
    service: Service, field: str, value: object
) -> None:
    error = refused(
        service,
        ValidationError,
        lambda: service.remember(notebook="proj", kind="fact", text="A", **{field: value}),
    )
    assert error.field == field and "rule or orientation" in error.message
    mid = fact(service)
    error = refused(service, ValidationError, lambda: service.revise(id=mid, **{field: value}))
    assert error.field == field
    again = {"notebook": "proj", "kind": "fact", "text": "The pool size is 20", field: value}
    error = refused(service, ValidationError, lambda: service.remember(**again))  # a duplicate
    assert error.field == field


def test_an_orientation_takes_a_rules_fields(service: Service) -> None:
    oid = rule(service, kind="orientation", text="Prefer small commits")
    assert current(service, oid)["severity"] == "costly"


def test_a_rule_made_another_kind_clears_its_rule_fields_or_is_refused(service: Service) -> None:
    rid = rule(service)
    before = event_count(service)
    with pytest.raises(ValidationError) as refusal:
        service.revise(id=rid, kind="fact", because="it is only a habit")
    assert refusal.value.field == "kind" and event_count(service) == before
    every = ["severity", "falsifier", "check", "bindings", "scope"]
    service.revise(id=rid, kind="fact", clear=every, because="it is only a habit")
    demoted = current(service, rid)
    assert (demoted["kind"], demoted["severity"], demoted["falsifier"]) == ("fact", None, None)
    assert service.history(id=rid, diff_from=1, diff_to=2)["changes"]["severity"]["old"]


def _demoted_before_this_release(service: Service, rid: str) -> None:
    """A fact still holding a rule's fields, as an earlier release could leave one."""
    with service.store.write(service.workspace) as tx:
        memory = tx.get_memory(rid)
        assert memory is not None
        event = Event(0, new_id("op"), memory.recorded_at, "user:old", "revise", "memory",
                      rid, memory.notebook_id, memory.version + 1, ("kind",))  # fmt: skip
        tx.put_memory(memory.replace(kind="fact", version=memory.version + 1),
                      tx.append_event(event))  # fmt: skip


def test_a_memory_already_holding_a_rules_field_stays_revisable(service: Service) -> None:
    rid = rule(service)
    _demoted_before_this_release(service, rid)
    assert current(service, rid)["severity"] == "costly"
    service.revise(id=rid, tags=["git"])
    assert current(service, rid)["tags"] == ["git"]
    assert service.recall(query="push")["hits"][0]["id"] == rid


def test_forget_refuses_the_same_id_twice_as_revise_does(service: Service) -> None:
    mid = fact(service, text="Backups run nightly")
    before = event_count(service)
    with pytest.raises(ValidationError) as refusal:
        service.forget(ids=[mid, mid], because="personal data")
    assert refusal.value.field == "ids" and event_count(service) == before
    assert current(service, mid)["text"] == "Backups run nightly"
