"""Projects, `check DIR`, and staleness by evidence.

A project is a directory bound to a notebook (domain/projects.py). Which directories this process
may read is its `Places`: the CLI and a stdio server read any, from their working
directory; an HTTP server only those its owner configured (`check_dirs`).

A memory's evidence is what its anchors and check say about the project's files. For a
fact (any kind but rule and orientation) a failing check means the memory may no longer be
true: it is possibly stale. For a rule, a failing check means the project breaks the rule:
`check` lists it, and the rule itself stays fresh. For every kind, an anchored file that
changed or went away since its hash was recorded makes the memory possibly stale.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..domain.checks import anchor_reasons, check_said, run_check, runnable, with_hashes
from ..domain.errors import Forbidden, NotFound, ValidationError
from ..domain.model import RULE_KINDS, Memory, Notebook
from ..domain.projects import PROJECT_FILE, Places, Project, bind_project, find_project, shown
from ..revise import Unmatched
from ..store import StoreReader, StoreWriter
from .admin_answers import ProjectShown
from .findings import CheckAnswer, CheckLine, Fails, Holds
from .notebooks import NotebookOps

GATING = ("irreversible", "costly")  # a failing rule of these makes `palimpsest check` fail
BIND_HINT = "palimpsest project bind DIR --notebook NAME"


@dataclass(frozen=True)
class Bound:
    """A project whose notebook exists in this workspace."""

    project: Project
    notebook: Notebook

    def covers(self, memory: Memory) -> bool:
        """Whether the project's files are `memory`'s evidence: its notebook's memories, and
        the workspace-wide rules."""
        wide = memory.kind in RULE_KINDS and memory.scope == "workspace"
        return memory.notebook_id == self.notebook.id or wide


def served_places(
    dirs: Mapping[Path, str | None], workspace: str, find: Callable[[str], str]
) -> Places:
    """An HTTP server's places: each directory of `http.check_dirs` for the workspace it
    names (`find` gives a name's id; none named: `workspace`, the server's own)."""
    owners = {}
    for path, name in dirs.items():
        try:
            owners[path] = find(name) if name else workspace
        except NotFound:
            raise ValidationError(
                f"`http.check_dirs` gives {path} to the workspace {name!r}, which this store "
                "does not hold: name one of `palimpsest workspace list`.",
                field="http.check_dirs",
            ) from None
    return Places.served(owners, workspace)


def directory(places: Places, given: str | None) -> Path:
    """The directory a caller named (None: the working directory), if this process may read
    it; relative names are taken from the working directory."""
    if given is not None and (not isinstance(given, str) or not given.strip()):
        raise ValidationError("`dir` must be a directory path.", field="dir")
    if given is None:
        if places.working_dir is None:
            raise ValidationError(_no_working_dir(places), field="dir")
        return places.working_dir
    path = Path(given.strip()).expanduser()
    if not path.is_absolute():
        if places.working_dir is None:
            raise ValidationError(
                "`dir` must be an absolute path: this server has no working directory.",
                field="dir",
            )
        path = places.working_dir / path
    if not places.permits(path):
        raise Forbidden(_not_permitted(places), field="dir")
    if not path.is_dir():
        raise NotFound(f"{path} is not a directory; name an existing one.", field="dir")
    return path.resolve()


def _no_working_dir(places: Places) -> str:
    if places.allowed is None:  # a local process whose working directory was deleted
        return "There is no working directory: give `dir`, a project directory."
    if places.allowed:
        listed = ", ".join(str(p) for p in places.allowed)
        return f"Give `dir`: one of the directories this server may read ({listed}) or below."
    return (
        "This server reads no directory for this workspace: its owner gives directories to "
        "workspaces in the `http.check_dirs` configuration key."
    )


def _not_permitted(places: Places) -> str:
    if not places.allowed:
        return _no_working_dir(places)
    listed = ", ".join(str(p) for p in places.allowed)
    return (
        f"This server reads only the directories its owner configured for this workspace "
        f"({listed}) and below."
    )


def project_at(places: Places, given: str | None) -> Project:
    """The project holding the directory named (None: the working directory)."""
    path = directory(places, given)
    project = find_project(path)
    if project is None:
        raise NotFound(
            f"No {PROJECT_FILE} in {path} or above it: bind the project first ({BIND_HINT}).",
            field="dir",
        )
    if not places.permits(project.root):  # bound above what the owner let this server read
        raise Forbidden(_not_permitted(places), field="dir")
    return project


def notebook_of(tx: StoreReader, project: Project) -> Notebook | None:
    """The notebook `project` is bound to: by the id its file records (it survives a
    rename), else by the name (a file written by hand, or in another store)."""
    for ref in project.refs:
        found = tx.get_notebook(ref)
        if found is not None:
            return found
    return None


def bound(tx: StoreReader, project: Project) -> Bound:
    notebook = notebook_of(tx, project)
    if notebook is None:
        raise NotFound(project.unknown_notebook(), field="dir")
    return Bound(project, notebook)


def here(tx: StoreReader, places: Places) -> Bound | None:
    """The project of the working directory, when there is one and its notebook exists."""
    if places.working_dir is None:
        return None
    try:
        project = find_project(places.working_dir)
    except ValidationError:  # a malformed binding file: evidence is unknown, not an error
        return None
    if project is None or not places.permits(project.root):
        return None
    notebook = notebook_of(tx, project)
    return Bound(project, notebook) if notebook is not None else None


def evidence_reasons(memory: Memory, root: Path) -> list[str]:
    """Why the project's files say `memory` may no longer hold (empty: nothing says so)."""
    reasons = [reason for anchor in memory.anchors for reason in anchor_reasons(anchor, root)]
    if memory.kind not in RULE_KINDS and memory.check is not None and runnable(memory.check):
        outcome = run_check(memory.check, root)
        if not outcome.holds:
            said = "; ".join(f.said() for f in outcome.failures[:3])
            reasons.append(f"its check ({check_said(memory.check)}) fails: {said}")
    return reasons


