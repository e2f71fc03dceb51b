"""A person's changes to one memory, each with its reason: revise and revert as they are,
refused without one, and refused (not answered `unmatched`) when the memory cannot take
the status asked for: a person asked for this one change, and it was not made.

The web page asks a reason of every change a person makes there (issue 32). The rule is
the service's, so a post made by hand is refused as the page's own form would be: after
the role (a viewer's post is `forbidden`, whatever it holds), before anything is read.
Forget needs no twin here: it refuses a missing `because` itself.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import Unpack

from ..domain.errors import ValidationError
from .answers import RevertAnswer, ReviseAnswer
from .history import HistoryOps
from .memories import MemoryOps
from .requests import Revision
from .roles import check_write


class ReasonedOps(MemoryOps, HistoryOps):
    def revise_with_reason(
        self, *, id: str, expected_version: int | None = None, **changes: Unpack[Revision]
    ) -> ReviseAnswer:
        """Revise one memory (`id`) as revise does, its `note` required: why it changes."""
        check_write("revise", self.role)
        changes["note"] = _reason(changes.get("note"), "note")
        answer = self.revise(id=id, expected_version=expected_version, **changes)
        for missed in answer.get("unmatched", []):  # one memory: not changed, so say why
            raise ValidationError(f"Refused: {missed['reason']}.", field="status")
        return answer

    def revert_with_reason(self, *, id: str, version: Any, note: str | None) -> RevertAnswer:
        """Set one memory back to `version` as revert does, its `note` required."""
        check_write("revert", self.role)
        return self.revert(id=id, version=version, note=_reason(note, "note"))


def _reason(value: str | None, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(
            f"`{field}` is required: one sentence saying why, kept in the memory's history.",
            field=field,
        )
    return value.strip()
