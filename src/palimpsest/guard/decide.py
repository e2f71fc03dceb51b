"""The guard's answer for one command, given the rules that apply: allow, deny or ask.

- A rule whose pattern matches refuses the command. A `rule` of severity `irreversible`
  or `costly`, or of no severity, denies it; a `house_style` rule, or an `orientation`
  (softer than a rule), asks a person instead.
- A command that cannot be read, or whose program is not written out (`$CMD push`,
  `eval "$x"`), is asked about when any rule applies and could be hiding in it; with no
  rule to apply there is nothing to refuse, and it is allowed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..domain.model import Memory
from ..domain.text import one_line
from .commands import SimpleCommand, Unparseable, simple_commands
from .patterns import Pattern, compile_pattern, matches
from .runtime import could_match
from .workdir import anywhere, in_workdir, workdirs

ASKING_SEVERITIES = frozenset({"house_style"})


@dataclass(frozen=True)
class Refusal:
    rule: Memory
    literal: str

    @property
    def denies(self) -> bool:
        return self.rule.kind == "rule" and self.rule.severity not in ASKING_SEVERITIES

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"id": self.rule.id, "literal": self.literal,
                                "decision": "deny" if self.denies else "ask"}  # fmt: skip
        if self.rule.title:
            body["title"] = self.rule.title
        else:
            body["text"] = self.rule.text[:200]
        if self.rule.severity:
            body["severity"] = self.rule.severity
        return body


@dataclass(frozen=True)
class Decision:
    decision: str  # allow, deny or ask
    refusals: tuple[Refusal, ...] = ()
    unreadable: str | None = None  # why the command could not be read, when it could not
    commands: tuple[SimpleCommand, ...] = field(default=(), repr=False)

    @property
    def reason(self) -> str:
        if self.refusals:
            named = "; ".join(  # a rule's words on one line: the agent reads this reason
                f"{r.rule.id} ({one_line(r.rule.title or r.rule.text, 80)}) forbids "
                f"`{one_line(r.literal, 200)}`"
                for r in self.refusals
            )
            return f"Refused by {named}."
        if self.unreadable:
            return f"Cannot tell what this command runs ({self.unreadable}): a person decides."
        return "No forbidden rule applies to this command."

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"decision": self.decision, "reason": self.reason,
                                "refused_by": [r.to_dict() for r in self.refusals]}  # fmt: skip
        if self.unreadable:
            body["unreadable"] = self.unreadable
        return body


def rule_patterns(rules: Iterable[Memory]) -> list[tuple[Memory, Pattern]]:
    patterns = []
    for rule in rules:
        if rule.check is None:
            continue
        for literal in rule.check.literals:
            pattern = compile_pattern(literal)
            if pattern is not None:
                patterns.append((rule, pattern))
    return patterns


def decide(command: str, rules: Iterable[Memory]) -> Decision:
    """Allow, deny or ask `command`, under `rules` (those that apply where it runs)."""
    patterns = rule_patterns(rules)
    try:
        commands = tuple(simple_commands(command))
    except Unparseable as why:
        if not patterns:
            return Decision("allow")
        return Decision("ask", unreadable=str(why))
    dirs = workdirs(commands)
    refusals = refusals_of(commands, patterns)
    if any(r.denies for r in refusals):
        return Decision("deny", refusals, commands=commands)
    if refusals:
        return Decision("ask", refusals, commands=commands)
    if patterns and any(c.unknown for c in commands):
        hidden = "its program or script is only known when it runs"
        return Decision("ask", unreadable=hidden, commands=commands)
    maybe = possible_refusal(commands, patterns, dirs)
    if maybe is not None:
        return Decision("ask", unreadable=maybe, commands=commands)
    return Decision("allow", commands=commands)


def possible_refusal(
    commands: Iterable[SimpleCommand],
    patterns: list[tuple[Memory, Pattern]],
    dirs: frozenset[str] = frozenset(),
) -> str | None:
    """Why a rule could refuse one of `commands` once it runs, when one could."""
    for command in commands:
        for rule, pattern in patterns:
            elsewhere = any(matches(pattern, command, anywhere(d)) for d in dirs)
            if not elsewhere and not could_match(pattern, command):
                continue
            if elsewhere:
                what = (f"`{pattern.program}` reads a relative path in a directory only "
                        "known when it runs (`cd $X`, `cd -`, `cd ..`)")  # fmt: skip
            elif command.code is not None:
                what = f"`{command.words[0]}` runs inline code that could run a program"
            else:
                what = (f"an argument of `{pattern.program}` is only known when it runs ($(...), "
                        "$VAR, a glob, `~/..`, xargs) or holds the home (`/home`)")  # fmt: skip
            return f"{what}; it could be `{pattern.literal}`, which {rule.id} forbids"
    return None


def refusals_of(
    commands: Sequence[SimpleCommand], patterns: list[tuple[Memory, Pattern]]
) -> tuple[Refusal, ...]:
    """Each rule refusing one of `commands`, once, with the first literal that matched: as
    written, or with its relative paths read where a `cd` of the line went."""
    dirs = workdirs(commands)
    found: dict[str, Refusal] = {}
    for command in commands:
        for rule, pattern in patterns:
            if rule.id in found:
                continue
            if matches(pattern, command) or any(
                matches(pattern, command, in_workdir(d)) for d in dirs
            ):
                found[rule.id] = Refusal(rule, pattern.literal)
    return tuple(found.values())
