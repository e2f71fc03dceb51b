"""The MCP tools: each one takes DESIGN section 7's parameters and calls the service.

A tool parses nothing itself beyond what its signature declares; every rule lives in the
service, which refuses with the errors `server` turns into tool results. Parameters a
caller leaves out (None, or a flag left false) are not passed on, so "omit keeps" holds.
Parameter types and descriptions are in `params`; tool descriptions in
`descriptions`.

The service is synchronous (SQLite). Each call runs on one of a fixed set of threads
owned by the server, rather than on the SDK's worker threads: those end after ten idle
seconds and new ones start on the next burst, and the store opens a connection per thread
that it keeps until it is closed, so a long-running server would gather connections (and
file descriptors) without bound. A fixed pool keeps them at `STORE_THREADS`.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from contextvars import ContextVar
from typing import Annotated, Any, Literal, TypeVar, cast

from ..config import DEFAULT_LIMITS
from ..domain.errors import ValidationError
from ..service import Service
from ..service.answers import (
    DisputeAnswer,
    ForgetAnswer,
    HistoryAnswer,
    InspectAnswer,
    LinkAnswer,
    NotebookAnswer,
    Recalled,
    Remembered,
    RevertAnswer,
    ReviseAnswer,
)
from ..service.batch import MAX_ITEMS
from ..service.findings import CheckAnswer, DoctorAnswer, GuardAnswer, Oriented
from .answers import answered
from .keys import request_principal
from .params import (
    AS_IN_REMEMBER,
    KIND_MEANINGS,
    LINK_MEANINGS,
    TIME,
    VALUES_ONLY,
    AcceptRefusing,
    Anchors,
    Because,
    BindingsParam,
    CheckParam,
    Clearable,
    DisputeAction,
    DryRun,
    ExpectedVersion,
    ExpiresAt,
    Falsifier,
    Feedback,
    IdempotencyKey,
    KeepAsNote,
    Key,
    Kind,
    KindFilter,
    LinkType,
    MemoryId,
    MemoryIds,
    NotebookAction,
    NotebookClearable,
    OccurredAt,
    ProjectDir,
    ReviseStatus,
    ScopeParam,
    SeverityParam,
    Source,
    StatusFilter,
    Tags,
    Title,
    Why,
    describe,
)

STORE_THREADS = DEFAULT_LIMITS.store_threads  # the default of `server.store_threads`
# The session of the call under way (server.py sets it): what it is shown is recorded
# under it (service/served.py). None: a call from outside a server, nothing recorded.
CLIENT_SESSION: ContextVar[str | None] = ContextVar("client_session", default=None)

R = TypeVar("R", bound=Mapping[str, Any])


def _given(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments a caller gave: None and false flags mean "not given" to the service."""
    return {k: v for k, v in arguments.items() if k != "self" and v is not None and v is not False}


