"""guard: whether a command an agent is about to run is refused by a `forbidden` rule; the
commands it has seen; and the trial a new or changed forbidden check must pass.

The decision is a read (a busy store never delays it); keeping the command is a separate
write, done after answering and never failing the answer. Trials (DESIGN section 2): of the
commands seen in the last 30 days that a check reaches (their program is a pattern's first
word), if at least 5 were seen and it would refuse more than half, it is too broad.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..domain.errors import NotFound, ValidationError
from ..domain.ids import new_id
from ..domain.model import MAX_COMMAND, Memory, Notebook, SeenCommand, add_days
from ..domain.projects import Places, Project, find_project
from ..guard import Decision, decide, simple_commands
from ..guard.decide import refusals_of, rule_patterns
from ..guard.patterns import program_of
from ..guard.rules import CONTESTED, applying, enforcing
from ..guard.unbound import refused_in_some_notebook
from ..screening import gate
from ..screening.secrets import redact
from ..store import StoreReader
from .admin_answers import SeenAnswer, SeenShown
from .answers import ForgetAnswer, Forgotten
from .base import ServiceBase
from .checks import directory
from .findings import GuardAnswer
from .roles import check_forget

KEEP_SEEN = 2_000  # commands kept per workspace
SEEN_DAYS = 30  # and for how long
TRIAL_DAYS = 30
TRIAL_MIN_REACHED = 5
TRIAL_SHOWN = 5  # refused commands named in a refusal


@dataclass(frozen=True)
class Place:
    """Where a command runs: the notebook whose rules apply (and the project naming it)."""

    notebook: str | None
    project: str | None = None
    named: bool = False  # named by the caller (an unknown one is refused), not by a project
    binding: Project | None = None  # the project file that named it, when one did

    @property
    def refs(self) -> tuple[str, ...]:
        """How to look the notebook up: the binding's id, then its name; or the name given."""
        if self.binding is not None:
            return self.binding.refs
        return (self.notebook,) if self.notebook is not None else ()


SEEN_PREFIX = "cmd_"  # the ids of kept commands


def where(dir: Any, notebook: Any, places: Places) -> Place:
    """The notebook named, or the one the project holding `dir` (default: this process's
    working directory, as for `check`) names; neither: none. `dir` is read only where this
    process may read (`places`: over HTTP, the directories its owner configured, and no
    working directory), relative to its working directory."""
    if notebook is not None:
        if not isinstance(notebook, str) or not notebook.strip():
            raise ValidationError("`notebook` is empty: name a notebook, or leave it out.",
                                  field="notebook")  # fmt: skip
        gate.check_length("notebook", notebook, limit_name="notebook")
        gate.check_storable("notebook", notebook)
        return Place(notebook.strip(), named=True)
    if dir is None:
        if places.working_dir is None:
            return Place(None)
        dir = str(places.working_dir)
    if not isinstance(dir, str) or not dir.strip():
        raise ValidationError("`dir` is empty: give a directory, or leave it out.", field="dir")
    gate.check_length("dir", dir, limit_name="path")
    gate.check_storable("dir", dir)
    try:
        path = directory(places, dir)
    except (NotFound, OSError, ValueError):
        raise ValidationError(
            f"`dir` is not a directory: {gate.shown_reference(dir)}.", field="dir"
        ) from None
    project = find_project(path)
    if project is None or not places.permits(project.root):
        return Place(None)
    return Place(project.notebook, str(project.root), binding=project)


def check_command(command: Any) -> str:
    if not isinstance(command, str) or not command.strip():
        raise ValidationError("`command` is required: the command line to judge.", field="command")
    if len(command) > MAX_COMMAND:
        raise ValidationError(
            f"`command` is longer than {MAX_COMMAND:,} characters; send the command itself.",
            field="command",
        )
    gate.check_storable("command", command)
    return command


WIDE_ONLY = (
    "Only workspace-wide rules were checked: no notebook is known here. Pass `dir` (a "
    "directory of a bound project) or `notebook` to check a notebook's rules too."
)


