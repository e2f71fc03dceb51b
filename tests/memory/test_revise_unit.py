"""The decisions about one memory, tested directly: plain functions over Memory, no store.

Each test states what a user relies on when they retire, supersede, revise or revert a
memory; the service only reads, calls these, and writes what they return.
"""

from __future__ import annotations

import random
import string
from typing import Any

import pytest

from palimpsest.domain.errors import Conflict, Forbidden, NotFound, ValidationError
from palimpsest.domain.model import Memory, Notebook
from palimpsest.revise import (
    Step,
    Unmatched,
    check_expected_version,
    check_move,
    duplicate_of,
    edit,
    filed,
    gives_up_key,
    not_applied,
    notebook_plan,
    op_name,
    parse_changes,
    parse_request,
    past_state,
    qualifies,
    record_fields,
    retirement,
    reverted,
    revision,
    screen_notes,
    settle,
    superseding_content,
    supersession,
    text_targets,
    version_target,
)
from palimpsest.screening import gate

T0 = "2026-01-01T00:00:00.000000Z"
NOW = "2026-06-01T12:00:00.000000Z"
ANA = "user:ana"
_RNG = random.Random(11)
KEY = "ghp_" + "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(36))


def memory(**fields: Any) -> Memory:
    values: dict[str, Any] = {
        "id": "m_pool",
        "workspace": "default",
        "notebook_id": "nb_proj",
        "kind": "fact",
        "text": "The pool size is 20",
        "version": 3,
        "recorded_at": T0,
        "author": ANA,
        "owner": ANA,
    }
    return Memory(**(values | fields))


def a_rule(**fields: Any) -> Memory:
    return memory(
        **{
            "id": "m_rule",
            "kind": "rule",
            "text": "Never push to main directly",
            "falsifier": "a direct push that caused no harm",
            "severity": "costly",
        }
        | fields
    )


def changed(old: Memory, raw: dict[str, Any], actor: str = ANA) -> Memory:
    return edit(old, parse_changes(raw), now=NOW, actor=actor)


def step_for(old: Memory, raw: dict[str, Any], *, may_override: bool = False) -> Step | None:
    """The step ANA's revise `raw` makes of `old`: edit, then decide."""
    changes = parse_changes(raw)
    new = edit(old, changes, now=NOW, actor=ANA)
    return revision(old, new, changes, actor=ANA, may_override=may_override)


# -- retire ----------------------------------------------------------------------------


def test_retiring_by_status_keeps_what_it_says_and_records_why() -> None:
    old = memory()
    new = changed(old, {"status": "retracted", "note": "never true"})
    assert (new.status, new.status_note, new.superseded_by) == ("retracted", "never true", None)
    assert new.content() == old.content()
    step = step_for(old, {"status": "retracted", "note": "never true"})
    assert step is not None
    assert (step.op, step.note, step.new.version) == ("retire", "never true", 4)


def test_only_an_active_memory_retires_and_only_a_retired_one_comes_back() -> None:
    retired = memory(status="superseded", superseded_by="m_new", status_note="replaced")
    with pytest.raises(Unmatched) as caught:
        changed(retired, {"status": "retracted"})
    assert caught.value.status_related
    with pytest.raises(Unmatched):
        changed(memory(), {"status": "active"})
    back = changed(retired, {"status": "active", "note": "still true"})
    assert (back.status, back.superseded_by, back.status_note) == ("active", None, "still true")


def test_a_supersede_retires_the_original_intact_naming_its_successor() -> None:
    old = memory(tags=("db",))
    step = retirement(old, "m_new", note="load tests", because=None)
    assert (step.op, step.old, step.note) == ("supersede", old, "load tests")
    assert (step.new.status, step.new.superseded_by, step.new.status_note) == (
        "superseded",
        "m_new",
        "load tests",
    )
    assert step.new.content() == old.content() and step.new.version == old.version + 1
    assert step.data == {"superseded_by": "m_new"}


