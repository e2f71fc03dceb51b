"""LoCoMo's conversations filed as memories, for `palimpsest bench recall --locomo DIR`.

LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents",
ACL 2024) is licensed for evaluation only: it is read from the folder a user names, never
shipped. The folder holds, per conversation `<id>`, `<id>.memories.jsonl` (one dialog
turn a line: id, speaker, text, session, session_date_time) and `<id>.questions.jsonl`
(question, evidence: the dialog ids that answer it, category 1-5).

Each turn is filed as one memory ("<speaker>: <text>", kind note, in a notebook named
after the conversation, occurred_at the session's date) by its speaker (`user:<speaker>`,
as a team's members file their own memories); each question is asked in its
conversation's notebook and scored against its evidence turns.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..domain.errors import ValidationError
from ..embed import load_embedder
from ..screening import gate
from ..service import Service
from ..store import open_store
from .bench import Progress, Question, compare, jsonl_rows, quiet

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
MEMORIES = ".memories.jsonl"


@dataclass(frozen=True)
class Filed:
    questions: list[Question]
    labels: dict[str, list[str]]  # memory id -> the dialog ids it stands for
    refused: int  # turns the write gate refused (a secret-looking text): not filed
    turns: int  # turns read, filed or not
    unfiled: list[str]  # conversations none of whose turns was filed: their questions left out


@dataclass(frozen=True)
class Conversation:
    name: str
    turns: list[dict[str, Any]]
    questions: list[dict[str, Any]]


def read_locomo(folder: Path) -> list[Conversation]:
    """Every conversation in `folder`; refused, naming what is missing, when there is none."""
    if not folder.is_dir():
        raise ValidationError(
            "--locomo must name a folder of <id>.memories.jsonl and <id>.questions.jsonl "
            "files (LoCoMo converted, see docs/recall.md).",
            field="locomo",
        )
    found = sorted(folder.glob(f"*{MEMORIES}"))
    if not found:
        raise ValidationError("the --locomo folder holds no *.memories.jsonl.", field="locomo")
    conversations = []
    for path in found:
        name = path.name.removesuffix(MEMORIES)
        questions = path.with_name(f"{name}.questions.jsonl")
        conversations.append(
            Conversation(name, jsonl_rows(path, "locomo"), jsonl_rows(questions, "locomo"))
        )
    return conversations


def occurred_at(session_date_time: Any) -> str | None:
    """'1:56 pm on 8 May, 2023' as RFC 3339 (no zone is given: taken as UTC), else None."""
    try:
        moment = datetime.strptime(str(session_date_time).strip(), "%I:%M %p on %d %B, %Y")
    except ValueError:
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:00Z")


def file_locomo(
    service: Service, conversations: list[Conversation], progress: Progress = quiet
) -> Filed:
    """File every turn and read the questions (a turn that repeats an earlier one of its
    conversation is filed once, as a duplicate, and stands for both)."""
    labels: dict[str, list[str]] = defaultdict(list)
    questions: list[Question] = []
    refused = 0
    filed_in: set[str] = set()
    turns = [(c.name, turn) for c in conversations for turn in c.turns]
    speakers: dict[str, Service] = {}
    for notebook, turn in progress("filing", turns):
        fields: dict[str, Any] = {"notebook": notebook, "kind": "note"}
        fields["text"] = f"{turn.get('speaker', '')}: {turn.get('text', '')}"
        when = occurred_at(turn.get("session_date_time"))
        if when:
            fields["occurred_at"] = when
        try:
            filed = _speaker(service, turn.get("speaker"), speakers).remember(**fields)
        except ValidationError:  # the write gate's refusal: that turn cannot be found
            refused += 1
            continue
        labels[filed["id"]].append(f"{notebook} {turn.get('id')}")
        filed_in.add(notebook)
    unfiled = [c.name for c in conversations if c.name not in filed_in]
    for c in conversations:
        if c.name in unfiled:  # no notebook to ask in, no turn to find
            continue
        for q in c.questions:
            evidence = tuple(f"{c.name} {e}" for e in q.get("evidence") or ())
            if isinstance(q.get("question"), str) and evidence:
                number = q.get("category")
                category = CATEGORIES.get(number, str(number)) if isinstance(number, int) else None
                questions.append(Question(q["question"], evidence, category, c.name))
    return Filed(questions, dict(labels), refused, len(turns), unfiled)


def _speaker(service: Service, speaker: Any, speakers: dict[str, Service]) -> Service:
    """`service` acting as the turn's speaker; as itself for a name no actor may hold."""
    name = str(speaker or "").strip()
    if name not in speakers:
        try:
            speakers[name] = service.with_actor(f"user:{name}")
        except ValidationError:
            speakers[name] = service
    return speakers[name]


def check_filed(filed: Filed) -> None:
    """Refuse a folder that leaves nothing to measure, saying what happened instead."""
    if not filed.labels:
        if filed.turns == 0:
            happened = "its *.memories.jsonl files hold no dialog turn"
        else:
            happened = (f"the write gate refused all {filed.turns:,} of its turns (each looks "
                        "like it holds a secret)")  # fmt: skip
        raise ValidationError(
            f"Nothing to measure in the --locomo folder: {happened}. Convert LoCoMo again "
            "as docs/recall.md says, one turn a line with its `text`.",
            field="locomo",
        )
    if not filed.questions:
        raise ValidationError(
            "Nothing to measure in the --locomo folder: its *.questions.jsonl files hold no "
            "question with `evidence` (the dialog ids that answer it) for a conversation "
            "whose turns were filed. Convert LoCoMo again as docs/recall.md says.",
            field="locomo",
        )


def measure_locomo(
    folder: Path, embedder: str, actor: str, progress: Progress = quiet
) -> dict[str, Any]:
    """`bench.compare` on LoCoMo's conversations, filed into a temporary SQLite store with
    the embedder named (the user's store is not touched; the folder is removed after)."""
    conversations = read_locomo(folder)
    scratch = Path(tempfile.mkdtemp(prefix="palimpsest-bench-"))
    try:
        store = open_store(str(scratch / "locomo.db"))
        try:
            service = Service(store, actor=actor, embedder=load_embedder(embedder))
            filed = file_locomo(service, conversations, progress)
            check_filed(filed)
            result = compare(service, filed.questions, filed.labels, progress)
        finally:
            store.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if filed.refused:
        result["notes"].append(f"{filed.refused} turns were refused by the write gate")
    if filed.unfiled:
        result["notes"].append(
            f"no turn of {', '.join(map(gate.shown_name, filed.unfiled))} was filed: its "
            "questions were left out"
        )
    return result