class PalimpsestTools:
    """The tools, bound to one service and its threads. `server` registers each one."""

    def __init__(self, service: Service, threads: Executor):
        self._service = service
        self.threads = threads

    @property
    def service(self) -> Service:
        """The service acting as the caller (over HTTP the request's key holder, keys.py),
        serving its MCP session. Read it in the tool itself, never on a store thread (the
        request is not known there)."""
        principal = request_principal()
        service = self._service if principal is None else self._service.acting_as(principal)
        session = CLIENT_SESSION.get()
        return service if session is None else service.in_session(session)

    async def run(
        self, call: Callable[..., R], arguments: dict[str, Any], *, whole: bool = False
    ) -> R:
        """`call` with the arguments given, on a store thread, as the lean result an agent
        reads (answers.py; `whole` keeps empty values). Each tool declares the service's
        answer type it returns: its output schema is derived from it (schema.py). The HTTP
        API's own operations run this way too (api/operations.py)."""
        work = functools.partial(call, **_given(arguments))
        answer = await asyncio.get_running_loop().run_in_executor(self.threads, work)
        return cast(R, answered(answer, whole=whole))

    async def remember(
        self,
        notebook: Annotated[
            str | None, describe("Where it goes; a new name creates the notebook.")
        ] = None,
        kind: Annotated[Kind | None, describe(KIND_MEANINGS)] = None,
        text: Annotated[str | None, describe("The memory, up to 8,000 characters.")] = None,
        items: Annotated[
            list[dict[str, Any]] | None,
            describe(
                f"A batch instead, up to {MAX_ITEMS}: [{{kind, text, "
                "notebook?, ...fields}]; `notebook` beside it is the default."
            ),
        ] = None,
        title: Title = None,
        why: Why = None,
        tags: Tags = None,
        key: Key = None,
        occurred_at: OccurredAt = None,
        expires_at: ExpiresAt = None,
        source: Source = None,
        anchors: Anchors = None,
        supersedes: Annotated[
            list[str] | None,
            describe("Ids of active memories this one replaces: they retire as superseded."),
        ] = None,
        severity: SeverityParam = None,
        falsifier: Falsifier = None,
        check: CheckParam = None,
        bindings: BindingsParam = None,
        scope: ScopeParam = None,
        because: Because = None,
        accept_refusing: AcceptRefusing = None,
        keep_as_note: KeepAsNote = False,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRun = False,
    ) -> Remembered:
        return await self.run(self.service.remember, locals())

    async def recall(
        self,
        query: Annotated[
            str,
            describe(
                "Words or a paraphrase; a person named (all of a user's name) puts their "
                "memories first, an id or key its memory; empty: filters only."
            ),
        ] = "",
        notebook: Annotated[str | None, describe("Only this notebook.")] = None,
        domain: Annotated[str | None, describe("Only notebooks of this domain.")] = None,
        kind: KindFilter = None,
        tags: Annotated[list[str] | None, describe("Only memories carrying all of these.")] = None,
        status: StatusFilter = None,
        since: Annotated[
            str | None, describe(f"Occurred (else recorded) at or after, {TIME}.")
        ] = None,
        until: Annotated[
            str | None, describe(f"Occurred (else recorded) at or before, {TIME}.")
        ] = None,
        limit: Annotated[int | None, describe("At most this many hits, 1 to 200 (10).")] = None,
        include_retired: Annotated[bool, describe("Add retired ones.")] = False,
        as_of: Annotated[
            str | None, describe(f"Answer as recorded at this past time, {TIME}.")
        ] = None,
        near_misses: Annotated[bool, describe("Add hits below the relevance floor.")] = False,
        budget: Annotated[
            int | None,
            describe(
                "Characters the hits may fill, 500 to 100,000: the best that fit; the "
                "rest named in `left_out`."
            ),
        ] = None,
    ) -> Recalled:
        return await self.run(self.service.recall, locals())

    async def revise(
        self,
        id: MemoryId = None,
        ids: MemoryIds = None,
        texts: Annotated[
            list[str] | None,
            describe("Exact texts (case and outer spaces aside) of memories in `notebook`."),
        ] = None,
        notebook: Annotated[str | None, describe("Where `texts` are matched.")] = None,
        items: Annotated[
            list[dict[str, Any]] | None,
            describe("A batch, all or nothing: [{id, expected_version?, ...changes}]."),
        ] = None,
        kind: Annotated[Kind | None, AS_IN_REMEMBER] = None,
        text: Annotated[str | None, describe("The whole new text.")] = None,
        title: Annotated[Title, AS_IN_REMEMBER] = None,
        why: Annotated[Why, AS_IN_REMEMBER] = None,
        tags: Annotated[Tags, AS_IN_REMEMBER] = None,
        key: Annotated[Key, AS_IN_REMEMBER] = None,
        occurred_at: Annotated[OccurredAt, AS_IN_REMEMBER] = None,
        expires_at: Annotated[ExpiresAt, AS_IN_REMEMBER] = None,
        source: Annotated[Source, AS_IN_REMEMBER] = None,
        anchors: Annotated[Anchors, AS_IN_REMEMBER] = None,
        severity: Annotated[SeverityParam, VALUES_ONLY] = None,
        falsifier: Annotated[Falsifier, AS_IN_REMEMBER] = None,
        check: Annotated[CheckParam, AS_IN_REMEMBER] = None,
        bindings: Annotated[BindingsParam, AS_IN_REMEMBER] = None,
        scope: Annotated[ScopeParam, VALUES_ONLY] = None,
        clear: Annotated[list[Clearable] | None, describe("Fields to empty.")] = None,
        append: Annotated[
            str | None, describe("Added to the end (begin it with a newline for a new line).")
        ] = None,
        replace_from: Annotated[
            str | None, describe("Its first occurrence in the text becomes `replace_to`.")
        ] = None,
        replace_to: Annotated[str | None, describe("See `replace_from`.")] = None,
        remove: Annotated[
            str | None, describe("Its first occurrence is cut from the text.")
        ] = None,
        status: Annotated[
            ReviseStatus | None,
            describe(
                "superseded: a newer truth exists. retracted: never true. active: back from "
                "retired. verified: checked, still true."
            ),
        ] = None,
        feedback: Annotated[
            Feedback | None,
            describe("Mark a recalled memory; no new version. Ranks recall and orient."),
        ] = None,
        note: Annotated[
            str | None,
            describe(
                "Why (any change); kept in history, and as the status note when `status` changes."
            ),
        ] = None,
        redact: Annotated[
            bool, describe("Keep `note` with credentials as [REDACTED:kind] instead of refusing.")
        ] = False,
        because: Because = None,
        move_to: Annotated[
            str | None,
            describe("Another notebook (created if new); into another domain, with `because`."),
        ] = None,
        supersede: Annotated[
            bool, describe("File the result as a new memory; retire this one intact.")
        ] = False,
        superseded_by: Annotated[
            str | None, describe("With status superseded: the active memory replacing it.")
        ] = None,
        claim: Annotated[bool, describe("Make an ownerless memory yours.")] = False,
        override_reason: Annotated[
            str | None, describe("Why you change a memory someone else owns.")
        ] = None,
        override_confirm: Annotated[
            bool, describe("Needed too when that owner is a person.")
        ] = False,
        expected_version: ExpectedVersion = None,
        accept_refusing: Annotated[AcceptRefusing, AS_IN_REMEMBER] = None,
        keep_as_note: Annotated[KeepAsNote, AS_IN_REMEMBER] = False,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRun = False,
    ) -> ReviseAnswer:
        return await self.run(self.service.revise, locals())

    async def revert(
        self,
        id: MemoryId = None,
        version: Annotated[int | None, describe("The version to go back to.")] = None,
        notebook: Annotated[
            str | None, describe("A whole notebook instead (with `as_of`).")
        ] = None,
        as_of: Annotated[str | None, describe(f"The time `notebook` goes back to, {TIME}.")] = None,
        because: Because = None,
        note: Annotated[str | None, describe("Why, kept in history.")] = None,
        expected_version: ExpectedVersion = None,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRun = False,
    ) -> RevertAnswer:
        return await self.run(self.service.revert, locals())

    async def forget(
        self,
        id: Annotated[str | None, describe("The memory to erase.")] = None,
        ids: Annotated[list[str] | None, describe("Several to erase.")] = None,
        version: Annotated[
            int | None, describe("Only this earlier version of `id` (not the current one).")
        ] = None,
        notebook: Annotated[
            str | None,
            describe("An empty notebook to erase; with `field`, only that field's values."),
        ] = None,
        field: Annotated[
            Literal["summary", "name"] | None,
            describe("With `notebook`: erase every value this field had."),
        ] = None,
        because: Annotated[
            str | None,
            describe("Required: why. Kept in the tombstone, so no secret in it."),
        ] = None,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRun = False,
    ) -> ForgetAnswer:
        return await self.run(self.service.forget, locals())

    async def inspect(
        self,
        id: Annotated[str | None, describe("The memory to show.")] = None,
        notebook: Annotated[str | None, describe("Or a notebook, with all its memories.")] = None,
    ) -> InspectAnswer:
        return await self.run(self.service.inspect, locals())

    async def history(
        self,
        id: Annotated[str | None, describe("Events of this memory.")] = None,
        notebook: Annotated[
            str | None, describe("Events of this notebook and its memories.")
        ] = None,
        actor: Annotated[str | None, describe("Only events by this actor, e.g. user:ana.")] = None,
        since: Annotated[str | None, describe(f"Events at or after, {TIME}.")] = None,
        until: Annotated[str | None, describe(f"Events at or before, {TIME}.")] = None,
        limit: Annotated[
            int | None, describe("The latest this many events, 1 to 1000 (100).")
        ] = None,
        diff_from: Annotated[int | None, describe("Compare from this version...")] = None,
        diff_to: Annotated[int | None, describe("...to this one.")] = None,
    ) -> HistoryAnswer:
        return await self.run(self.service.history, locals())

    async def notebook(
        self,
        action: Annotated[NotebookAction, describe("What to do.")],
        name: Annotated[str | None, describe("Its name (edit: the new one).")] = None,
        notebook: Annotated[str | None, describe("The notebook to edit.")] = None,
        summary: Annotated[str | None, describe("What it is about.")] = None,
        domain: Annotated[str | None, describe("Its broad area, e.g. infra.")] = None,
        tags: Annotated[list[str] | None, describe("Its tags (the whole set).")] = None,
        clear: Annotated[list[NotebookClearable] | None, describe("Fields to empty.")] = None,
        redact: Annotated[
            bool,
            describe("Keep `summary` with credentials as [REDACTED:kind]."),
        ] = False,
        from_domain: Annotated[str | None, describe("The domain whose notebooks move.")] = None,
        to_domain: Annotated[str | None, describe("Where they move.")] = None,
        because: Annotated[str | None, describe("Why (required).")] = None,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRun = False,
    ) -> NotebookAnswer:
        given = _given(locals())
        del given["action"]
        call, required, optional = self._notebook_actions()[action]
        for name in sorted(set(given) - required - optional - {"idempotency_key", "dry_run"}):
            takes = ", ".join(sorted(required | optional)) or "no other parameter"
            raise ValidationError(
                f"`{name}` does not go with action {action!r}, which takes {takes}.", field=name
            )
        for name in sorted(required - set(given)):
            raise ValidationError(f"Action {action!r} needs `{name}`.", field=name)
        return await self.run(call, given)

    def _notebook_actions(
        self,
    ) -> dict[str, tuple[Callable[..., NotebookAnswer], set[str], set[str]]]:
        """Per action: the service call, the parameters it needs, and those it may take."""
        service = self.service  # the caller's: the calls below run on a store thread

        def merge(from_domain: str, to_domain: str, **rest: Any) -> NotebookAnswer:
            return service.merge_domains(source=from_domain, target=to_domain, **rest)

        def listing(**_: Any) -> NotebookAnswer:
            return service.notebooks()

        return {
            "list": (listing, set(), set()),
            "create": (
                service.create_notebook,
                {"name"},
                {"summary", "domain", "tags", "redact"},
            ),
            "edit": (
                service.edit_notebook,
                {"notebook"},
                {"name", "summary", "domain", "tags", "clear", "redact"},
            ),
            "merge_domains": (merge, {"from_domain", "to_domain", "because"}, set()),
        }

    async def link(
        self,
        source: Annotated[str, describe("A memory's or a notebook's id.")],
        target: Annotated[str, describe("An id of the same sort, not `source`.")],
        type: Annotated[LinkType, describe(LINK_MEANINGS)],
        remove: Annotated[bool, describe("Take the edge away.")] = False,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRun = False,
    ) -> LinkAnswer:
        return await self.run(self.service.link, locals())

    async def dispute(
        self,
        action: Annotated[DisputeAction, describe("What to do.")],
        ids: Annotated[
            list[str] | None,
            describe("open: the two memories. list: only disputes naming one of these."),
        ] = None,
        dispute: Annotated[str | None, describe("rule, undo: the dispute's id (dp_...).")] = None,
        holds: Annotated[str | None, describe("rule: the memory that holds.")] = None,
        reason: Annotated[
            str | None, describe("Why, in a sentence; required except on list.")
        ] = None,
        evidence: Annotated[
            str | None, describe("rule: what shows it (a file, test, source, measurement).")
        ] = None,
        because: Annotated[
            str | None, describe("rule: required when the losing memory is a rule.")
        ] = None,
        include_closed: Annotated[bool, describe("list: ruled and withdrawn ones too.")] = False,
        limit: Annotated[int | None, describe("list: at most this many, 1 to 200 (20).")] = None,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRun = False,
    ) -> DisputeAnswer:
        return await self.run(self.service.dispute, locals())

    async def doctor(self, dir: ProjectDir = None) -> DoctorAnswer:
        return await self.run(self.service.doctor, locals())

    async def check(self, dir: ProjectDir = None) -> CheckAnswer:
        return await self.run(self.service.check, locals())

    async def orient(
        self,
        notebook: Annotated[str | None, describe("The notebook to brief.")] = None,
        dir: Annotated[str | None, describe("Or a project directory.")] = None,
        budget: Annotated[
            int | None, describe("The brief's size in characters, 500 to 100,000 (8,000).")
        ] = None,
    ) -> Oriented:
        return await self.run(self.service.orient, locals())

    async def guard(
        self,
        command: Annotated[str, describe("The command line, as the agent would run it.")],
        dir: Annotated[
            str | None,
            describe("Where it would run."),
        ] = None,
        notebook: Annotated[str | None, describe("Use this notebook's rules instead.")] = None,
    ) -> GuardAnswer:
        # Not kept for trials (the service's guard keeps nothing): a caller could send any
        # commands, many times, to make a new rule look too broad. Trials count what the
        # pre-command hook saw agents about to run.
        arguments = {"command": command, "dir": dir, "notebook": notebook}
        return await self.run(self.service.guard, arguments)