def test_a_retired_memory_cannot_be_superseded_and_the_refusal_says_what_to_do() -> None:
    gone = memory(status="superseded", superseded_by="m_next")
    with pytest.raises(ValidationError) as caught:
        retirement(gone, "m_new", note=None, because=None)
    assert caught.value.field == "supersedes" and "m_next" in caught.value.message
    with pytest.raises(ValidationError) as caught:
        retirement(memory(status="retracted"), "m_new", note=None, because=None)
    assert "status active" in caught.value.message
    with pytest.raises(ValidationError, match="itself"):
        retirement(memory(), "m_pool", note=None, because=None)


def test_retiring_a_rule_needs_a_reason_which_its_event_keeps() -> None:
    with pytest.raises(ValidationError) as caught:
        retirement(a_rule(), "m_new", note="old", because=None)
    assert caught.value.field == "because" and "retires it" in caught.value.message
    step = retirement(a_rule(), "m_new", note="old", because="CI enforces it now")
    assert (step.note, step.data["because"]) == ("old", "CI enforces it now")  # both kept
    alone = retirement(a_rule(), "m_new", note=None, because="CI enforces it now")
    assert alone.note == "CI enforces it now" and "because" not in alone.data


def test_a_note_that_completes_a_key_in_the_record_is_refused() -> None:
    old = memory(text=f"The CI key starts {KEY[:20]}", tags=("ci",))
    with pytest.raises(ValidationError) as caught:
        retirement(old, "m_new", note=KEY[20:], because=None)
    assert caught.value.field == "note" and KEY[20:] not in caught.value.message
    with pytest.raises(ValidationError) as caught:
        screen_notes(a_rule(why=f"signed with {KEY[:20]}"), because=KEY[20:])
    assert caught.value.field == "because"
    retirement(old, "m_new", note="the key was rotated", because=None)


def test_a_record_flagged_before_may_still_retire_with_a_clean_note() -> None:
    flagged = memory(title="staging DB password", text="Xq7pLm201Za9")  # filed before the gate
    assert gate.record_flagged(record_fields(flagged))
    step = retirement(flagged, "m_new", note="it held a password", because=None)
    assert step.new.status == "superseded"


# -- qualify and the operation's name ----------------------------------------------------


@pytest.mark.parametrize(
    ("status", "current", "expected"),
    [
        ("retracted", "active", True),
        ("superseded", "retracted", False),
        ("verified", "active", True),
        ("verified", "superseded", False),
        ("active", "retracted", True),
        ("active", "active", False),
        (None, "superseded", True),
    ],
)
def test_which_memory_can_take_a_status(status: str | None, current: str, expected: bool) -> None:
    assert qualifies(memory(status=current), status) is expected


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ({"status": "retracted"}, "retire"),
        ({"status": "superseded", "move_to": "other"}, "retire"),
        ({"status": "active"}, "reactivate"),
        ({"status": "verified"}, "verify"),
        ({"move_to": "other", "tags": ["db"]}, "move"),
        ({"claim": True}, "claim"),
        ({"text": "The pool size is 30"}, "revise"),
        ({"append": "on staging"}, "revise"),
    ],
)
def test_each_kind_of_change_is_named_in_history(raw: dict[str, Any], name: str) -> None:
    assert op_name(parse_changes(raw)) == name


def test_verifying_stamps_the_time_and_changes_nothing_else() -> None:
    old = memory()
    new = changed(old, {"status": "verified"})
    assert new == old.replace(verified_at=NOW)
    step = revision(old, new, parse_changes({"status": "verified"}), actor=ANA, may_override=False)
    assert step is not None and step.op == "verify"


# -- revision: ownership, reasons, unchanged, versions ---------------------------------------


def test_revising_to_what_is_there_is_no_step() -> None:
    old = memory(tags=("a", "b"))
    assert step_for(old, {"tags": ["b", "a"]}) is None


