"""The revise rules as pure functions: parse what a caller asked, decide the new state.

Nothing here touches a store. The service resolves targets, checks keys across the
notebook, and writes; this module says what one memory becomes and why it may not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import gate
from .errors import Forbidden, ValidationError
from .model import (
    CHECK_KINDS,
    CONTENT_FIELDS,
    KINDS,
    MOMENTS,
    RETIRED,
    RULE_KINDS,
    SCOPES,
    SEVERITIES,
    TIME_RANGE,
    Anchor,
    Bindings,
    Check,
    Memory,
    format_time,
    parse_time,
    to_json,
)

CLEARABLE = frozenset(CONTENT_FIELDS) - {"kind", "text"}
REVISE_STATUSES = ("superseded", "retracted", "active", "verified")
EDIT_FIELDS = frozenset(
    {
        "clear",
        "append",
        "replace_from",
        "replace_to",
        "remove",
        "status",
        "note",
        "because",
        "move_to",
        "supersede",
        "claim",
        "override_reason",
        "override_confirm",
    }
)
# What a memory says: someone else's memory changes these only through a supersede.
SUBSTANTIVE = ("text", "title", "why", "kind")


class Unmatched(Exception):
    """This target does not qualify for the change; it is reported, not applied."""

    def __init__(self, reason: str, *, status_related: bool = False, field: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.status_related = status_related
        self.field = field  # the parameter at fault, when one is


# -- parsing ---------------------------------------------------------------------------


def parse_fields(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Validate content fields given by a caller and turn them into model values."""
    parsed: dict[str, Any] = {}
    for name, value in raw.items():
        if value is None:
            continue
        parser = _PARSERS.get(name)
        if parser is None:
            shown = gate.shown_name(name)
            raise ValidationError(f"`{shown}` is not a memory field.", field=shown)
        parsed[name] = parser(name, value)
    return parsed


def _string(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"`{name}` must be a string.", field=name)
    if not value.strip():
        raise ValidationError(
            f"`{name}` is empty. To clear it, list it in `clear` instead.", field=name
        )
    return gate.screen(name, value.strip() if name != "text" else value)


def _choice(options: tuple[str, ...]) -> Any:
    def parse(name: str, value: Any) -> str:
        if value not in options:  # what was sent is not repeated: it may be anything
            raise ValidationError(f"`{name}` must be one of {', '.join(options)}.", field=name)
        return str(value)

    return parse


def _time(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"`{name}` must be an RFC 3339 time or a date.", field=name)
    try:
        return format_time(parse_time(value))
    except (ValueError, OverflowError):
        raise ValidationError(
            f"`{name}` must be an RFC 3339 time (2026-05-01T12:00:00Z) or a date "
            f"(2026-05-01), within {TIME_RANGE}.",
            field=name,
        ) from None


def _tags(name: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(t, str) for t in value):
        raise ValidationError("`tags` must be a list of strings.", field=name)
    if not value:
        raise ValidationError(
            '`tags` is an empty list; to remove every tag, pass clear: ["tags"].', field=name
        )
    if len(value) > gate.MAX_TAGS:
        raise ValidationError(f"At most {gate.MAX_TAGS} tags; got {len(value)}.", field=name)
    cleaned = [gate.screen(name, t.strip(), limit_name="tag") for t in value]
    if not all(cleaned):
        raise ValidationError("A tag is blank; remove it from the list.", field=name)
    return tuple(dict.fromkeys(cleaned))


def _relative_path(name: str, value: Any) -> str:
    path = _string(name, value)
    if path.startswith(("/", "\\")) or ".." in path.replace("\\", "/").split("/"):
        raise ValidationError(
            f"`{name}` must be a path relative to the project directory, without `..`.",
            field=name,
        )
    return path


