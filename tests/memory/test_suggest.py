"""Suggestions on write (DESIGN section 4): remember and revise point at what a memory may
contradict, repeat or connect to, and at the rules that apply, without changing anything.

The signs of a difference are pure functions, tested directly; the rest runs on both stores,
through the service, the MCP client and the CLI.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from palimpsest.embed import NullEmbedder, default_embedder
from palimpsest.service import Service
from palimpsest.service.suggest import LIMIT, LISTS, difference, names, negated, numbers
from palimpsest.store import Store

from ..mcp_helpers import call


@pytest.fixture(params=["by words", "by meaning"])
def service(request: pytest.FixtureRequest, store: Store, workspace: str) -> Service:
    """Each test runs on full text alone (the null embedder) and with the default model."""
    embedder = NullEmbedder() if request.param == "by words" else default_embedder()
    return Service(store, workspace=workspace, embedder=embedder)


SUGGESTED = (*LISTS, "applicable_rules")


def suggested(answer: dict[str, Any]) -> dict[str, list[str]]:
    """The ids in each list of suggestions an answer carries."""
    return {name: [row["id"] for row in answer[name]] for name in SUGGESTED if name in answer}


# -- signs that two texts differ (pure) ------------------------------------------------------


def test_numbers_and_another_number_in_its_place() -> None:
    assert numbers("Port 8080, pool of 20, version 3.5") == {"8080", "20", "3.5"}
    assert difference("The API listens on port 8080", "The API listens on port 9090") == (
        "number 8080 vs 9090"
    )
    # A number added is more detail, not another value.
    assert difference("Retry 3 times", "Retry 3 times with a 5 s pause") is None


def test_a_negation_in_one_text_only() -> None:
    assert negated("The API is not public") and negated("We don't deploy on Fridays")
    assert negated("We don’t deploy on Fridays") and negated("Never push to main")
    assert not negated("The API is public")
    assert difference("The API is not public", "The API is public") == "negation in this one"
    assert difference("The API is public", "The API isn't public") == "negation in the other"
    assert difference("We never deploy", "We don't ever deploy") is None  # both negate


def test_names_by_their_capitals() -> None:
    assert names("We moved billing to PostgreSQL and Alice owns it") == {"PostgreSQL", "Alice"}
    # A sentence's first word is capitalised anyway: no name by that alone.
    assert names("Deploys run on Fridays. Builds run nightly.") == {"Fridays"}
    assert names("MySQL is our database") == {"MySQL"}  # a capital inside: a name anywhere
    assert difference("We store billing in PostgreSQL", "We store billing in MySQL") == (
        "name PostgreSQL vs MySQL"
    )
    assert difference("Alice owns billing", "alice owns billing") is None


def test_the_same_key_with_another_text() -> None:
    assert difference("Pool size 20", "The pool holds twenty", "db.pool", "db.pool") == (
        "same key db.pool, another text"
    )
    assert difference("Pool size 20", "pool  size 20", "db.pool", "db.pool") is None
    assert difference("Pool size 20", "The pool holds twenty", "db.pool", "other") is None


def test_texts_that_agree_show_no_sign() -> None:
    assert difference("Deploys run on Fridays", "Deploys run on Fridays at noon") is None


# -- through the service, on both stores -----------------------------------------------------


def test_a_near_duplicate_is_suggested(service: Service) -> None:
    first = service.remember(notebook="web", kind="fact", text="The login page uses React")
    again = service.remember(notebook="web", kind="fact", text="The login page uses React.")
    assert suggested(again) == {"possible_duplicates": [first["id"]]}
    assert again["possible_duplicates"][0]["text"] == "The login page uses React"


def test_another_number_and_a_negation_may_contradict(service: Service) -> None:
    port = service.remember(notebook="web", kind="fact", text="The API server listens on 8080")
    other = service.remember(notebook="web", kind="fact", text="The API server listens on 9090")
    assert suggested(other) == {"possible_contradicts": [port["id"]]}
    assert other["possible_contradicts"][0]["sign"] == "number 9090 vs 8080"
    public = service.remember(notebook="web", kind="fact", text="Billing reports are public")
    private = service.remember(notebook="web", kind="fact", text="Billing reports are not public")
    assert suggested(private) == {"possible_contradicts": [public["id"]]}
    assert private["possible_contradicts"][0]["sign"] == "negation in this one"


def test_the_same_key_with_another_value_in_the_domain_may_contradict(service: Service) -> None:
    for name in ("web", "api", "elsewhere"):
        service.create_notebook(name=name, domain="infra" if name != "elsewhere" else "home")
    pool = service.remember(notebook="web", kind="fact", key="db.pool", text="Pool size 20")
    service.remember(notebook="elsewhere", kind="fact", key="db.pool", text="Buy 2 cups of flour")
    other = service.remember(notebook="api", kind="fact", key="db.pool", text="The pool holds 50")
    assert suggested(other) == {"possible_contradicts": [pool["id"]]}
    assert other["possible_contradicts"][0]["sign"] == "same key db.pool, another text"


def test_by_meaning_a_connection_shares_no_word_but_mail(service: Service) -> None:
    """The issue's own example: words alone cannot tie these two; their meaning does."""
    mails = service.remember(notebook="web", kind="issue", text="Login emails are dropped")
    reset = service.remember(notebook="web", kind="issue",
                             text="Password reset mails are not arriving")  # fmt: skip
    if service.embedder.dimensions:
        assert suggested(reset) == {"suggested_connections": [mails["id"]]}
    else:
        assert suggested(reset) == {}


