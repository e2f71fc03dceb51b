"""Remember, recall, revert, forget, inspect, history, notebooks and links on a real file."""

from __future__ import annotations

import itertools
import random
import string
from typing import Any

import pytest

from palimpsest.domain.errors import Conflict, Forbidden, NotFound, ValidationError
from palimpsest.domain.ids import new_id
from palimpsest.domain.model import Event, Memory
from palimpsest.service import Service
from palimpsest.store import Store

from .test_revise_rules import current, event_count, fact, refused, rule


class Clock:
    """A settable clock: the service takes its time from here."""

    def __init__(self) -> None:
        self.ticks = itertools.count()
        self.day = "2026-01-01"

    def __call__(self) -> str:
        return f"{self.day}T00:00:00.{next(self.ticks):06d}Z"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def timed(store: Store, workspace: str, clock: Clock) -> Service:
    return Service(store, workspace=workspace, clock=clock)


def test_remember_returns_id_and_version(service: Service) -> None:
    answer = service.remember(notebook="proj", kind="decision", text="We use SQLite")
    assert answer["version"] == 1
    memory = current(service, answer["id"])
    assert (memory["kind"], memory["notebook"], memory["author"]) == (
        "decision",
        "proj",
        "user:local",
    )


def test_remember_of_an_exact_duplicate_writes_nothing(service: Service) -> None:
    first = fact(service)
    before = event_count(service)
    again = service.remember(notebook="proj", kind="fact", text="  the POOL size is 20")
    assert again["duplicate_of"] == first and again["written"] is False
    assert event_count(service) == before


def test_a_text_at_its_length_limit_is_stored_and_found_as_a_duplicate(service: Service) -> None:
    # Random words barely compress: a text this long once overflowed an index on PostgreSQL.
    rng = random.Random(7)
    words = (
        "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 9)))
        for _ in range(2000)
    )
    text = " ".join(words)[:8000].strip()
    first = service.remember(notebook="n", kind="note", text=text)
    again = service.remember(notebook="n", kind="note", text=text)
    assert again["duplicate_of"] == first["id"]
    assert service.inspect(id=first["id"])["memory"]["text"] == text


def test_a_rule_needs_a_falsifier(service: Service) -> None:
    error = refused(
        service, ValidationError, lambda: service.remember(notebook="p", kind="rule", text="x")
    )
    assert error.field == "falsifier"


@pytest.mark.parametrize(
    ("field", "value"),
    [("text", "x" * 8001), ("title", "t" * 201), ("kind", "opinion"), ("occurred_at", "soon")],
)
def test_bad_fields_are_refused_naming_the_field(service: Service, field: str, value: str) -> None:
    values = {"notebook": "proj", "kind": "fact", "text": "ok", field: value}
    error = refused(service, ValidationError, lambda: service.remember(**values))
    assert error.field == field


def test_recall_ranks_by_relevance(service: Service) -> None:
    fact(service, text="The deploy script lives in ops/deploy.sh")
    best = fact(service, text="Deploy with the deploy script; deploy on Fridays is forbidden")
    fact(service, text="Lunch is at noon")
    hits = service.recall(query="deploy script")["hits"]
    assert hits[0]["id"] == best
    assert len(hits) == 2


def test_recall_filters_by_notebook_kind_tags_and_status(service: Service) -> None:
    a = fact(service, text="cache the session", notebook="web", tags=["perf", "web"])
    service.remember(notebook="web", kind="decision", text="cache the pages", tags=["perf"])
    fact(service, text="cache the images", notebook="media", tags=["perf"])
    ids = lambda **kw: [h["id"] for h in service.recall(query="cache", **kw)["hits"]]  # noqa: E731
    assert len(ids(notebook="web")) == 2
    assert ids(notebook="web", kind="fact") == [a]
    assert ids(tags=["perf", "web"]) == [a]
    service.revise(id=a, status="retracted")
    assert a not in ids()
    assert a in ids(include_retired=True)
    assert ids(status="retracted") == [a]


def test_recall_finds_by_exact_id_and_key_first(service: Service) -> None:
    fact(service, text="pool pool pool")
    keyed = fact(service, text="unrelated words", key="pool")
    assert service.recall(query="pool")["hits"][0]["id"] == keyed
    assert service.recall(query=keyed)["hits"][0]["id"] == keyed


