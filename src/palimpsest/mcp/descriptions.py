"""What an agent reads about the MCP tools: the server instructions and each tool's description.

These texts are product, not comments. Each one is written so that an agent can succeed on
its first call: the verb and its object first, then when to use it rather than a sibling,
what it changes and what cannot be undone, what comes back, what is refused, and how the
parameters interact where the schema cannot say so. Parameter descriptions live with the
parameters (`tools`); what an answer's keys mean, with the tool (the output schemas, derived
from the service's answer types, give each key's name and JSON type only).

An agent pays for every character of the tool list before its first call (a test holds it
to a budget), so nothing is said twice: what several tools share (`idempotency_key`,
`dry_run`, the form of times, refusals, what "retired" and "weakening a rule" mean) is said
once, in the instructions, and what a parameter's description says, the tool's does not
repeat.
"""

from __future__ import annotations

INSTRUCTIONS = """\
Palimpsest is long-term memory that outlives this session: facts, decisions, rules, \
errors and more, kept in notebooks (one per project or topic). Every change is recorded \
with who made it and why; nothing is lost silently, and every change but a forget \
can be undone.

When to call what:
- Starting a task: orient, with `notebook` set to the project (or `dir`), for the brief: \
the rules that bind you there, what is open, what is recent. Then recall the specifics of \
the task, before deciding what may be decided already.
- You learned something worth keeping (a decision and its reason, an error and its fix, \
a convention, a shortcut taken): remember it, one idea per memory.
- Something remembered changed or proved wrong: revise it (edit it, or set `status` \
superseded or retracted with a `note`). A replacement worth its own memory: remember it \
with `supersedes`.
- A memory marked `possibly_stale` was not verified within its kind's window: check it \
against its source; if it holds, revise it with `status` verified.
- A secret or personal data got in: forget it, the only tool that cannot be undone.
- inspect reads one memory whole, with every version; history says who changed what, \
when and why; revert goes back to an earlier version.

Shared by the tools:
- A notebook is named by its name or its id, wherever one is asked for.
- Retired means superseded or retracted: out of recall unless asked for, kept in \
history, and back with revise `status` active.
- Weakening a rule (retiring it, lowering or clearing its severity, changing its check, \
dropping a binding, narrowing its scope) needs `because`, whichever tool does it.
- Times: RFC 3339 (2026-05-01T12:00:00Z) or a date (2026-05-01, midnight UTC); a time \
without an offset is UTC. Answers give times in UTC.
- `idempotency_key` (any write): a string unique to the request. Retrying with the same \
key and the same request returns the first answer (`replayed` true) and writes nothing \
more; the same key with another request is a conflict.
- `dry_run` (any write): check everything, write nothing, and answer with what would \
change (`dry_run` true).
- `expected_version` (revise, revert of one memory): the version you read; if the memory \
moved on since, the write is refused as a conflict.
- `dir` (check, doctor, guard, orient): a project directory, or one in it, whose \
`.palimpsest.toml` names its notebook. Default: the server's working directory (stdio); \
over HTTP, none, or only those configured for your workspace. One that is no directory \
is refused as validation, one this server may not read as forbidden.
- Values from a fixed list (kind, status, type, ...) are read regardless of case, with \
`-` for `_`. A single string where a list is expected is a list of one. An unknown \
parameter is refused.
- A refusal is JSON {"error_class", "message", "field"}: error_class is validation, \
not_found, conflict, forbidden, retryable (try again, after `retry_after` seconds if \
given) or internal; the message says what to change. A refusal changes nothing and \
never repeats a refused value.
- On a replica (a store that follows a server): remember, revise, revert, link, dispute \
and merge answer `queued` and `pending` true; they are written on the server at the next \
sync, and until then recall, inspect and orient list them in `pending`. Other writes are \
made on the server (conflict).
"""

