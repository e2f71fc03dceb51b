"""What an agent reads about the MCP tools: the server instructions and each tool's description.

These texts are product, not comments. Each one is written so that an agent can succeed on
its first call: the verb and its object first, then when to use it rather than a sibling,
what it changes and what cannot be undone, what comes back, what is refused, and how the
parameters interact where the schema cannot say so. Parameter descriptions live with the
parameters (`mcp_tools`).
"""

from __future__ import annotations

INSTRUCTIONS = """\
Palimpsest is long-term memory that outlives this session: facts, decisions, rules, \
errors, debts and more, kept in notebooks (one per project or topic). Every change is \
recorded with who made it and why, so nothing is lost silently and any change can be \
undone.

When to call what:
- Starting a task: recall a few words about it (with `notebook` set to the project) to \
learn what is already known and which rules bind you there.
- You learned something worth keeping (a decision and its reason, an error and its fix, \
a convention, a shortcut taken): remember it, one idea per memory.
- Something remembered changed or proved wrong: revise it (edit the text, or set \
`status` superseded or retracted with a `note`). To file the replacement as a memory of \
its own, remember it with `supersedes`.
- You checked a memory against its source and it still holds: revise it with `status` \
verified (recall flags memories that were not checked for a while as possibly_stale).
- A secret or personal data got in: forget it. That is the only irreversible tool; \
everything else keeps history.
- inspect reads one memory whole with every version; history says who changed what, \
when and why; revert goes back to an earlier version.

Refusals come back as JSON {"error_class", "message", "field"}; the message says what \
to change. error_class is validation, not_found, conflict, forbidden, retryable (try \
again) or internal.
"""

REMEMBER = """\
File one new memory (a fact, decision, rule, error, ...) in a notebook; the notebook is \
created on first use.

Use it for knowledge that is new. To change a memory that exists, use revise. When the \
new memory replaces older ones, list their ids in `supersedes`: they retire as \
superseded (out of recall, kept in history, reversible) in the same transaction, linked \
to the new one. Keep one idea per memory; put the reason in `why` and the origin in \
`source`.

Returns {id, version, seq, notebook, superseded}. Filing the same text and kind again in \
the same notebook writes nothing and answers with the existing memory: `duplicate_of` \
set, `written` false.

Refused (validation, naming the field): a secret in any field (an API key, token, \
private key, password, a URL with a password: the error names the field and the kind, \
never the value; store where the secret lives instead, such as a vault path or an \
environment variable name); a `rule` or `orientation` without `falsifier`; a \
value over its limit (text: 8,000 characters); a `key` held by another active memory of \
the notebook (the message names that memory: revise it instead); a `supersedes` id that \
is not an active memory; superseding a rule without `because`. `dry_run` checks all of \
this and writes nothing.
"""

RECALL = """\
Search memories by words and filters; returns the best matches first and the standing \
rules of the notebooks those matches come from.

Call it at the start of a task, and before deciding anything that may have been decided \
already. To read one memory in full (every field, versions, links), use inspect.

Without filters it searches every notebook and returns active memories only; \
`include_retired` adds superseded and retracted ones, and `as_of` answers from the state \
recorded at that past time. A memory id or key given as `query` ranks that memory first; \
an empty `query` lists by the filters alone.

Each hit: id, kind, notebook, title, text, tags, key, score, status, version, \
recorded_at, occurred_at, verified_at, possibly_stale (not checked within its kind's \
freshness window: check it against its source, then revise with status verified) and \
expired. Each rule: id, kind, text, severity, scope, check. Read-only.
"""

REVISE = """\
Change existing memories without losing anything: each change makes a new version and \
the previous one stays in history.

Use it when something remembered changed, proved wrong, or was checked. To file a \
replacement as a separate memory, use remember with `supersedes`; to erase content that \
must not stay on disk, forget.

Name the targets one way only: `id`; `ids` (same changes to each); `texts` (exact texts, \
matched ignoring case and surrounding spaces, with `notebook`); or `items`, a batch of \
objects {id, expected_version?, ...changes}, applied all or nothing: if one item is \
refused, none applies and the error gives its index in `item`.

Omitted fields keep their value. A field given is set (`tags` replaces the whole set). \
To empty a field, list its name in `clear`; an empty string clears nothing and is \
refused. Small text edits: `append` adds to the end, `replace_from` with `replace_to` \
replaces the first occurrence, `remove` deletes the first occurrence; none of them \
combines with `text`, which replaces the whole text. `status`: superseded (a newer \
truth exists), retracted (never true), active (bring a retired memory back) or verified \
(checked, still true), with `note` saying why (`redact` true stores the note with each \
credential as [REDACTED:kind], listed in `redacted`, instead of refusing it). `move_to` \
moves memories to another notebook, keeping ids and history. `supersede` (one `id` \
only) files the revised content as a new memory and retires the original intact.

Returns `results`: per memory its id, new version, seq and `changed` fields, or \
`unchanged` true when nothing differed (no event written). `unmatched` lists the \
targets of `ids` or `texts` that did not qualify (no such memory or text, several \
memories share the text, a status that does not allow the change, `replace_from` or \
`remove` not in the text), each with its reason: those are unchanged, and `warnings` \
says so. Fix them and call again.

A memory someone else owns is `forbidden` to change unless you give `override_reason` \
(and `override_confirm` true when the owner is a person), one `id` per call; an override \
corrects tags, dates, expiry or status, while its text, title, why or kind change only \
through `supersede`. `claim` makes an ownerless memory yours.

Refused: a secret in any value or in the edited text (named by field and kind, never \
echoed); weakening a rule or orientation (retiring it, lowering or clearing its \
severity, changing its check, removing a binding, narrowing its scope) without \
`because`; `expected_version` that is not the current version (conflict: someone \
changed it; inspect, then retry); a `key` held by another active memory; setting and \
clearing the same field; `tags` as an empty list (clear it instead); with a single \
`id`, an edit whose `replace_from` or `remove` is not in the text.
"""