def test_expired_memories_leave_recall(timed: Service, clock: Clock) -> None:
    mid = fact(timed, text="the office is closed", expires_at="2026-02-01")
    assert [h["id"] for h in timed.recall(query="office")["hits"]] == [mid]
    clock.day = "2026-03-01"
    assert timed.recall(query="office")["hits"] == []
    assert timed.recall(query="office", include_retired=True)["hits"][0]["expired"] is True


def test_old_facts_are_flagged_possibly_stale_until_verified(timed: Service, clock: Clock) -> None:
    mid = fact(timed)
    assert "possibly_stale" not in timed.recall(query="pool")["hits"][0]  # a flag, when it holds
    clock.day = "2026-06-01"
    assert timed.recall(query="pool")["hits"][0]["possibly_stale"] is True
    timed.revise(id=mid, status="verified")
    assert "possibly_stale" not in timed.recall(query="pool")["hits"][0]


def test_recall_as_of_answers_from_the_past(timed: Service, clock: Clock) -> None:
    mid = fact(timed, text="The pool size is 20")
    clock.day = "2026-01-05"
    timed.revise(id=mid, replace_from="20", replace_to="30")
    clock.day = "2026-01-09"
    timed.revise(id=mid, status="retracted")
    past = timed.recall(query="pool", as_of="2026-01-02")["hits"]
    assert [(h["text"], h["status"]) for h in past] == [("The pool size is 20", "active")]
    assert timed.recall(query="pool", as_of="2026-01-06")["hits"][0]["version"] == 2
    assert timed.recall(query="pool", as_of="2026-01-10")["hits"] == []
    assert timed.recall(query="pool", as_of="2025-12-31")["hits"] == []


def test_recall_lists_the_rules_of_touched_notebooks(service: Service) -> None:
    workspace_rule = rule(service, notebook="policies")
    local = rule(service, text="Run tests before commit", scope="notebook", check=None)
    rule(service, notebook="elsewhere", text="Only elsewhere", scope="notebook", check=None)
    fact(service, text="tests take a minute")
    rules = {r["id"] for r in service.recall(query="tests minute")["rules"]}
    assert rules == {workspace_rule, local}


def test_revert_restores_a_version_as_a_new_event(service: Service) -> None:
    mid = fact(service)
    service.revise(id=mid, text="The pool size is 50", tags=["db"])
    answer = service.revert(id=mid, version=1)
    assert answer["results"][0]["version"] == 3
    after = current(service, mid)
    assert (after["text"], after["tags"]) == ("The pool size is 20", [])
    refused(service, NotFound, lambda: service.revert(id=mid, version=9))


def test_reverting_a_weakened_rule_back_needs_nothing_but_weakening_does(service: Service) -> None:
    mid = rule(service, severity="house_style")
    service.revise(id=mid, severity="irreversible")
    refused(service, ValidationError, lambda: service.revert(id=mid, version=1))
    service.revert(id=mid, version=1, because="too strict for this team")


def test_revert_a_notebook_to_a_past_time(timed: Service, clock: Clock) -> None:
    kept = fact(timed, text="alpha")
    clock.day = "2026-01-05"
    timed.revise(id=kept, text="alpha changed")
    later = fact(timed, text="beta")
    timed.revert(notebook="proj", as_of="2026-01-02")
    assert current(timed, kept)["text"] == "alpha"
    assert current(timed, later)["status"] == "retracted"


def test_forget_leaves_a_tombstone_everywhere(timed: Service, clock: Clock) -> None:
    mid = fact(timed, text="my token is hunter2")
    clock.day = "2026-01-05"
    timed.forget(id=mid, because="a password slipped in")
    assert timed.inspect(id=mid)["tombstone"]["reason"] == "a password slipped in"
    assert timed.recall(query="hunter2", include_retired=True)["hits"] == []
    assert timed.recall(query="hunter2", as_of="2026-01-02")["hits"] == []
    events = timed.history(id=mid)["events"]
    assert [e["op"] for e in events] == ["remember", "forget"]
    assert "hunter2" not in str(events)
    refused(timed, NotFound, lambda: timed.revise(id=mid, append="x"))
    refused(timed, NotFound, lambda: timed.revert(id=mid, version=1))


