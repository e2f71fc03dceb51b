"""What an agent reads about the MCP tools: the server instructions and each tool's description.

These texts are product, not comments. Each one is written so that an agent can succeed on
its first call: the verb and its object first, then when to use it rather than a sibling,
what it changes and what cannot be undone, what comes back, what is refused, and how the
parameters interact where the schema cannot say so. Parameter descriptions live with the
parameters (`tools`), answer descriptions with the output schemas (`results`).

An agent pays for every character of the tool list before its first call (a test holds it
to a budget), so nothing is said twice: what every write shares (`idempotency_key`,
`dry_run`, the form of times, refusals) is said once, in the instructions.
"""

from __future__ import annotations

INSTRUCTIONS = """\
Palimpsest is long-term memory that outlives this session: facts, decisions, rules, \
errors and more, kept in notebooks (one per project or topic). Every change is recorded \
with who made it and why; nothing is lost silently, and every change but a forget \
can be undone.

When to call what:
- Starting a task: recall a few words about it, with `notebook` set to the project, to \
learn what is known and which rules bind you there.
- You learned something worth keeping (a decision and its reason, an error and its fix, \
a convention, a shortcut taken): remember it, one idea per memory.
- Something remembered changed or proved wrong: revise it (edit it, or set `status` \
superseded or retracted with a `note`). A replacement worth its own memory: remember it \
with `supersedes`.
- You checked a memory against its source and it holds: revise it with `status` verified.
- A secret or personal data got in: forget it, the only tool that cannot be undone.
- inspect reads one memory whole, with every version; history says who changed what, \
when and why; revert goes back to an earlier version.

Shared by the tools:
- Times: RFC 3339 (2026-05-01T12:00:00Z) or a date (2026-05-01, midnight UTC); a time \
without an offset is UTC. Answers give times in UTC.
- `idempotency_key` (any write): a string unique to the request. Retrying with the same \
key and the same request returns the first answer (`replayed` true) and writes nothing \
more; the same key with another request is a conflict.
- `dry_run` (any write): check everything, write nothing, and answer with what would \
change (`dry_run` true).
- Values from a fixed list (kind, status, type, ...) are read regardless of case, with \
`-` for `_`. A single string where a list is expected is a list of one.
- A refusal is JSON {"error_class", "message", "field"}: error_class is validation, \
not_found, conflict, forbidden, retryable (try again) or internal; the message says what \
to change. A refusal changes nothing and never repeats a refused value.
"""

REMEMBER = """\
File one new memory in a notebook (created on first use). To change a memory that \
exists, use revise.

Keep one idea per memory; put the reason in `why` and the origin in `source`. When it \
replaces older memories, list them in `supersedes`: they retire as superseded (out of \
recall, kept in history) in the same step. Filing the same text and kind again in the \
notebook writes nothing and answers `duplicate_of`.

The answer may suggest, a few each and only when found: `possible_contradicts` (with \
the `sign`: another number, name or key value, or a negation), `possible_duplicates`, \
`suggested_connections` (worth a link) and `applicable_rules`. Hints only: nothing is \
retired or linked unless you do it.

Refused, naming the field: a secret anywhere (store where it lives instead: a vault \
path, a variable's name); a rule or orientation without `falsifier`; a value over its \
limit; a `key` another active memory holds (revise that one).
"""

RECALL = """\
Search memories by words, meaning and filters, best first (each hit with its `why` and \
`matched`: words, meaning, both, context, id or key), with the standing rules of the \
notebooks the hits come from. A query may paraphrase: meaning matches memories that share \
no word. Call it when a task starts and before deciding anything that may be decided \
already. Read-only.

Active memories only, unless `include_retired` or `status`; `as_of` answers as things \
stood then. An id or key as `query` puts that memory first; an empty `query` lists by \
the filters. A hit flagged possibly_stale was not verified within its kind's window: \
check it against its source, then revise it with status verified.
"""

REVISE = """\
Change memories; each change is a new version and the old one stays in history.

Targets, one way: `id`; `ids` (same change to each); `texts` (exact, case and outer \
spaces ignored, in `notebook`); or `items`, a batch applied all or nothing. A single \
`id` that matches nothing is not_found; `ids` or `texts` that do not qualify come back \
in `unmatched` with the reason, unchanged.

Omitted fields keep their value; `clear` empties one. The fields remember takes (kind, \
title, why, key, ...) are set as remember's schema describes them. `append`, \
`replace_from`/`replace_to` and `remove` edit the text; `text` replaces it. `status`: \
superseded (a newer truth exists), retracted (never true), active (back from retired), \
verified (checked, still true). A target active after a change of text, kind, key, \
notebook or status carries remember's suggestions.

A memory someone else owns needs `override_reason`, which changes tags, dates, expiry or \
status only; to change its content, `supersede`.

Refused: weakening a rule (retiring it, lowering or clearing severity, changing its \
check, dropping a binding, narrowing scope) without `because`; a stale \
`expected_version` (conflict: inspect, then retry); a taken `key`; with one `id`, a \
`replace_from` or `remove` not in the text.
"""