def test_a_stale_expected_version_is_a_conflict_naming_the_current_one() -> None:
    check_expected_version(memory(), 3)
    check_expected_version(memory(), None)
    with pytest.raises(Conflict) as caught:
        check_expected_version(memory(), 2)
    assert (
        caught.value.field == "expected_version" and "`expected_version` 3" in caught.value.message
    )


def test_someone_elses_memory_changes_in_place_only_by_override_and_never_in_substance() -> None:
    old = memory(owner="user:bo")
    with pytest.raises(Forbidden):
        step_for(old, {"tags": ["db"]}, may_override=True)
    override = {"override_reason": "wrong tag", "override_confirm": True}
    step = step_for(old, {"tags": ["db"], **override}, may_override=True)
    assert step is not None and step.data == {"override_reason": "wrong tag"}
    with pytest.raises(Forbidden) as caught:
        step_for(old, {"text": "The pool size is 30", **override}, may_override=True)
    assert caught.value.field == "text"
    with pytest.raises(Forbidden):
        step_for(old, {"tags": ["db"], **override}, may_override=False)


def test_lowering_a_rules_severity_needs_a_reason() -> None:
    with pytest.raises(ValidationError) as caught:
        step_for(a_rule(), {"severity": "house_style"})
    assert caught.value.field == "because"
    step = step_for(a_rule(), {"severity": "house_style", "because": "a lint catches it"})
    assert step is not None and (step.op, step.note) == ("revise", "a lint catches it")


def test_a_move_into_another_domain_needs_a_reason() -> None:
    infra = Notebook("nb_ops", "default", "ops", T0, domain="infra")
    check_move(infra, "infra", None)
    with pytest.raises(ValidationError) as caught:
        check_move(infra, "web", None)
    assert caught.value.field == "because"
    check_move(infra, "web", "it is about the servers")


# -- supersede and remember ------------------------------------------------------------------


def test_a_supersede_files_the_edited_content_as_a_new_memory_of_the_actor() -> None:
    old = memory(owner="user:bo", key="pool", tags=("db",))
    raw = {"supersede": True, "replace_from": "20", "replace_to": "30", "note": "load tests"}
    changes = parse_changes(raw)
    content = superseding_content(old, changes, now=NOW, actor=ANA)
    where = {"id": "m_new", "notebook_id": "nb_other", "now": NOW, "actor": ANA}
    retire, file = supersession(old, content, changes, **where)
    successor = file.new
    assert (successor.id, successor.version, successor.owner, successor.author) == (
        "m_new",
        1,
        ANA,
        ANA,
    )
    assert successor.text == "The pool size is 30"
    assert (successor.key, successor.tags) == ("pool", ("db",))
    assert (successor.notebook_id, successor.recorded_at) == ("nb_other", NOW)
    assert (file.op, file.old, file.data) == ("remember", None, {"supersedes": old.id})
    assert retire.new.text == old.text and retire.new.superseded_by == "m_new"


def test_filing_a_rule_without_a_falsifier_is_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        where = {"workspace": "default", "notebook_id": "nb_proj", "now": NOW, "actor": ANA}
        filed({"kind": "rule", "text": "Never push"}, id="m_1", **where)
    assert caught.value.field == "falsifier"


def test_filing_what_is_already_there_names_what_was_not_applied() -> None:
    same = memory(title="Pool")
    matches = [memory(id="m_old", status="retracted"), memory(id="m_note", kind="note"), same]
    assert duplicate_of(matches, "fact") == same
    assert duplicate_of(matches[:2], "fact") is None
    values = {"kind": "fact", "text": same.text, "title": "Pool size", "why": None}
    assert not_applied(same, values, []) == ["title"]
    with pytest.raises(ValidationError) as caught:
        not_applied(same, values, ["m_other"])
    assert caught.value.field == "supersedes"


# -- revert ------------------------------------------------------------------------------


