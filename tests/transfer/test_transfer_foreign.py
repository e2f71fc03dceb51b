"""Importing other servers' files through the service (issue 13), on both stores: each
record through the write gate, a secret refusing its record by line and field and never
echoed, the same file twice filing nothing new, forgotten ids never back, unknown
authors ownerless. How each format maps is tests/transfer/test_foreign_formats.py's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from palimpsest.domain.errors import PalimpsestError, ValidationError
from palimpsest.service import Service
from palimpsest.store import EventFilter

SECRET = "ghp_" + "N7q2Lx9vTb4Kp0Wm8Rz3Yd6Hs1Jf5Ga2Ce7U"  # a GitHub token's shape (made up)


def graph(tmp_path: Path, *observations: str) -> Path:
    """A memory.jsonl as the reference MCP memory server writes it."""
    lines = [
        {"type": "entity", "name": "Billing", "entityType": "service",
         "observations": list(observations)},
        {"type": "entity", "name": "Ledger", "entityType": "service", "observations": []},
        {"type": "relation", "from": "Billing", "to": "Ledger", "relationType": "depends_on"},
    ]  # fmt: skip
    path = tmp_path / "memory.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def events(service: Service) -> list[Any]:
    with service.store.read(service.workspace) as tx:
        return tx.events(EventFilter(limit=10_000))


def by_title(service: Service, title: str) -> list[dict[str, Any]]:
    hits = service.recall(query=title, include_retired=True)["hits"]
    return [hit for hit in hits if hit.get("title") == title]


def test_the_reference_graph_comes_in_as_memories_and_links(
    service: Service, tmp_path: Path
) -> None:
    file = graph(tmp_path, "Runs on Postgres 16", "Owned by the payments team")
    answer = service.import_file(file, source_format="mcp-memory", notebook="graph")
    assert answer["counts"]["imported"] == 4  # two entities, two observations
    assert answer["counts"]["links"] >= 3  # two part_of, one depends_on
    facts = service.recall(query="Postgres")["hits"]
    assert [hit["kind"] for hit in facts] == ["fact"]
    fact = service.inspect(id=facts[0]["id"])
    assert fact["memory"]["notebook"] == "graph"
    assert {link["type"] for link in fact["links"]} == {"part_of"}
    first = service.history(id=facts[0]["id"])["events"][0]
    assert (first["op"], first["actor"]) == ("import", service.actor)
    assert first["data"]["source"] == {"format": "mcp-memory", "file": "memory.jsonl",
                                       "where": first["data"]["source"]["where"]}  # fmt: skip
    assert first["data"]["source"]["where"].startswith("memory.jsonl:")


def test_the_same_file_twice_files_nothing_new(service: Service, tmp_path: Path) -> None:
    file = graph(tmp_path, "Runs on Postgres 16")
    service.import_file(file, source_format="mcp-memory")
    before = len(events(service))
    again = service.import_file(file, source_format="mcp-memory")
    assert "imported" not in again["counts"] and again["counts"]["unchanged"] == 3
    assert len(events(service)) == before


def test_a_secret_refuses_its_record_by_line_and_field_and_the_rest_goes_in(
    service: Service, tmp_path: Path
) -> None:
    file = graph(tmp_path, "Runs on Postgres 16", f"Deploys with the token {SECRET}")
    answer = service.import_file(file, source_format="mcp-memory")
    assert SECRET not in json.dumps(answer)
    [refusal] = answer["refused"]
    assert (refusal["where"], refusal["field"], refusal["error_class"]) == (
        "memory.jsonl:1", "text", "validation")  # fmt: skip
    assert answer["counts"]["imported"] == 3
    assert SECRET not in json.dumps([e.data for e in events(service)])
    assert service.recall(query="Postgres")["hits"]


def test_strict_brings_nothing_when_a_record_is_refused(service: Service, tmp_path: Path) -> None:
    file = graph(tmp_path, "Runs on Postgres 16", f"Deploys with the token {SECRET}")
    with pytest.raises(ValidationError) as refused:
        service.import_file(file, source_format="mcp-memory", strict=True)
    assert SECRET not in refused.value.message
    assert events(service) == []


def test_a_memory_forgotten_here_never_comes_back(service: Service, tmp_path: Path) -> None:
    file = graph(tmp_path, "Runs on Postgres 16")
    service.import_file(file, source_format="mcp-memory")
    [fact] = service.recall(query="Postgres")["hits"]
    service.forget(id=fact["id"], because="wrong")
    answer = service.import_file(file, source_format="mcp-memory")
    assert [entry["id"] for entry in answer["refused"]] == [fact["id"]]
    assert "memory" not in service.inspect(id=fact["id"])  # its tombstone alone
    assert not service.recall(query="Postgres")["hits"]


def test_a_memory_whose_author_is_unknown_is_ownerless_and_can_be_claimed(
    service: Service, tmp_path: Path
) -> None:
    file = graph(tmp_path, "Runs on Postgres 16")
    service.import_file(file, source_format="mcp-memory")
    [fact] = service.recall(query="Postgres")["hits"]
    assert service.inspect(id=fact["id"])["memory"].get("owner") is None
    service.revise(id=fact["id"], claim=True)
    assert service.inspect(id=fact["id"])["memory"]["owner"] == service.actor


def test_mem0_memories_keep_their_author_and_markdown_notes_their_folders(
    service: Service, tmp_path: Path
) -> None:
    memories = {"results": [
        {"id": "a1b2", "memory": "Prefers tea to coffee", "user_id": "alice",
         "created_at": "2025-03-01T10:00:00Z", "categories": ["food"]},
        {"id": "c3d4", "memory": "Works from Lisbon", "created_at": "2025-03-02T10:00:00Z"},
    ]}  # fmt: skip
    mem0 = tmp_path / "mem0.json"
    mem0.write_text(json.dumps(memories), encoding="utf-8")
    service.import_file(mem0, source_format="mem0")
    [tea] = service.recall(query="tea")["hits"]
    shown = service.inspect(id=tea["id"])["memory"]
    assert (shown["author"], shown["owner"]) == ("user:alice", "user:alice")
    [lisbon] = service.recall(query="Lisbon")["hits"]
    assert service.inspect(id=lisbon["id"])["memory"].get("owner") is None

    notes = tmp_path / "notes"
    (notes / "auth").mkdir(parents=True)
    (notes / "auth" / "login.md").write_text(
        "---\ntitle: Login flow\ntags: [auth]\n---\nSessions last a day. See [[Tokens]].\n",
        encoding="utf-8",
    )
    (notes / "auth" / "tokens.md").write_text(
        "---\ntitle: Tokens\n---\nTokens are rotated weekly.\n", encoding="utf-8"
    )
    answer = service.import_file(notes, source_format="markdown")
    assert answer["counts"]["imported"] == 2 and answer["counts"]["links"] >= 1
    [login] = by_title(service, "Login flow")
    assert service.inspect(id=login["id"])["memory"]["notebook"] == "auth"


def test_the_cli_imports_another_servers_file(tmp_path: Path, env: dict[str, str]) -> None:
    file = graph(tmp_path, "Runs on Postgres 16")
    db = tmp_path / "cli.db"
    run = [sys.executable, "-m", "palimpsest", "--db", str(db), "import", str(file),
           "--from", "mcp-memory", "--json"]  # fmt: skip
    dry = subprocess.run([*run, "--dry-run"], env=env, capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["counts"]["imported"] == 3
    done = subprocess.run(run, env=env, capture_output=True, text=True)
    assert json.loads(done.stdout)["counts"]["imported"] == 3


@pytest.mark.parametrize(
    ("source_format", "given", "error_class"),
    [
        ("mcp-memory", "folder", "validation"),
        ("mem0", "missing", "not_found"),
        ("markdown", "file", "validation"),
        ("mem0", "garbage", "validation"),
        ("mcp-memory", "garbage", "validation"),
    ],
)
def test_the_wrong_path_or_format_is_refused_and_writes_nothing(
    service: Service, tmp_path: Path, source_format: str, given: str, error_class: str
) -> None:
    garbage = tmp_path / "garbage.json"
    garbage.write_text("this is not what any server writes\n", encoding="utf-8")
    paths = {"folder": tmp_path, "missing": tmp_path / "none.json", "file": garbage,
             "garbage": garbage}  # fmt: skip
    with pytest.raises(PalimpsestError) as refused:
        service.import_file(paths[given], source_format=source_format)
    assert refused.value.error_class == error_class
    assert "not what any server" not in refused.value.message
    assert events(service) == []
