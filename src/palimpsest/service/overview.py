"""What a person reads about notebooks: each with how much it holds and the projects bound
to it; one with its rules (check, severity, scope, bindings) and the commands the guard
denied or asked about there. Reads only: nothing here writes."""

from __future__ import annotations

from ..domain.errors import ValidationError
from ..domain.model import SEVERITIES, Memory, Notebook, add_days
from ..domain.projects import find_project
from ..guard.rules import CONTESTED, applies
from ..store import SearchQuery, StoreReader
from .base import ServiceBase
from .checks import notebook_of
from .guard import SEEN_DAYS, seen_view
from .notebook_answers import NotebookListAnswer, NotebookListed, NotebookRulesAnswer, RuleShown
from .shown import bindings_view, check_view, notebook_view

RULE_LIMIT = 200  # of each list: a notebook with more is a notebook to split
RULE_KINDS = ("rule", "orientation")
PROJECTS_NOTE = (
    "A project is bound by a .palimpsest.toml file in its directory: only the directories "
    "this server may read (`http.check_dirs`) are looked at, each where it is configured."
)
REFUSED = ("deny", "ask")


class OverviewOps(ServiceBase):
    def notebook_list(self) -> NotebookListAnswer:
        """Every notebook of the workspace, by name, with its counts and bound projects."""
        with self.store.read(self.workspace) as tx:
            notebooks = tx.list_notebooks()
            counts = tx.notebook_counts()
            projects = self._bound_projects(tx)
        listed: list[NotebookListed] = []
        for nb in notebooks:
            memories, active, rules = counts.get(nb.id, (0, 0, 0))
            listed.append({"notebook": notebook_view(nb), "memories": memories,
                           "active": active, "rules": rules,
                           "projects": projects.get(nb.id, [])})  # fmt: skip
        return {"notebooks": listed, "projects_note": PROJECTS_NOTE}

    def notebook_rules(self, *, notebook: str) -> NotebookRulesAnswer:
        """The rules binding `notebook` (its own, and the workspace-wide ones of others),
        and the commands the guard denied or asked about in it, newest first."""
        if not isinstance(notebook, str) or not notebook.strip():
            raise ValidationError("`notebook` must be a notebook name or id.", field="notebook")
        at = self.clock()
        with self.store.read(self.workspace) as tx:
            nb = self._find_notebook(tx, notebook)
            own = _rules(tx, SearchQuery(text="", limit=RULE_LIMIT + 1, kinds=RULE_KINDS,
                                         notebook_ids=(nb.id,), alive_at=at))  # fmt: skip
            wide = _rules(tx, SearchQuery(text="", limit=RULE_LIMIT + 1, kinds=RULE_KINDS,
                                          scopes=("workspace",), alive_at=at))  # fmt: skip
            wide = [m for m in wide if m.notebook_id != nb.id]
            names = {n.id: n.name for n in tx.list_notebooks()}
            seen = tx.seen_commands(add_days(at, -SEEN_DAYS))
        guarded = [s for s in reversed(seen) if s.notebook_id == nb.id and s.decision in REFUSED]
        answer: NotebookRulesAnswer = {
            "notebook": notebook_view(nb),
            "rules": [_rule_view(m, nb, names, at) for m in own[:RULE_LIMIT]],
            "workspace_rules": [_rule_view(m, nb, names, at) for m in wide[:RULE_LIMIT]],
            "guarded": [seen_view(s) for s in guarded],
            "guarded_days": SEEN_DAYS,
        }
        if len(own) > RULE_LIMIT or len(wide) > RULE_LIMIT:
            answer["capped"] = True
        return answer

    def _bound_projects(self, tx: StoreReader) -> dict[str, list[str]]:
        """The projects at the directories this process was given (a server's check_dirs),
        by the id of the notebook each is bound to. A process that may read any directory
        (the CLI) has none to look at: it is not told where its projects are."""
        found: dict[str, list[str]] = {}
        for place in self.places.allowed or ():
            try:
                project = find_project(place)
            except (OSError, ValidationError):  # a malformed binding binds nothing
                continue
            if project is None or not self.places.permits(project.root):
                continue
            bound = notebook_of(tx, project)
            if bound is not None and str(project.root) not in found.get(bound.id, []):
                found.setdefault(bound.id, []).append(str(project.root))
        return found


def _rules(tx: StoreReader, query: SearchQuery) -> list[Memory]:
    """The active rules a query finds, gravest first, rules before orientations."""

    def weight(memory: Memory) -> tuple[int, bool]:
        gravity = SEVERITIES.index(memory.severity) if memory.severity in SEVERITIES else -1
        return (-gravity, memory.kind != "rule")

    return sorted((m for m, _ in tx.search(query)), key=weight)


def _rule_view(memory: Memory, here: Notebook, names: dict[str, str], at: str) -> RuleShown:
    return {
        "id": memory.id,
        "kind": memory.kind,
        "notebook": names.get(memory.notebook_id, memory.notebook_id),
        "title": memory.title,
        "text": memory.text,
        "severity": memory.severity,
        "scope": memory.scope or "notebook",
        "check": check_view(memory.check) if memory.check else None,
        "bindings": bindings_view(memory.bindings) if memory.bindings else None,
        "guards": applies(memory, here.id, at),
        "contested": CONTESTED in memory.tags,
    }
