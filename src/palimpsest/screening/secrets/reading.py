"""The screening copy: a text as a person sees it, not as its characters are encoded."""

from __future__ import annotations

import html
import re
import unicodedata

from ..secret_rules import LOOKALIKES

# A redaction marker (ours, "[REDACTED]" or "<REDACTED>"): it excuses itself and nothing
# next to it, so the copy leaves it out and screens what stands around it as if joined.
_MARKER = re.compile(r"[\[<](?i:redacted)(?::[A-Za-z0-9_.\-]{0,40})?[\]>]")
# Characters nobody sees: every format character (Cf: soft hyphen, zero-width space and
# joiners, word joiner, BOM, bidi controls, tags) and the blank fillers and selectors.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f"
    "\ufeff\uffa0\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef]"
)
# Accents typed as characters of their own (combining marks): nobody sees them as letters,
# and on a letter with no composed form ("h" + acute) they would split a key in two. Read
# the letter alone. A letter typed composed ("ñ", "é") is one character, and stays.
_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
# Markdown emphasis around a word ("**Password:** x", "*DB password*"): formatting, not
# text. Only one or two stars that open or close a word; "a*b", "****" and "x***" stay.
# (The leading (?=\*) spares the lookbehinds at every other character.)
_EMPHASIS = re.compile(
    r"(?=\*)(?:(?<![^\s(\[>|])\*{1,2}(?=[^\s*])|(?<=[^\s*])\*{1,2}(?![^\s.,;:!?)\]|]))"
)
# An HTML entity: Markdown shows `&quot;` as a quote and `&#95;` as an underscore, and
# text copied from HTML source or exported from a wiki keeps them. Read as what they show.
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_SKIPPED = re.compile(
    f"{_MARKER.pattern}|{_INVISIBLE.pattern}|{_MARKS.pattern}|{_EMPHASIS.pattern}"
    f"|(?P<entity>{_ENTITY.pattern})"
)


_LOOKALIKE = re.compile(f"[{''.join(LOOKALIKES)}]")


def _table_cells(text: str) -> str:
    """`text` with each Markdown table row's bars read as colons, so that its cells read as
    "name: value", like the line they stand for (the same length: no origin needed)."""
    if "|" not in text:
        return text
    lines = text.split("\n")
    return "\n".join(
        line.replace("|", ":") if line.lstrip(" \t").startswith("|") else line for line in lines
    )


def folded(text: str) -> str:
    """`text` with look-alike letters (Cyrillic, Greek, Cherokee, rare Latin) read as the
    Latin letters they imitate, one for one (so the origin of each character stays where it
    was). One search, then a replace per letter present, cost a tenth of `str.translate`,
    which looks each character up in Python."""
    if text.isascii():
        return text
    for lookalike in set(_LOOKALIKE.findall(text)):
        text = text.replace(lookalike, LOOKALIKES[lookalike])
    return text


def screening_copy(text: str) -> tuple[str, list[int] | None]:
    """The text as the gate reads it, and where each of its characters came from.

    Markers, invisible characters, combining accents and Markdown emphasis are left out,
    table bars read as colons and HTML entities as their characters, every character is
    NFKC-normalised (fullwidth "ｇｈｐ＿" reads "ghp_") and look-alike letters read as Latin
    (Cyrillic "АКІА" reads "AKIA"), so copy-paste, editors, chat clients and Markdown cannot hide a
    credential. `origin[i]` is the index in `text` of the character that gave
    `copy[i]`; None when the copy matches the text character for character (plain ASCII
    without a marker: the common case).
    """
    plain = text.isascii() or (
        unicodedata.is_normalized("NFKC", text)
        and not _INVISIBLE.search(text)
        and not _MARKS.search(text)
    )
    if (
        plain
        and not (("[" in text or "<" in text) and _MARKER.search(text))
        and not ("*" in text and _EMPHASIS.search(text))
        and not ("&" in text and _ENTITY.search(text))
    ):
        return _table_cells(folded(text)), None
    out: list[str] = []
    origin: list[int] = []
    pos = 0
    for skipped in [*_SKIPPED.finditer(text), None]:
        end = skipped.start() if skipped else len(text)
        segment = text[pos:end]
        if segment.isascii() or unicodedata.is_normalized("NFKC", segment):
            out.append(segment)
            origin.extend(range(pos, end))
        else:
            for index in range(pos, end):
                normal = unicodedata.normalize("NFKC", text[index])
                out.append(normal)
                origin.extend([index] * len(normal))
        if skipped is not None and skipped["entity"]:
            shown = unicodedata.normalize("NFKC", html.unescape(skipped[0]))
            out.append(shown)  # an unknown name stays as it was written
            origin.extend(
                range(skipped.start(), skipped.end())
                if shown == skipped[0]
                else [skipped.start()] * len(shown)
            )
        pos = skipped.end() if skipped else end
    return _table_cells(folded("".join(out))), origin