def test_a_revert_restores_what_a_version_said_not_where_it_stands() -> None:
    v1 = memory(version=1, text="The pool size is 10", tags=("db",), key="pool")
    current = memory(status="retracted", status_note="wrong", verified_at=NOW)
    target = version_target(current, {1: v1, 2: None, 3: current}, 1)
    assert (target.text, target.tags) == ("The pool size is 10", ("db",))
    assert target.key == "pool"  # a key given up comes back (the service checks its holder)
    assert (target.status, target.status_note, target.verified_at) == ("retracted", "wrong", NOW)
    step = reverted(current, target, None, {"to_version": 1})
    assert step is not None
    assert (step.op, step.new.version, step.data) == ("revert", 4, {"to_version": 1})


def test_a_revert_to_a_missing_or_forgotten_version_is_refused() -> None:
    current = memory()
    with pytest.raises(NotFound) as missing:
        version_target(current, {1: None, 3: current}, 7)
    assert missing.value.field == "version"
    with pytest.raises(ValidationError, match="forgotten"):
        version_target(current, {1: None, 3: current}, 1)


def test_a_revert_never_brings_back_a_secret_and_says_to_forget_that_version() -> None:
    current = memory()
    with pytest.raises(ValidationError) as caught:
        reverted(current, current.replace(text=f"Deploy with {KEY}"), None, {})
    assert "forget" in caught.value.message and KEY not in caught.value.message


def test_reverting_to_the_current_content_is_no_step_and_weakening_needs_a_reason() -> None:
    assert reverted(memory(), memory(), None, {}) is None
    rule = a_rule()
    with pytest.raises(ValidationError) as caught:
        reverted(rule, rule.replace(severity="house_style"), None, {})
    assert caught.value.field == "because"


def test_a_notebook_revert_retracts_what_was_filed_after_and_restores_the_rest() -> None:
    later = memory(id="m_later")
    assert past_state(later, [], T0, set()) == later.replace(
        status="retracted", status_note=f"notebook reverted to {T0}"
    )
    assert past_state(later.replace(status="retracted"), [], T0, set()) is None
    then = memory(status="superseded", superseded_by="m_x", notebook_id="nb_old", text="was")
    restored = past_state(memory(version=5), [memory(version=1), then], T0, set())
    assert isinstance(restored, Memory)
    assert (restored.text, restored.status, restored.superseded_by, restored.notebook_id) == (
        "was",
        "superseded",
        "m_x",
        "nb_old",
    )
    assert restored.version == 5  # the step raises it


def test_a_notebook_revert_skips_forgotten_versions_and_notebooks_saying_why() -> None:
    plans, skipped = notebook_plan(
        [
            (memory(id="m_a"), [None]),
            (memory(id="m_b"), [memory(id="m_b", notebook_id="nb_gone")]),
        ],
        T0,
        {"nb_gone"},
    )
    assert plans == []
    assert skipped == [
        {"id": "m_a", "reason": "its version then was forgotten"},
        {"id": "m_b", "reason": "the notebook it was in then was forgotten"},
    ]


def test_a_notebook_revert_lets_a_key_change_hands() -> None:
    # m_a holds `pool` now but did not then; m_b held it then. m_a must let go first.
    holder = memory(id="m_a", key="pool")
    taker = memory(id="m_b", status="retracted")
    plans, _ = notebook_plan(
        [
            (taker, [taker.replace(status="active", key="pool")]),
            (holder, [holder.replace(key=None)]),
        ],
        T0,
        set(),
    )
    assert [current.id for current, _ in plans] == ["m_a", "m_b"]
    assert gives_up_key(holder, holder.replace(key=None))
    assert gives_up_key(holder, holder.replace(status="retracted"))
    assert gives_up_key(holder, holder.replace(notebook_id="nb_other"))
    assert not gives_up_key(holder, holder.replace(text="other words"))
    assert not gives_up_key(taker, taker.replace(status="active", key="pool"))


# -- the request whole ---------------------------------------------------------------------


def request(**named: Any) -> tuple[str, list[Any]]:
    targets = {name: named.pop(name, None) for name in ("id", "ids", "texts", "items")}
    notebook, expected = named.pop("notebook", None), named.pop("expected_version", None)
    return parse_request(targets, named, notebook=notebook, expected_version=expected, redact=False)


