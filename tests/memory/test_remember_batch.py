"""Remember with `items`: many memories in one call, all or nothing, on both stores.

Through the service (the rules), the official MCP client (the `items` parameter) and the
CLI's `remember --from FILE.jsonl` (a file of one memory per line, in batches).
"""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from palimpsest.domain.errors import ValidationError
from palimpsest.service import Service
from palimpsest.service.batch import MAX_ITEMS, SUGGEST_ITEMS
from palimpsest.store import EventFilter, Store

from ..mcp_helpers import call, refuse


def _secret() -> str:
    """A GitHub token's shape, made up here so no real-looking secret sits in the source."""
    alphabet = string.ascii_letters + string.digits
    return "ghp_" + "".join(random.Random(4).choices(alphabet, k=36))


def memories_in(service: Service) -> list[Any]:
    return service.recall(query="", limit=200)["hits"]


def events_of(service: Service, memory_id: str) -> list[Any]:
    with service.store.read(service.workspace) as tx:
        return tx.events(EventFilter(target_id=memory_id))


def test_a_batch_files_each_item_with_its_own_event_under_one_operation(
    service: Service,
) -> None:
    answer = service.remember(
        notebook="infra",
        items=[
            {"kind": "fact", "text": "The API listens on port 8080."},
            {"kind": "decision", "text": "We deploy on Tuesdays.", "why": "Quiet day."},
            {"kind": "fact", "text": "Billing runs nightly.", "notebook": "billing"},
        ],
    )
    results = answer["results"]
    assert [r["notebook"] for r in results] == ["infra", "infra", "billing"]
    assert all(r["version"] == 1 for r in results)
    events = [events_of(service, r["id"]) for r in results]
    assert all(len(found) == 1 and found[0].op == "remember" for found in events)
    assert len({found[0].op_id for found in events}) == 1  # one operation
    assert [found[0].seq for found in events] == sorted(found[0].seq for found in events)
    shown = service.inspect(id=results[1]["id"])
    assert shown["memory"]["why"] == "Quiet day."


def test_a_bad_item_refuses_the_whole_batch_naming_it(service: Service) -> None:
    with pytest.raises(ValidationError) as refused:
        service.remember(
            notebook="infra",
            items=[
                {"kind": "fact", "text": "Fine."},
                {"kind": "rule", "text": "Never force-push main."},  # no falsifier
            ],
        )
    assert refused.value.item == 1
    assert refused.value.message.startswith("items[1]: ")
    assert memories_in(service) == []


def test_a_secret_in_one_item_refuses_the_batch_and_is_never_echoed(service: Service) -> None:
    secret = _secret()
    with pytest.raises(ValidationError) as refused:
        service.remember(
            notebook="infra",
            items=[
                {"kind": "fact", "text": "The CI token is rotated monthly."},
                {"kind": "fact", "text": "Deploys use the CI token.", "why": f"It is {secret}"},
            ],
        )
    body = refused.value.to_dict()
    assert body["item"] == 1 and body["field"] == "why"
    assert secret not in json.dumps(body) and secret[4:12] not in json.dumps(body)
    assert memories_in(service) == []


def test_a_key_taken_by_an_earlier_item_refuses_the_batch(service: Service) -> None:
    items = [
        {"kind": "fact", "text": "The API port is 8080.", "key": "api.port"},
        {"kind": "fact", "text": "The API port is 9090.", "key": "api.port"},
    ]
    with pytest.raises(ValidationError) as refused:
        service.remember(notebook="infra", items=items)
    assert refused.value.item == 1 and refused.value.field == "key"
    assert memories_in(service) == []  # the first item was rolled back with it


def test_a_text_repeated_in_a_batch_is_filed_once(service: Service) -> None:
    item = {"kind": "fact", "text": "Backups run at 02:00 UTC."}
    first, again = service.remember(notebook="ops", items=[item, dict(item)])["results"]
    assert again["duplicate_of"] == first["id"] and again["written"] is False
    assert len(memories_in(service)) == 1