def test_forget_needs_a_reason(service: Service) -> None:
    mid = fact(service)
    refused(service, ValidationError, lambda: service.forget(id=mid))


def test_forget_one_version_keeps_the_others(service: Service) -> None:
    mid = fact(service, text="alpha")
    service.revise(id=mid, append="secret-ish")
    service.revise(id=mid, remove=" secret-ish")
    refused(service, ValidationError, lambda: service.forget(id=mid, version=3, because="x"))
    service.forget(id=mid, version=2, because="pasted by mistake")
    versions = service.inspect(id=mid)["versions"]
    assert [v.get("scrubbed", False) for v in versions] == [False, True, False]
    assert "secret-ish" not in str(service.history(id=mid))
    refused(service, ValidationError, lambda: service.revert(id=mid, version=2))


def test_inspect_a_notebook_lists_all_its_memories(service: Service) -> None:
    a, b = fact(service, text="alpha"), fact(service, text="beta")
    service.revise(id=b, status="superseded")
    listed = service.inspect(notebook="proj")["memories"]
    assert {(m["id"], m["status"]) for m in listed} == {(a, "active"), (b, "superseded")}


def test_history_filters_and_diffs(service: Service) -> None:
    mid = fact(service)
    service.revise(id=mid, replace_from="20", replace_to="25")
    other = Service(service.store, actor="agent:ci", workspace=service.workspace)
    other.revise(id=mid, tags=["db"], override_reason="tagging", override_confirm=True)
    assert [e["version"] for e in service.history(actor="agent:ci")["events"]] == [3]
    events = service.history(id=mid)["events"]
    assert events[1]["changes"]["text"] == {
        "old": "The pool size is 20",
        "new": "The pool size is 25",
    }
    diff = service.history(id=mid, diff_from=1, diff_to=2)
    assert "-The pool size is 20" in diff["text_diff"]
    assert "+The pool size is 25" in diff["text_diff"]


def test_notebook_rename_keeps_the_id(service: Service) -> None:
    created = service.create_notebook(name="proj", summary="the project", domain="web")
    mid = fact(service)
    service.edit_notebook(notebook="proj", name="project-x")
    listed = service.inspect(notebook=created["notebook"]["id"])
    assert listed["notebook"]["name"] == "project-x"
    assert [m["id"] for m in listed["memories"]] == [mid]
    refused(service, Conflict, lambda: service.create_notebook(name="project-x"))


def test_merge_domains_moves_every_notebook(service: Service) -> None:
    service.create_notebook(name="a", domain="webapps")
    service.create_notebook(name="b", domain="webapps")
    service.create_notebook(name="c", domain="infra")
    refused(
        service,
        ValidationError,
        lambda: service.merge_domains(source="webapps", target="web", because=""),
    )
    answer = service.merge_domains(source="webapps", target="web", because="one name")
    assert sorted(answer["moved"]) == ["a", "b"]
    domains = {nb["name"]: nb["domain"] for nb in service.notebooks()["notebooks"]}
    assert domains == {"a": "web", "b": "web", "c": "infra"}


def test_links_join_memories_and_raise_their_versions(service: Service) -> None:
    a, b = fact(service, text="alpha"), fact(service, text="beta")
    service.link(source=a, target=b, type="depends_on")
    assert current(service, a)["version"] == 2 and current(service, b)["version"] == 2
    assert service.inspect(id=b)["links"][0]["type"] == "depends_on"
    service.link(source=a, target=b, type="depends_on", remove=True)
    assert service.inspect(id=b)["links"] == []
    refused(service, ValidationError, lambda: service.link(source=a, target=b, type="likes"))


def test_every_write_is_one_transaction_with_its_event(service: Service) -> None:
    """A refused batch leaves neither state nor events behind, even after partial work."""
    a = fact(service, text="alpha", key="k1")
    b = fact(service, text="beta")
    refused(service, ValidationError, lambda: service.revise(items=[
        {"id": a, "text": "alpha two"},
        {"id": b, "key": "k1"},
    ]))  # fmt: skip
    assert current(service, a)["text"] == "alpha"


def test_forgetting_a_forgotten_version_again_writes_nothing(service: Service) -> None:
    mid = fact(service, text="alpha")
    service.revise(id=mid, append="beta")
    service.forget(id=mid, version=1, because="mistake")
    before = event_count(service)
    again = service.forget(id=mid, version=1, because="mistake")
    assert again["results"][0]["unchanged"] is True
    assert event_count(service) == before