def stale_by_evidence(project: Bound | None, memories: list[Memory]) -> dict[str, list[str]]:
    """For each active memory the project covers, why its evidence fails (only those that do)."""
    if project is None:
        return {}
    found = {}
    for memory in memories:
        if memory.status == "active" and project.covers(memory):
            reasons = evidence_reasons(memory, project.project.root)
            if reasons:
                found[memory.id] = reasons
    return found


def hashed_on_write(
    tx: StoreWriter, places: Places, memory: Memory, *, verifying: bool, refresh: bool = False
) -> tuple[Memory, list[str]]:
    """`memory` as written: its anchors' hashes recorded where its project is known (those
    it lacks; all of them when `verifying` or `refresh`: a successor says what holds now),
    and a verify refused while its evidence fails. Returns the memory and any warning."""
    if not memory.anchors and not verifying:
        return memory, []
    project = here(tx, places)
    if project is None or not project.covers(memory):
        unhashed = [a.path for a in memory.anchors if a.hash is None]
        if not unhashed:
            return memory, []
        return memory, [
            f"The hashes of {', '.join(unhashed)} are left for later: no directory bound to "
            "this memory's notebook is known here. Verify it from inside the project (or a "
            "CLI run there) to record them."
        ]
    root = project.project.root
    if verifying:
        now = memory.replace(anchors=with_hashes(memory.anchors, root, refresh=True))
        reasons = evidence_reasons(now, root)
        if reasons:
            raise Unmatched(
                f"its evidence fails in {root}: {'; '.join(reasons)}. Fix the file, or revise "
                "the memory (text, check or anchors) to what is true now, then verify",
                status_related=True,
                field="status",
            )
        return now, []
    return memory.replace(anchors=with_hashes(memory.anchors, root, refresh=refresh)), []


