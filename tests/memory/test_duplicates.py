"""duplicates: groups of active memories that say the same thing, by meaning (the real
model) and by text, judged by the rule of remember's `possible_duplicates`. On both stores."""

from __future__ import annotations

from typing import Any

import pytest

from palimpsest.domain.errors import PalimpsestError
from palimpsest.service import Service

STAGING = (
    "Staging deploys run from the release branch",
    "Deploys to staging are made from the release branch",
    "The staging deploy uses the release branch",
)
UNRELATED = (
    "The coffee machine is on the third floor",
    "Tests must pass before a pull request is merged",
    "The pool size is 20",
    "The pool size is 50",  # a number apart: a possible contradiction, never a duplicate
)


def fact(service: Service, text: str, notebook: str = "proj", **fields: Any) -> str:
    memory_id: str = service.remember(notebook=notebook, kind="fact", text=text, **fields)["id"]
    return memory_id


def grouped(answer: Any) -> list[set[str]]:
    return [{m["id"] for m in group["memories"]} for group in answer["groups"]]


def test_paraphrases_group_together_and_unrelated_memories_do_not(meaning: Service) -> None:
    staging = [fact(meaning, text) for text in STAGING]
    for text in UNRELATED:
        fact(meaning, text)
    answer = meaning.duplicates()
    assert grouped(answer) == [set(staging)]
    group = answer["groups"][0]
    assert group["by"] == "meaning" and 0.92 <= group["similarity"] <= 1.0
    assert answer["examined"] == len(STAGING) + len(UNRELATED) and answer["by_meaning"]
    line = group["memories"][0]
    assert line["id"] == staging[-1]  # the most recently written first
    assert (line["version"], line["kind"], line["notebook"], line["owner"]) == (
        1,
        "fact",
        "proj",
        "user:local",
    )
    assert line["text"] == STAGING[-1] and line["updated_at"].endswith("Z")


def test_a_group_is_what_remember_suggests_as_possible_duplicates(meaning: Service) -> None:
    """The queue and the suggestions on write judge by one rule: they agree."""
    first = fact(meaning, STAGING[0])
    filed = meaning.remember(notebook="proj", kind="fact", text=STAGING[1])
    assert [d["id"] for d in filed.get("possible_duplicates", [])] == [first]
    assert grouped(meaning.duplicates()) == [{first, filed["id"]}]
    apart = meaning.remember(notebook="proj", kind="fact", text="The pool size is 20")
    near = meaning.remember(notebook="proj", kind="fact", text="The pool size is 50")
    assert apart["id"] not in [d["id"] for d in near.get("possible_duplicates", [])]
    assert grouped(meaning.duplicates()) == [{first, filed["id"]}]


def test_a_long_memory_is_cut_short_as_views_cut_it(meaning: Service) -> None:
    long = "The release branch is what staging deploys from, " + "and that holds. " * 20
    fact(meaning, long)
    fact(meaning, long + " Always.")
    text = meaning.duplicates()["groups"][0]["memories"][0]["text"]
    assert len(text) == 100 and text.endswith("…")


def test_the_same_text_groups_across_kinds_and_keys_and_says_so(service: Service) -> None:
    """Without an embedder (words only), the same text still groups; what a merge may
    care about (another kind, another key) is named."""
    note = service.remember(notebook="proj", kind="note", text="Deploys run on Fridays")["id"]
    decision = fact(service, "Deploys run on Fridays.", key="deploy-day")
    other = fact(service, "deploys run on fridays", notebook="ops", key="friday")
    answer = service.duplicates()
    assert grouped(answer) == [{note, decision, other}]
    assert answer["groups"][0]["mixed"] == ["kind", "key"]
    assert answer["groups"][0]["by"] == "words" and not answer["by_meaning"]
    keys = {m["id"]: m.get("key") for m in answer["groups"][0]["memories"]}
    assert keys == {note: None, decision: "deploy-day", other: "friday"}


def test_a_notebook_bounds_the_groups(meaning: Service) -> None:
    here = [fact(meaning, text) for text in STAGING[:2]]
    fact(meaning, STAGING[2], notebook="elsewhere")
    assert grouped(meaning.duplicates(notebook="proj")) == [set(here)]
    assert meaning.duplicates(notebook="elsewhere")["groups"] == []
    assert len(grouped(meaning.duplicates())[0]) == 3


def test_retired_expired_disputed_and_linked_memories_are_left_apart(meaning: Service) -> None:
    first, second, third = (fact(meaning, text) for text in STAGING)
    meaning.revise(id=third, status="retracted", note="never true")
    assert grouped(meaning.duplicates()) == [{first, second}]
    meaning.dispute(action="open", ids=[first, second], reason="which one holds?")
    assert meaning.duplicates()["groups"] == []
    fact(meaning, "The coffee machine is on the third floor", expires_at="2020-01-01")
    kept = [fact(meaning, "The coffee machine is on the 3rd floor"),
            fact(meaning, "The coffee machine sits on the third floor.")]  # fmt: skip
    assert grouped(meaning.duplicates()) == [set(kept)]  # the expired one (0.99 alike) is out
    meaning.link(source=kept[0], target=kept[1], type="relates_to")
    assert meaning.duplicates()["groups"] == []


def test_a_merge_empties_its_group(meaning: Service) -> None:
    first, *rest = (fact(meaning, text) for text in STAGING)
    meaning.merge(keep=first, ids=rest, because="one fact filed three times")
    assert meaning.duplicates()["groups"] == []


def test_groups_come_largest_first_and_the_limit_says_more(service: Service) -> None:
    for text in ("Deploys run on Fridays", "Builds are cached for a day"):
        fact(service, text)
        fact(service, text + ".")
    three = [fact(service, "Logs are kept a week" + end) for end in ("", ".", "!")]
    answer = service.duplicates(limit=2)
    assert grouped(answer)[0] == set(three) and len(answer["groups"]) == 2
    assert answer["more"] is True
    assert "more" not in service.duplicates(limit=3)


@pytest.mark.parametrize("limit", [0, -1, 201, "5", True])
def test_a_limit_out_of_range_is_refused(service: Service, limit: Any) -> None:
    with pytest.raises(PalimpsestError) as caught:
        service.duplicates(limit=limit)
    assert (caught.value.error_class, caught.value.field) == ("validation", "limit")


def test_an_unknown_notebook_is_not_found(service: Service) -> None:
    with pytest.raises(PalimpsestError) as caught:
        service.duplicates(notebook="nowhere")
    assert caught.value.error_class == "not_found"


def test_past_the_cap_the_most_recent_are_examined_and_the_answer_says_so(
    meaning: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Of a scope larger than EXAMINED (10,000; 2 here), the most recently filed are each
    compared with all: a new repeat of an old memory is still found."""
    from palimpsest.service import duplicates

    old = fact(meaning, STAGING[0])
    fact(meaning, UNRELATED[0])
    fact(meaning, UNRELATED[1])
    new = fact(meaning, STAGING[1])
    monkeypatch.setattr(duplicates, "EXAMINED", 2)
    answer = meaning.duplicates()
    assert answer["examined"] == 2 and grouped(answer) == [{old, new}]
    assert "2 most recently filed of 4" in answer["warnings"][0]