def _anchors(name: str, value: Any) -> tuple[Anchor, ...]:
    if not isinstance(value, list | tuple) or not value:
        raise ValidationError(
            "`anchors` must be a non-empty list of paths or {path, hash} objects; "
            'to remove them all, pass clear: ["anchors"].',
            field=name,
        )
    anchors = []
    for item in value:
        if isinstance(item, str):
            anchors.append(Anchor(_relative_path(name, item)))
        elif isinstance(item, Mapping) and set(item) <= {"path", "hash"} and "path" in item:
            digest = item.get("hash")
            if digest is not None and not isinstance(digest, str):
                raise ValidationError("An anchor's `hash` must be a string.", field=name)
            if digest is not None:
                digest = gate.screen("anchors.hash", digest, limit_name="key")
            anchors.append(Anchor(_relative_path(name, item["path"]), digest))
        else:
            raise ValidationError("Each anchor is a path or an object {path, hash}.", field=name)
    return tuple(anchors)


def _check(name: str, value: Any) -> Check:
    if not isinstance(value, Mapping) or value.get("kind") not in CHECK_KINDS:
        raise ValidationError(
            f"`check` must be an object whose `kind` is one of {', '.join(CHECK_KINDS)}.",
            field=name,
        )
    unknown = set(value) - {"kind", "path", "literal", "literals"}
    if unknown:
        raise ValidationError(
            "`check` takes only `kind`, `path`, `literal` and `literals`; remove the others.",
            field=name,
        )
    kind = value["kind"]
    path = _relative_path("check.path", value["path"]) if value.get("path") else None
    literal = value.get("literal")
    literals = value.get("literals") or ()
    if literal is not None:
        literal = gate.screen(
            "check.literal", _string("check.literal", literal), limit_name="literal"
        )
    if not isinstance(literals, list | tuple) or not all(isinstance(x, str) for x in literals):
        raise ValidationError("`check.literals` must be a list of strings.", field=name)
    literals = tuple(gate.screen("check.literals", x, limit_name="literal") for x in literals)
    if kind == "forbidden":
        if path is not None:
            raise ValidationError("A `forbidden` check takes no `path`.", field=name)
    elif path is None:
        raise ValidationError(f"A `{kind}` check needs a `path`.", field=name)
    if kind in ("contains", "absent") and literal is None:
        raise ValidationError(f"A `{kind}` check needs a `literal`.", field=name)
    if kind in ("absent_all", "requires", "forbidden") and not literals:
        raise ValidationError(f"A `{kind}` check needs `literals` (a list).", field=name)
    return Check(kind=kind, path=path, literal=literal, literals=literals)


def _bindings(name: str, value: Any) -> Bindings:
    if not isinstance(value, Mapping) or set(value) - {"always", "moments", "targets"}:
        raise ValidationError(
            "`bindings` is an object with `always` (bool), `moments` and `targets` (lists).",
            field=name,
        )
    moments = value.get("moments") or ()
    targets = value.get("targets") or ()
    always = value.get("always", False)
    if not isinstance(always, bool):
        raise ValidationError("`bindings.always` must be true or false.", field=name)
    if not isinstance(moments, list | tuple) or not all(m in MOMENTS for m in moments):
        raise ValidationError(f"`bindings.moments` are among {', '.join(MOMENTS)}.", field=name)
    if not isinstance(targets, list | tuple) or not all(isinstance(t, str) for t in targets):
        raise ValidationError("`bindings.targets` must be a list of strings.", field=name)
    return Bindings(
        always=always,
        moments=tuple(moments),
        targets=tuple(gate.screen("bindings.targets", t, limit_name="target") for t in targets),
    )


_PARSERS: dict[str, Any] = {
    "kind": _choice(KINDS),
    "text": _string,
    "title": _string,
    "why": _string,
    "tags": _tags,
    "key": _string,
    "occurred_at": _time,
    "expires_at": _time,
    "source": _string,
    "anchors": _anchors,
    "severity": _choice(SEVERITIES),
    "falsifier": _string,
    "check": _check,
    "bindings": _bindings,
    "scope": _choice(SCOPES),
}


