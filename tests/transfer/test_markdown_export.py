"""The markdown export (issue 13): a folder per notebook and a file per memory, on both
stores. Its files hold a memory's text as the body and every other field in front matter;
exporting again rewrites only what changed and removes only its own stale files; and
`import --from markdown` reads the folder back into another store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from palimpsest.domain.errors import ValidationError
from palimpsest.service import Service

from .test_transfer import fresh_stores


def notes(service: Service) -> dict[str, str]:
    service.create_notebook(name="web", summary="the shop")
    remember = service.remember
    pay = remember(notebook="web", kind="decision", title="Payments", text="We use Stripe.",
                   why="it does refunds", tags=["money", "vendors"], key="pay")["id"]  # fmt: skip
    hooks = remember(notebook="web", kind="fact", text="Webhooks live at /hooks\n\n---\nv2 soon")
    service.link(source=pay, target=hooks["id"], type="depends_on")
    old = remember(notebook="ops", kind="fact", title="Queue size", text="The queue holds 100")
    service.revise(id=old["id"], status="superseded", note="raised to 200")
    with service.store.read(service.workspace) as tx:
        folders = {nb.name: nb.id for nb in tx.list_notebooks()}
    return {"pay": pay, "hooks": hooks["id"], "old": old["id"], **folders}


def front(path: Path) -> tuple[dict[str, Any], str]:
    """(front matter, body) of a file the export wrote."""
    _, meta, body = path.read_text(encoding="utf-8").split("---\n", 2)
    return yaml.safe_load(meta), body


def files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*")
            if p.is_file()}  # fmt: skip


def test_each_memory_is_a_file_with_its_fields_in_front_matter(
    service: Service, tmp_path: Path
) -> None:
    ids = notes(service)
    out = tmp_path / "memory"
    answer = service.export_markdown(out)
    assert answer | {"directory": None} == {"directory": None, "notebooks": 2, "memories": 3,
                                            "written": 4, "unchanged": 0, "removed": 0}  # fmt: skip
    meta, body = front(out / ids["web"] / f"{ids['pay']}.md")
    assert body == "\nWe use Stripe.\n"
    assert meta["id"] == ids["pay"] and meta["notebook"] == "web"
    assert (meta["kind"], meta["title"], meta["why"]) == ("decision", "Payments", "it does refunds")
    assert meta["tags"] == ["money", "vendors"] and meta["key"] == "pay"
    assert meta["author"] == service.actor and meta["version"] == 2  # linked: version 2
    assert meta["links"] == [{"type": "depends_on", "to": ids["hooks"]}]
    _, body = front(out / ids["web"] / f"{ids['hooks']}.md")
    assert body == "\nWebhooks live at /hooks\n\n---\nv2 soon\n"  # a rule in the text is text
    meta, _ = front(out / ids["ops"] / f"{ids['old']}.md")
    assert (meta["status"], meta["status_note"]) == ("superseded", "raised to 200")
    index = (out / "README.md").read_text(encoding="utf-8")
    assert f"## web (2, in {ids['web']}/)" in index
    assert f"[Payments]({ids['web']}/{ids['pay']}.md) — decision" in index
    assert f"~~[Queue size]({ids['ops']}/{ids['old']}.md)~~ — fact, superseded" in index


def test_exporting_again_rewrites_only_what_changed(service: Service, tmp_path: Path) -> None:
    ids = notes(service)
    out = tmp_path / "memory"
    service.export_markdown(out)
    before = files(out)
    again = service.export_markdown(out)
    assert (again["written"], again["unchanged"], again["removed"]) == (0, 4, 0)
    assert files(out) == before  # the same memories, the same bytes
    (out / ids["web"] / "draft.md").write_text("my own note\n", encoding="utf-8")
    (out / ids["web"] / "m_00000000000000000000.md").write_text("not ours\n", encoding="utf-8")
    service.revise(id=ids["hooks"], append="v2 is out")
    service.forget(id=ids["old"], because="noise")
    third = service.export_markdown(out)
    assert (third["written"], third["removed"]) == (2, 1)  # the file and the index
    assert not (out / ids["ops"]).exists()  # its only memory was forgotten
    assert (out / ids["web"] / "draft.md").exists()
    assert (out / ids["web"] / "m_00000000000000000000.md").exists()
    assert "v2 is out" in (out / ids["web"] / f"{ids['hooks']}.md").read_text(encoding="utf-8")
    assert not list(out.rglob(".*.partial"))


def test_names_come_from_ids_never_from_text(service: Service, tmp_path: Path) -> None:
    ids = notes(service)
    for name in ("../../escape", "..", "Web", "README.md"):
        service.remember(notebook=name, kind="fact", title="../../x", text=f"filed in {name}")
    out = tmp_path / "memory"
    assert service.export_markdown(out, notebooks=["ops"])["memories"] == 1
    assert sorted(p.name for p in out.iterdir()) == sorted(["README.md", ids["ops"]])
    everything = tmp_path / "all"
    service.export_markdown(everything)
    written = [p.relative_to(everything) for p in everything.rglob("*") if p.is_file()]
    assert all(p.name == "README.md" or (p.parent.name.startswith("nb_")
               and p.name.startswith("m_")) for p in written)  # fmt: skip
    assert {"all", "memory"} == {p.name for p in tmp_path.iterdir() if p.is_dir()}


def test_a_file_where_the_folder_goes_is_refused(service: Service, tmp_path: Path) -> None:
    notes(service)
    taken = tmp_path / "memory"
    taken.write_text("something else", encoding="utf-8")
    with pytest.raises(ValidationError) as refused:
        service.export_markdown(taken)
    assert refused.value.field == "markdown"
    assert taken.read_text(encoding="utf-8") == "something else"


def test_the_folder_imports_back_into_another_store(service: Service, tmp_path: Path) -> None:
    ids = notes(service)
    out = tmp_path / "memory"
    service.export_markdown(out)
    with fresh_stores(tmp_path) as stores:
        for store in stores:
            other = Service(store)
            answer = other.import_file(out, source_format="markdown")
            assert answer["counts"]["imported"] == 3 and "refused" not in answer
            assert answer["counts"]["links"] == 1
            [pay] = other.recall(query="Stripe")["hits"]
            shown = other.inspect(id=pay["id"])
            memory = shown["memory"]
            assert (memory["notebook"], memory["kind"], memory["title"]) == (
                "web", "decision", "Payments")  # fmt: skip
            assert (memory["why"], memory["tags"], memory["key"]) == (
                "it does refunds", ["money", "vendors"], "pay")  # fmt: skip
            assert memory["author"] == service.actor
            assert [link["type"] for link in shown["links"]] == ["depends_on"]
            [old] = other.recall(query="queue", include_retired=True)["hits"]
            assert old["status"] == "superseded"
            assert ids["pay"] != pay["id"]  # ids derive from the file: never another's


def test_the_cli_writes_the_folder(tmp_path: Path, env: dict[str, str]) -> None:
    db, out = tmp_path / "a.db", tmp_path / "memory"
    run = [sys.executable, "-m", "palimpsest", "--db", str(db)]
    subprocess.run([*run, "remember", "-n", "web", "--kind", "fact", "Webhooks at /hooks"],
                   env=env, check=True, capture_output=True)  # fmt: skip
    done = subprocess.run([*run, "export", "--markdown", str(out), "--json"], env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["memories"] == 1
    [file] = out.glob("nb_*/m_*.md")
    assert file.read_text(encoding="utf-8").endswith("\n\nWebhooks at /hooks\n")


def test_a_link_in_place_of_a_notebook_folder_is_refused_and_nothing_written_through_it(
    service: Service, tmp_path: Path
) -> None:
    ids = notes(service)
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "md"
    out.mkdir()
    (out / ids["web"]).symlink_to(outside, target_is_directory=True)
    with pytest.raises(ValidationError) as refused:
        service.export_markdown(out)
    assert refused.value.to_dict()["field"] == "markdown"
    assert list(outside.iterdir()) == []
    assert not (out / "README.md").exists()  # refused before anything is written


def test_a_link_where_the_export_writes_its_temporary_file_is_not_written_through(
    service: Service, tmp_path: Path
) -> None:
    ids = notes(service)
    out = tmp_path / "md"
    (out / ids["web"]).mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    (out / ids["web"] / f".{ids['pay']}.md.partial").symlink_to(victim)
    (out / ".README.md.partial").symlink_to(victim)
    service.export_markdown(out)
    assert victim.read_text(encoding="utf-8") == "precious"
    assert front(out / ids["web"] / f"{ids['pay']}.md")[0]["id"] == ids["pay"]


def test_a_readme_of_ones_own_in_the_folder_is_never_overwritten(
    service: Service, tmp_path: Path
) -> None:
    notes(service)
    out = tmp_path / "repo"
    out.mkdir()
    mine = b"# My project\n\nHow to build it.\n"
    (out / "README.md").write_bytes(mine)
    with pytest.raises(ValidationError) as refused:
        service.export_markdown(out)
    assert refused.value.to_dict()["field"] == "markdown"
    assert files(out) == {"README.md": mine}  # refused before anything was written
    service.export_markdown(tmp_path / "memory")  # a folder of its own: the index is ours
    service.export_markdown(tmp_path / "memory")  # and again: ours, rewritten in place


# -- a destination reached through a symbolic link (issue 30, item 14) ------------------------


def _link_to_folder(tmp_path: Path, outside: Path) -> Path:
    (tmp_path / "link").symlink_to(outside, target_is_directory=True)
    return tmp_path / "link"


def _dangling_link(tmp_path: Path, outside: Path) -> Path:
    (tmp_path / "link").symlink_to(outside / "not-yet", target_is_directory=True)
    return tmp_path / "link"


def _link_to_a_file(tmp_path: Path, outside: Path) -> Path:
    (outside / "notes.txt").write_text("mine", encoding="utf-8")
    (tmp_path / "link").symlink_to(outside / "notes.txt")
    return tmp_path / "link"


def _under_a_linked_folder(tmp_path: Path, outside: Path) -> Path:
    (tmp_path / "repo").symlink_to(outside, target_is_directory=True)
    return tmp_path / "repo" / "memory"


def _an_existing_file(tmp_path: Path, outside: Path) -> Path:
    (tmp_path / "memory").write_text("mine", encoding="utf-8")
    return tmp_path / "memory"


@pytest.mark.parametrize(
    "destination",
    [_link_to_folder, _dangling_link, _link_to_a_file, _under_a_linked_folder, _an_existing_file],
)
def test_the_cli_never_exports_through_a_link_and_writes_nothing(
    tmp_path: Path, env: dict[str, str], destination: Any
) -> None:
    db, outside = tmp_path / "a.db", tmp_path / "outside"
    outside.mkdir()
    run = [sys.executable, "-m", "palimpsest", "--db", str(db)]
    subprocess.run([*run, "remember", "-n", "web", "--kind", "fact", "Webhooks at /hooks"],
                   env=env, check=True, capture_output=True)  # fmt: skip
    before = files(tmp_path)
    out = destination(tmp_path, outside)
    made = files(tmp_path)
    done = subprocess.run([*run, "--json", "export", "--markdown", str(out)], env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode != 0
    refusal = json.loads(done.stdout or done.stderr)
    assert (refusal["error_class"], refusal["field"]) == ("validation", "markdown")
    assert files(tmp_path) == made and set(made) >= set(before)  # nothing written anywhere
    folders = [p.name for p in tmp_path.rglob("*") if p.is_dir() and not p.is_symlink()]
    assert folders == ["outside"]