REVERT = """\
Set a memory back to what an earlier version of it said, or a whole notebook back to a \
past time. The revert is written as new events, so it can itself be reverted.

Pass `id` with `version` (find versions with inspect or history), or `notebook` with \
`as_of`. Reverting a notebook restores each memory's content and status as of that \
time; memories filed after it are retracted, not deleted.

Returns `results`: per memory its id, new version, seq and `changed` fields, or \
`unchanged` true when it already says that. Refused: a version that does not exist \
(not_found) or was forgotten; a revert that weakens a rule without `because`; a key now \
held by another active memory.
"""

FORGET = """\
Erase memories for good: their text, every earlier version and their search entries are \
scrubbed from the database file. Only a tombstone stays (id, time, actor, reason). This \
cannot be undone.

Only for what must not stay on disk: a secret or credential pasted by mistake, personal \
data, content that must not persist. To mark a memory outdated or wrong, use revise \
with status superseded or retracted instead: that keeps history and can be undone.

`because` is required and is kept in the tombstone, so never repeat the secret in it. \
With `version`, only that earlier version of one memory is scrubbed (a secret pasted \
into version 2 and edited out in version 3); the current version cannot be scrubbed \
that way: revise it first, or forget the whole memory.

With `notebook` and `field` (summary or name), every value that field had is erased \
from the notebook's history (a summary is cleared too; a name stays until renamed). \
With `notebook` alone, an empty notebook is erased whole.

Returns `results` (id or notebook, forgotten, seq) and `scrub_pending`: true until no \
file keeps the bytes (SQLite: another process's open read delays the cleanup; \
PostgreSQL: until `palimpsest scrub` rewrites the tables). Forgetting a forgotten id \
again finishes its pending cleanup (`scrub_finished`). Refused: no `because`; an \
unknown or already forgotten id (not_found); a notebook that still holds memories.
"""

INSPECT = """\
Show one memory whole: every field, every version with its actor, time and operation, \
and its links. Or, with `notebook`, a notebook with all its memories (any status).

Use it to read what recall only lists, to find a version number for revert or forget, \
and just before revising (its `version` is the value for `expected_version`). To search, \
use recall.

Pass exactly one of `id` or `notebook`. A forgotten memory answers with its tombstone \
only. Read-only.
"""

HISTORY = """\
List the events that changed memory: who did what and when, why (`note`), and field by \
field what changed (old and new). Oldest first, the most recent `limit` events.

Filter by `id` (one memory, even a forgotten one), `notebook`, `actor`, `since` and \
`until`, combined. With `id`, `diff_from` and `diff_to` answer instead with the changes \
between those two versions and a line diff of the text.

Use it to explain why a memory says what it says, or what changed since a date; to read \
a memory's versions whole, use inspect. Read-only.
"""

NOTEBOOK = """\
List, create or edit notebooks (the named collections memories live in, one per project \
or topic), or merge one domain into another. `action` picks the operation:

- list: every notebook with its id, name, summary, domain and tags.
- create: `name`, optional `summary`, `domain` and `tags`. remember creates a notebook on \
first use, so create only to describe it upfront. A taken name is a conflict.
- edit: `notebook` (its name or id) and what changes: `name` renames it (the id never \
changes), `summary`, `domain`, `tags` (replaces the whole set); `clear` empties summary, \
domain or tags. Omitted fields keep their value; an edit that changes nothing answers \
`unchanged`.
- merge_domains: every notebook of `from_domain` moves to `to_domain`, with `because` \
(required), one event per notebook.

A secret in any value is refused; with `redact` true, credentials in `summary` are \
stored as [REDACTED:kind] instead and listed in `redacted`. A parameter that the action \
does not take is refused, so nothing is silently ignored.
"""

LINK = """\
Connect two memories, or two notebooks, with a typed, directed edge from `source` to \
`target`; `remove` takes that edge away.

Types: supersedes, contradicts, relates_to, depends_on, derived_from, caused_by, \
part_of. A link is an event in the history of both memories and raises both versions. \
Linking what is already linked answers `unchanged`.

A link retires nothing. To replace a memory, remember the new one with `supersedes` (or \
revise the old one with status superseded).

Refused: a memory linked to a notebook, a thing linked to itself, an id that does not \
exist (not_found), removing a link that is not there (not_found).
"""

DOCTOR = """\
List what needs a person's attention in this memory, each with its fix: secrets stored \
before the gate refused them (in any version, or a notebook's summary or name), with the forget \
that removes each; possibly stale memories (verify or retire them); memories past \
`expires_at` that are still active; memories without an owner.

Use it when asked to check the memory's health, or after importing. It never returns a \
secret's value. It finishes the cleanup a forget left pending where that is cheap \
(SQLite), and lists what still waits (`pending_scrubs`, on PostgreSQL until \
`palimpsest scrub`). Takes no parameters; changes no memory.
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
    "doctor": DOCTOR,
}