def answer(
    decision: Decision, place: Place, found: Notebook | None, lost: str | None
) -> GuardAnswer:
    """The guard's answer; `lost`: why a binding naming no notebook turns an allow to ask."""
    body: GuardAnswer = {
        "decision": decision.decision,
        "reason": decision.reason,
        "refused_by": [refusal.to_dict() for refusal in decision.refusals],
        "notebook": found.name if found is not None else place.notebook,
    }
    if decision.unreadable:
        body["unreadable"] = decision.unreadable
    if place.project is not None:
        body["project"] = place.project
    if lost is not None and body["decision"] == "allow":
        body |= {"decision": "ask", "reason": lost}
    if place.notebook is None:
        body["note"] = WIDE_ONLY
    elif found is None and place.binding is not None and body["reason"] != lost:
        body["warnings"] = [place.binding.unknown_notebook()]  # else said in the reason
    return body


class GuardOps(ServiceBase):
    def guard(
        self,
        *,
        command: str,
        dir: str | None = None,
        notebook: str | None = None,
    ) -> GuardAnswer:
        """Allow, deny or ask `command` under the rules of the notebook of `dir`'s project
        (or `notebook`) and the workspace-wide ones. It keeps nothing: only the hook, which
        sees what agents actually run, keeps a command for trials (`keep_seen`)."""
        check_command(command)
        place = where(dir, notebook, self.places)
        at = self.clock()
        with self.store.read(self.workspace) as tx:
            nb = next(filter(None, map(tx.get_notebook, place.refs)), None)
            if place.named and nb is None:
                raise NotFound(
                    f"No notebook is named {gate.shown_reference(place.notebook or '')}; "
                    "name an existing one, or give `dir` instead.",
                    field="notebook",
                )
            every = tx.forbidding_rules()
        decision = decide(command, applying(every, nb.id if nb else None, at))
        binding = place.binding if nb is None else None  # a binding naming no notebook
        lost = (
            binding.ask_reason()
            if binding and refused_in_some_notebook(command, every, at)
            else None
        )
        return answer(decision, place, nb, lost)

    def keep_seen(
        self, command: str, decision: str, notebook: str | None, session: str | None
    ) -> str | None:
        """Keep a command the guard judged where `notebook`'s rules apply, credentials
        redacted; its id, or None when it could not be kept (a busy store, a full disk):
        the guard's answer stands anyway. A viewer's commands are not kept: a viewer
        writes nothing, and trials count what the workspace's writers run."""
        if self.role == "viewer":
            return None
        try:
            # Redacted whole, then cut (enough for trials): a credential cut first could
            # pass the gate as a harmless fragment.
            text = gate.screen("command", _cut(redact(command)[0]), limit_name="text")
            if session is not None:
                session, _ = gate.screen_redacting("session", session[:200], limit_name="key")
            with self.store.write(self.workspace) as tx:
                now = self._now(tx)
                nb = tx.get_notebook(notebook) if notebook is not None else None
                notebook_id = nb.id if nb else None
                seen = SeenCommand(
                    new_id(SEEN_PREFIX[:-1]), now, text, decision, notebook_id, session
                )
                tx.add_seen_command(seen, keep=KEEP_SEEN, before=add_days(now, -SEEN_DAYS))
            return seen.id
        except Exception:  # best effort, by design: the answer was already given
            return None

    def seen(self, *, days: int = SEEN_DAYS) -> SeenAnswer:
        """The commands the guard kept in the last `days` days, newest first."""
        if not isinstance(days, int) or isinstance(days, bool) or days < 1:
            raise ValidationError("`days` must be a whole number of days, 1 or more.", field="days")
        with self.store.read(self.workspace) as tx:
            found = tx.seen_commands(add_days(self.clock(), -days))
        return {"commands": [seen_view(s) for s in reversed(found)]}

    def forget_seen(self, ids: list[str], *, dry_run: bool = False) -> ForgetAnswer:
        """Erase kept commands for good (`forget` with their ids; the bytes go at the next
        scrub, as a forgotten memory's do). A log, not memory: no event is written."""
        check_forget(self.role, self.actor, None)
        with self.store.write(self.workspace) as tx:
            for seen_id in ids:
                if tx.get_seen_command(seen_id) is None:
                    shown = gate.shown_reference(seen_id)
                    raise NotFound(
                        f"No kept command has the id {shown}; list them with `palimpsest seen`.",
                        field="id",
                    )
                if not dry_run:
                    tx.forget_seen_command(seen_id)
        results: list[Forgotten] = [{"id": seen_id, "forgotten": True} for seen_id in ids]
        if dry_run:
            return {"results": results, "dry_run": True}
        return {"results": results, "scrub_pending": not self.store.scrub(self.workspace)}