class CheckOps(NotebookOps):  # binding may create the notebook
    def project(self, *, dir: str | None = None) -> ProjectShown:
        """The project holding `dir` (None: the working directory) and its notebook."""
        project = project_at(self.places, dir)
        with self.store.read(self.workspace) as tx:
            notebook = notebook_of(tx, project)
        return _project_view(project, notebook)

    def bind_project(self, *, dir: str, notebook: str, create: bool = False) -> ProjectShown:
        """Bind a directory to a notebook: write `.palimpsest.toml` at its root, naming the
        notebook and recording its id (a rename later keeps the binding).

        The notebook must exist, or `create` makes it: a typo bound to a new, empty
        notebook would make `check` pass with nothing to check.
        """
        path = directory(self.places, dir)
        if not isinstance(notebook, str) or not notebook.strip():
            raise ValidationError("`notebook` must be a notebook's name or id.", field="notebook")
        with self.store.read(self.workspace) as tx:
            found = tx.get_notebook(notebook.strip())
        created = False
        if found is None:
            if not create:
                raise NotFound(
                    f"There is no notebook {notebook.strip()!r}: name an existing one "
                    "(`palimpsest notebook list`), or pass --create to make it.",
                    field="notebook",
                )
            answer = self.create_notebook(name=notebook.strip())
            created = True
            with self.store.read(self.workspace) as tx:
                found = tx.get_notebook(answer["notebook"]["id"])
        assert found is not None
        project = bind_project(path, found.name, found.id)
        view = _project_view(project, found)
        view["created"] = created
        return view

    def check(self, *, dir: str | None = None) -> CheckAnswer:
        """Run every check that applies to a project: its notebook's memories' and the
        workspace-wide rules' (`forbidden` ones are the guard's). Nothing is written."""
        project = project_at(self.places, dir)
        with self.store.read(self.workspace) as tx:
            target = bound(tx, project)
            at = self.clock()
            memories = [
                m
                for m in tx.memories_at(None)
                if m.status == "active"
                and not m.expired(at)
                and runnable(m.check)
                and target.covers(m)
            ]
        holds: list[Holds] = []
        fails: list[Fails] = []
        gating: list[str] = []
        for memory in sorted(memories, key=lambda m: m.id):
            assert memory.check is not None
            outcome = run_check(memory.check, project.root)
            line = _check_line(memory)
            if outcome.holds:
                holds.append({**line, "files": outcome.files})
                continue
            for failure in outcome.failures:
                failed: Fails = {"id": line["id"], "kind": line["kind"],
                                 "severity": line["severity"], "text": line["text"],
                                 "check": line["check"], "file": failure.file,
                                 "reason": failure.reason}  # fmt: skip
                if failure.literal is not None:
                    failed["literal"] = failure.literal
                if failure.line is not None:
                    failed["line"] = failure.line
                fails.append(failed)
            if memory.kind == "rule" and memory.severity in GATING:  # an orientation guides
                gating.append(memory.id)
        return {
            "dir": str(project.root),
            "notebook": target.notebook.name,
            "checked": len(memories),
            "holds": holds,
            "fails": fails,
            "gating": gating,
        }


def _check_line(memory: Memory) -> CheckLine:
    assert memory.check is not None
    return {
        "id": memory.id,
        "kind": memory.kind,
        "severity": memory.severity,
        "text": memory.text[:120],
        "check": memory.check.kind,
    }


def _project_view(project: Project, notebook: Notebook | None) -> ProjectShown:
    view: ProjectShown = {
        "dir": str(project.root),
        "file": str(project.root / PROJECT_FILE),
        "notebook": notebook.name if notebook else project.notebook,
        "notebook_id": notebook.id if notebook else None,
        "notebook_exists": notebook is not None,
    }
    if notebook is None:
        view["note"] = project.unknown_notebook()
    elif project.notebook_id is None:
        view["note"] = (
            "The file names the notebook by name alone: a rename would lose the binding. "
            f"Bind it again to record its id (palimpsest project bind {project.root} "
            f"--notebook {notebook.id})."
        )
    elif notebook.name != project.notebook:
        view["note"] = (
            f"The file still names the notebook {shown(project.notebook)}, its name before a "
            "rename; it is found by its id. Bind it again to write its name (palimpsest "
            f"project bind {project.root} --notebook {notebook.id})."
        )
    return view