def test_one_set_of_changes_goes_to_every_target_named_one_way() -> None:
    mode, plans = request(ids=["m_a", "m_b"], status="retracted", note="wrong")
    assert mode == "ids" and len(plans) == 1
    assert (plans[0][0].status, plans[0][0].note, plans[0][1]) == ("retracted", "wrong", None)
    assert request(id="m_a", tags=["db"], expected_version=3)[1][0][1] == 3
    with pytest.raises(ValidationError) as caught:
        request(id="m_a", ids=["m_b"], tags=["db"])
    assert caught.value.field == "id"
    with pytest.raises(ValidationError) as caught:
        request(texts=["The pool size is 20"], tags=["db"])
    assert caught.value.field == "notebook"
    with pytest.raises(ValidationError) as caught:
        request(ids=["m_a"], tags=["db"], expected_version=2)
    assert caught.value.field == "expected_version"
    with pytest.raises(ValidationError) as caught:
        request(id="m_a", note="only a note")
    assert "Nothing to change" in caught.value.message


@pytest.mark.parametrize(
    "option", [{"supersede": True}, {"claim": True}, {"override_reason": "wrong tag"}]
)
def test_what_acts_on_one_memory_is_refused_for_several(option: dict[str, Any]) -> None:
    name = next(iter(option))
    with pytest.raises(ValidationError) as caught:
        request(ids=["m_a", "m_b"], tags=["db"], **option)
    assert caught.value.field == name
    with pytest.raises(ValidationError) as caught:
        request(items=[{"id": "m_a", "tags": ["db"], **option}])
    assert (caught.value.field, caught.value.item) == (name, 0)


def test_a_batch_carries_its_changes_in_each_item_and_a_refusal_names_the_item() -> None:
    mode, plans = request(
        items=[
            {"id": "m_a", "tags": ["db"], "expected_version": 2},
            {"id": "m_b", "status": "verified"},
        ]
    )
    assert mode == "items" and [expected for _, expected in plans] == [2, None]
    assert plans[1][0].status == "verified"
    with pytest.raises(ValidationError) as caught:
        request(items=[{"id": "m_a", "tags": ["db"]}], status="verified")
    assert caught.value.field == "items"
    with pytest.raises(ValidationError) as caught:
        request(items=[{"id": "m_a", "tags": ["db"]}, {"id": "m_b"}])
    assert caught.value.item == 1 and "changes nothing" in caught.value.message
    with pytest.raises(ValidationError) as caught:
        request(items=[{"id": "m_a", "tags": ["db"], "expected_version": 0}])
    assert (caught.value.field, caught.value.item) == ("version", 0)


def test_an_exact_text_shared_by_several_names_the_one_that_can_take_the_status() -> None:
    active, old = memory(id="m_new"), memory(id="m_old", status="superseded")
    assert text_targets([old, active], "retracted") == [active]
    assert text_targets([old, active], "active") == [old]
    assert text_targets([old, active], None) == [old, active]  # several: listed, not guessed
    assert text_targets([old], "retracted") == [old]  # one: its own refusal says why


def test_a_target_that_fails_is_listed_for_ids_and_texts_and_refuses_a_batch() -> None:
    wrong_status = Unmatched("it is already retracted", status_related=True)
    assert settle("ids", 0, wrong_status) == "it is already retracted"
    assert settle("id", 0, wrong_status) == "it is already retracted"
    refusal = settle("items", 2, Unmatched("the `remove` text is not in it", field="remove"))
    assert isinstance(refusal, ValidationError)
    assert (refusal.field, refusal.item) == ("remove", 2)
    single = settle("id", 0, Unmatched("that key is held by m_b"))
    assert isinstance(single, ValidationError) and "m_b" in single.message
    foreign = Forbidden("m_a belongs to user:bo")
    assert settle("texts", 0, foreign) == "m_a belongs to user:bo"
    assert isinstance(settle("id", 0, Forbidden("m_a belongs to user:bo")), Forbidden)
