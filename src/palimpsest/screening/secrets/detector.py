"""The detector's API: every kind of hit in a text, a text read with its wrapped lines
joined, a record read as a whole, and redaction."""

from __future__ import annotations

import re
from collections.abc import Sequence

from . import languages, shapes
from .hits import Finding, Hit, merge
from .languages import labelled_in_other_languages
from .names import named_values
from .reading import screening_copy
from .shapes import aws_secret_near_key_id, private_keys, vendor_tokens
from .structures import structures

# Glued parts make words that were never written, so there only a secret known by its own
# shape counts (a vendor token, a key, a JWT), not one known by the name written before it.
_NAMED_KINDS = frozenset(
    {
        "password-in-prose",
        "password-assignment",
        "cli-password",
        "secret-assignment",
        "high-entropy-secret",
    }
)
# A line break between two characters of a key: a terminal, a mail client or an editor that
# wraps at a fixed width cuts a long key anywhere (blanks a terminal pads the line with go too);
# word processors and chat clients break lines with a vertical tab or a line separator.
_BREAK = re.compile("[\n\r\v\f\u2028\u2029]")
_RUN_BEFORE_BREAK = re.compile(r"([A-Za-z0-9_\-+/=.]{0,16})[ \t]*\r?\Z")
_RUN_AFTER_BREAK = re.compile(r"[A-Za-z0-9_\-+/]{0,16}")


def _wraps(text: str) -> list[tuple[int, int]]:
    """The spans of the line breaks (with blanks before them) inside a run of key characters.

    The run, both sides together, must be as long as the shortest key (16): words that end
    and begin two lines of prose are not read again.
    """
    spans = []
    for m in _BREAK.finditer(text):
        if m[0] == "\r" and text[m.end() : m.end() + 1] == "\n":
            continue  # CRLF: the LF that follows is the break
        head = _RUN_BEFORE_BREAK.search(text, max(0, m.start() - 40), m.start())
        before = len(head[1]) if head else 0
        after = _RUN_AFTER_BREAK.match(text, m.end())
        if head and before and after and after.end() > m.end() and before + len(after[0]) >= 16:
            spans.append((head.end(1), m.end()))
    return spans


def _find(text: str) -> list[Finding]:
    if len(text) < 8:
        return []
    plain = _hits(text)
    # A key found whole on its line is not read again as running on into the next line.
    cut = [h for h in _unwrapped_hits(text) if not any(p.start <= h.start < p.end for p in plain)]
    return merge(plain + cut)


def _unwrapped_hits(text: str) -> list[Hit]:
    """Secrets known by their shape that a line break cuts, read with the breaks left out.

    Only a secret that crosses a break counts (the rest is the plain reading's), and only one
    known by its shape: joined lines make words nobody wrote, like glued parts.
    """
    breaks = _wraps(text)
    if not breaks:
        return []
    pieces: list[str] = []
    origin: list[int] = []
    joints: list[int] = []
    pos = 0
    for start, end in [*breaks, (len(text), len(text))]:
        pieces.append(text[pos:start])
        origin.extend(range(pos, start))
        joints.append(len(origin))
        pos = end
    return [
        Hit(hit.kind, origin[hit.start], origin[hit.end - 1] + 1, hit.rank)
        for hit in _hits("".join(pieces), named=False)
        if hit.kind not in _NAMED_KINDS and any(hit.start < j < hit.end for j in joints)
    ]


def _hits(text: str, *, named: bool = True) -> list[Hit]:
    """Every hit in `text`; without `named`, only secrets known by their shape."""
    lower = text.lower()
    if len(lower) != len(text):  # a few characters lowercase to two: keep offsets aligned
        lower = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    hits = list(private_keys(text))
    vendor = list(vendor_tokens(text))
    hits += vendor
    hits += aws_secret_near_key_id(text, vendor)
    hits += structures(text, lower)
    if named:
        hits += named_values(text, lower)
        hits += labelled_in_other_languages(text, lower)
    return hits


def prepare() -> None:
    """Compile now the patterns the detector otherwise compiles the first time it needs
    them (the vendor tokens', the other languages'), so no screened text waits for them."""
    shapes.prepare()
    languages.prepare()


def find_secrets(text: str) -> list[Finding]:
    """Every credential in `text`, in order, each span covering the whole secret value.

    The text is read as its screening copy (markers out, NFKC, no invisible characters);
    each span is given in `text` itself, covering whatever the copy left out inside it.
    """
    copy, origin = screening_copy(text)
    findings = _find(copy)
    if origin is None or not findings:
        return findings
    spans = [(origin[f.start], origin[f.end - 1] + 1, f.kind) for f in findings]
    merged: list[Finding] = []
    for start, end, kind in spans:  # one original character may give two copy characters
        if merged and start < merged[-1].end:
            merged[-1] = Finding(merged[-1].kind, merged[-1].start, max(end, merged[-1].end))
        else:
            merged.append(Finding(kind, start, end))
    return merged


def find_in_parts(parts: Sequence[str]) -> list[tuple[str, tuple[int, ...]]]:
    """Secrets in a record made of `parts` (its fields, or a text and what is appended).

    Read as lines (a title that names a credential, its value alone in the text), and
    glued where the parts meet (half a key in each): of a glued reading only secrets known
    by their shape that cross a meeting point count. Gluing every meeting point at once
    hides a key that opens a part when the part before ends in a word ("Deploy" + "ghp_..."
    has no word boundary before the key), so with three parts or more the meeting points
    are also glued every other one, the rest read as lines. Each answer is (kind, indexes
    of the parts it touches).
    """
    found: list[tuple[str, tuple[int, ...]]] = []
    meetings = len(parts) - 1
    readings = [[False] * meetings, [True] * meetings]  # glued at each meeting point?
    if meetings > 1:
        readings += [[i % 2 == odd for i in range(meetings)] for odd in (0, 1)]
    for glue in readings:
        glued = any(glue)
        pieces = [p.strip() if glued else p for p in parts]
        starts, pos, text = [], 0, ""
        for index, piece in enumerate(pieces):
            if index:
                joint = "" if glue[index - 1] else "\n"
                text += joint
                pos += len(joint)
            starts.append(pos)
            text += piece
            pos += len(piece)
        for f in find_secrets(text):
            touched = tuple(
                i for i, (a, p) in enumerate(zip(starts, pieces, strict=True))
                if f.start < a + len(p) and a < f.end
            )  # fmt: skip
            if (f.kind, touched) in found:
                continue  # a key cut at a line break: more than one reading finds it
            if not glued or (len(touched) > 1 and f.kind not in _NAMED_KINDS):
                found.append((f.kind, touched))
    return found


def redact(text: str) -> tuple[str, list[str]]:
    """`text` with each credential replaced by ``[REDACTED:kind]``, and the kinds replaced.

    The kinds are listed once per redaction, in text order. Redacting twice changes nothing:
    a marker excuses only itself, so what meets across a redaction is read again.
    """
    kinds: list[str] = []
    for _ in range(4):
        findings = find_secrets(text)
        if not findings:
            break
        parts: list[str] = []
        last = 0
        for finding in findings:
            parts.append(text[last : finding.start])
            parts.append(f"[REDACTED:{finding.kind}]")
            last = finding.end
        parts.append(text[last:])
        text = "".join(parts)
        kinds += [f.kind for f in findings]
    return text, kinds