def test_a_contradiction_is_looked_for_in_the_domain_only(service: Service) -> None:
    """Two notebooks without a domain are two projects: their ports may well differ."""
    service.remember(notebook="shop", kind="fact", text="The API server listens on 8080")
    other = service.remember(notebook="blog", kind="fact", text="The API server listens on 9090")
    assert "possible_contradicts" not in other
    assert suggested(other).keys() == {"suggested_connections"}


def test_unrelated_memories_suggest_nothing(service: Service) -> None:
    service.remember(notebook="web", kind="fact", text="The API server listens on 8080")
    service.remember(notebook="web", kind="decision", text="Billing reports are public")
    service.remember(notebook="web", kind="note", text="Alice owns the search ranking")
    lunch = service.remember(notebook="web", kind="fact", text="The cafeteria serves pizza")
    assert suggested(lunch) == {}


def test_each_list_is_bounded_and_best_first(service: Service) -> None:
    text = "The nightly backup copies the orders database to cold storage"
    copies = [service.remember(notebook=f"n{i}", kind="fact", text=text) for i in range(6)]
    related = [
        service.remember(notebook="web", kind="fact",
                         text=f"The nightly backup of the orders database is checked by {who}")
        for who in ("auditors", "admins", "owners", "interns", "robots")
    ]  # fmt: skip
    answer = service.remember(notebook="web", kind="fact", text=text + ".")
    assert len(answer["possible_duplicates"]) == LIMIT
    assert set(suggested(answer)["possible_duplicates"]) <= {c["id"] for c in copies}
    connections = answer["suggested_connections"]
    assert len(connections) == LIMIT and {c["id"] for c in connections} <= {
        r["id"] for r in related
    }
    scores = [c["similarity"] for c in connections]
    assert scores == sorted(scores, reverse=True)


def test_rules_of_the_notebook_and_of_the_workspace_apply(service: Service) -> None:
    def rule(notebook: str, text: str, **fields: Any) -> str:
        filed = service.remember(notebook=notebook, kind="rule", text=text,
                                 falsifier="a case where it hurt", **fields)  # fmt: skip
        return str(filed["id"])

    own = rule("web", "Never commit generated files", severity="costly")
    everywhere = rule("api", "Always review migrations", scope="workspace", severity="irreversible")
    rule("api", "Keep handlers under 50 lines")  # binds api only
    filed = service.remember(notebook="web", kind="fact", text="The cafeteria serves pizza")
    assert suggested(filed) == {"applicable_rules": [everywhere, own]}  # gravest first
    assert filed["applicable_rules"][0] == {
        "id": everywhere,
        "severity": "irreversible",
        "text": "Always review migrations",
    }


def test_nothing_is_retired_or_linked_by_a_suggestion(service: Service) -> None:
    port = service.remember(notebook="web", kind="fact", text="The API server listens on 8080")
    other = service.remember(notebook="web", kind="fact", text="The API server listens on 9090")
    assert suggested(other)["possible_contradicts"] == [port["id"]]
    for memory in (port, other):
        shown = service.inspect(id=memory["id"])
        assert shown["memory"]["status"] == "active" and shown["memory"]["version"] == 1
        assert shown["links"] == []
    hits = service.recall(query="API server listens")["hits"]
    assert {h["id"] for h in hits} == {port["id"], other["id"]}


