"""Parsing what a caller asked: memory fields into model values, a revise into `Changes`.

Every conflict between the fields of one request is refused here, before any memory is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..domain.errors import ValidationError
from ..domain.model import (
    CHECK_KINDS,
    CONTENT_FIELDS,
    KINDS,
    MOMENTS,
    RULE_KINDS,
    SCOPES,
    SEVERITIES,
    TIME_RANGE,
    Anchor,
    Bindings,
    Check,
    format_time,
    parse_time,
)
from ..domain.text import canonical
from ..screening import gate

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
        "superseded_by",
        "claim",
        "override_reason",
        "override_confirm",
        "feedback",
    }
)
FEEDBACK = ("helped", "noise")


# Fields that say how a rule binds: they mean something on a rule or an orientation only.
RULE_FIELDS = ("severity", "falsifier", "check", "bindings", "scope")


def parse_fields(raw: Mapping[str, Any], *, revising: bool = False) -> dict[str, Any]:
    """Validate content fields given by a caller and turn them into model values.

    `revising` says the fields change a memory that exists (where `clear` empties one), so
    that a refused empty value points to what the caller can do instead.
    """
    parsed: dict[str, Any] = {}
    for name, value in raw.items():
        if value is None:
            continue
        parser = _PARSERS.get(name)
        if parser is None:
            shown = gate.shown_name(name)
            raise ValidationError(f"`{shown}` is not a memory field.", field=shown)
        if isinstance(value, str) and not value.strip():
            raise ValidationError(_empty_message(name, revising), field=name)
        parsed[name] = parser(name, value)
    return parsed


def _empty_message(name: str, revising: bool) -> str:
    """What to do instead of sending an empty value (some clients drop empty strings, so
    an empty string never clears anything)."""
    if name == "text":
        return (
            "`text` is empty: a memory always has a text. To retire the memory, set `status`; "
            "to erase it for good, forget it."
            if revising
            else "`text` is empty: give the memory's text."
        )
    if name == "kind":
        return f"`kind` is empty: give one of {', '.join(KINDS)}."
    if revising:
        return f'`{name}` is empty: to empty the field, list "{name}" in `clear` instead.'
    return f"`{name}` is empty: leave it out to file the memory without one."


def check_rule_fields(kind: str, given: Mapping[str, Any]) -> None:
    """Refuse a rule's field given for a memory that is no rule or orientation.

    Any memory may carry a file check as evidence ("the pool size is 20", with `contains`
    on the config file); a `forbidden` check refuses commands, which only a rule does.
    Only what a caller sets is refused: a store that already holds such values on another
    kind stays readable and revisable.
    """
    evidence = isinstance(given.get("check"), Check) and given["check"].kind != "forbidden"
    misplaced = [
        name for name in RULE_FIELDS if name in given and not (name == "check" and evidence)
    ]
    if misplaced and kind not in RULE_KINDS:
        raise ValidationError(
            f"`{misplaced[0]}` belongs to a rule or orientation, not a {kind}: leave it out, "
            "or make the memory kind rule or orientation.",
            field=misplaced[0],
        )


def _string(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"`{name}` must be a string.", field=name)
    if not value.strip():
        raise ValidationError(f"`{name}` is empty: give a value.", field=name)
    return gate.screen(name, value.strip() if name != "text" else value)


def _choice(options: tuple[str, ...]) -> Any:
    def parse(name: str, value: Any) -> str:
        chosen = canonical(value, options)
        if chosen is None:  # what was sent is not repeated: it may be anything
            raise ValidationError(f"`{name}` must be one of {', '.join(options)}.", field=name)
        return chosen

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
    if isinstance(value, str):  # one tag given as a string is a list of one
        value = [value]
    if not isinstance(value, list | tuple) or not all(isinstance(t, str) for t in value):
        raise ValidationError("`tags` must be a list of strings.", field=name)
    if not value:
        raise ValidationError(
            '`tags` is an empty list; to remove every tag, list "tags" in `clear`.', field=name
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
            'to remove them all, list "anchors" in `clear`.',
            field=name,
        )
    anchors = []
    for item in value:
        if isinstance(item, str):
            anchors.append(Anchor(_relative_path(name, item)))
        elif isinstance(item, Mapping) and set(item) <= {"path", "hash"} and "path" in item:
            digest = item.get("hash")
            if digest is not None and not isinstance(digest, str):
                raise ValidationError("An anchor's hash must be a string.", field=name)
            if digest is not None:
                digest = gate.screen("anchors.hash", digest, limit_name="key")
            anchors.append(Anchor(_relative_path(name, item["path"]), digest))
        else:
            raise ValidationError("Each anchor is a path or an object {path, hash}.", field=name)
    return tuple(anchors)


# Inside `check` and `bindings`, keys are named `check.kind`, never `kind` alone: the CLI
# turns a backticked bare name into its flag, and --kind is the memory's kind, not the check's.
def _check(name: str, value: Any) -> Check:
    kind = canonical(value.get("kind"), CHECK_KINDS) if isinstance(value, Mapping) else None
    if kind is None:
        raise ValidationError(
            f"`check` must be an object whose `check.kind` is one of {', '.join(CHECK_KINDS)}.",
            field=name,
        )
    unknown = set(value) - {"kind", "path", "literal", "literals"}
    if unknown:
        raise ValidationError(
            "`check` takes only the keys kind, path, literal and literals; remove the others.",
            field=name,
        )
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
            raise ValidationError("A forbidden check takes no `check.path`.", field=name)
    elif path is None:
        raise ValidationError(f"A {kind} check needs a `check.path`.", field=name)
    if kind in ("contains", "absent") and literal is None:
        raise ValidationError(f"A {kind} check needs a `check.literal`.", field=name)
    if kind in ("absent_all", "requires", "forbidden") and not literals:
        raise ValidationError(f"A {kind} check needs `check.literals` (a list).", field=name)
    return Check(kind=kind, path=path, literal=literal, literals=literals)


def _bindings(name: str, value: Any) -> Bindings:
    if not isinstance(value, Mapping) or set(value) - {"always", "moments", "targets"}:
        raise ValidationError(
            "`bindings` is an object with the keys always (true or false), moments and "
            "targets (lists).",
            field=name,
        )
    moments = value.get("moments") or ()
    if isinstance(moments, list | tuple):
        moments = [canonical(m, MOMENTS) or m for m in moments]
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
    superseded_by: str | None = None  # a memory filed already that replaces this one
    claim: bool = False
    override_reason: str | None = None
    override_confirm: bool = False
    redacted: tuple[str, ...] = ()  # kinds of credentials redacted from `note`
    feedback: str | None = None  # a usefulness mark: an event, no new version

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
    if isinstance(clear, str):  # one field given as a string is a list of one
        clear = [clear]
    if not isinstance(clear, list | tuple) or not all(isinstance(c, str) for c in clear):
        raise ValidationError("`clear` must be a list of field names.", field="clear")
    clear = [canonical(name, tuple(sorted(CLEARABLE))) or name for name in clear]
    for name in clear:
        if name not in CLEARABLE:
            raise ValidationError(
                f"`{gate.shown_name(name)}` cannot be cleared; clearable fields: "
                f"{', '.join(sorted(CLEARABLE))}.",
                field="clear",
            )
    edits = {k: raw.pop(k) for k in list(raw) if k in EDIT_FIELDS}
    sets = parse_fields(raw, revising=True)
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
    if status is not None:
        status = canonical(status, REVISE_STATUSES)
    if "status" in edits and status is None:
        raise ValidationError(
            f"`status` must be one of {', '.join(REVISE_STATUSES)}.", field="status"
        )
    move_to = edits.get("move_to")
    if move_to is not None:
        move_to = _string("move_to", move_to)
        gate.screen("move_to", move_to, limit_name="notebook")
    feedback = _feedback(edits.get("feedback"), sets, clear, edits)
    superseded_by = _successor(edits, status)
    for flag in ("supersede", "claim", "override_confirm"):
        if flag in edits and not isinstance(edits[flag], bool):
            raise ValidationError(f"`{flag}` must be true or false.", field=flag)
    return Changes(
        sets=sets,
        clear=frozenset(clear),
        status=status,
        move_to=move_to,
        supersede=bool(edits.get("supersede", False)),
        superseded_by=superseded_by,
        claim=bool(edits.get("claim", False)),
        override_confirm=bool(edits.get("override_confirm", False)),
        redacted=tuple(redacted),
        feedback=feedback,
        **strings,
    )


def _successor(edits: Mapping[str, Any], status: str | None) -> str | None:
    """The memory named as what replaces the target: it goes with `status` superseded."""
    successor = edits.get("superseded_by")
    if successor is None:
        return None
    if not isinstance(successor, str) or not successor.strip():
        raise ValidationError("`superseded_by` must be a memory id.", field="superseded_by")
    if status != "superseded" or edits.get("supersede"):
        raise ValidationError(
            "`superseded_by` names the memory that replaces the target: it goes with `status` "
            "superseded (to file the replacement anew, use `supersede` instead).",
            field="superseded_by",
        )
    return successor  # read as an id with the target (service), which refuses what is none


def _feedback(
    value: Any, sets: Mapping[str, Any], clear: list[str], edits: Mapping[str, Any]
) -> str | None:
    """A usefulness mark, given on its own (with a `note` at most): it changes no content."""
    if value is None:
        return None
    mark = canonical(value, FEEDBACK)
    if mark is None:
        raise ValidationError(f"`feedback` must be one of {', '.join(FEEDBACK)}.", field="feedback")
    others = sorted(set(sets) | set(clear) | (set(edits) - {"feedback", "note", "redact"}))
    if others:
        raise ValidationError(
            f"`feedback` marks a memory as it is; send `{gate.shown_name(others[0])}` in a "
            "revise of its own.",
            field="feedback",
        )
    return mark


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


def parse_acceptance(
    accept_refusing: Any, keep_as_note: Any, because: str | None
) -> tuple[tuple[str, ...], bool]:
    """What a write says about its forbidden check's trial: the seen commands it means to
    refuse (they need `because`), and whether a check found too broad is kept as a note."""
    if not isinstance(keep_as_note, bool):
        raise ValidationError("`keep_as_note` must be true or false.", field="keep_as_note")
    if accept_refusing is None:
        return (), keep_as_note
    if isinstance(accept_refusing, str):  # one command given as a string is a list of one
        accept_refusing = [accept_refusing]
    if (
        not isinstance(accept_refusing, list | tuple)
        or not accept_refusing
        or not all(isinstance(c, str) and c.strip() for c in accept_refusing)
    ):
        raise ValidationError(
            "`accept_refusing` must be a list of the commands (as seen) this check is meant "
            "to refuse.",
            field="accept_refusing",
        )
    if not because:
        raise ValidationError(
            "`accept_refusing` needs `because`: say why these calls are to be refused.",
            field="because",
        )
    # Kept in the rule's event: credentials redacted, as in the kept commands they name.
    redacted = (
        gate.screen_redacting("accept_refusing", c, limit_name="text")[0] for c in accept_refusing
    )
    return tuple(redacted), keep_as_note
