"""A folder of markdown notes: basic-memory's (basicmachines-co/basic-memory), Obsidian-like
notes, or Palimpsest's own markdown export.

A note is optional YAML front matter between `---` fences, then a body. basic-memory's body
holds observations, `- [category] text #tag (context)`, and relations,
`- relation_type [[Target]] (context)`, anywhere in it; a `[[Target]]` elsewhere in the body
is a plain link.

How a note maps (its ref: `id:ID` for a note of ours, `permalink:P` when it has one,
else `path:RELATIVE/PATH.md`):

    title            title (else the file's stem; a note of ours without one has none)
    kind or type     kind, when it names one of ours (a rule or orientation only with its
                     falsifier); otherwise `note`, with the type kept as a tag
    tags             tags (a list, or words separated by commas; a leading # dropped,
                     except in a note of ours)
    occurred_at, created, date
                     occurred_at (the first given), when it is an ISO date or time
    key, why, source, expires_at, anchors, check; severity, falsifier, scope,
    bindings on a rule or orientation
                     the field of the same name
    status, author, notebook, links
                     a note of ours (formats/markdown_out.py): the memory's status, author,
                     notebook (else the folder's, below) and links, `[{type, to: ID}]`
    body             text, blank lines around it dropped (the title if the body is empty)

    observation      a memory titled with the note's title, `part_of` the note: its kind
                     the category when that is a kind of ours (not rule or orientation),
                     else `fact` with the category as a tag; inline #tags are tags too,
                     and the text keeps the (context)          [obs:REF:sha256(...)[:16]]
    relation         a link to the note it names: its type when relation_type is one of
                     ours, else `relates_to`, plus a `fact` "TITLE VERB TARGET (context)"
                     `part_of` the note, so that the verb and context are not lost
                                                                [rel:REF:sha256(...)[:16]]
    [[wiki link]]    a `relates_to` link to the note it names

A link target is found by permalink, then relative path, then title, then file stem (the
first note in path order when several match; case and a `|alias` or `#heading` ignored).
A note's notebook is its folder's relative path (`projects/auth`); notes at the top go to
the caller's notebook. A note of ours (front matter with `id` and `kind`) is its fields and
text only, the text exactly as the export wrote it: nothing is read out of its body. Every
record of a note whose front matter has a string `id` carries it as its `origin` (trimmed,
lower case, with the note's `version`), and so does one without an `id` named as our
export names a memory's file (`m_...md`): the service refuses it where that memory, or
that version, was forgotten.

Reported (`Unmapped`) rather than brought: a link naming no note of the folder; a note
that is not UTF-8, larger than MAX_NOTE_BYTES, not a regular file, whose front matter is
not YAML that `yaml.safe_load` reads (a tag such as `!!python/object` is refused), is not
a mapping, or holds more than MAX_FRONT_MATTER_VALUES values; a note repeating another's id
or permalink; a symbolic link leading out of the folder or in a loop (no link is
followed: one inside it is read at its own place); a front matter value that is not what
its field takes; and, once per key with a count, front matter keys with no place here
(basic-memory's `modified`, `schema`, custom keys; not the state our export writes on a note
of ours, such as `version` and `owner`, as the note is filed anew) and files that are not
`.md`. Hidden files and folders (`.obsidian`, `.git`) are skipped, and so is the index of
our markdown export (front matter `palimpsest: markdown export`). Fenced code is not read for
observations or links.

The folder is read twice, one note at a time: first for the titles, permalinks and paths
that links resolve against, then for the records.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from ..domain.model import KINDS, LINK_TYPES, RULE_KINDS, STATUSES
from .markdown_out import INDEX_MARK
from .mcp_memory import digest, link_type
from .mem0 import KINDS_OF_OURS, MAX_NOTEBOOK, Tally, actor, iso_time, plain_name
from .records import Incoming, IncomingLink, Origin, Record, Records, Unmapped

MAX_NOTE_BYTES = 1_000_000
MAX_FRONT_MATTER_VALUES = 10_000  # keys and values, an alias counted each time it is used

_TIME_KEYS = ("occurred_at", "created", "date")
_STRINGS = ("key", "why", "source")
_RULE_STRINGS = ("falsifier", "severity", "scope")
_USED = frozenset({"title", "type", "kind", "tags", "permalink", "id", "status", "author",
                   "expires_at", "anchors", "check", "bindings", "notebook", "links",
                   *_STRINGS, *_RULE_STRINGS})  # fmt: skip
# What our markdown export writes of a memory's state and nothing here reads back (a note
# is filed anew): known keys, not news to report on a note of ours.
_OURS_NOT_READ = frozenset({"owner", "version", "recorded_at", "status_note", "superseded_by",
                            "verified_at"})  # fmt: skip
_LIST_ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)])\s+(.*)")
_CATEGORY = re.compile(r"\[([^\[\]()]+)\]\s+(.+)")
_TIMESTAMP = re.compile(r"\d{1,3}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?")
_WIKI_LINK = re.compile(r"\[\[([^\[\]]+)\]\]")
_EXPORTED_NAME = re.compile(r"m_[0-9a-z]{20}")  # a memory file of our export, by its name


@dataclass(frozen=True)
class _Note:
    rel: str  # its path in the folder, with `/`
    meta: dict[Any, Any]
    body: str
    body_line: int  # the file's line number of the body's first line

    @property
    def ours(self) -> bool:
        ident = self.meta.get("id")
        return isinstance(ident, str) and bool(ident.strip()) and "kind" in self.meta

    @property
    def ref(self) -> str:
        if self.ours:
            return f"id:{self.meta['id'].strip()}"
        permalink = self.meta.get("permalink")
        if isinstance(permalink, str) and permalink.strip():
            return f"permalink:{permalink.strip()}"
        return f"path:{self.rel}"

    @property
    def origin(self) -> Origin | None:
        """The memory the front matter's `id` names (any note that has one, of ours or
        not), in our ids' shape whatever its case or spacing, and its `version`; without
        an `id`, the memory a file name of our export names (`m_....md`, its front matter
        cut away)."""
        ident = self.meta.get("id")
        if not isinstance(ident, str) or not ident.strip():
            stem = PurePosixPath(self.rel).stem.strip().casefold()
            ident = stem if _EXPORTED_NAME.fullmatch(stem) else None
        if ident is None:
            return None
        version = self.meta.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            version = None
        return Origin(unicodedata.normalize("NFKC", ident).strip().casefold(), version)

    @property
    def title(self) -> str:
        title = self.meta.get("title")
        plain = isinstance(title, str | int | float) and not isinstance(title, bool)
        if plain and str(title).strip():
            return str(title).strip()
        return PurePosixPath(self.rel).stem


@dataclass
class _Index:
    """Where a link's target leads: (ref, title) by permalink, path, title and stem."""

    tables: tuple[dict[str, tuple[str, str]], ...] = field(default_factory=lambda: ({}, {}, {}, {}))

    def add(self, note: _Note) -> None:
        permalink = note.meta.get("permalink")
        path = PurePosixPath(note.rel)
        keys = (
            permalink if isinstance(permalink, str) else None,
            str(path.with_suffix("")),
            note.title,
            path.stem,
        )
        for table, key in zip(self.tables, keys, strict=True):
            if key and key.strip():
                table.setdefault(key.strip().casefold(), (note.ref, note.title))

    def find(self, target: str) -> tuple[str, str] | None:
        name = target.split("|", 1)[0].split("#", 1)[0].strip().casefold()
        for key in (name, name.removesuffix(".md")):
            for table in self.tables:
                if key in table:
                    return table[key]
        return None