def test_a_linked_memory_is_not_suggested_again(service: Service) -> None:
    text = "The nightly backup copies the orders database to cold storage"
    first = service.remember(notebook="web", kind="fact", text=text)
    second = service.remember(notebook="web", kind="fact",
                              text="The orders database backup runs nightly at 2 am")  # fmt: skip
    assert suggested(second) == {"suggested_connections": [first["id"]]}
    service.link(source=second["id"], target=first["id"], type="relates_to")
    assert suggested(service.revise(id=second["id"], append=" twice")["results"][0]) == {}


def test_a_memory_in_an_open_dispute_with_it_is_not_suggested_again(service: Service) -> None:
    port = service.remember(notebook="web", kind="fact", text="The API server listens on 8080")
    other = service.remember(notebook="web", kind="fact", text="The API server listens on 9090")
    assert suggested(other) == {"possible_contradicts": [port["id"]]}
    service.dispute(action="open", ids=[port["id"], other["id"]], reason="which port?")
    assert suggested(service.revise(id=other["id"], append=" (TCP)")["results"][0]) == {}


def test_revise_suggests_for_what_it_changed_and_not_for_a_verify(service: Service) -> None:
    port = service.remember(notebook="web", kind="fact", text="The API server listens on 8080")
    draft = service.remember(notebook="web", kind="fact", text="The cafeteria serves pizza")
    revised = service.revise(id=draft["id"], text="The API server listens on 9090")
    (target,) = revised["results"]
    assert suggested(target) == {"possible_contradicts": [port["id"]]}
    assert suggested(service.revise(id=draft["id"], status="verified")["results"][0]) == {}
    retired = service.revise(id=draft["id"], status="retracted", note="wrong")
    assert suggested(retired["results"][0]) == {}
    successor = service.revise(id=port["id"], text="The API server listens on 7070 only",
                               supersede=True)["results"][0]  # fmt: skip
    assert "possible_contradicts" not in successor  # 9090 was retracted; 8080 is superseded


def test_dry_runs_show_them_and_a_replay_does_not(service: Service) -> None:
    port = service.remember(notebook="web", kind="fact", text="The API server listens on 8080")
    arguments: dict[str, Any] = {"notebook": "web", "kind": "fact",
                                 "text": "The API server listens on 9090"}  # fmt: skip
    dry = service.remember(**arguments, dry_run=True)
    assert suggested(dry) == {"possible_contradicts": [port["id"]]}
    first = service.remember(**arguments, idempotency_key="k1")
    assert suggested(first) == {"possible_contradicts": [port["id"]]}
    replayed = service.remember(**arguments, idempotency_key="k1")
    assert replayed["replayed"] and replayed["id"] == first["id"] and suggested(replayed) == {}


# -- through the adapters ----------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_mcp_answers_carry_them(client: Client) -> None:
    port = await call(client, "remember", notebook="web", kind="fact",
                      text="The API server listens on 8080")  # fmt: skip
    other = await call(client, "remember", notebook="web", kind="fact",
                       text="The API server listens on 9090")  # fmt: skip
    assert suggested(other) == {"possible_contradicts": [port["id"]]}
    draft = await call(client, "remember", notebook="web", kind="fact", text="Cats sleep a lot")
    revised = await call(client, "revise", id=draft["id"], text="The API server listens on 7070")
    assert set(suggested(revised["results"][0])["possible_contradicts"]) == {
        port["id"],
        other["id"],
    }


def test_the_cli_prints_them_briefly(db_path: Path, env: dict[str, str]) -> None:
    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "palimpsest", "--db", str(db_path), *args],
                              env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    env = {**env, "PALIMPSEST_EMBEDDER": "all-MiniLM-L6-v2"}  # the default, model and all
    run("remember", "-n", "web", "The API server listens on 8080")
    shown = run("remember", "-n", "web", "The API server listens on 9090")
    assert "May contradict:" in shown and "(number 9090 vs 8080)" in shown
    assert "possible_contradicts" not in shown  # not the raw answer
