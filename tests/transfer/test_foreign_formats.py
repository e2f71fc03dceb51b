"""How each reader of another server's files maps them (formats/mcp_memory.py, mem0.py,
markdown_notes.py), record by record and without a store: what each docstring promises
to bring and to report, hostile files (YAML tags and alias bombs, links out of the
folder, a FIFO, bad bytes, huge lines) read quickly and never followed, and our own
markdown export read back exactly. Through the service: tests/transfer/test_transfer_foreign.py."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from palimpsest.domain.model import Link, Memory, Notebook
from palimpsest.formats import markdown_notes, mcp_memory, mem0
from palimpsest.formats.markdown_out import write_markdown
from palimpsest.formats.records import Incoming, IncomingLink, Record, Unmapped

FOREIGN = Path(__file__).parents[1] / "fixtures" / "foreign"
Reader = Callable[[Path, str], Any]


def read(reader: Reader, path: Path, notebook: str = "caller") -> list[Record]:
    return list(reader(path, notebook))


def brought(records: list[Record]) -> dict[str, Incoming]:
    return {r.ref: r for r in records if isinstance(r, Incoming)}


def links(records: list[Record]) -> set[tuple[str, str, str]]:
    return {(r.source_ref, r.target_ref, r.type) for r in records if isinstance(r, IncomingLink)}


def reported(records: list[Record]) -> list[tuple[str, str | None]]:
    return [(r.where, r.field) for r in records if isinstance(r, Unmapped)]


def texts(records: list[Record]) -> list[str]:
    return [r.fields["text"] for r in records if isinstance(r, Incoming)]


def within(seconds: float, work: Callable[[], list[Record]]) -> list[Record]:
    """What `work()` answers, failing when it takes longer than `seconds` (in a daemon
    thread, so a read blocked for good fails the test instead of hanging the run)."""
    answer: list[list[Record]] = []
    worker = threading.Thread(target=lambda: answer.append(work()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert answer, f"the read did not finish within {seconds}s"
    return answer[0]


def jsonl(tmp_path: Path, *lines: dict[str, Any] | bytes) -> Path:
    path = tmp_path / "memory.jsonl"
    path.write_bytes(b"".join(
        line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n" for line in lines
    ))  # fmt: skip
    return path


def entity(name: str, *observations: str, kind: str = "service") -> dict[str, Any]:
    return {"type": "entity", "name": name, "entityType": kind, "observations": list(observations)}


def relation(source: str, verb: str, target: str) -> dict[str, Any]:
    return {"type": "relation", "from": source, "to": target, "relationType": verb}


def mem0_file(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write(folder: Path, rel: str, text: str | bytes) -> Path:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# -- the reference MCP memory server's memory.jsonl ---------------------------------------


def test_graph_an_entity_is_a_reference_tagged_with_its_type() -> None:
    ana = brought(read(mcp_memory.read, FOREIGN / "memory.jsonl", "graph"))["entity:Ana"]
    assert ana.fields == {"kind": "reference", "title": "Ana",
                          "text": "Ana: an entity of type person.", "tags": ["person"]}  # fmt: skip
    assert (ana.notebook, ana.where, ana.author) == ("graph", "memory.jsonl:1", None)


def test_graph_each_observation_is_a_fact_part_of_its_entity() -> None:
    records = read(mcp_memory.read, FOREIGN / "memory.jsonl")
    facts = {r.fields["text"]: r for r in brought(records).values() if r.ref.startswith("obs:Ana")}
    assert sorted(facts) == ["Leads the billing team", "Prefers async reviews", "Speaks Portuguese"]
    lead = facts["Leads the billing team"]
    assert (lead.fields["kind"], lead.fields["title"]) == ("fact", "Ana")
    assert (lead.ref, "entity:Ana", "part_of") in links(records)


def test_graph_a_verb_of_ours_is_that_link_and_another_is_relates_to_plus_a_fact(
    tmp_path: Path,
) -> None:
    file = jsonl(tmp_path, entity("A"), entity("B"), entity("C"), entity("D"),
                 relation("A", "dependsOn", "B"), relation("A", "is part of", "C"),
                 relation("A", "works_on", "D"))  # fmt: skip
    records = read(mcp_memory.read, file)
    assert {link for link in links(records) if link[0] == "entity:A"} == {
        ("entity:A", "entity:B", "depends_on"), ("entity:A", "entity:C", "part_of"),
        ("entity:A", "entity:D", "relates_to")}  # fmt: skip
    [verb] = [r for r in brought(records).values() if r.ref.startswith("rel:")]
    assert verb.fields == {"kind": "fact", "title": "A", "text": "A works_on D"}
    assert (verb.ref, "entity:A", "part_of") in links(records)


def test_graph_a_relation_of_an_entity_to_itself_is_only_a_fact(tmp_path: Path) -> None:
    records = read(mcp_memory.read, jsonl(tmp_path, entity("A"), relation("A", "depends_on", "A")))
    [fact] = [r for r in brought(records).values() if r.ref.startswith("rel:")]
    assert fact.fields["text"] == "A depends_on A"
    assert links(records) == {(fact.ref, "entity:A", "part_of")}


def test_graph_an_entity_named_twice_is_merged_under_its_first_type() -> None:
    records = read(mcp_memory.read, FOREIGN / "memory.jsonl")
    assert [r.ref for r in records if isinstance(r, Incoming)].count("entity:Ana") == 1
    assert brought(records)["entity:Ana"].fields["tags"] == ["person"]
    assert ("memory.jsonl:8", "entityType") in reported(records)
    assert texts(records).count("Prefers async reviews") == 1  # on lines 1 and 8
    assert ("memory.jsonl:8", "observations") in reported(records)  # the 42


def test_graph_a_repeated_relation_comes_once() -> None:
    records = read(mcp_memory.read, FOREIGN / "memory.jsonl")
    made = [r for r in records if isinstance(r, IncomingLink) and r.source_ref == "entity:Billing"]
    assert [(r.target_ref, r.type, r.where) for r in made] == [
        ("entity:Ledger", "depends_on", "memory.jsonl:9")]  # fmt: skip


def test_graph_lines_it_cannot_bring_are_reported_by_line() -> None:
    records = read(mcp_memory.read, FOREIGN / "memory.jsonl")
    where = {w for w, _ in reported(records)}
    # not JSON, a list, another type, no name, an undefined entity, a missing `to`
    assert {f"memory.jsonl:{n}" for n in (4, 5, 6, 7, 11, 12)} <= where
    assert "memory.jsonl:13" not in where  # a blank line is nothing to report
    assert "nameless secret-ish text" not in texts(records)


def test_graph_a_relation_may_come_before_its_entities(tmp_path: Path) -> None:
    records = read(mcp_memory.read, jsonl(tmp_path, relation("A", "depends on", "B"),
                                          entity("A"), entity("B")))  # fmt: skip
    assert links(records) == {("entity:A", "entity:B", "depends_on")}
    assert reported(records) == []


def test_graph_wrong_typed_fields_are_reported_and_the_entity_still_brought(
    tmp_path: Path,
) -> None:
    line = {"type": "entity", "name": "A", "entityType": 7, "observations": "Runs on Postgres"}
    records = read(mcp_memory.read, jsonl(tmp_path, line))
    assert brought(records)["entity:A"].fields["text"] == "A: an entity."
    assert reported(records) == [("memory.jsonl:1", "entityType"),
                                 ("memory.jsonl:1", "observations")]  # fmt: skip


def test_graph_refs_are_the_same_on_every_reading_and_differ_by_entity(tmp_path: Path) -> None:
    file = jsonl(tmp_path, entity("A", "shared"), entity("B", "shared"))
    first, again = read(mcp_memory.read, file), read(mcp_memory.read, file)
    assert first == again
    assert len([ref for ref in brought(first) if ref.startswith("obs:")]) == 2


def test_graph_a_bom_on_the_first_line_is_read_past(tmp_path: Path) -> None:
    file = jsonl(tmp_path, b"\xef\xbb\xbf" + json.dumps(entity("A")).encode() + b"\n")
    assert list(brought(read(mcp_memory.read, file))) == ["entity:A"]


def test_graph_a_huge_line_is_reported_and_the_next_line_read(tmp_path: Path) -> None:
    huge = json.dumps(entity("Big", "x" * (mcp_memory.MAX_LINE + 10))).encode() + b"\n"
    records = read(mcp_memory.read, jsonl(tmp_path, huge, entity("A")))
    assert list(brought(records)) == ["entity:A"]
    assert brought(records)["entity:A"].where == "memory.jsonl:2"
    assert reported(records) == [("memory.jsonl:1", None)]


@pytest.mark.parametrize(
    "line", [b"\xff\xfe not utf-8\n", b"[" * 100_000 + b"]" * 100_000 + b"\n", b"{}\n"]
)
def test_graph_a_line_it_cannot_read_is_reported_and_the_rest_read(
    tmp_path: Path, line: bytes
) -> None:
    records = read(mcp_memory.read, jsonl(tmp_path, line, entity("A")))
    assert list(brought(records)) == ["entity:A"]
    assert [where for where, _ in reported(records)] == ["memory.jsonl:1"]


def test_graph_an_empty_file_brings_and_reports_nothing(tmp_path: Path) -> None:
    assert read(mcp_memory.read, jsonl(tmp_path, b"")) == []


# -- mem0's JSON --------------------------------------------------------------------------


def test_mem0_a_memory_brings_its_text_kind_tags_time_and_user() -> None:
    memory = brought(read(mem0.read, FOREIGN / "mem0.json"))[
        "mem0:f38b689d-6b24-45b7-bced-17fbb4d8bac7"]  # fmt: skip
    assert memory.fields == {"kind": "decision", "text": "Prefers tea over coffee in the morning",
                             "tags": ["preferences", "food"],
                             "occurred_at": "2024-07-26T06:57:00.108347Z"}  # fmt: skip
    assert (memory.author, memory.notebook) == ("user:alex", "alex")


def test_mem0_an_agent_is_the_author_unless_a_user_is(tmp_path: Path) -> None:
    file = mem0_file(tmp_path, [{"id": "1", "memory": "a", "agent_id": "ops-bot"},
                                {"id": "2", "memory": "b", "agent_id": "ops-bot",
                                 "user_id": "alex"}])  # fmt: skip
    records = read(mem0.read, file)
    assert [(r.author, r.notebook) for r in brought(records).values()] == [
        ("agent:ops-bot", "ops-bot"), ("user:alex", "alex")]  # fmt: skip
    assert ("mem0.json:[1]", "agent_id") in reported(records)


def test_mem0_without_user_or_agent_is_ownerless_in_the_callers_notebook() -> None:
    records = read(mem0.read, FOREIGN / "mem0.json", "mine")
    memory = brought(records)["mem0:0b1c2d3e-0000-4000-8000-000000000003"]
    assert (memory.author, memory.notebook) == (None, "mine")
    assert memory.fields["occurred_at"] == "2024-01-02T00:00:00.000000Z"
    assert memory.fields["expires_at"] == "2030-01-01T00:00:00.000000Z"


@pytest.mark.parametrize("kind", ["rule", "orientation", "gossip", 3])
def test_mem0_a_kind_it_cannot_file_is_a_fact_and_reported(tmp_path: Path, kind: Any) -> None:
    file = mem0_file(tmp_path, [{"id": "1", "memory": "a", "metadata": {"kind": kind}}])
    records = read(mem0.read, file)
    assert brought(records)["mem0:1"].fields["kind"] == "fact"
    assert reported(records) == [("mem0.json:[0]", "metadata.kind")]


def test_mem0_fields_left_out_are_reported_once_per_name_with_a_count() -> None:
    records = read(mem0.read, FOREIGN / "mem0.json")
    hashes = [r for r in records if isinstance(r, Unmapped) and r.field == "hash"]
    assert len(hashes) == 1 and "2 memories" in hashes[0].reason
    fields = {field for _, field in reported(records)}
    assert {"updated_at", "run_id", "metadata.source_app", "created_at"} <= fields


def test_mem0_an_odd_field_name_is_counted_without_being_named(tmp_path: Path) -> None:
    file = mem0_file(tmp_path, [{"id": "1", "memory": "a", "ghp_token here!": 1}])
    records = read(mem0.read, file)
    [left_out] = [r for r in records if isinstance(r, Unmapped)]
    assert left_out.field is None and "ghp_token" not in left_out.reason


def test_mem0_a_bare_list_reads_as_the_results_do() -> None:
    records = read(mem0.read, FOREIGN / "mem0_list.json")
    [memory] = brought(records).values()
    assert (memory.where, memory.author, memory.fields["text"]) == (
        "mem0_list.json:[0]", "user:alex", "travelling to Paris")  # fmt: skip


def test_mem0_items_without_id_or_text_and_repeated_ids_are_reported() -> None:
    records = read(mem0.read, FOREIGN / "mem0.json")
    assert len(brought(records)) == 3
    first = brought(records)["mem0:f38b689d-6b24-45b7-bced-17fbb4d8bac7"]  # the id repeated
    assert first.fields["text"] == "Prefers tea over coffee in the morning"
    assert {("mem0.json:results[3]", "memory"), ("mem0.json:results[4]", "id"),
            ("mem0.json:results[5]", None), ("mem0.json:results[6]", "id")} <= set(
        reported(records))  # fmt: skip


def test_mem0_a_page_of_a_listing_and_graph_relations_are_reported() -> None:
    records = read(mem0.read, FOREIGN / "mem0.json")
    assert {("mem0.json", "next"), ("mem0.json", "relations")} <= set(reported(records))


@pytest.mark.parametrize(
    "content",
    [b"", b"\xff\xfe{}", b"[" * 100_000 + b"]" * 100_000, b'{"memories": []}', b'"a string"',
     b'{"results": {"id": "1"}}'],
    ids=["empty", "not-utf-8", "deeply-nested", "no-results", "a-string", "results-not-a-list"],
)  # fmt: skip
def test_mem0_a_file_it_cannot_read_is_one_report_and_nothing_brought(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "mem0.json"
    path.write_bytes(content)
    assert reported(read(mem0.read, path)) == [("mem0.json", None)]


def test_mem0_a_bom_is_read_past(tmp_path: Path) -> None:
    path = tmp_path / "mem0.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps([{"id": "1", "memory": "a"}]).encode())
    assert list(brought(read(mem0.read, path))) == ["mem0:1"]


@pytest.mark.parametrize("user", ["al\u200bex", " alex", "", 42])
def test_mem0_a_user_that_cannot_be_an_author_is_reported_and_ownerless(
    tmp_path: Path, user: Any
) -> None:
    records = read(mem0.read, mem0_file(tmp_path, [{"id": "1", "memory": "a", "user_id": user}]))
    assert (brought(records)["mem0:1"].author, brought(records)["mem0:1"].notebook) == (
        None, "caller")  # fmt: skip
    assert reported(records) == [("mem0.json:[0]", "user_id")]


def test_mem0_a_user_too_long_for_a_notebook_name_keeps_the_callers(tmp_path: Path) -> None:
    user = "u" * (mem0.MAX_NOTEBOOK + 1)
    records = read(mem0.read, mem0_file(tmp_path, [{"id": "1", "memory": "a", "user_id": user}]))
    memory = brought(records)["mem0:1"]
    assert (memory.author, memory.notebook) == (f"user:{user}", "caller")


# -- a folder of markdown notes ------------------------------------------------------------


def test_notes_front_matter_gives_title_tags_time_and_permalink() -> None:
    records = read(markdown_notes.read, FOREIGN / "notes")
    coffee = brought(records)["permalink:coffee-brewing-methods"]
    assert (coffee.fields["title"], coffee.fields["kind"]) == ("Coffee Brewing Methods", "note")
    assert coffee.fields["tags"] == ["coffee", "brewing"]
    assert coffee.fields["occurred_at"] == "2025-10-24T00:00:00.000000Z"
    assert coffee.fields["text"].startswith("# Coffee Brewing Methods\n\nPour over")
    tea = brought(records)["path:Tea Brewing.md"]  # no front matter: the file's stem
    assert tea.fields == {"title": "Tea Brewing", "kind": "note",
                          "text": "Tea is brewed at lower temperatures than coffee."}  # fmt: skip


def test_notes_a_type_of_ours_is_the_kind_and_another_is_a_tag() -> None:
    records = read(markdown_notes.read, FOREIGN / "notes")
    assert brought(records)["path:projects/auth/design.md"].fields["kind"] == "decision"
    paul = brought(records)["permalink:paul-graham"]
    assert (paul.fields["kind"], paul.fields["tags"]) == ("note", ["essays", "lisp", "Person"])


def test_notes_a_rule_without_its_falsifier_is_a_note(tmp_path: Path) -> None:
    write(tmp_path, "r.md", "---\ntype: rule\ntags: '#a, #b'\n---\nNever push on Friday.\n")
    [note] = brought(read(markdown_notes.read, tmp_path)).values()
    assert (note.fields["kind"], note.fields["tags"]) == ("note", ["a", "b", "rule"])


def test_notes_the_first_time_given_is_the_time_and_the_others_reported(tmp_path: Path) -> None:
    write(tmp_path, "t.md", "---\ndate: 2024-01-02\ncreated: 2023-05-06T07:08:09+02:00\n---\nx\n")
    records = read(markdown_notes.read, tmp_path)
    assert brought(records)["path:t.md"].fields["occurred_at"] == "2023-05-06T05:08:09.000000Z"
    assert ("t.md", "date") in reported(records)


def test_notes_a_folder_is_the_notebook_and_the_top_the_callers() -> None:
    records = read(markdown_notes.read, FOREIGN / "notes", "mine")
    assert brought(records)["path:projects/auth/design.md"].notebook == "projects/auth"
    assert brought(records)["permalink:paul-graham"].notebook == "people"
    assert brought(records)["path:Tea Brewing.md"].notebook == "mine"


def test_notes_observations_are_memories_part_of_their_note() -> None:
    records = read(markdown_notes.read, FOREIGN / "notes")
    observed = {r.fields["text"]: r for r in brought(records).values()
                if r.ref.startswith("obs:permalink:coffee")}  # fmt: skip
    method = observed["Pour over provides more flavor clarity than French press"]
    assert (method.fields["kind"], method.fields["tags"]) == ("fact", ["method"])
    assert method.fields["title"] == "Coffee Brewing Methods"
    assert (method.ref, "permalink:coffee-brewing-methods", "part_of") in links(records)
    decided = observed["Buy a burr grinder (after the taste test)"]  # the context kept
    assert decided.fields["kind"] == "decision" and "tags" not in decided.fields
    temperature = observed["Water temperature at 205F extracts optimal compounds #brewing"]
    assert temperature.fields["tags"] == ["technique", "brewing"]
    assert len(observed) == 3  # not the task, the timestamp or the fenced line


def test_notes_relations_and_wiki_links_are_links() -> None:
    records = read(markdown_notes.read, FOREIGN / "notes")
    coffee, design = "permalink:coffee-brewing-methods", "path:projects/auth/design.md"
    assert {(design, coffee, "depends_on"), (coffee, "path:Tea Brewing.md", "relates_to"),
            (coffee, "permalink:paul-graham", "relates_to")} <= links(records)  # fmt: skip
    assert "Coffee Brewing Methods requires Paul Graham" in texts(records)  # the verb kept
    assert "Authentication Design depends_on Coffee Brewing Methods" not in texts(records)


def test_notes_a_link_to_no_note_is_reported_and_fenced_code_not_read() -> None:
    records = read(markdown_notes.read, FOREIGN / "notes")
    where = [w for w, _ in reported(records)]
    assert "coffee.md:24" in where  # inspired_by [[Missing Note]]
    assert not [w for w in where if w.startswith("coffee.md:") and int(w.split(":")[1]) > 24]


def test_notes_keys_and_files_left_out_are_reported_once_with_a_count(tmp_path: Path) -> None:
    for name in ("a.md", "b.md"):
        write(tmp_path, name, "---\nmodified: 2025-01-01\ncustom: 1\n---\nx\n")
    write(tmp_path, "one.png", b"\x89PNG")
    write(tmp_path, "two.txt", "not a note")
    records = read(markdown_notes.read, tmp_path)
    unmapped = [r for r in records if isinstance(r, Unmapped)]
    assert {(r.field, r.where) for r in unmapped} == {
        (None, "one.png"), ("custom", "a.md"), ("modified", "a.md")}  # fmt: skip
    assert all("2 " in r.reason for r in unmapped)


def test_notes_hidden_files_and_folders_are_skipped(tmp_path: Path) -> None:
    write(tmp_path, ".obsidian/workspace.md", "x")
    write(tmp_path, ".hidden.md", "x")
    write(tmp_path, "seen.md", "x")
    assert read(markdown_notes.read, tmp_path) == [
        Incoming("path:seen.md", "seen.md", "caller", {"title": "seen", "kind": "note",
                                                        "text": "x"})]  # fmt: skip


def test_notes_our_export_index_is_skipped_but_a_readme_of_ones_own_is_read(
    tmp_path: Path,
) -> None:
    write(tmp_path, "README.md", "---\npalimpsest: markdown export\n---\n# Memory\n- [a](b.md)\n")
    write(tmp_path, "team/README.md", "# Team\nWe meet on Mondays.\n")
    records = read(markdown_notes.read, tmp_path)
    assert list(brought(records)) == ["path:team/README.md"]
    assert reported(records) == []


def test_notes_a_repeated_id_or_permalink_keeps_the_first(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "---\npermalink: same\n---\nfirst\n")
    write(tmp_path, "b.md", "---\npermalink: same\n---\nsecond\n")
    records = read(markdown_notes.read, tmp_path)
    assert texts(records) == ["first"]
    assert reported(records) == [("b.md", None)]


def test_notes_a_note_of_ours_is_its_fields_and_its_body_only_text() -> None:
    records = read(markdown_notes.read, FOREIGN / "export")
    pool, rule = brought(records)["id:mem_01hx7k2m"], brought(records)["id:mem_02ab9c"]
    assert (pool.status, pool.author, pool.fields["key"]) == ("superseded", "user:ana", "db.pool")
    assert pool.fields["text"].endswith("not an observation [[Nowhere]]")
    assert len(brought(records)) == 2 and links(records) == set()  # nothing read from a body
    assert (rule.fields["kind"], rule.fields["severity"]) == ("rule", "costly")
    assert rule.fields["falsifier"] == "a force push that lost no work"


# -- hostile notes --------------------------------------------------------------------------


def test_notes_a_python_tag_constructs_nothing(tmp_path: Path) -> None:
    made = tmp_path / "made-by-yaml"
    tag = f"!!python/object/apply:builtins.open [{str(made)!r}, w]"
    write(tmp_path, "notes/evil.md", f"---\ntitle: {tag}\n---\nx\n")
    write(tmp_path, "notes/fixture.md", (FOREIGN / "notes" / "hostile.md").read_bytes())
    records = read(markdown_notes.read, tmp_path / "notes")
    assert not made.exists()
    assert reported(records) == [("evil.md", None), ("fixture.md", None)]
    assert brought(records) == {}


def bombs() -> dict[str, str]:
    laughs = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    merges = ["a: &a {k: v}"]
    for before, name in zip("abcdefgh", "bcdefghi", strict=True):
        laughs.append(f"{name}: &{name} [{', '.join([f'*{before}'] * 9)}]")
        merges.append(f"{name}: &{name} {{<<: [{', '.join([f'*{before}'] * 9)}]}}")
    return {"laughs": "\n".join(laughs), "merges": "\n".join(merges),
            "itself": "a: &a [*a]", "merges-itself": "a: &a {<<: *a}"}  # fmt: skip


@pytest.mark.parametrize("name", ["laughs", "itself"])
def test_notes_an_alias_bomb_is_refused_quickly(tmp_path: Path, name: str) -> None:
    write(tmp_path, "bomb.md", f"---\n{bombs()[name]}\n---\nboom\n")
    records = within(10, lambda: read(markdown_notes.read, tmp_path))
    assert reported(records) == [("bomb.md", None)] and brought(records) == {}


@pytest.mark.parametrize("name", ["merges", "merges-itself"])
def test_notes_a_merge_key_bomb_is_read_quickly_to_its_few_keys(tmp_path: Path, name: str) -> None:
    # PyYAML before its merge-key fix expands `<<: [*a, *a, ...]` level by level: 9**8 pairs
    write(tmp_path, "bomb.md", f"---\n{bombs()[name]}\n---\nboom\n")
    records = within(10, lambda: read(markdown_notes.read, tmp_path))
    assert texts(records) == ["boom"]  # its keys have no place here: reported, not kept


@pytest.mark.parametrize(
    "front",
    ["- a list", "just a string", "42", "x: " + "[" * 50_000 + "]" * 50_000, "a: b: c",
     "date: 2025-02-30"],
    ids=["list", "string", "number", "nested-too-deep", "not-yaml", "no-such-date"],
)  # fmt: skip
def test_notes_front_matter_that_is_no_mapping_refuses_the_note_alone(
    tmp_path: Path, front: str
) -> None:
    write(tmp_path, "bad.md", f"---\n{front}\n---\nbody\n")
    write(tmp_path, "good.md", "fine\n")
    records = read(markdown_notes.read, tmp_path)
    assert reported(records) == [("bad.md", None)] and list(brought(records)) == ["path:good.md"]


def test_notes_a_symlink_out_of_the_folder_is_reported_and_never_read(tmp_path: Path) -> None:
    write(tmp_path, "outside/secret.md", "the outside secret\n")
    write(tmp_path, "outside/dir/more.md", "more outside\n")
    write(tmp_path, "notes/own.md", "own\n")
    os.symlink(tmp_path / "outside" / "secret.md", tmp_path / "notes" / "leak.md")
    os.symlink(tmp_path / "outside" / "dir", tmp_path / "notes" / "leakdir")
    records = read(markdown_notes.read, tmp_path / "notes")
    assert texts(records) == ["own"]
    assert sorted(reported(records)) == [("leak.md", None), ("leakdir", None)]


def test_notes_a_symlink_inside_the_folder_is_read_once_at_its_own_place(
    tmp_path: Path,
) -> None:
    write(tmp_path, "real/note.md", "once\n")
    os.symlink("real/note.md", tmp_path / "alias.md")
    os.symlink("real", tmp_path / "aliasdir")
    records = read(markdown_notes.read, tmp_path)
    assert list(brought(records)) == ["path:real/note.md"] and reported(records) == []


def test_notes_a_symlink_loop_is_skipped_not_a_crash(tmp_path: Path) -> None:
    os.symlink("loop.md", tmp_path / "loop.md")
    os.symlink("b.md", tmp_path / "a.md")
    os.symlink("a.md", tmp_path / "b.md")
    os.symlink("loopdir", tmp_path / "loopdir")
    write(tmp_path, "own.md", "own\n")
    records = read(markdown_notes.read, tmp_path)
    assert texts(records) == ["own"]
    assert sorted(reported(records)) == [("a.md", None), ("b.md", None), ("loop.md", None),
                                         ("loopdir", None)]  # fmt: skip


def test_notes_a_fifo_in_the_folder_does_not_block(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    write(tmp_path, "own.md", "own\n")
    records = within(10, lambda: read(markdown_notes.read, tmp_path))
    assert texts(records) == ["own"] and reported(records) == [("pipe.md", None)]


def test_notes_bytes_that_are_not_utf8_refuse_that_note_alone(tmp_path: Path) -> None:
    write(tmp_path, "latin.md", b"caf\xe9\n")
    write(tmp_path, "own.md", "own\n")
    records = read(markdown_notes.read, tmp_path)
    assert texts(records) == ["own"] and reported(records) == [("latin.md", None)]


def test_notes_a_bom_before_the_front_matter_is_read_past(tmp_path: Path) -> None:
    write(tmp_path, "bom.md", b"\xef\xbb\xbf---\ntitle: Kept\n---\nbody\n")
    [note] = brought(read(markdown_notes.read, tmp_path)).values()
    assert (note.fields["title"], note.fields["text"]) == ("Kept", "body")


@pytest.mark.parametrize("content", ["", "---\n---\n", "\n\n  \n"])
def test_notes_an_empty_note_is_its_file_name(tmp_path: Path, content: str) -> None:
    write(tmp_path, "Empty idea.md", content)
    [note] = brought(read(markdown_notes.read, tmp_path)).values()
    assert note.fields == {"title": "Empty idea", "kind": "note", "text": "Empty idea"}


@pytest.mark.parametrize(
    "line", ["- [" + "](" * 60_000, "- " + "[[" * 100_000, "- #" + "(" * 200_000 + ")",
             "- " + "[a" * 100_000 + "]] x", "x" * 900_000],
)  # fmt: skip
def test_notes_a_single_huge_line_is_read_quickly(tmp_path: Path, line: str) -> None:
    write(tmp_path, "huge.md", line + "\n")
    records = within(10, lambda: read(markdown_notes.read, tmp_path))
    assert brought(records)["path:huge.md"].fields["text"] == line


def test_notes_a_note_larger_than_the_limit_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "big.md", "x" * (markdown_notes.MAX_NOTE_BYTES + 1))
    assert read(markdown_notes.read, tmp_path) == [
        Unmapped("big.md", f"this note is larger than {markdown_notes.MAX_NOTE_BYTES} bytes; "
                 "not read")]  # fmt: skip


# -- our markdown export, read back -------------------------------------------------------


def memory(ident: str, **fields: Any) -> Memory:
    return Memory(**{"id": ident, "workspace": "w", "notebook_id": "nb_1", "kind": "fact",
                     "text": "t", "version": 1, "recorded_at": "2026-01-01T00:00:00.000000Z",
                     "author": "user:ana", "owner": "user:ana", **fields})  # fmt: skip


def test_our_export_reads_back_exactly(tmp_path: Path) -> None:
    notebook = Notebook("nb_1", "w", "web/shop ünï", "2026-01-01T00:00:00.000000Z")
    text = "We use Stripe.\n- [fact] not an observation [[m_2]]\n---\nend  \n"
    pay = memory("m_1", kind="decision", title="Payments", text=text,
                 tags=("#money", "vendors", "2024"))  # fmt: skip
    hooks = memory("m_2", text="\n  Webhooks live at /hooks", status="superseded")
    made = {"m_1": [Link("l_1", "w", "m_1", "m_2", "depends_on", "2026", "user:ana")], "m_2": []}
    write_markdown(tmp_path, [notebook], [pay, hooks], lambda ident: made[ident])
    records = read(markdown_notes.read, tmp_path, "elsewhere")
    back = brought(records)
    assert back["id:m_1"].fields == {"kind": "decision", "title": "Payments", "text": pay.text,
                                     "tags": ["#money", "vendors", "2024"]}  # fmt: skip
    assert back["id:m_2"].fields == {"kind": "fact", "text": hooks.text}  # no title made up
    assert {r.notebook for r in back.values()} == {"web/shop ünï"}
    assert [(r.author, r.status) for r in back.values()] == [
        ("user:ana", "active"), ("user:ana", "superseded")]  # fmt: skip
    assert links(records) == {("id:m_1", "id:m_2", "depends_on")}


def test_graph_fields_the_server_does_not_write_are_reported_once_per_name(
    tmp_path: Path,
) -> None:
    lines = [{**entity("Billing", "Runs on Fridays"), "createdAt": "2026-01-01"},
             {**entity("Ana"), "createdAt": "2026-01-02", "an odd key!": 1},
             {**relation("Ana", "works_on", "Billing"), "weight": 2}]  # fmt: skip
    records = read(mcp_memory.read, jsonl(tmp_path, *lines))
    assert {"entity:Billing", "entity:Ana"} <= set(brought(records))
    left = [(r.field, r.reason) for r in records if isinstance(r, Unmapped)]
    assert sorted(f or "" for f, _ in left) == ["", "createdAt", "weight"]
    assert next(reason for f, reason in left if f == "createdAt").count("2 entities") == 1