REMEMBER = """\
File one new memory; to change one that exists, use revise. One idea per memory, its \
reason in `why`, its origin in `source`. The same text and kind filed again in the \
notebook writes nothing and answers `duplicate_of`.

The answer may hint, only when found: `possible_contradicts` (with the `sign`: another \
number, name or key value, or a negation), `possible_duplicates`, \
`suggested_connections` (worth a link), `applicable_rules`. Nothing is retired or linked \
unless you do it.

Refused, naming the field: a secret anywhere (store where it lives instead: a vault \
path, a variable's name); a value over its limit; a `key` another active memory holds \
(revise that one).

`items` files many at once: one transaction, answered by \
`results` in order; one refused item refuses all, naming `items[i]`. No `supersedes` in \
items. Batches over 20 get no suggestions.
"""

RECALL = """\
Search memories by words and meaning (a paraphrase finds memories that share no word), \
best first, with the standing rules of the hits' notebooks. Call it for a task's \
specifics, after orient's brief. Only hits above a relevance floor come back: none when no \
memory answers (`note` says so); `near_misses` adds the closest anyway, marked \
`below_floor`.

Each hit gives its `why` and how it matched: `matched` is words, meaning, both, context \
(through a turn beside it in one conversation), id, key, or filters (no query); `words`, \
the query's words it holds; `similarity`, its closeness in meaning (0 to 1).
"""

REVISE = """\
Change memories; each change is a new version, the old one kept in history. Omitted \
fields keep their value; those remember takes (kind, title, why, key, ...) mean what \
remember's schema says.

Targets, one way: `id` (not_found if unknown), `ids` or `texts` (those that do not \
qualify come back in `unmatched`, unchanged), or `items`. An active target whose text, \
kind, key, notebook or status changed carries remember's hints.

A memory someone else owns needs `override_reason`, and then changes only tags, dates, \
expiry or status; to change its content, `supersede`.

Refused: weakening a rule without `because`; a stale `expected_version`; a taken `key`; \
with one `id`, a `replace_from` or `remove` not in the text.
"""

REVERT = """\
Set a memory back to what one of its versions said (`id`, `version`), or a notebook back \
to a past time (`notebook`, `as_of`: memories filed later are retracted). Written as new \
versions, so it can be reverted too.

Refused: a version unknown or forgotten; weakening a rule without `because`; a `key` \
another active memory now holds.
"""

FORGET = """\
Erase for good, leaving a tombstone (id, time, actor, `because`): the text, every \
earlier version and the search entries leave the database files. Cannot be undone. Only \
for what must not stay on disk (a secret, personal data); retire what is outdated or \
wrong with revise, which keeps history.

`scrub_pending` is true while a file still holds the bytes (SQLite: another process \
reads; PostgreSQL: until `palimpsest scrub`); forgetting the id again finishes it.
"""

INSPECT = """\
Show one memory whole: every field, every version (actor, time, operation), its links; \
for a forgotten one, its tombstone. Use it before revising (its `version` is \
`expected_version`) and to pick a version to revert or forget.
"""

HISTORY = """\
List the events that changed memory, oldest first (the latest `limit`): who, when, why \
(`note`) and each field's old and new value. Filters combine. With `id`, `diff_from` and \
`diff_to` compare two versions instead, with a line diff of the text.
"""

NOTEBOOK = """\
List, create or edit notebooks, or merge domains; `action` picks, and a parameter it \
does not take is refused.

- list: every notebook.
- create: `name`, optionally `summary`, `domain`, `tags`. Only to describe one upfront: \
remember creates a notebook on first use.
- edit: `notebook`, and `name` (the id stays), `summary`, `domain`, `tags` or `clear`; \
omitted fields keep their value.
- merge_domains: `from_domain`, `to_domain`, `because`: every notebook of one moves to \
the other.
"""

LINK = """\
Add a typed edge from `source` to `target` (two memories, or two notebooks), or take it \
away with `remove`. Each linked memory gets a new version. A link retires nothing: to \
replace a memory, remember the new one with `supersedes`.
"""

