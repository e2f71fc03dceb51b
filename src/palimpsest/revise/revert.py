"""The states a revert builds: a memory back to a version, a notebook back to a time.

A revert is a new event (history only grows); these functions say what each memory
becomes, which memories are skipped and why, and in which order the steps must run.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence
from typing import Any

from ..domain.errors import NotFound, ValidationError
from ..domain.model import Memory
from .decide import Step, event_reasons
from .edit import validate
from .policy import require_because
from .screen import screen_notes, screen_revision

# Where a memory stood, besides what it said, that a notebook revert puts back.
_RESTORED_STATE = ("status", "status_note", "superseded_by", "notebook_id")


def version_target(current: Memory, versions: Mapping[int, Memory | None], version: int) -> Memory:
    """`current` with what version `version` said (its status and place unchanged)."""
    if version not in versions:
        raise NotFound(
            f"{current.id} has versions 1 to {current.version}; there is no version {version}.",
            field="version",
        )
    then = versions[version]
    if then is None:
        raise ValidationError(f"Version {version} of {current.id} was forgotten.", field="version")
    return current.replace(**then.content())


def past_state(
    current: Memory, then: Sequence[Memory | None], as_of: str, forgotten_notebooks: Container[str]
) -> Memory | str | None:
    """What `current` goes back to when its notebook is reverted to `as_of`.

    `then` is its versions up to `as_of`, oldest first (None where scrubbed). Returns the
    state to restore, a reason to skip it, or None when there is nothing to undo.
    """
    if not then:  # filed after `as_of`: it was not there, so it stops being active
        if current.status != "active":
            return None
        return current.replace(status="retracted", status_note=f"notebook reverted to {as_of}")
    past = then[-1]
    if past is None:
        return "its version then was forgotten"
    if past.notebook_id in forgotten_notebooks:
        # Moved back there, it would sit in a tombstone that no notebook lists.
        return "the notebook it was in then was forgotten"
    where = {name: getattr(past, name) for name in _RESTORED_STATE}
    return current.replace(**past.content(), **where)


def notebook_plan(
    pasts: Iterable[tuple[Memory, Sequence[Memory | None]]],
    as_of: str,
    forgotten_notebooks: Container[str],
) -> tuple[list[tuple[Memory, Memory]], list[dict[str, str]]]:
    """(current, target) pairs in the order to apply them, and the memories skipped."""
    plans: list[tuple[Memory, Memory]] = []
    skipped: list[dict[str, str]] = []
    for current, then in pasts:
        state = past_state(current, then, as_of, forgotten_notebooks)
        if isinstance(state, Memory):
            plans.append((current, state))
        elif state is not None:
            skipped.append({"id": current.id, "reason": state})
    # Memories giving up a key go first, so that the others can take it back.
    plans.sort(key=lambda plan: not gives_up_key(*plan))
    return plans, skipped


def gives_up_key(current: Memory, target: Memory) -> bool:
    """Whether `current` holds a key that it no longer holds as `target`."""
    holds = current.status == "active" and current.key is not None
    keeps = (target.status, target.key, target.notebook_id) == (
        "active",
        current.key,
        current.notebook_id,
    )
    return holds and not keeps


def reverted(
    current: Memory,
    target: Memory,
    because: str | None,
    data: dict[str, Any],
    note: str | None = None,
) -> Step | None:
    """The step that makes `target` the next version of `current`; None: already so. Its
    event keeps `note` (why), else `because` (the reason a rule may be weakened).

    A version that held what the gate now refuses is not brought back: forget it instead.
    """
    require_because(current, target, because)
    validate(target)
    try:
        screen_revision(current, target)
    except ValidationError as exc:
        raise ValidationError(
            f"{exc.message} The version reverted to holds it: forget that version "
            "(`forget` with `id` and `version`) rather than bring it back.",
            field=exc.field,
        ) from None
    if target == current:
        return None
    target = target.replace(version=current.version + 1)
    screen_notes(target, note=note, because=because)
    kept_note, kept = event_reasons(note, because)
    return Step("revert", current, target, kept_note, data | kept)
