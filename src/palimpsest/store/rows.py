"""Rows to model objects and back, the same for every SQL store.

Rows are read by column name (a mapping), so any driver that returns named rows fits.
JSON-valued columns are stored as text in every store.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..domain.model import Anchor, Bindings, Check, Event, Link, Memory, Notebook, normalize_text
from . import Found

Row = Mapping[str, Any]

# Columns of memory_versions that hold a memory's content; forget sets them all to NULL.
CONTENT_COLUMNS = (
    "notebook_id", "kind", "status", "text", "norm_text", "title", "why", "tags", "tags_text",
    "key", "occurred_at", "recorded_at", "expires_at", "status_note", "superseded_by",
    "verified_at", "owner", "author", "source", "anchors", "severity", "falsifier",
    "check_json", "bindings", "scope",
)  # fmt: skip


# What a search selects of a version (alias v) before it is read whole.
FOUND_COLUMNS = "v.rowid AS rowid, v.memory_id AS memory_id"


def found_from_row(row: Row) -> Found:
    return Found(row["memory_id"], int(row["rowid"]))


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def memory_columns(m: Memory) -> dict[str, Any]:
    return {
        "notebook_id": m.notebook_id,
        "kind": m.kind,
        "status": m.status,
        "text": m.text,
        "norm_text": normalize_text(m.text),
        "title": m.title,
        "why": m.why,
        "tags": json.dumps(list(m.tags)),
        "tags_text": " ".join(m.tags),
        "key": m.key,
        "occurred_at": m.occurred_at,
        "recorded_at": m.recorded_at,
        "expires_at": m.expires_at,
        "status_note": m.status_note,
        "superseded_by": m.superseded_by,
        "verified_at": m.verified_at,
        "owner": m.owner,
        "author": m.author,
        "source": m.source,
        "anchors": json.dumps([a.to_dict() for a in m.anchors]),
        "severity": m.severity,
        "falsifier": m.falsifier,
        "check_json": _dumps(m.check.to_dict() if m.check else None),
        "bindings": _dumps(m.bindings.to_dict() if m.bindings else None),
        "scope": m.scope,
    }


def memory_from_row(row: Row) -> Memory:
    check = json.loads(row["check_json"]) if row["check_json"] else None
    bindings = json.loads(row["bindings"]) if row["bindings"] else None
    return Memory(
        id=row["memory_id"],
        workspace=row["workspace"],
        notebook_id=row["notebook_id"],
        kind=row["kind"],
        text=row["text"],
        version=row["version"],
        recorded_at=row["recorded_at"],
        author=row["author"],
        owner=row["owner"],
        status=row["status"],
        title=row["title"],
        why=row["why"],
        tags=tuple(json.loads(row["tags"])),
        key=row["key"],
        occurred_at=row["occurred_at"],
        expires_at=row["expires_at"],
        status_note=row["status_note"],
        superseded_by=row["superseded_by"],
        verified_at=row["verified_at"],
        source=row["source"],
        anchors=tuple(Anchor(**a) for a in json.loads(row["anchors"])),
        severity=row["severity"],
        falsifier=row["falsifier"],
        check=Check(
            kind=check["kind"],
            path=check.get("path"),
            literal=check.get("literal"),
            literals=tuple(check.get("literals", ())),
        )
        if check
        else None,
        bindings=Bindings(
            always=bindings["always"],
            moments=tuple(bindings["moments"]),
            targets=tuple(bindings["targets"]),
        )
        if bindings
        else None,
        scope=row["scope"],
    )


def notebook_from_row(row: Row) -> Notebook:
    return Notebook(
        id=row["id"],
        workspace=row["workspace"],
        name=row["name"],
        created_at=row["created_at"],
        summary=row["summary"],
        domain=row["domain"],
        tags=tuple(json.loads(row["tags"])),
    )


def link_from_row(row: Row) -> Link:
    return Link(
        id=row["id"],
        workspace=row["workspace"],
        source_id=row["source_id"],
        target_id=row["target_id"],
        type=row["type"],
        created_at=row["created_at"],
        actor=row["actor"],
    )


def event_from_row(row: Row) -> Event:
    return Event(
        seq=row["seq"],
        op_id=row["op_id"],
        at=row["at"],
        actor=row["actor"],
        op=row["op"],
        target_type=row["target_type"],
        target_id=row["target_id"],
        notebook_id=row["notebook_id"],
        version=row["version"],
        fields=tuple(json.loads(row["fields"])),
        note=row["note"],
        data=json.loads(row["data"]),
        key_id=row["key_id"],
    )
