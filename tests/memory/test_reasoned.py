"""A person's revise and revert with their reason (service/reasoned.py): refused without
one, a viewer refused before anything else, and otherwise as revise and revert are. On
both stores."""

from __future__ import annotations

import pytest

from palimpsest.domain.errors import PalimpsestError
from palimpsest.service import Service
from palimpsest.service.roles import Principal


def refusal(call: object, *args: object, **kwargs: object) -> dict[str, object]:
    with pytest.raises(PalimpsestError) as refused:
        call(*args, **kwargs)  # type: ignore[operator]
    return refused.value.to_dict()


@pytest.mark.parametrize("note", [None, "", "   "])
def test_a_change_without_its_reason_is_refused_and_changes_nothing(
    service: Service, note: str | None
) -> None:
    memory_id = service.remember(notebook="ops", kind="fact", text="The pool is 20")["id"]
    service.revise(id=memory_id, text="The pool is 30", note="measured")

    revised = refusal(service.revise_with_reason, id=memory_id, note=note, text="The pool is 40")
    reverted = refusal(service.revert_with_reason, id=memory_id, version=1, note=note)

    assert (revised["error_class"], revised["field"]) == ("validation", "note")
    assert (reverted["error_class"], reverted["field"]) == ("validation", "note")
    shown = service.inspect(id=memory_id)["memory"]
    assert (shown["text"], shown["version"]) == ("The pool is 30", 2)


def test_with_its_reason_the_change_is_made_and_its_reason_kept(service: Service) -> None:
    memory_id = service.remember(notebook="ops", kind="fact", text="The pool is 20")["id"]

    service.revise_with_reason(
        id=memory_id, note=" measured on prod ", expected_version=1, text="The pool is 30"
    )
    service.revert_with_reason(id=memory_id, version=1, note="the measure was wrong")

    shown = service.inspect(id=memory_id)["memory"]
    assert (shown["text"], shown["version"]) == ("The pool is 20", 3)
    notes = [e["note"] for e in service.history(id=memory_id)["events"]]
    assert notes == [None, "measured on prod", "the measure was wrong"]


def test_a_viewer_is_refused_as_a_viewer_even_without_a_reason(service: Service) -> None:
    memory_id = service.remember(notebook="ops", kind="fact", text="The pool is 20")["id"]
    viewer = service.acting_as(Principal("user:vic", "viewer", "k_" + "b" * 20))

    for call, args in (
        (viewer.revise_with_reason, {"text": "forged"}),
        (viewer.revert_with_reason, {"version": 1}),
    ):
        assert refusal(call, id=memory_id, note=None, **args)["error_class"] == "forbidden"
    assert service.inspect(id=memory_id)["memory"]["version"] == 1


def test_a_version_moved_meanwhile_is_a_conflict(service: Service) -> None:
    memory_id = service.remember(notebook="ops", kind="fact", text="The pool is 20")["id"]
    service.revise(id=memory_id, text="The pool is 25", note="someone else")

    refused = refusal(service.revise_with_reason, id=memory_id, note="mine",
                      expected_version=1, text="The pool is 30")  # fmt: skip

    assert refused["error_class"] == "conflict"
    assert service.inspect(id=memory_id)["memory"]["text"] == "The pool is 25"


def test_a_status_the_memory_cannot_take_is_refused_not_left_unmatched(service: Service) -> None:
    memory_id = service.remember(notebook="ops", kind="fact", text="The pool is 20")["id"]
    service.revise(id=memory_id, status="retracted", note="never true")

    for status in ("verified", "superseded"):
        refused = refusal(service.revise_with_reason, id=memory_id, note="checked", status=status)
        assert (refused["error_class"], refused["field"]) == ("validation", "status")
    assert service.inspect(id=memory_id)["memory"]["version"] == 2


def test_forget_of_the_version_read_is_refused_once_it_moved_on(service: Service) -> None:
    """A person confirms erasing what they were shown: a version written meanwhile makes
    the forget a conflict, dry run or not, and erases nothing."""
    memory_id = service.remember(notebook="ops", kind="fact", text="The pool is 20")["id"]
    shown = service.forget(id=memory_id, because="a mistake", dry_run=True, expected_version=1)
    assert shown["results"][0]["would_erase"]["versions"] == 1
    service.revise(id=memory_id, text="The pool is 25", note="written meanwhile")

    for dry_run in (True, False):
        refused = refusal(service.forget, id=memory_id, because="a mistake",
                          dry_run=dry_run, expected_version=1)  # fmt: skip
        assert (refused["error_class"], refused["field"]) == ("conflict", "expected_version")
    assert service.inspect(id=memory_id)["memory"]["version"] == 2
    bad = refusal(service.forget, ids=[memory_id], because="x", expected_version=2)
    assert (bad["error_class"], bad["field"]) == ("validation", "expected_version")
    service.forget(id=memory_id, because="a mistake", expected_version=2)
    assert "tombstone" in service.inspect(id=memory_id)
