"""What is forgotten stays forgotten through a markdown folder (issue 30, item 14).

The attack: `palimpsest export --markdown DIR` (kept in git, as the docs suggest), forget a
memory, import the folder again: the forgotten text was filed anew under an id derived
from the folder, with no word said. Now a note whose front matter names a memory (or a
version) forgotten here is refused, and reported by that id, never by its text.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from palimpsest.service import Service

from .test_transfer_attack import leaked

PHONE = "Ana's phone is 555 0101"


def _folder(service: Service, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    kept = service.remember(notebook="web", kind="fact", text="Webhooks live at /hooks")["id"]
    gone = service.remember(notebook="web", kind="note", text=PHONE)["id"]
    folder = tmp_path / "memory"
    service.export_markdown(folder)
    return folder, {"kept": kept, "gone": gone}


def _note(folder: Path, memory_id: str) -> Path:
    [path] = folder.glob(f"nb_*/{memory_id}.md")
    return path


def _texts(service: Service) -> list[str]:
    with service.store.read(service.workspace) as tx:
        return sorted(m.text for m in tx.memories_at(None))


def _refused_forgotten(answer: dict[str, Any], memory_id: str) -> None:
    """The answer refuses the note by the forgotten id, and never repeats its text."""
    refused = [r for r in answer.get("refused", []) if r["id"] == memory_id]
    assert len(refused) == 1 and refused[0]["field"] == "id", answer
    assert refused[0]["where"].endswith(f"{memory_id}.md")
    assert answer["counts"]["refused"] == 1 and "imported" not in answer["counts"]
    assert PHONE not in json.dumps(answer) and "555 0101" not in json.dumps(answer)


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_note_of_a_memory_forgotten_here_is_refused_by_its_id(
    service: Service, tmp_path: Path, dry_run: bool
) -> None:
    folder, ids = _folder(service, tmp_path)
    service.forget(id=ids["gone"], because="personal data")
    answer = service.import_file(folder, source_format="markdown", dry_run=dry_run)
    _refused_forgotten(answer, ids["gone"])
    assert answer["counts"]["duplicates"] == 1  # the memory still here is itself
    assert _texts(service) == ["Webhooks live at /hooks"]
    assert leaked(service, "555 0101", tmp_path) == []


def _spelled_otherwise(path: Path, memory_id: str) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(f"id: {memory_id}\n", f"id: '  {memory_id.upper()} '\n", 1),
                    encoding="utf-8")  # fmt: skip


def _other_text(path: Path, memory_id: str) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(PHONE, "Ana can be called at home"), encoding="utf-8")


def _front_matter_cut(path: Path, memory_id: str) -> None:
    path.write_text(path.read_text(encoding="utf-8").split("---\n", 2)[2], encoding="utf-8")


@pytest.mark.parametrize("edit", [_spelled_otherwise, _other_text, _front_matter_cut])
def test_a_note_naming_the_forgotten_id_otherwise_or_with_other_text_is_refused(
    service: Service, tmp_path: Path, edit: Any
) -> None:
    folder, ids = _folder(service, tmp_path)
    service.forget(id=ids["gone"], because="personal data")
    edit(_note(folder, ids["gone"]), ids["gone"])
    answer = service.import_file(folder, source_format="markdown")
    _refused_forgotten(answer, ids["gone"])
    assert _texts(service) == ["Webhooks live at /hooks"]


def test_a_note_of_a_version_forgotten_here_is_refused(service: Service, tmp_path: Path) -> None:
    folder, ids = _folder(service, tmp_path)  # the note holds version 1, the phone number
    service.revise(id=ids["gone"], text="Ana's phone: ask her")
    service.forget(id=ids["gone"], version=1, because="personal data")
    answer = service.import_file(folder, source_format="markdown")
    _refused_forgotten(answer, ids["gone"])
    assert _texts(service) == ["Ana's phone: ask her", "Webhooks live at /hooks"]


def test_the_folder_still_comes_back_whole_where_nothing_was_forgotten(
    service: Service, tmp_path: Path
) -> None:
    folder, _ = _folder(service, tmp_path)
    answer = service.import_file(folder, source_format="markdown")
    assert "refused" not in answer and answer["counts"]["duplicates"] == 2


def test_the_cli_refuses_the_forgotten_note_as_the_attack_ran_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    db, folder = tmp_path / "a.db", tmp_path / "memory"
    run = [sys.executable, "-m", "palimpsest", "--db", str(db), "--json"]

    def cli(*args: str) -> dict[str, Any]:
        done = subprocess.run([*run, *args], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "555 0101" not in done.stdout + done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    cli("remember", "-n", "web", "--kind", "fact", "Webhooks live at /hooks")
    gone = cli("remember", "-n", "web", "--kind", "note", PHONE)["id"]
    cli("export", "--markdown", str(folder))
    cli("forget", gone, "--because", "personal data")
    answer = cli("import", str(folder), "--from", "markdown")
    _refused_forgotten(answer, gone)
    for part in tmp_path.glob("a.db*"):
        assert b"555 0101" not in part.read_bytes()
