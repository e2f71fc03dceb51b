"""The revise rules as pure functions: parse what a caller asked, decide the new state.

Nothing here touches a store. The service resolves targets, checks keys across the
notebook, and writes; this package says what one memory becomes, under which operation,
and why it may not:

- `parse`: a caller's fields and changes, checked, as model values and `Changes`.
- `request`: a revise request whole: how it names its targets, the changes for each.
- `edit`: what one memory becomes under `Changes`, and what changed.
- `screen`: the gate on a whole record as it would stand.
- `policy`: who may change a memory, and which changes need a reason.
- `decide`: the step a change makes (the new version, its operation, what its event
  records), or the refusal.
- `revert`: the states a revert builds, and the order it applies them in.
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
    text_targets,
)
from .edit import Unmatched, appended, changed_fields, diff, edit, validate
from .parse import (
    CLEARABLE,
    EDIT_FIELDS,
    REVISE_STATUSES,
    RULE_FIELDS,
    Changes,
    check_rule_fields,
    parse_changes,
    parse_fields,
)
from .policy import SUBSTANTIVE, check_ownership, require_because, weakenings
from .request import (
    ONE_MEMORY_ONLY,
    Plan,
    check_version,
    in_item,
    parse_items,
    parse_request,
    refuse_repeats,
    settle,
)
from .revert import gives_up_key, notebook_plan, past_state, reverted, version_target
from .screen import record_fields, screen_notes, screen_revision, screen_successor

__all__ = [
    "CLEARABLE",
    "EDIT_FIELDS",
    "ONE_MEMORY_ONLY",
    "REVISE_STATUSES",
    "RULE_FIELDS",
    "SUBSTANTIVE",
    "Changes",
    "Plan",
    "Step",
    "Unmatched",
    "appended",
    "changed_fields",
    "check_expected_version",
    "check_move",
    "check_ownership",
    "check_rule_fields",
    "check_version",
    "diff",
    "duplicate_of",
    "edit",
    "filed",
    "gives_up_key",
    "in_item",
    "not_applied",
    "not_supersedable",
    "notebook_plan",
    "op_name",
    "parse_changes",
    "parse_fields",
    "parse_items",
    "parse_request",
    "past_state",
    "qualifies",
    "record_fields",
    "refuse_repeats",
    "require_because",
    "retirement",
    "reverted",
    "revision",
    "screen_notes",
    "screen_revision",
    "screen_successor",
    "settle",
    "superseding_content",
    "supersession",
    "text_targets",
    "validate",
    "version_target",
    "weakenings",
]
