"""Who may change a memory, and which changes need a reason."""

from __future__ import annotations

from ..domain.errors import Forbidden, ValidationError
from ..domain.model import RETIRED, RULE_KINDS, SEVERITIES, Bindings, Memory
from .parse import Changes

# What a memory says: someone else's memory changes these only through a supersede.
SUBSTANTIVE = ("text", "title", "why", "kind")


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
            "pass `override_reason` (and `override_confirm` when the owner is a person); "
            "to change what it says, revise it with `supersede` set, which files your "
            "version and retires this one intact."
        )
    if not may_override:
        raise Forbidden(
            "Only an editor or owner of the workspace may override; revise it with `supersede` "
            "set instead."
        )
    if old.owner.startswith("user:") and not changes.override_confirm:
        raise Forbidden(
            f"{old.id} belongs to the person {old.owner}: confirm the override with "
            "`override_confirm` set.",
            field="override_confirm",
        )
    changed = [name for name in SUBSTANTIVE if getattr(old, name) != getattr(new, name)]
    if changed and not changes.supersede:
        raise Forbidden(
            f"The {changed[0]} of a memory owned by {old.owner} changes only through "
            "`supersede` set (your version is filed as a new memory, theirs retires intact).",
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