DISPUTE = """\
Mark two contradicting memories as disputed, to settle later: a review queue. Use it \
when you cannot tell which is true; when you can, revise the wrong one (or remember the \
right one with `supersedes`). It confirms a `possible_contradicts` hint.

- open: `ids` (two active memories), `reason`. Both stay in recall, each hit naming the \
other in `disputed_with`, until a ruling.
- list: open disputes, oldest first, with their memories; `more` counts those past \
`limit`.
- rule: `dispute`, `holds`, `reason`, `evidence`: the other memory retires, superseded by \
`holds` (linked).
- undo: `dispute`, `reason`: the loser back as before the ruling, the dispute open again.

Each step is an event on both memories, one version up each; answers its `id`, \
`status` and `results` (id and version per memory). Refused: one memory twice, an \
unknown or retired one; a second open dispute between the same two; ruling one not \
open; undoing one not ruled, or whose loser changed status since.
"""

DOCTOR = """\
List what needs a person: secrets stored before the gate refused them (never their \
value), each with the forget that erases it; possibly stale, expired and ownerless \
memories; open disputes; memories marked noise; forgets whose bytes remain; \
`stale_vectors`, versions recall cannot find by meaning until a reindex. Use it for the \
memory's health, or after an import. A finding's `fix` is the tool call that settles it \
({tool, arguments}; fill in what is in <angle brackets>), or a person's command.

It changes no memory, but finishes pending forgets where it can (SQLite). In a project \
(`dir`) it adds `failing_checks` and `stale_by_evidence` (anchored files changed, checks \
failing).
"""

CHECK = """\
Run the file checks that apply to a project directory: those of its notebook's memories \
and of workspace-wide rules; \
`forbidden` ones are the guard's. Use it before committing, or to see whether the facts \
you rely on still hold.

Paths are relative to the project root. A path that is missing, or resolves (symlinks \
followed) outside the project, fails. A folder's check reads each regular file directly \
in it; files over 16 MiB fail as too large.

Answers `holds` (id, check, files), `fails` (one per file and literal: id, severity, \
check, file, literal, line, reason) and `gating`: failing rules of severity irreversible \
or costly. Refused: no binding above `dir`, or its notebook missing (not_found).
"""


ORIENT = """\
The brief to read before working in a notebook: call it when a task starts, rather than \
guessing what to recall. Within `budget` characters it lists, in order: the rules and \
orientations that bind the notebook (its own and the workspace-wide ones, weightiest \
first), open issues and debts, open disputes touching it, memories waiting for a check \
(possibly stale: verify or revise them), then recent memories ranked by recency and by \
how often they helped (revise's `feedback`).

Neither `notebook` nor `dir`: the whole workspace.

Answers `brief`, the text to read, and its items by section, with their ids. No rule is \
dropped silently: those past the budget are named in `rules_left_out` (inspect them); \
`left_out` counts the other items left out. Refused: an unknown notebook, a budget \
outside 500 to 100,000.
"""

GUARD = """\
Say whether a command you are about to run is refused by a rule: answers `decision` \
allow, deny or ask, the `reason`, and `refused_by` (each refusing rule's id, title, \
matched pattern and own decision). Call it before a command that could destroy or \
publish something; a coding agent's pre-command hook calls it for you.

Rules with a `forbidden` check apply: those of the notebook of `dir`'s project (or \
`notebook`) and the workspace-wide ones; with no project known, only the latter (a \
`note` says so). The command is read as a shell would: chains, pipes, quotes, wrappers \
(sudo, env, timeout, xargs), `bash -c`, `$(...)`, backticks and subshells; options in \
any order and form (`-f` for `--force`). A rule denies; a house_style one, or an \
orientation, asks. What cannot be read, or could match once it runs (`git push $X`), is \
ask. Nothing is written. Refused: an empty command, an unknown `notebook` (not_found).
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
    "check": CHECK,
    "orient": ORIENT,
    "guard": GUARD,
}

# The tools, in the order they are listed (each a method of `tools.PalimpsestTools`). Here,
# beside their words, rather than with the tools: naming them loads no service.
TOOL_NAMES = (
    "remember", "recall", "revise", "revert", "forget", "inspect", "history", "notebook", "link",
    "dispute", "doctor", "check", "orient", "guard",
)  # fmt: skip