def test_a_huge_id_is_refused_without_being_echoed(service: Service) -> None:
    huge = "m_" + "x" * 100_000
    for call in (
        lambda: service.inspect(id=huge),
        lambda: service.revise(id=huge, append="x"),
        lambda: service.revise(ids=[huge], append="x"),
        lambda: service.inspect(notebook=huge),
        lambda: service.link(source=huge, target="m_b", type="relates_to"),
    ):
        error = refused(service, ValidationError, call)
        assert len(error.message) < 500


def test_a_conflict_in_a_batch_names_its_item(service: Service) -> None:
    a, b = fact(service, text="alpha"), fact(service, text="beta")
    error = refused(
        service,
        Conflict,
        lambda: service.revise(
            items=[{"id": a, "append": "x"}, {"id": b, "append": "y", "expected_version": 7}]
        ),
    )
    assert error.item == 1


def test_recall_lists_a_notebooks_rules_however_many_others_exist(service: Service) -> None:
    mine = rule(service, notebook="mine", text="Rule of mine", scope="notebook", check=None)
    for n in range(205):
        rule(service, notebook=f"other{n % 3}", text=f"Other rule {n}", scope="notebook",
             check=None)  # fmt: skip
    fact(service, notebook="mine", text="widgets are blue")
    rules = service.recall(query="widgets", notebook="mine")["rules"]
    assert [r["id"] for r in rules] == [mine]


def test_an_exact_id_or_key_match_still_honours_the_filters(service: Service) -> None:
    mid = fact(service, notebook="nb", key="pool")
    assert service.recall(query=mid)["hits"][0]["id"] == mid
    service.create_notebook(name="other")
    for filters in ({"notebook": "other"}, {"kind": "rule"}, {"status": "retracted"}):
        assert service.recall(query=mid, **filters)["hits"] == []
        assert service.recall(query="pool", **filters)["hits"] == []


def test_remember_of_a_duplicate_never_drops_what_was_asked(service: Service) -> None:
    old = fact(service, text="old value is 1")
    fact(service, text="new value is 2")
    refused(service, ValidationError, lambda: service.remember(
        notebook="proj", kind="fact", text="new value is 2", supersedes=[old]))  # fmt: skip
    assert current(service, old)["status"] == "active"
    again = service.remember(notebook="proj", kind="fact", text="new value is 2", key="v")
    assert again["duplicate_of"] and "key" in again["warnings"][0]


def test_revert_a_notebook_across_a_supersede_of_a_keyed_memory(
    timed: Service, clock: Clock
) -> None:
    old = fact(timed, text="pool size is 10", key="pool")
    clock.day = "2026-01-05"
    new = timed.revise(id=old, supersede=True, text="pool size is 20")["results"][0]["id"]
    timed.revert(notebook="proj", as_of="2026-01-02", because="undo the change")
    assert (current(timed, old)["status"], current(timed, old)["key"]) == ("active", "pool")
    assert current(timed, new)["status"] == "retracted"


def test_revert_a_notebook_leaves_a_memory_whose_past_was_forgotten(
    timed: Service, clock: Clock
) -> None:
    mid = fact(timed, text="oops pasted")
    clock.day = "2026-01-05"
    timed.revise(id=mid, text="clean text now")
    timed.forget(id=mid, version=1, because="pasted by mistake")
    answer = timed.revert(notebook="proj", as_of="2026-01-02")
    assert answer["skipped"][0]["id"] == mid
    assert (current(timed, mid)["status"], current(timed, mid)["text"]) == (
        "active",
        "clean text now",
    )


@pytest.mark.parametrize(
    "fields",
    [
        {"kind": "rule", "falsifier": "f", "bindings": {"moments": 5}},
        {"kind": "rule", "falsifier": "f", "bindings": {"always": "false"}},
        {"kind": "fact", "occurred_at": "9999-12-31T23:59:59-01:00"},
    ],
)
def test_malformed_values_are_validation_errors(service: Service, fields: dict[str, Any]) -> None:
    refused(service, ValidationError, lambda: service.remember(notebook="p", text="x", **fields))


