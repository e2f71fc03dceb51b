"""What needs a person's attention: secrets that got in before the gate, stale, expired
and ownerless memories, open disputes, rules failing their checks and memories stale by
evidence in a project directory, and scrubbing a forget left pending."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from ..domain.checks import run_check, runnable
from ..domain.model import RULE_KINDS, Memory, Notebook, add_days
from ..guard.rules import CONTESTED
from ..revise import record_fields
from ..screening.detector_id import detector_id
from ..screening.secrets import find_in_parts, find_secrets, redact
from ..store import EventFilter, StoreReader
from ..store import PendingScrub as StoredScrub
from .admin_answers import ScrubAnswer
from .base import EVERY_EVENT, ServiceBase
from .checks import Bound, bound, here, project_at, stale_by_evidence
from .findings import (
    DisputeWaiting,
    DoctorAnswer,
    Evidence,
    FailedAuthentications,
    FailingCheck,
    Fixable,
    Line,
    OpenDisputes,
    PendingScrub,
    SecretFound,
    ToolCall,
)
from .notebooks import FORGETTABLE_FIELDS
from .pending import sync_findings
from .settings import freshness_days
from .usefulness import noisy


def secret_kinds(memory: Memory) -> dict[str, list[str]]:
    """Each field of `memory` holding a secret, with the kinds found there: read as the gate
    reads a record: its fields together, the status note with them."""
    record = record_fields(memory)
    if memory.status_note:
        record.append(("status_note", memory.status_note))
    found: dict[str, set[str]] = {}
    for kind, touched in find_in_parts([value for _, value in record]):
        for index in touched:
            found.setdefault(record[index][0], set()).add(kind)
    return {name: sorted(kinds) for name, kinds in found.items()}


SECRET_GOT_IN = "a secret got in"


def tool_call(tool: str, **arguments: Any) -> ToolCall:
    """A finding's fix as the tool call that makes it (an agent's; the CLI prints it as a
    command): values in <angle brackets> are for the caller to fill in."""
    return {"tool": tool, "arguments": arguments}


def kept_as_notes(active: list[Memory]) -> list[Fixable]:
    """Rules kept as notes (tagged `contested`) because a trial found their forbidden check
    too broad: they refuse nothing until a person narrows the check and drops the tag."""
    found: list[Fixable] = []
    for m in active:
        if m.kind in RULE_KINDS and CONTESTED in m.tags and m.check and m.check.kind == "forbidden":
            others = [t for t in m.tags if t != CONTESTED]
            untag: dict[str, Any] = {"tags": others} if others else {"clear": ["tags"]}
            fix = tool_call("revise", id=m.id, check="<the narrower check>", **untag,
                            because="<why the narrower check is enough>")  # fmt: skip
            line = _line(m)
            found.append({"id": line["id"], "kind": line["kind"], "text": line["text"], "fix": fix})
    return found


class DoctorOps(ServiceBase):
    def doctor(self, *, dir: str | None = None) -> DoctorAnswer:
        """Scan the store and list what a person should look at, with the fix for each: a
        tool call (`tool_call`), or a command for a person where no tool makes it.

        The project's files are read in `dir` when given, else in the working directory's
        project when there is one (the CLI's, a stdio server's)."""
        named = project_at(self.places, dir) if dir is not None else None
        scrubbed = self.store.scrub(self.workspace)
        screen = detector_id()
        with self.store.read(self.workspace) as tx:
            project = bound(tx, named) if named is not None else here(tx, self.places)
            at = self.clock()
            secrets, clean = _version_secrets(tx, screen)
            for notebook in tx.list_notebooks():
                secrets += _notebook_secrets(tx, notebook)
            possibly_stale = tx.possibly_stale(stale_before(freshness_days(tx), at))
            expired = tx.expired_memories(at)
            ownerless = tx.ownerless_memories()
            rules = tx.active_of_kinds(RULE_KINDS)
            # Only a project's files need every active memory (stale by evidence).
            active = [m for m in tx.memories_at(None) if m.status == "active"] if project else []
            pending = [_pending_line(p) for p in tx.pending_scrubs()]
            # Versions recall cannot find by meaning: filed with no model or another one.
            unembedded = tx.stale_vector_count(self.vectors.model) if self.vectors.enabled else 0
            disputes = open_disputes(tx)
            noise = noisy(tx.all_feedback_counts(), tx.get_memory)
            knocked = self._failed_auth(tx, at)
        if clean:  # read once: the next doctor reads only what was written since
            with self.store.write(self.workspace) as tx:
                tx.mark_screened(clean, screen)
        evidence = evidence_findings(project, active, at)
        report: DoctorAnswer = {
            "secrets": secrets,
            "possibly_stale": [_line(m) for m in possibly_stale],
            "expired": [_line(m) for m in expired],
            "ownerless": [_line(m) for m in ownerless],
            "noise": noise,
            "rules_kept_as_notes": kept_as_notes(rules),
            "scrub_pending": not scrubbed,
            "pending_scrubs": pending,
            "project": evidence["project"],
        }
        if "failing_checks" in evidence:
            report["failing_checks"] = evidence["failing_checks"]
        if "stale_by_evidence" in evidence:
            report["stale_by_evidence"] = evidence["stale_by_evidence"]
        if unembedded:
            report["stale_vectors"] = {"count": unembedded, "fix": "palimpsest reindex"}
        if disputes["count"]:
            report["open_disputes"] = disputes
        if knocked:
            report["failed_authentications"] = knocked
        sync = sync_findings(self.store, self.workspace)
        if sync:
            report["sync"] = sync
        return report

    def _failed_auth(self, tx: StoreReader, at: str) -> FailedAuthentications | None:
        """Failed authentications of the last 24 hours this caller may see: its workspace's,
        and for whoever opened the store itself those naming no workspace too."""
        since = (datetime.fromisoformat(at) - timedelta(hours=24)).isoformat()[:13]
        count, last = tx.failed_auth_since(since, (self.workspace,) if self.key_id else
                                           (self.workspace, ""))  # fmt: skip
        if not count:
            return None
        return {"last_24_hours": count, "last_at": last,
                "fix": "a client sends a wrong, revoked or expired key, or none: see "
                       "`palimpsest key list` and give it a working one"}  # fmt: skip

    def pending_scrubs(self) -> list[PendingScrub]:
        """The forgets of this workspace whose bytes still wait for a scrub (nothing is run)."""
        with self.store.read(self.workspace) as tx:
            return [_pending_line(p) for p in tx.pending_scrubs()]

    def scrub(self) -> ScrubAnswer:
        """Erase what forgets left in the store's files now: on PostgreSQL, rewrite the tables.

        Each table is copied while in use and locked only to swap the copy in; `locked_seconds`
        says how long.
        """
        done = self.store.rewrite()
        with self.store.read(self.workspace) as tx:
            pending = [_pending_line(p) for p in tx.pending_scrubs()]
        answer: ScrubAnswer = {
            "locked_seconds": done.locked_seconds,
            "scrub_pending": bool(pending) or done.pending > 0,
            "pending_scrubs": pending,
        }
        if done.warning:
            answer["warning"] = done.warning
        return answer


def stale_before(freshness: Mapping[str, int | None], at: str) -> dict[str, str]:
    """For each kind that goes stale, the time before which a memory of it not verified
    since is possibly stale at `at` (Memory.possibly_stale, asked of the store)."""
    return {kind: add_days(at, -days) for kind, days in freshness.items() if days is not None}


def _version_secrets(
    tx: StoreReader, screen: str
) -> tuple[list[SecretFound], list[tuple[str, int]]]:
    """The secrets in versions the detector `screen` has not read yet, and the versions it
    found clean (a version never changes, and a forget drops it from what is read)."""
    secrets: list[SecretFound] = []
    clean: list[tuple[str, int]] = []
    for memory in tx.unscreened_versions(screen):
        fields = secret_kinds(memory)
        if not fields:
            clean.append((memory.id, memory.version))
            continue
        latest = tx.get_memory(memory.id)
        whole = latest is not None and latest.version == memory.version
        secrets.append({
            "id": memory.id,
            "version": memory.version,
            "fields": fields,
            "fix": tool_call("forget", id=memory.id, because=SECRET_GOT_IN)
            if whole
            else tool_call("forget", id=memory.id, version=memory.version,
                           because=SECRET_GOT_IN),
        })  # fmt: skip
    return secrets, clean


def _notebook_secrets(tx: StoreReader, notebook: Notebook) -> list[SecretFound]:
    """Secrets in a notebook's name or summary, now or in any past value in its events."""
    values: dict[str, list[str]] = {"name": [notebook.name], "summary": [notebook.summary or ""]}
    for event in tx.events(EventFilter(target_id=notebook.id, limit=EVERY_EVENT)):
        for name in FORGETTABLE_FIELDS:
            past = event.data.get(name)
            values[name] += [v for v in (past if isinstance(past, list) else [past]) if v]
    found: list[SecretFound] = []
    for name, texts in values.items():
        kinds = sorted({f.kind for text in texts for f in find_secrets(text)})
        if kinds:
            found.append({
                "notebook": notebook.id,
                "fields": {name: kinds},
                "fix": tool_call("forget", notebook=notebook.id, field=name,
                                 because=SECRET_GOT_IN),
            })  # fmt: skip
    return found