REVERT = """\
Set a memory back to what one of its versions said (`id`, `version`), or a notebook back \
to a past time (`notebook`, `as_of`: memories filed later are retracted). Written as new \
versions, so it can be reverted too.

Refused: a version that does not exist or was forgotten; weakening a rule without \
`because`; a `key` another active memory now holds.
"""

FORGET = """\
Erase for good, leaving only a tombstone (id, time, actor, `because`): the text, every \
earlier version and the search entries leave the database files. Cannot be undone.

Only for what must not stay on disk: a secret, personal data. For a memory outdated or \
wrong, revise its status: that keeps history.

With `version`, only that earlier version goes (revise the current one first). \
`notebook` with `field`: every value the field had; `notebook` alone: an empty notebook.

`scrub_pending` is true while a file still holds the bytes (SQLite: another process \
reads; PostgreSQL: until `palimpsest scrub`); forgetting the id again finishes it.
"""

INSPECT = """\
Show one memory whole (every field, every version with actor, time and operation, its \
links), or with `notebook` a notebook and all its memories. Use it before revising (its \
`version` is `expected_version`) and to find a version to revert or forget. A forgotten \
memory shows its tombstone. Read-only.
"""

HISTORY = """\
List the events that changed memory, oldest first (the latest `limit`): who, when, why \
(`note`) and each field's old and new value. Filters combine. With `id`, `diff_from` and \
`diff_to` compare two versions instead, with a line diff of the text. Read-only.
"""

NOTEBOOK = """\
List, create or edit notebooks, or merge domains; `action` picks, and a parameter it \
does not take is refused.

- list: every notebook.
- create: `name`; `summary`, `domain`, `tags` optional. Only to describe one upfront: \
remember creates a notebook on first use.
- edit: `notebook`, and `name` (the id stays), `summary`, `domain`, `tags` or `clear`. \
Omitted fields keep their value.
- merge_domains: `from_domain`, `to_domain`, `because`: all notebooks of one move to the \
other.
"""

LINK = """\
Add a typed edge from `source` to `target` (two memories, or two notebooks), or take it \
away with `remove`. Each linked memory gets a new version. A link retires nothing: to \
replace a memory, remember the new one with `supersedes`.
"""

DISPUTE = """\
Mark two memories that contradict each other as disputed, and settle it later: a review \
queue. Use it when you cannot tell which one is true; when you can, revise the wrong one \
(or remember the right one with `supersedes`) instead. A `possible_contradicts` candidate \
from remember or revise is confirmed this way.

- open: `ids` (two active memories), `reason`. Both stay in recall, each hit naming the \
other in `disputed_with`, until a ruling.
- list: the open disputes, oldest first, each with its two memories; `include_closed` adds \
ruled and withdrawn ones, `ids` keeps those naming these memories; `more` counts those past \
`limit`.
- rule: `dispute`, `holds`, `reason`, and `evidence`: the other memory retires as \
superseded by `holds` (linked). A losing rule needs `because`.
- undo: `dispute`, `reason`: the loser back as before the ruling, the dispute open again.

Each step is an event on both memories, each one version up. Answers `id` (the dispute), \
`status`, `results` (id, version, seq per memory); rule adds `holds` and `superseded`; \
list answers `disputes`. Refused: one memory twice, an unknown or retired memory \
(validation); a second open dispute between the same two, ruling a dispute not open, \
undoing one not ruled or whose loser changed status since (conflict). Forgetting a memory \
withdraws its open disputes.
"""

DOCTOR = """\
List what needs a person: secrets stored before the gate refused them (never their \
value), each with the forget that erases it; possibly stale, expired and ownerless \
memories; forgets whose bytes remain; `stale_vectors`, versions recall cannot find by \
meaning until a reindex. Use it for the memory's health, or after an import.

It changes no memory, but it finishes erasing what a forget left pending where it can \
(SQLite), so it is not marked read-only.
"""

GUARD = """\
Say whether a command you are about to run is refused by a rule: answers `decision` \
allow, deny or ask, the `reason`, and `refused_by` (each refusing rule's id, title, the \
pattern it matched, and its own decision). Call it before a command that could destroy or \
publish something; a coding agent's pre-command hook calls it for you (docs/hooks.md).

Rules with a `forbidden` check apply: those of the notebook of `dir`'s project (or \
`notebook`) and the workspace-wide ones. The command is read as a shell would: chains, \
pipes, quotes, wrappers (sudo, env, timeout, xargs), `bash -c`, `$(...)`, backticks and \
subshells; options in any order and form (`-f` for `--force`). A rule denies; a \
house_style one, or an orientation, asks. What cannot be read is ask. No memory \
changes; the command is kept, credentials redacted, to try new checks against. Refused: \
an empty command, a `dir` that is no directory (validation), an unknown `notebook` \
(not_found).
"""

DESCRIPTIONS = {
    "remember": REMEMBER,
    "recall": RECALL,
    "revise": REVISE,
    "revert": REVERT,
    "forget": FORGET,
    "inspect": INSPECT,
    "history": HISTORY,
    "notebook": NOTEBOOK,
    "link": LINK,
    "dispute": DISPUTE,
    "doctor": DOCTOR,
    "guard": GUARD,
}