@dataclass(frozen=True)
class Changes:
    """One set of changes to apply to each target of a revise."""

    sets: dict[str, Any] = field(default_factory=dict)
    clear: frozenset[str] = frozenset()
    append: str | None = None
    replace_from: str | None = None
    replace_to: str | None = None
    remove: str | None = None
    status: str | None = None
    note: str | None = None
    because: str | None = None
    move_to: str | None = None
    supersede: bool = False
    claim: bool = False
    override_reason: str | None = None
    override_confirm: bool = False
    redacted: tuple[str, ...] = ()  # kinds of credentials redacted from `note`

    @property
    def is_empty(self) -> bool:
        return self == Changes(
            because=self.because,
            note=self.note,
            redacted=self.redacted,
            override_reason=self.override_reason,
            override_confirm=self.override_confirm,
        )


def parse_changes(raw: Mapping[str, Any], *, redact: bool = False) -> Changes:
    """Validate a revise request's changes; every conflict between fields is refused here.

    With `redact`, credentials in `note` are replaced by `[REDACTED:kind]` instead of
    refusing the request.
    """
    raw = {k: v for k, v in raw.items() if v is not None}
    clear = raw.pop("clear", [])
    if not isinstance(clear, list | tuple) or not all(isinstance(c, str) for c in clear):
        raise ValidationError("`clear` must be a list of field names.", field="clear")
    for name in clear:
        if name not in CLEARABLE:
            raise ValidationError(
                f"`{gate.shown_name(name)}` cannot be cleared; clearable fields: "
                f"{', '.join(sorted(CLEARABLE))}.",
                field="clear",
            )
    edits = {k: raw.pop(k) for k in list(raw) if k in EDIT_FIELDS}
    sets = parse_fields(raw)
    both = sorted(set(clear) & set(sets))
    if both:
        raise ValidationError(
            f"`{both[0]}` is both set and listed in `clear`; say one or the other.",
            field=both[0],
        )
    small = [k for k in ("append", "replace_from", "remove") if k in edits]
    if small and "text" in sets:
        raise ValidationError(
            f"`{small[0]}` edits the current text and cannot be combined with `text`, which "
            "replaces it whole; send one or the other.",
            field=small[0],
        )
    if ("replace_from" in edits) != ("replace_to" in edits):
        raise ValidationError(
            "`replace_from` and `replace_to` go together; to delete a substring use `remove`.",
            field="replace_to" if "replace_from" in edits else "replace_from",
        )
    strings = {}
    redacted: list[str] = []
    if redact and isinstance(edits.get("note"), str) and edits["note"]:
        edits["note"], redacted = gate.screen_redacting("note", edits["note"])
    for name in ("append", "replace_from", "replace_to", "remove", "note", "because",
                 "override_reason"):  # fmt: skip
        if name in edits:
            strings[name] = _edit_string(name, edits[name])
    status = edits.get("status")
    if status is not None and status not in REVISE_STATUSES:
        raise ValidationError(
            f"`status` must be one of {', '.join(REVISE_STATUSES)}.", field="status"
        )
    move_to = edits.get("move_to")
    if move_to is not None:
        move_to = _string("move_to", move_to)
        gate.screen("move_to", move_to, limit_name="notebook")
    for flag in ("supersede", "claim", "override_confirm"):
        if flag in edits and not isinstance(edits[flag], bool):
            raise ValidationError(f"`{flag}` must be true or false.", field=flag)
    return Changes(
        sets=sets,
        clear=frozenset(clear),
        status=status,
        move_to=move_to,
        supersede=bool(edits.get("supersede", False)),
        claim=bool(edits.get("claim", False)),
        override_confirm=bool(edits.get("override_confirm", False)),
        redacted=tuple(redacted),
        **strings,
    )


def _edit_string(name: str, value: Any) -> str:
    if not isinstance(value, str) or value == "":
        raise ValidationError(f"`{name}` must be a non-empty string.", field=name)
    if name == "append" and not value.strip():  # it would only move blanks at the end
        raise ValidationError("`append` holds only blanks; give the text to add.", field=name)
    limit = {"note": "note", "because": "because", "override_reason": "because"}.get(name, "text")
    if name in ("replace_from", "remove"):
        gate.check_storable(name, value)  # no text holds a NUL: say so, naming the field
        # Only located in the text, never stored: a secret here is how one gets removed.
        return gate.check_length(name, value, limit_name=limit)
    return gate.screen(name, value, limit_name=limit)


# -- deciding --------------------------------------------------------------------------