def read(path: Path, notebook: str) -> Records:
    """Records for the folder `path`; its top-level notes go to `notebook`."""
    root = path.resolve()
    if not root.is_dir():
        yield Unmapped(path.name, "not a folder of notes")
        return
    rels, reports = _walk(root)
    yield from reports
    index, kept = _Index(), []
    owner: dict[str, str] = {}  # ref -> the note that holds it
    for rel in rels:
        note = _load(root, rel)
        if isinstance(note, Unmapped):
            yield note
        elif all(note.meta.get(k) == v for k, v in INDEX_MARK.items()):
            continue  # the index of our markdown export: it lists notes, it is none
        elif note.ref in owner:
            yield Unmapped(rel, f"this note has the same id or permalink as {owner[note.ref]}")
        else:
            owner[note.ref] = rel
            index.add(note)
            kept.append(rel)
    left_out = Tally("note", "notes")
    for rel in kept:
        note = _load(root, rel)
        if isinstance(note, Unmapped):  # changed since the first reading
            yield note
            continue
        yield from _note(note, _notebook(note, notebook), index, left_out)
    unnamed = "(keys that are not plain words)"
    yield from left_out.reports("a front matter key with no place in Palimpsest", unnamed)


def _walk(root: Path) -> tuple[list[str], list[Unmapped]]:
    """The notes of the folder in path order, and what was skipped that must be said."""
    notes: list[str] = []
    reports: list[Unmapped] = []
    others = Tally("file", "files")

    def unreadable(error: OSError) -> None:
        shown = _relative(Path(error.filename), root) if error.filename else "."
        reports.append(Unmapped(shown, "a folder that cannot be read"))

    for folder, subfolders, files in os.walk(root, onerror=unreadable):
        here = Path(folder)
        subfolders[:] = sorted(
            name for name in subfolders
            if not name.startswith(".") and not _link(here / name, root, reports)
        )  # fmt: skip
        for name in sorted(files):
            if name.startswith(".") or _link(here / name, root, reports):
                continue
            rel = _relative(here / name, root)
            if name.lower().endswith(".md"):
                notes.append(rel)
            else:
                others.add(None, rel)
    reports += others.reports("a file that is not a markdown note (.md)")
    return notes, reports


