"""Every write's dry run says what it would change, before and after, and writes nothing."""

from __future__ import annotations

from palimpsest.service import Service

from .test_revise_rules import event_count, fact


def test_a_revert_dry_run_shows_the_text_before_and_after(service: Service) -> None:
    mid = fact(service, text="Deploys run nightly")
    service.revise(id=mid, text="Deploys run weekly")
    before = event_count(service)
    answer = service.revert(id=mid, version=1, dry_run=True)
    assert answer["results"][0]["diff"]["text"] == {
        "old": "Deploys run weekly",
        "new": "Deploys run nightly",
    }
    assert event_count(service) == before


def test_a_notebook_edit_dry_run_shows_each_field_before_and_after(service: Service) -> None:
    fact(service, text="Anything", notebook="web")
    before = event_count(service)
    answer = service.edit_notebook(notebook="web", name="web-shop", domain="shop", dry_run=True)
    assert answer["diff"] == {
        "name": {"old": "web", "new": "web-shop"},
        "domain": {"old": None, "new": "shop"},
    }
    assert event_count(service) == before
    assert service.inspect(notebook="web")["notebook"]["name"] == "web"


def test_a_merge_domains_dry_run_shows_each_notebook_moving(service: Service) -> None:
    fact(service, text="Anything", notebook="web")
    service.edit_notebook(notebook="web", domain="shop")
    before = event_count(service)
    answer = service.merge_domains(source="shop", target="retail", because="one team",
                                   dry_run=True)  # fmt: skip
    assert answer["diff"] == {"web": {"domain": {"old": "shop", "new": "retail"}}}
    assert event_count(service) == before


def test_a_link_dry_run_shows_the_link_before_and_after(service: Service) -> None:
    a, b = fact(service, text="First"), fact(service, text="Second")
    before = event_count(service)
    added = service.link(source=a, target=b, type="relates_to", dry_run=True)
    assert added["diff"]["link"]["old"] is None
    assert added["diff"]["link"]["new"]["type"] == "relates_to"
    assert event_count(service) == before
    service.link(source=a, target=b, type="relates_to")
    removed = service.link(source=a, target=b, type="relates_to", remove=True, dry_run=True)
    assert removed["diff"]["link"]["new"] is None
    assert removed["diff"]["link"]["old"]["type"] == "relates_to"


def test_a_forget_dry_run_says_what_it_would_erase_without_quoting_it(service: Service) -> None:
    mid = fact(service, text="Ana's phone is 555 0100")
    service.revise(id=mid, why="to call her")
    before = event_count(service)
    answer = service.forget(id=mid, because="personal data", dry_run=True)
    erased = answer["results"][0]["would_erase"]
    assert erased == {"versions": 2, "fields": ["text", "why"]}
    assert "555 0100" not in str(answer)
    assert event_count(service) == before
