"""How the service renders model objects as JSON-ready answers (shared by every adapter)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any

from .model import FRESHNESS_DAYS, Event, Memory, MemoryVersion, Notebook


def memory_view(
    memory: Memory,
    notebooks: dict[str, Notebook],
    at: str,
    freshness: Mapping[str, int | None] = FRESHNESS_DAYS,
) -> dict[str, Any]:
    body = memory.to_dict()
    body.pop("workspace")
    notebook = notebooks.get(memory.notebook_id)
    body["notebook"] = notebook.name if notebook else memory.notebook_id
    body["expired"] = memory.expired(at)
    body["possibly_stale"] = memory.possibly_stale(at, freshness)
    body.update(_age_reasons(memory, at, freshness))
    return body


def hit_view(
    memory: Memory,
    score: float,
    notebooks: dict[str, Notebook],
    at: str,
    freshness: Mapping[str, int | None] = FRESHNESS_DAYS,
) -> dict[str, Any]:
    notebook = notebooks.get(memory.notebook_id)
    return {
        "id": memory.id,
        "kind": memory.kind,
        "notebook": notebook.name if notebook else memory.notebook_id,
        "title": memory.title,
        "text": memory.text,
        "tags": list(memory.tags),
        "key": memory.key,
        "score": round(score, 4),
        "status": memory.status,
        "version": memory.version,
        "recorded_at": memory.recorded_at,
        "occurred_at": memory.occurred_at,
        "verified_at": memory.verified_at,
    } | _flags(memory, at, freshness)


def _flags(memory: Memory, at: str, freshness: Mapping[str, int | None]) -> dict[str, Any]:
    """A hit's flags, each present only when it holds (an answer is paid for by the
    character), with the reasons it is possibly stale."""
    flags: dict[str, Any] = {}
    if memory.possibly_stale(at, freshness):
        flags["possibly_stale"] = True
    if memory.expired(at):
        flags["expired"] = True
    return flags | _age_reasons(memory, at, freshness)


def _age_reasons(
    memory: Memory, at: str, freshness: Mapping[str, int | None]
) -> dict[str, list[str]]:
    """`stale_reasons` of a memory stale by age (empty when it is not)."""
    if not memory.possibly_stale(at, freshness):
        return {}
    days = freshness.get(memory.kind)
    return {"stale_reasons": [f"not verified within the {days} days a {memory.kind} stays fresh"]}


def mark_stale(views: list[dict[str, Any]], evidence: Mapping[str, list[str]]) -> None:
    """Flag possibly stale the views of memories whose evidence fails, each saying why
    (`evidence`: memory id -> reasons, from the project's files)."""
    for view in views:
        reasons = evidence.get(view["id"])
        if reasons:
            view["possibly_stale"] = True
            view["stale_reasons"] = [*view.get("stale_reasons", []), *reasons]


def mark_disputed(views: list[dict[str, Any]], disputed: Mapping[str, list[str]]) -> None:
    """Give each view of a memory in an open dispute `disputed_with`: the other memories of
    its disputes (absent when there are none), so that each names the other."""
    for view in views:
        if view["id"] in disputed:
            view["disputed_with"] = disputed[view["id"]]


def rule_view(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "kind": memory.kind,
        "text": memory.text,
        "severity": memory.severity,
        "scope": memory.scope or "notebook",
        "check": memory.check.to_dict() if memory.check else None,
    }


def version_views(versions: list[MemoryVersion]) -> list[dict[str, Any]]:
    """Each version as what changed: the fields whose values differ from the last version
    before it that can still be read, with this version's values (version 1: every field
    it was filed with), and `cleared`, the fields it emptied. Folding `changed` in order,
    dropping what is `cleared`, rebuilds any readable version (its empty fields absent);
    the current one is shown whole beside them (inspect's `memory`), so no text is
    repeated where it did not change. A forgotten version is only `scrubbed`.

    An emptied field is named in `cleared` rather than given an empty value in `changed`:
    an agent reads answers lean (nothing empty in them), where an empty value would be
    left out and the field would seem not to have changed."""
    views: list[dict[str, Any]] = []
    before: dict[str, Any] = {}
    for version in versions:
        body: dict[str, Any] = {
            "version": version.version,
            "at": version.at,
            "actor": version.actor,
            "op": version.op,
        }
        if version.memory is None:
            body["scrubbed"] = True
        else:
            content = lean(version.memory.to_dict())
            for name in ("id", "workspace", "version"):
                content.pop(name)
            body["changed"] = {
                k: v for k, v in content.items() if k not in before or before[k] != v
            }
            cleared = sorted(k for k in before if k not in content)
            if cleared:
                body["cleared"] = cleared
            before = content
        views.append(body)
    return views


def lean(value: Any) -> Any:
    """`value` with every empty member (None, "", [], {}) of every object left out, at any
    depth: what an agent reads of an answer (false and 0 say something and stay)."""
    if isinstance(value, dict):
        kept = {key: lean(member) for key, member in value.items()}
        return {key: member for key, member in kept.items() if not _empty(member)}
    if isinstance(value, list):
        return [lean(member) for member in value]
    return value


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not value)


def compact(value: Any) -> str:
    """`value` as JSON without spaces, as an agent reads an answer."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def event_view(event: Event, changes: dict[str, Any] | None = None) -> dict[str, Any]:
    body = event.to_dict()
    if changes is not None:
        body["changes"] = changes
    return body


def notebook_line(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "kind": memory.kind,
        "status": memory.status,
        "version": memory.version,
        "key": memory.key,
        "title": memory.title,
        "text": memory.text,
    }


def text_diff(old: str, new: str, old_label: str, new_label: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(), new.splitlines(), old_label, new_label, lineterm=""
    )
    return "\n".join(lines)