def _link(path: Path, root: Path, reports: list[Unmapped]) -> bool:
    """True for a symbolic link (never followed); one leading outside or in a loop is
    reported."""
    if not path.is_symlink():
        return False
    try:
        inside = path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a loop of links (RuntimeError before Python 3.13)
        reports.append(Unmapped(_relative(path, root), "a symbolic link in a loop; not followed"))
        return True
    if not inside:
        reason = "a symbolic link leading outside the folder; not followed"
        reports.append(Unmapped(_relative(path, root), reason))
    return True


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _load(root: Path, rel: str) -> _Note | Unmapped:
    raw = _bytes(root / rel, rel)
    if isinstance(raw, Unmapped):
        return raw
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return Unmapped(rel, "this note is not UTF-8 text")
    front, body, body_line = _split(text)
    meta = _front_matter(front, rel)
    if isinstance(meta, Unmapped):
        return meta
    return _Note(rel, meta, body, body_line)


def _bytes(path: Path, rel: str) -> bytes | Unmapped:
    """The file's bytes, opened without following a link and bounded in size."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        handle = os.open(path, flags)
    except OSError:
        return Unmapped(rel, "this note cannot be opened (a link, or no permission)")
    with os.fdopen(handle, "rb") as opened:
        if not stat.S_ISREG(os.fstat(opened.fileno()).st_mode):
            return Unmapped(rel, "not a regular file; not read")
        raw = opened.read(MAX_NOTE_BYTES + 1)
    if len(raw) > MAX_NOTE_BYTES:
        return Unmapped(rel, f"this note is larger than {MAX_NOTE_BYTES} bytes; not read")
    return raw


def _split(text: str) -> tuple[str | None, str, int]:
    """(front matter or None, body, the body's first line number)."""
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return None, text, 1
    for number, line in enumerate(lines[1:], 1):
        if line.rstrip() in ("---", "..."):
            return "\n".join(lines[1:number]), "\n".join(lines[number + 1 :]), number + 2
    return None, text, 1  # no closing fence: no front matter, as python-frontmatter reads it


def _front_matter(front: str | None, rel: str) -> dict[Any, Any] | Unmapped:
    if front is None or not front.strip():
        return {}
    try:
        meta = yaml.safe_load(front)
    except yaml.YAMLError:
        return Unmapped(
            rel,
            "the front matter is not YAML that safe loading reads (a syntax error, or a tag "
            "such as !!python/object, which it refuses); the note is not brought",
        )
    except RecursionError:
        return Unmapped(rel, "the front matter is nested too deeply; the note is not brought")
    except (ValueError, OverflowError, TypeError):  # what YAML's constructors raise
        return Unmapped(
            rel,
            "the front matter holds a value YAML cannot make (such as a date that does not "
            "exist); the note is not brought",
        )
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        return Unmapped(rel, "the front matter is not a mapping of keys to values")
    if not _small(meta):
        return Unmapped(
            rel, f"the front matter holds more than {MAX_FRONT_MATTER_VALUES} values; not read"
        )
    return meta


def _small(value: Any) -> bool:
    """Whether `value` has at most MAX_FRONT_MATTER_VALUES parts, each alias use counted
    (so an alias bomb or a structure holding itself is refused before anything walks it)."""
    pending, count = [value], 0
    while pending:
        part = pending.pop()
        count += 1
        if count > MAX_FRONT_MATTER_VALUES:
            return False
        if isinstance(part, dict):
            pending += [*part.keys(), *part.values()]
        elif isinstance(part, list):
            pending += part
    return True


def _notebook(note: _Note, default: str) -> str:
    """The notebook of a note: the one a note of ours names, else its folder's relative
    path, fit to be a notebook name."""
    named = note.meta.get("notebook")
    if note.ours and isinstance(named, str) and named.strip():
        return named.strip()
    folder = str(PurePosixPath(note.rel).parent)
    if folder == ".":
        return default
    name = "".join("-" if unicodedata.category(c) in ("Cc", "Cf") else c for c in folder)
    name = name.strip() or "-"
    if len(name) > MAX_NOTEBOOK:
        name = f"{name[: MAX_NOTEBOOK - 17].rstrip()}-{digest(folder)}"
    return name


# -- one note ---------------------------------------------------------------------------


def _note(note: _Note, notebook: str, index: _Index, left_out: Tally) -> Iterator[Record]:
    meta, rel = note.meta, note.rel
    untitled = note.ours and "title" not in meta  # of ours: no title made from the file name
    fields: dict[str, Any] = {} if untitled else {"title": note.title}
    reports: list[Unmapped] = []
    fields["kind"], kind_tag = _kind(meta, reports, rel)
    tags = _tags(meta.get("tags"), reports, rel, note.ours)
    tags += [kind_tag] if kind_tag and kind_tag not in tags else []
    if tags:
        fields["tags"] = tags
    fields |= _times(meta, reports, rel, left_out)
    fields |= _passed(meta, fields["kind"], reports, rel)
    status = meta.get("status", "active")
    if status not in STATUSES:
        if note.ours:
            reason = "the status is not one of ours; filed active"
            reports.append(Unmapped(rel, reason, "status"))
        else:  # basic-memory's custom `status: draft`: a key of its own, not ours
            left_out.add("status", rel)
        status = "active"
    author = _author(meta.get("author"), reports, rel)
    known = _USED | (_OURS_NOT_READ if note.ours else frozenset())
    for key in meta:
        if key not in known and key not in _TIME_KEYS:
            left_out.add(plain_name(key), rel)
    fields["text"] = _text(note.body, note.ours) or note.title
    yield Incoming(note.ref, rel, notebook, fields, author, status, note.origin)
    yield from reports
    if note.ours:
        yield from _links_of_ours(note)
    else:
        yield from _body(note, notebook, index)


def _kind(meta: dict[Any, Any], reports: list[Unmapped], rel: str) -> tuple[str, str | None]:
    """(kind, the type kept as a tag when it is no kind of ours)."""
    given = meta.get("kind", meta.get("type"))
    if given is None:
        return "note", None
    if not isinstance(given, str) or not given.strip():
        reports.append(Unmapped(rel, "the type is not a word; filed as a note", "type"))
        return "note", None
    wanted = given.strip().casefold().replace("-", "_")
    kind = next((k for k in KINDS if k == wanted), None)
    if kind in RULE_KINDS and not meta.get("falsifier"):
        kind = None  # a rule needs the observation that would prove it wrong
    if kind is None and "kind" in meta:
        reports.append(Unmapped(rel, "the kind is not one of ours; filed as a note", "kind"))
    return (kind, None) if kind else ("note", given.strip())


def _tags(value: Any, reports: list[Unmapped], rel: str, ours: bool) -> list[str]:
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not all(
        isinstance(t, str | int | float) and not isinstance(t, bool) for t in items
    ):
        reports.append(Unmapped(rel, "the tags are not a list of words; left out", "tags"))
        return []
    # Obsidian's `#tag` is the tag `tag`; a tag of ours is kept as it was written
    cleaned = (str(t).strip() if ours else str(t).strip().lstrip("#").strip() for t in items)
    return list(dict.fromkeys(t for t in cleaned if t))


def _times(
    meta: dict[Any, Any], reports: list[Unmapped], rel: str, left_out: Tally
) -> dict[str, Any]:
    found: dict[str, Any] = {}
    given = [key for key in _TIME_KEYS if meta.get(key) is not None]
    for key in given[1:]:
        left_out.add(key, rel)
    for source, target in ((given[0] if given else None, "occurred_at"),
                           ("expires_at", "expires_at")):  # fmt: skip
        if source is None or meta.get(source) is None:
            continue
        moment = iso_time(meta[source])
        if moment is None:
            reason = "the date is not an ISO date or time; the note comes without it"
            reports.append(Unmapped(rel, reason, target))
        else:
            found[target] = moment
    return found


def _passed(meta: dict[Any, Any], kind: str, reports: list[Unmapped], rel: str) -> dict[str, Any]:
    """Fields of ours given in the front matter as they are (the service validates them)."""
    found: dict[str, Any] = {}
    rule = kind in RULE_KINDS
    shapes: list[tuple[str, Any]] = [(name, str) for name in (*_STRINGS, *_RULE_STRINGS)]
    shapes += [("anchors", list), ("check", dict), ("bindings", dict)]
    for name, shape in shapes:
        value = meta.get(name)
        if value is None:
            continue
        if name in (*_RULE_STRINGS, "bindings") and not rule:
            reports.append(Unmapped(rel, "this field belongs to a rule; left out", name))
        elif shape is str and isinstance(value, int | float) and not isinstance(value, bool):
            found[name] = str(value)
        elif isinstance(value, shape) and (shape is not str or value.strip()):
            found[name] = value
        else:
            reports.append(Unmapped(rel, "the value is not what this field takes", name))
    return found


def _author(value: Any, reports: list[Unmapped], rel: str) -> str | None:
    if value is None:
        return None
    prefix, _, name = value.partition(":") if isinstance(value, str) else ("", "", "")
    made = actor(prefix, name) if prefix in ("user", "agent") else None
    if made is None:
        reason = "the author is not `user:NAME` or `agent:NAME`; filed without one"
        reports.append(Unmapped(rel, reason, "author"))
    return made


def _text(body: str, ours: bool = False) -> str:
    """The body without the blank lines around it; a note of ours exactly as the export
    framed it (a blank line before the text, a newline after), spaces and all."""
    if ours and body.startswith("\n") and body.endswith("\n") and body.strip():
        return body[1:-1]
    lines = body.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines).rstrip()


