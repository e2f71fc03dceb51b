"""The revise rules as pure functions: parse what a caller asked, decide the new state.

Nothing here touches a store. The service resolves targets, checks keys across the
notebook, and writes; this package says what one memory becomes, under which operation,
and why it may not:

- `parse`: a caller's fields and changes, checked, as model values and `Changes`.
- `edit`: what one memory becomes under `Changes`, and what changed.
- `screen`: the gate on a whole record as it would stand.
- `policy`: who may change a memory, and which changes need a reason.
- `decide`: the step a change makes (the new version, its operation, what its event
  records), or the refusal.
"""

from __future__ import annotations

from .decide import (
    Step,
    check_expected_version,
    check_move,
    duplicate_of,
    filed,
    not_applied,
    not_supersedable,
    op_name,
    qualifies,
    retirement,
    revision,
    superseding_content,
    supersession,
)
from .edit import Unmatched, appended, changed_fields, diff, edit, validate
from .parse import CLEARABLE, EDIT_FIELDS, REVISE_STATUSES, Changes, parse_changes, parse_fields
from .policy import SUBSTANTIVE, check_ownership, require_because, weakenings
from .screen import record_fields, screen_notes, screen_revision, screen_successor

__all__ = [
    "CLEARABLE",
    "EDIT_FIELDS",
    "REVISE_STATUSES",
    "SUBSTANTIVE",
    "Changes",
    "Step",
    "Unmatched",
    "appended",
    "changed_fields",
    "check_expected_version",
    "check_move",
    "check_ownership",
    "diff",
    "duplicate_of",
    "edit",
    "filed",
    "not_applied",
    "not_supersedable",
    "op_name",
    "parse_changes",
    "parse_fields",
    "qualifies",
    "record_fields",
    "require_because",
    "retirement",
    "revision",
    "screen_notes",
    "screen_revision",
    "screen_successor",
    "superseding_content",
    "supersession",
    "validate",
    "weakenings",
]