def test_limits_and_what_goes_beside_items(service: Service) -> None:
    too_many = [{"kind": "note", "text": f"Note {n}"} for n in range(MAX_ITEMS + 1)]
    with pytest.raises(ValidationError, match=f"at most {MAX_ITEMS}"):
        service.remember(notebook="n", items=too_many)
    with pytest.raises(ValidationError) as beside:
        service.remember(notebook="n", kind="fact", items=[{"kind": "note", "text": "x"}])
    assert beside.value.field == "kind"
    with pytest.raises(ValidationError) as single:
        service.remember(items=[{"kind": "note", "text": "x", "notebook": "n", "supersedes": []}])
    assert single.value.item == 0 and single.value.field == "supersedes"
    with pytest.raises(ValidationError) as nowhere:
        service.remember(items=[{"kind": "note", "text": "x"}])
    assert nowhere.value.field == "notebook"
    assert memories_in(service) == []


def test_small_batches_get_suggestions_and_large_ones_say_they_get_none(
    service: Service,
) -> None:
    service.remember(notebook="ops", kind="fact", text="The staging database listens on 5432.")
    small = service.remember(
        notebook="ops", items=[{"kind": "fact", "text": "The staging database listens on 6432."}]
    )
    assert small["results"][0]["possible_contradicts"]
    large = [{"kind": "note", "text": f"Import line {n}"} for n in range(SUGGEST_ITEMS + 1)]
    answer = service.remember(notebook="ops", items=large)
    assert not any("suggested_connections" in r for r in answer["results"])
    assert "No suggestions" in answer["warnings"][0]


def test_a_dry_run_batch_writes_nothing(service: Service) -> None:
    answer = service.remember(
        notebook="ops", items=[{"kind": "fact", "text": "Logs are kept 30 days."}], dry_run=True
    )
    assert answer["dry_run"] and answer["results"][0]["memory"]["text"] == "Logs are kept 30 days."
    assert memories_in(service) == []


def test_each_item_gets_its_vector(meaning: Service) -> None:
    texts = ["Payments retry three times.", "The cache holds sessions for an hour."]
    answer = meaning.remember(notebook="m", items=[{"kind": "fact", "text": t} for t in texts])
    model = meaning.vectors.model
    with meaning.store.read(meaning.workspace) as tx:
        stored = [tx.vector_of(r["id"], 1, model) for r in answer["results"]]
    expected = meaning.embedder.embed(texts)
    for vector, wanted in zip(stored, expected, strict=True):
        assert vector is not None and float(vector @ wanted) > 0.999
    hit = meaning.recall(query="how long are sessions cached", limit=1)["hits"][0]
    assert hit["id"] == answer["results"][1]["id"]


# -- MCP ----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_mcp_tool_takes_items(client: Client, store: Store) -> None:
    del store
    answer = await call(
        client,
        "remember",
        notebook="web",
        items=[{"kind": "fact", "text": "The site is static."}, {"kind": "note", "text": "CDN."}],
    )
    assert len(answer["results"]) == 2
    secret = _secret()
    body = await refuse(
        client, "remember", notebook="web", items=[{"kind": "fact", "text": f"token {secret}"}]
    )
    assert body["error_class"] == "validation" and body["item"] == 0
    assert secret not in json.dumps(body)


# -- CLI ----------------------------------------------------------------------------------


def _cli(env: dict[str, str], db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "palimpsest", "--db", str(db), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_cli_files_a_jsonl_file_and_refuses_a_bad_line_by_number(
    env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "cli.db"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "fact", "text": "One."}\n\n{"kind": "fact", "text": \n')
    refused = _cli(env, db, "remember", "--from", str(bad), "-n", "imp", "--json")
    assert refused.returncode != 0
    assert "line 3" in refused.stderr + refused.stdout
    good = tmp_path / "good.jsonl"
    lines = [{"text": f"Imported fact number {n}."} for n in range(5)]
    lines[2] = {"kind": "rule", "text": "No rule without a falsifier."}
    good.write_text("".join(json.dumps(line) + "\n" for line in lines))
    refused = _cli(env, db, "remember", "--from", str(good), "-n", "imp", "--json")
    assert refused.returncode != 0 and "line 3" in refused.stderr + refused.stdout
    lines[2] = {"kind": "note", "text": "Fixed."}
    good.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = _cli(env, db, "remember", "--from", str(good), "-n", "imp", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["filed"] == 5 and answer["duplicates"] == 0
    listed = _cli(env, db, "recall", "-n", "imp", "--limit", "50", "--json")
    hits = json.loads(listed.stdout)["hits"]
    assert len(hits) == 5 and {h["kind"] for h in hits} == {"fact", "note"}