def _links_of_ours(note: _Note) -> Iterator[Record]:
    """The links a note of ours makes, `links: [{type, to}]` in its front matter."""
    given = note.meta.get("links") or []
    for item in given if isinstance(given, list) else [given]:
        kind = item.get("type") if isinstance(item, dict) else None
        target = item.get("to") if isinstance(item, dict) else None
        if kind in LINK_TYPES and isinstance(target, str) and target.strip():
            yield IncomingLink(note.ref, f"id:{target.strip()}", kind, note.rel)
        else:
            reason = "a link that is not {type: a link type of ours, to: a memory id}; left out"
            yield Unmapped(note.rel, reason, "links")


# -- observations, relations and links ----------------------------------------------------


@dataclass
class _Seen:
    refs: set[str] = field(default_factory=set)
    links: set[tuple[str, str, str]] = field(default_factory=set)


def _body(note: _Note, notebook: str, index: _Index) -> Iterator[Record]:
    seen = _Seen()
    fence: str | None = None
    for offset, line in enumerate(note.body.split("\n")):
        number, stripped = note.body_line + offset, line.strip()
        where = f"{note.rel}:{number}"
        if fence is not None:
            fence = None if stripped.startswith(fence) else fence
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        item = None if stripped.startswith(">") else _LIST_ITEM.fullmatch(line)
        if item is not None:
            relation = _relation(item[1].strip())
            if relation is not None:
                yield from _related(note, notebook, index, seen, where, number, relation)
                continue
            observation = _observation(item[1].strip())
            if observation is not None:
                yield from _observed(note, notebook, seen, where, observation)
        for target in _WIKI_LINK.findall(line):
            found = index.find(target)
            if found is None:
                reason = f"a wiki link on line {number} names a note the folder does not hold"
                yield Unmapped(where, reason)
            elif found[0] != note.ref:
                yield from _linked(seen, note.ref, found[0], "relates_to", where)


