"""Orient: what an agent starting work should have in mind, within a character budget.

The brief lists, in this order, the rules (and orientations) that bind the notebook —
its own and the workspace-wide ones, the weightiest first — then its open issues and
debts, the open disputes touching it, the memories waiting for a check (possibly stale),
and the most relevant recent memories (recency times usefulness). The budget counts the
characters of the brief's text. A binding rule is never dropped silently: when the rules
alone overrun the budget, the ids left out are listed. Every query is bounded: a read of
a few hundred rows whatever the store's size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..domain.errors import NotFound, ValidationError
from ..domain.model import SEVERITIES, Memory, Notebook, add_days
from ..domain.projects import PROJECT_FILE, Places, find_project
from ..store import SearchQuery, StoreReader
from .base import ServiceBase, checked_budget, refuse_nul
from .brief import (
    RULE_LIMIT,
    Disputed,
    Gathered,
    dispute_item,
    fill,
    heading,
    listed_item,
    rule_item,
    stale_item,
)
from .checks import Bound, directory, here, notebook_of, stale_by_evidence
from .findings import Oriented
from .pending import SHOWN_PENDING, queued_view, waiting_writes
from .settings import freshness_days
from .usefulness import usefulness_factor

DEFAULT_BUDGET = 8_000
SECTION_LIMIT = 50  # issues and debts, disputes, stale memories read at most
EVIDENCE_READ = 200  # memories whose anchors and checks are tried against the project's files
RECENT_POOL = 100  # the newest memories ranked for the last section
SHOWN_ELSEWHERE = frozenset({"rule", "orientation", "issue", "debt"})


class OrientOps(ServiceBase):
    def orient(
        self,
        *,
        notebook: str | None = None,
        dir: str | None = None,
        budget: int = DEFAULT_BUDGET,
    ) -> Oriented:
        """The brief for a notebook, a project directory (the notebook its project file
        names), or, given neither, the whole workspace."""
        return self._orient(notebook, dir, budget, must_exist=True, served=("orient", None))

    def _orient(
        self,
        notebook: str | None,
        dir: str | None,
        budget: int,
        *,
        must_exist: bool,
        served: tuple[str, str | None] | None = None,
    ) -> Oriented:
        """`orient`; without `must_exist`, a notebook named but not made yet (a hook's, a
        project's) gets the workspace-wide rules instead of a refusal. `served`: what the
        brief is (orient, brief) and the session it goes to (None: this service's), to be
        kept in the served record."""
        asked = {"notebook": notebook, "dir": dir, "budget": budget}
        budget = checked_budget(budget)
        if notebook is not None and dir is not None:
            raise ValidationError(
                "Pass `notebook` or `dir`, not both: a project directory names its notebook.",
                field="dir",
            )
        project_root, project, note = None, None, None
        if dir is not None:
            project = find_project(_directory(dir, self.places))
            if project is None:
                note = (
                    f"No {PROJECT_FILE} in {dir} or above it: only the workspace-wide rules "
                    f"are briefed. Bind the project with a {PROJECT_FILE} at its root holding "
                    'notebook = "name".'
                )
            else:
                project_root, notebook = str(project.root), project.notebook
        with self.store.read(self.workspace) as tx:
            at = self.clock()
            if project is not None:  # by the id the binding records: a rename keeps it
                found = notebook_of(tx, project)
                notebook = found.id if found is not None else notebook
            lenient = project_root is not None or not must_exist
            nb, scope = self._scope(tx, notebook, lenient=lenient)
            if dir is not None and project_root is None:
                scope = ()  # outside any project: what binds everywhere, and nothing else
            elif project is not None and nb is None:
                note = project.unknown_notebook() + " Only workspace-wide rules are briefed."
            elif notebook is not None and nb is None:
                note = f"Notebook {notebook!r} holds no memories yet: only workspace-wide rules."
            if project is not None:
                files = Bound(project, nb) if nb is not None else None
            else:  # no `dir`: the working directory's project, if it is the one briefed
                files = here(tx, self.places)
                if files is not None and nb is not None and files.notebook.id != nb.id:
                    files = None
            sections = self._gather(tx, scope, at, files)
        filled = fill(sections, budget, heading(nb, notebook, note, scope == ()))
        answer: Oriented = {
            "notebook": nb.name if nb else notebook,
            "project": project_root,
            "budget": budget,
            "rules": filled["rules"],
            "rules_left_out": filled["rules_left_out"],
            "open": filled["open"],
            "disputes": filled["disputes"],
            "possibly_stale": filled["possibly_stale"],
            "recent": filled["recent"],
            "left_out": filled["left_out"],
            "used": filled["used"],
            "brief": filled["brief"],
        }
        if note:
            answer["note"] = note
        waiting = waiting_writes(self.store, self.workspace)
        if waiting:
            answer["pending"] = [queued_view(w) for w in waiting[:SHOWN_PENDING]]
        if served is not None:
            what, session = served
            request = {k: v for k, v in asked.items() if v is not None}
            self._record_served(what, request, filled["shown"], session=session)
        return answer

    def _scope(
        self, tx: StoreReader, notebook: str | None, lenient: bool
    ) -> tuple[Notebook | None, tuple[str, ...] | None]:
        """The notebook briefed and the notebook ids to read (None: every notebook; empty:
        none, only the workspace-wide rules). A project may name a notebook not made yet;
        a notebook named by hand must exist."""
        if notebook is None:
            return None, None
        if lenient:
            refuse_nul("notebook", notebook)
            found = tx.get_notebook(notebook)
            return found, (found.id,) if found else ()
        found = self._find_notebook(tx, notebook)
        return found, (found.id,)

    def _gather(
        self, tx: StoreReader, scope: tuple[str, ...] | None, at: str, files: Bound | None
    ) -> Gathered:
        """Each section's items, in order, and whether its listing was capped. `files`: the
        project whose files say which memories their evidence no longer backs."""
        rules, capped = _rules(tx, scope, at)
        shown = {m.id for m in rules}
        opened = _search(tx, scope, at, ("issue", "debt"), SECTION_LIMIT + 1)
        disputes = _disputes(tx, scope)
        freshness = freshness_days(tx)
        evidence = _evidence(tx, scope, files)
        aging = [m for m in _aging(tx, scope, at, freshness) if m.possibly_stale(at, freshness)]
        reasons = {m.id: why for m, why in evidence}
        stale = [m for m, _ in evidence] + [m for m in aging if m.id not in reasons]
        shown |= {m.id for m in opened} | {m.id for m in stale}
        pool = [m for m in _search(tx, scope, at, (), RECENT_POOL) if m.id not in shown]
        pool = [m for m in pool if m.kind not in SHOWN_ELSEWHERE]
        counts = tx.feedback_counts(m.id for m in pool)
        ranked = sorted(
            enumerate(pool),
            key=lambda p: (
                -(1 - p[0] / RECENT_POOL) * usefulness_factor(*counts.get(p[1].id, (0, 0)))
            ),
        )
        return Gathered(
            rules=[rule_item(m) for m in rules],
            rules_capped=capped,
            open=[listed_item(m) for m in opened[:SECTION_LIMIT]],
            open_capped=len(opened) > SECTION_LIMIT,
            disputes=disputes,
            possibly_stale=[stale_item(m, reasons.get(m.id)) for m in stale],
            recent=[listed_item(m, counts.get(m.id)) for _, m in ranked],
        )


def _directory(dir: Any, places: Places) -> Path:
    """`dir`, where this process may read (over HTTP, what its owner configured)."""
    if not isinstance(dir, str) or not dir.strip():
        raise ValidationError("`dir` must be a directory's path.", field="dir")
    refuse_nul("dir", dir)
    try:
        return directory(places, dir)
    except NotFound:
        raise ValidationError(
            f"{dir} is not a directory; give the project's.", field="dir"
        ) from None


def _search(
    tx: StoreReader, scope: tuple[str, ...] | None, at: str, kinds: tuple[str, ...], limit: int,
    **filters: Any,
) -> list[Memory]:  # fmt: skip
    """Active memories alive at `at`, newest first (scope as `_scope` gives it)."""
    if scope == ():
        return []
    query = SearchQuery(text="", limit=limit, notebook_ids=scope, kinds=kinds, alive_at=at,
                        **filters)  # fmt: skip
    return [m for m, _ in tx.search(query)]


def _rules(tx: StoreReader, scope: tuple[str, ...] | None, at: str) -> tuple[list[Memory], bool]:
    """The rules and orientations binding here: the notebook's own and every workspace-wide
    one; the weightiest first (irreversible, costly, house style), rules before
    orientations, then the newest."""
    kinds = ("rule", "orientation")
    own = _search(tx, scope, at, kinds, RULE_LIMIT)
    found = {m.id: m for m in own}
    capped = len(own) >= RULE_LIMIT
    if scope is not None:
        query = SearchQuery(text="", limit=RULE_LIMIT, kinds=kinds, scopes=("workspace",),
                            alive_at=at)  # fmt: skip
        wide = tx.search(query)
        found.update((m.id, m) for m, _ in wide)
        capped = capped or len(wide) >= RULE_LIMIT
    order = list(found.values())  # newest first, as read

    def weight(memory: Memory) -> tuple[int, int]:
        severity = SEVERITIES.index(memory.severity) if memory.severity in SEVERITIES else -1
        return (-severity, memory.kind != "rule")

    return sorted(order, key=weight), capped


def _disputes(tx: StoreReader, scope: tuple[str, ...] | None) -> list[Disputed]:
    if scope == ():
        return []
    found: list[Disputed] = []
    for dispute in tx.disputes(statuses=("open",))[: SECTION_LIMIT * 4]:
        memories = [tx.get_memory(memory_id) for memory_id in dispute.memory_ids]
        if any(m is None for m in memories):
            continue
        if scope is None or any(m.notebook_id in scope for m in memories if m):
            found.append(dispute_item(dispute, [m for m in memories if m]))
        if len(found) >= SECTION_LIMIT:
            break
    return found


def _evidence(
    tx: StoreReader, scope: tuple[str, ...] | None, files: Bound | None
) -> list[tuple[Memory, list[str]]]:
    """Memories whose anchors or checks the project's files no longer back, with why."""
    if files is None or scope == ():
        return []
    read = tx.with_evidence(scope if scope is not None else (files.notebook.id,), EVIDENCE_READ)
    failing = stale_by_evidence(files, read)
    return [(m, failing[m.id]) for m in read if m.id in failing][:SECTION_LIMIT]


def _aging(
    tx: StoreReader, scope: tuple[str, ...] | None, at: str, freshness: dict[str, int | None]
) -> list[Memory]:
    """Memories not verified within their kind's window, the oldest first (bounded)."""
    if scope == ():
        return []
    cutoffs = {}
    for kind, days in freshness.items():
        if days is not None:
            try:
                cutoffs[kind] = add_days(at, -days)
            except ValueError:  # before the first representable time: nothing is that old
                continue
    return tx.unverified_since(scope, cutoffs, SECTION_LIMIT)