def seen_view(seen: SeenCommand) -> SeenShown:
    return {
        "id": seen.id,
        "seen_at": seen.seen_at,
        "command": seen.command,
        "decision": seen.decision,
        "notebook_id": seen.notebook_id,
        "session": seen.session,
    }


def _cut(text: str) -> str:
    """`text` within the stored limit, never ending inside a `[REDACTED:kind]` marker."""
    limit = gate.LIMITS["text"]
    if len(text) <= limit:
        return text
    cut = text[:limit]
    marker = cut.rfind("[REDACTED:")
    return cut[:marker] if marker != -1 and "]" not in cut[marker:] else cut


def trial(
    tx: StoreReader, rule: Memory, now: str, accept_refusing: tuple[str, ...]
) -> tuple[list[str], int]:
    """The commands seen in the last 30 days that `rule`'s check would refuse and that
    `accept_refusing` does not name, when they are more than half of at least 5 it
    reaches (else none), with how many it reaches. Only commands seen where the rule
    applies count: in its notebook's project, or anywhere for a workspace-wide rule."""
    patterns = rule_patterns([rule])
    programs = {pattern.program for _, pattern in patterns}
    accepted = {" ".join(c.split()) for c in accept_refusing}
    reached = 0
    refused: list[str] = []
    for seen in tx.seen_commands(add_days(now, -TRIAL_DAYS)):
        if rule.scope != "workspace" and seen.notebook_id != rule.notebook_id:
            continue
        try:
            commands = simple_commands(seen.command)
        except Exception:  # a command kept once must never stop a rule from being filed
            continue
        if not any(programs & program_of(c) for c in commands):
            continue
        reached += 1
        if refusals_of(commands, patterns) and " ".join(seen.command.split()) not in accepted:
            refused.append(seen.command)
    if reached >= TRIAL_MIN_REACHED and len(refused) * 2 > reached:
        return refused, reached
    return [], reached


def tried(
    tx: StoreReader,
    old: Memory | None,
    new: Memory,
    now: str,
    accept_refusing: tuple[str, ...],
    keep_as_note: bool,
) -> tuple[Memory, bool]:
    """`new` once its forbidden check, if new or changed, has passed its trial; or, when
    it fails and `keep_as_note` says so, `new` kept as a note: tagged `contested`, it
    refuses nothing (True). Else it is refused as too broad."""
    shape = enforcing(new)
    if shape is None or shape == enforcing(old):
        return new, False
    refused, reached = trial(tx, new, now, accept_refusing)
    if not refused:
        return new, False
    if keep_as_note:
        return new.replace(tags=(*new.tags, CONTESTED)), True
    listed = list(dict.fromkeys(refused))[:TRIAL_SHOWN]
    shown = "; ".join(f"`{command[:120]}`" for command in listed)
    raise ValidationError(
        f"This forbidden check is too broad: of the {reached} commands it reaches among "
        f"those seen in the last {TRIAL_DAYS} days, it would refuse {len(refused)}, among "
        f"them {shown}. Narrow its literals; or, if these are the calls it is meant to "
        "refuse, list them in `accept_refusing` with `because`; or file it with "
        "`keep_as_note` (tagged contested, it refuses nothing; doctor lists it).",
        field="check",
    )