def _linked(seen: _Seen, source: str, target: str, kind: str, where: str) -> Iterator[Record]:
    if (source, target, kind) not in seen.links:
        seen.links.add((source, target, kind))
        yield IncomingLink(source, target, kind, where)


@dataclass(frozen=True)
class _Relation:
    verb: str | None
    target: str
    context: str | None


def _relation(content: str) -> _Relation | None:
    """`verb [[Target]] (context)` (basic-memory's explicit relation), or None."""
    start = content.find("[[")
    end = content.find("]]", start + 2) if start != -1 else -1
    if end == -1:
        return None
    before, target = content[:start].strip(), content[start + 2 : end].strip()
    verb: str | None = before or None
    if before[:1] in ("'", '"') and len(before) > 1 and before.endswith(before[0]):
        verb = before[1:-1].strip() or None
    elif any(c.isspace() for c in before) or before.startswith("["):
        return None
    after = content[end + 2 :].strip()
    if not target or (after and not _one_parenthesis(after)):
        return None
    return _Relation(verb, target, after[1:-1].strip() or None if after else None)


def _one_parenthesis(text: str) -> bool:
    """Whether `text` is one balanced `(...)` and nothing more."""
    if not text.startswith("("):
        return False
    depth = 0
    for position, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return position == len(text) - 1
    return False