def test_a_notebook_name_is_trimmed_before_it_is_looked_up(service: Service) -> None:
    first = service.remember(notebook="proj", kind="fact", text="first")
    second = service.remember(notebook="proj ", kind="fact", text="second")
    assert first["notebook"] == second["notebook"] == "proj"


def test_someone_elses_memory_changes_only_through_an_override_or_a_supersede(
    service: Service,
) -> None:
    mid = fact(service, key="pool")
    bob = Service(service.store, actor="user:bob", workspace=service.workspace)
    refused(service, Forbidden, lambda: bob.revise(id=mid, tags=["db"]))
    refused(service, Forbidden, lambda: bob.revise(id=mid, tags=["db"], override_reason="fix"))
    bob.revise(id=mid, tags=["db"], override_reason="tag it", override_confirm=True)
    assert current(service, mid)["tags"] == ["db"]
    error = refused(service, Forbidden, lambda: bob.revise(
        id=mid, text="pool is 30", override_reason="wrong", override_confirm=True))  # fmt: skip
    assert error.field == "text"
    successor = bob.revise(id=mid, supersede=True, text="The pool size is 30")["results"][0]
    assert current(service, successor["id"])["owner"] == "user:bob"
    assert current(service, mid)["status"] == "superseded"


def test_overrides_act_on_one_memory_and_need_the_right(service: Service) -> None:
    a, b = fact(service, text="alpha"), fact(service, text="beta")
    bob = Service(service.store, actor="user:bob", workspace=service.workspace)
    answer = bob.revise(ids=[a, b], tags=["x"])
    assert answer["results"] == [] and len(answer["unmatched"]) == 2
    refused(service, Forbidden, lambda: bob.revise(items=[{"id": a, "tags": ["x"]}]))
    refused(service, ValidationError, lambda: bob.revise(
        ids=[a, b], tags=["x"], override_reason="all of them"))  # fmt: skip
    agent = Service(service.store, actor="agent:ci", workspace=service.workspace,
                    may_override=False)  # fmt: skip
    refused(service, Forbidden, lambda: agent.revise(
        id=a, tags=["x"], override_reason="fix", override_confirm=True))  # fmt: skip


def test_an_ownerless_memory_can_be_claimed(service: Service) -> None:
    mid = _ownerless(service)
    bob = Service(service.store, actor="user:bob", workspace=service.workspace)
    bob.revise(id=mid, claim=True)
    assert current(service, mid)["owner"] == "user:bob"
    refused(service, ValidationError, lambda: service.revise(id=mid, claim=True))


def _ownerless(service: Service) -> str:
    """A memory from before ownership was recorded (filed straight to the store)."""
    with service.store.write(service.workspace) as tx:
        notebook = tx.list_notebooks()[0] if tx.list_notebooks() else None
        memory = Memory(id=new_id("m"), workspace=service.workspace,
                        notebook_id=notebook.id if notebook else "nb_none", kind="fact",
                        text="an old fact", version=1, recorded_at="2026-01-01T00:00:00.000000Z",
                        author="user:old", owner=None)  # fmt: skip
        event = Event(0, new_id("op"), memory.recorded_at, "user:old", "import", "memory",
                      memory.id, memory.notebook_id, 1, ("created",))  # fmt: skip
        tx.put_memory(memory, tx.append_event(event))
    return memory.id


def test_a_revert_made_on_a_version_that_moved_on_is_a_conflict_and_changes_nothing(
    service: Service,
) -> None:
    made = service.remember(notebook="ops", kind="fact", text="The pool holds 40")
    service.revise(id=made["id"], text="The pool holds 50")
    service.revise(id=made["id"], text="The pool holds 70")  # written since the reader read 2
    events = event_count(service)
    with pytest.raises(Conflict) as refused_:
        service.revert(id=made["id"], version=1, expected_version=2)
    assert refused_.value.field == "expected_version" and event_count(service) == events
    for wrong, field in (({"expected_version": 0}, "expected_version"),
                         ({"expected_version": "3"}, "expected_version")):  # fmt: skip
        with pytest.raises(ValidationError) as bad:
            service.revert(id=made["id"], version=1, **wrong)  # type: ignore[arg-type]
        assert bad.value.field == field
    reverted = service.revert(id=made["id"], version=1, expected_version=3)
    assert reverted["results"][0]["version"] == 4
    assert current(service, made["id"])["text"] == "The pool holds 40"
