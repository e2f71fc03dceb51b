"""Recall's new answers under attack: near misses that keep their promise, and a note that
never sends the caller back to what it just did."""

from __future__ import annotations

import pytest

from palimpsest.domain.errors import ValidationError
from palimpsest.service import Service


def test_near_misses_lists_the_closest_even_when_every_memory_points_away(
    meaning: Service,
) -> None:
    """`near_misses` adds the closest memories anyway: in a small notebook every cosine to a
    stranger's question may be below zero, and they are still the closest there are."""
    texts = ("The deploy pipeline runs migrations before traffic moves.",
             "Cats sleep most of the day.")  # fmt: skip
    ids = [meaning.remember(notebook="ops", kind="fact", text=text)["id"] for text in texts]
    question = "favourite cake recipe"
    assert meaning.recall(query=question)["hits"] == []
    closest = meaning.recall(query=question, near_misses=True)
    assert {hit["id"] for hit in closest["hits"]} == set(ids)
    assert all(hit["below_floor"] for hit in closest["hits"])
    assert "note" not in closest


def test_the_note_does_not_suggest_near_misses_to_a_caller_that_asked_for_them(
    service: Service,
) -> None:
    service.remember(notebook="ops", kind="fact", text="The deploy pipeline runs migrations.")
    answer = service.recall(query="deploy", kind="rule", near_misses=True)
    assert answer["hits"] == [] and "near_misses" not in answer["note"]
    assert "near_misses" in service.recall(query="deploy", kind="rule")["note"]


@pytest.mark.parametrize("value", ["yes", 1, None, [True]])
def test_near_misses_is_true_or_false(service: Service, value: object) -> None:
    with pytest.raises(ValidationError) as refused:
        service.recall(query="deploy", near_misses=value)  # type: ignore[arg-type]
    assert refused.value.field == "near_misses"