def _related(
    note: _Note,
    notebook: str,
    index: _Index,
    seen: _Seen,
    where: str,
    number: int,
    relation: _Relation,
) -> Iterator[Record]:
    found = index.find(relation.target)
    if found is None:
        yield Unmapped(
            where, f"the relation on line {number} names a note the folder does not hold"
        )
        return
    target, target_title = found
    plain = link_type(relation.verb) if relation.verb else "relates_to"
    if plain is None or relation.context or target == note.ref:
        verb = relation.verb or "relates to"
        text = f"{note.title} {verb} {target_title}"
        text += f" ({relation.context})" if relation.context else ""
        fact = f"rel:{note.ref}:{digest(verb, target, relation.context or '')}"
        if fact not in seen.refs:
            seen.refs.add(fact)
            fields = {"kind": "fact", "title": note.title, "text": text}
            yield Incoming(fact, where, notebook, fields, origin=note.origin)
            yield IncomingLink(fact, note.ref, "part_of", where)
    if target != note.ref:
        yield from _linked(seen, note.ref, target, plain or "relates_to", where)


@dataclass(frozen=True)
class _Observation:
    category: str | None
    text: str
    context: str | None
    tags: tuple[str, ...]


def _observation(content: str) -> _Observation | None:
    """`[category] text #tag (context)` (basic-memory's observation), or None."""
    if content.startswith(("[ ]", "[x]", "[X]", "[-]")):
        return None  # a task
    # `[text](url)` tested by hand: re.fullmatch(r"\[.*?\]\(.*?\)") is quadratic on a
    # long line of `](`
    whole_link = content.startswith("[") and content.endswith(")") and "](" in content[1:-1]
    if whole_link or re.fullmatch(r"\[\[.*?\]\]", content):
        return None  # a link
    match = _CATEGORY.match(content)
    if match and (_TIMESTAMP.fullmatch(match[1].strip()) or _task_mark(match[1].strip())):
        match = None
    if match is None and not any(p.startswith("#") and len(p) > 1 for p in content.split()):
        return None
    category, rest = (match[1].strip(), match[2].strip()) if match else (None, content)
    context = None
    opening = rest.rfind("(")
    if rest.endswith(")") and opening != -1:
        context, rest = rest[opening + 1 : -1].strip() or None, rest[:opening].strip()
    tags = [t for part in rest.split() if part.startswith("#") for t in part.split("#") if t]
    if not rest:
        return None
    return _Observation(category, rest, context, tuple(dict.fromkeys(tags)))


def _task_mark(category: str) -> bool:
    return len(category) == 1 and (category in "xX" or not category.isalnum())


def _observed(
    note: _Note, notebook: str, seen: _Seen, where: str, observation: _Observation
) -> Iterator[Record]:
    category = observation.category
    wanted = category.casefold().replace("-", "_") if category else None
    kind = next((k for k in KINDS_OF_OURS if k == wanted), None)
    tags = ([category] if category and kind is None else []) + list(observation.tags)
    text = observation.text
    text += f" ({observation.context})" if observation.context else ""
    ref = f"obs:{note.ref}:{digest(category or '', text)}"
    if ref in seen.refs:
        return
    seen.refs.add(ref)
    fields: dict[str, Any] = {"kind": kind or "fact", "title": note.title, "text": text}
    if tags:
        fields["tags"] = list(dict.fromkeys(tags))
    yield Incoming(ref, where, notebook, fields, origin=note.origin)
    yield IncomingLink(ref, note.ref, "part_of", where)