def evidence_findings(project: Bound | None, active: list[Memory], at: str) -> Evidence:
    """Rules whose checks fail in the project, and memories its files say may be stale;
    with no project known, `project` says so and both lists are left out."""
    if project is None:
        return {"project": None}
    failing: list[FailingCheck] = []
    for memory in active:
        if memory.kind in RULE_KINDS and runnable(memory.check) and project.covers(memory):
            assert memory.check is not None
            if not memory.expired(at):
                outcome = run_check(memory.check, project.project.root)
                if not outcome.holds:
                    said = [f.said() for f in outcome.failures[:5]]
                    line = _line(memory)
                    failing.append({"id": line["id"], "kind": line["kind"], "text": line["text"],
                                    "severity": memory.severity, "fails": said})  # fmt: skip
    stale = stale_by_evidence(project, active)
    return {
        "project": str(project.project.root),
        "failing_checks": failing,
        "stale_by_evidence": [
            {"id": m.id, "kind": m.kind, "text": _line(m)["text"], "reasons": stale[m.id]}
            for m in active
            if m.id in stale
        ],
    }


OLDEST_DISPUTES = 5  # listed by doctor; `dispute list` shows them all


def open_disputes(tx: StoreReader) -> OpenDisputes:
    """The disputes waiting for a ruling: how many, and the oldest few with both ids."""
    waiting = sorted(tx.disputes(statuses=("open",)), key=lambda d: (d.opened_at, d.id))
    oldest: list[DisputeWaiting] = []
    for dispute in waiting[:OLDEST_DISPUTES]:
        first, second = dispute.memory_ids
        oldest.append({
            "id": dispute.id,
            "memories": [first, second],
            "opened_at": dispute.opened_at,
            "fix": tool_call("dispute", action="rule", dispute=dispute.id,
                             holds=f"<{first} or {second}>", reason="<why it holds>"),
        })  # fmt: skip
    return {"count": len(waiting), "oldest": oldest}


def _pending_line(pending: StoredScrub) -> PendingScrub:
    return {"id": pending.target_id, "since": pending.at, "fix": "palimpsest scrub"}


def _line(memory: Memory) -> Line:
    # A report must not spread a secret it has not flagged yet: redact on the way out.
    return {"id": memory.id, "kind": memory.kind, "text": redact(memory.text)[0][:120]}
