"""Which rules the guard applies where a command runs.

A rule or orientation applies when it is active and not expired, holds a `forbidden`
check, belongs to the notebook the command runs in (the project's) or is workspace-wide
(`scope: workspace`), and binds before commands: no bindings, `always`, or a `moments`
list naming `before_command`. (A rule bound only `before_commit` is not the guard's.)
`targets` do not narrow it: the check's own patterns say which commands it is about.

A rule tagged `contested` is a rule kept as a note: its check was found too broad by a
trial and filed anyway with `keep_as_note`. It refuses nothing; doctor lists it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..domain.model import RULE_KINDS, Memory

CONTESTED = "contested"


def applies(rule: Memory, notebook_id: str | None, at: str) -> bool:
    if rule.status != "active" or rule.kind not in RULE_KINDS or rule.expired(at):
        return False
    if CONTESTED in rule.tags:
        return False
    if rule.check is None or rule.check.kind != "forbidden":
        return False
    if rule.scope != "workspace" and rule.notebook_id != notebook_id:
        return False
    bindings = rule.bindings
    return (
        bindings is None
        or bindings.always
        or not bindings.moments
        or "before_command" in bindings.moments
    )


def applying(rules: Iterable[Memory], notebook_id: str | None, at: str) -> list[Memory]:
    return [rule for rule in rules if applies(rule, notebook_id, at)]


def enforcing(memory: Memory | None) -> tuple[object, ...] | None:
    """What of a memory decides which commands it refuses, when it refuses any: a change
    there (a new check, new literals, a wider scope, a note made a rule, the `contested`
    tag taken off) is tried anew."""
    if memory is None or memory.status != "active" or memory.kind not in RULE_KINDS:
        return None
    if CONTESTED in memory.tags:
        return None
    if memory.check is None or memory.check.kind != "forbidden":
        return None
    return (memory.check.literals, memory.scope, memory.notebook_id)