def edit(memory: Memory, changes: Changes, *, now: str, actor: str) -> Memory:
    """What `memory` becomes under `changes` (its version is raised by the caller).

    Raises Unmatched when this target does not qualify (wrong status, missing substring),
    ValidationError when the result would be invalid.
    """
    updated = memory.replace(**changes.sets, **{name: _empty(name) for name in changes.clear})
    if set(updated.tags) == set(memory.tags):  # a set: the same tags in another order
        updated = updated.replace(tags=memory.tags)
    text = updated.text
    if changes.append is not None:
        gate.screen_joint("append", text, changes.append)
        text = appended(text, changes.append)
    if changes.replace_from is not None:
        if changes.replace_from not in text:
            raise Unmatched(
                "the `replace_from` text is not in the memory's text", field="replace_from"
            )
        text = text.replace(changes.replace_from, changes.replace_to or "", 1)
    if changes.remove is not None:
        if changes.remove not in text:
            raise Unmatched("the `remove` text is not in the memory's text", field="remove")
        text = text.replace(changes.remove, "", 1).strip()
    if not text.strip():
        raise ValidationError("The edit would leave the text empty; to delete, use forget.")
    # Secrets in the new text are screen_revision's, read with the rest of the record.
    updated = updated.replace(text=gate.check_length("text", text))
    if changes.status is not None:
        updated = _with_status(updated, changes.status, changes.note, now)
    if changes.claim:
        if memory.owner is not None and memory.owner != actor:
            raise ValidationError(
                f"This memory is owned by {memory.owner}; `claim` only takes ownerless ones."
            )
        updated = updated.replace(owner=actor)
    validate(updated)
    screen_revision(memory, updated)
    return updated


def appended(text: str, addition: str) -> str:
    """`text` with `addition` at its end: on a new line when `addition` starts with one."""
    if addition.lstrip(" \t").startswith(("\n", "\r")):
        return text.rstrip() + addition.lstrip(" \t").rstrip()
    return f"{text.rstrip()} {addition.strip()}"


def record_fields(memory: Memory) -> list[tuple[str, str]]:
    """The strings a memory stores, in reading order (a title or key before the text)."""
    fields = [
        (name, getattr(memory, name))
        for name in ("title", "key", "text", "why", "falsifier", "source")
        if getattr(memory, name)
    ]
    fields += [("tags", tag) for tag in memory.tags]
    if memory.check is not None:
        literals = (memory.check.literal, *memory.check.literals)
        fields += [("check", literal) for literal in literals if literal]
    if memory.bindings is not None:
        fields += [("bindings", target) for target in memory.bindings.targets]
    return fields


def screen_revision(old: Memory, new: Memory) -> None:
    """The gate on the whole record as it would stand after a change to `old`.

    A record the gate flags (one filed before it grew stricter) may still be retired,
    re-tagged or verified: those leave what it says as it was. Anything else is refused,
    pointing to forget.
    """
    fields, before = record_fields(new), record_fields(old)
    if fields == before:
        return
    try:
        gate.screen_record(fields)
    except ValidationError:
        if not gate.record_flagged(before):
            raise
        if _untagged(fields) == _untagged(before):
            return
        gate.screen_record(fields, already=True)


def screen_successor(successor: Memory, old: Memory) -> None:
    """A supersede files what `old` said as a new record: it passes the gate whole."""
    try:
        gate.screen_record(record_fields(successor))
    except ValidationError:
        if not gate.record_flagged(record_fields(old)):
            raise
        gate.screen_record(record_fields(successor), already=True)


def _untagged(fields: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, value) for name, value in fields if name != "tags"]


def _empty(name: str) -> Any:
    return () if name in ("tags", "anchors") else None


def _with_status(memory: Memory, status: str, note: str | None, now: str) -> Memory:
    if status == "verified":
        if memory.status != "active":
            raise Unmatched(
                f"it is {memory.status}; only active memories can be verified", status_related=True
            )
        return memory.replace(verified_at=now)
    if status in RETIRED:
        if memory.status != "active":
            raise Unmatched(
                f"it is already {memory.status}; only active memories retire", status_related=True
            )
        return memory.replace(status=status, status_note=note)
    if memory.status == "active":
        raise Unmatched(
            "it is already active; only retired memories can be reactivated", status_related=True
        )
    return memory.replace(status="active", status_note=note, superseded_by=None)


def validate(memory: Memory) -> None:
    """Rules that hold for any stored memory, whatever path produced it."""
    if memory.kind in RULE_KINDS and not memory.falsifier:
        raise ValidationError(
            f"A {memory.kind} needs a `falsifier`: the observation that would prove it wrong.",
            field="falsifier",
        )


def weakenings(old: Memory, new: Memory) -> list[str]:
    """How `new` weakens the rule `old` was; empty when it does not (or was no rule)."""
    if old.kind not in RULE_KINDS:
        return []
    found = []
    if new.kind not in RULE_KINDS or (old.kind == "rule" and new.kind != "rule"):
        found.append(f"changes its kind from {old.kind} to {new.kind}")
    if old.check is not None and new.check != old.check:
        found.append("changes or clears its check")
    if old.severity is not None and (
        new.severity is None or SEVERITIES.index(new.severity) < SEVERITIES.index(old.severity)
    ):
        found.append("lowers or clears its severity")
    if old.bindings is not None and not (new.bindings or Bindings()).covers(old.bindings):
        found.append("removes a binding")
    if old.scope == "workspace" and new.scope != "workspace":
        found.append("narrows its scope from workspace to notebook")
    if old.status == "active" and new.status in RETIRED:
        found.append("retires it")
    if new.expires_at is not None and (old.expires_at is None or new.expires_at < old.expires_at):
        found.append("makes it expire")
    return found


def check_ownership(
    old: Memory, new: Memory, changes: Changes, *, actor: str, may_override: bool
) -> None:
    """Refuse (forbidden) a change to someone else's memory that no override covers.

    The owner, or anyone on an ownerless memory, may change anything. Others need an
    override: a reason (and a confirmation when the owner is a person) from an actor
    allowed to give one; an override corrects tags, dates, expiry or status in place, while
    what the memory says changes only through `supersede`.
    """
    if old.owner is None or old.owner == actor:
        return
    if not changes.override_reason:
        raise Forbidden(
            f"{old.id} belongs to {old.owner}. To correct its tags, dates, expiry or status, "
            "pass override_reason (with override_confirm: true, its owner being a person); "
            "to change what it says, revise it with supersede: true, which files your "
            "version and retires this one intact."
        )
    if not may_override:
        raise Forbidden("Only an editor or owner of the workspace may override; supersede it.")
    if old.owner.startswith("user:") and not changes.override_confirm:
        raise Forbidden(
            f"{old.id} belongs to the person {old.owner}: confirm the override with "
            "override_confirm: true.",
            field="override_confirm",
        )
    changed = [name for name in SUBSTANTIVE if getattr(old, name) != getattr(new, name)]
    if changed and not changes.supersede:
        raise Forbidden(
            f"The {changed[0]} of a memory owned by {old.owner} changes only through "
            "supersede: true (your version is filed as a new memory, theirs retires intact).",
            field=changed[0],
        )


def require_because(old: Memory, new: Memory, because: str | None) -> None:
    reasons = weakenings(old, new)
    if reasons and not because:
        raise ValidationError(
            f"This change weakens the {old.kind} {old.id} (it {'; '.join(reasons)}). Give "
            "`because`: one sentence saying why, kept in its history.",
            field="because",
        )


def changed_fields(old: Memory, new: Memory) -> list[str]:
    skip = {"version"}
    return [
        name
        for name in Memory.__dataclass_fields__
        if name not in skip and getattr(old, name) != getattr(new, name)
    ]


def diff(old: Memory | None, new: Memory | None) -> dict[str, dict[str, Any]]:
    """Field by field, what changed from `old` to `new` (either may be absent)."""
    names = [n for n in Memory.__dataclass_fields__ if n not in ("version", "id", "workspace")]
    result = {}
    for name in names:
        before = getattr(old, name) if old else None
        after = getattr(new, name) if new else None
        if before != after:
            result[name] = {"old": to_json(before), "new": to_json(after)}
    return result
