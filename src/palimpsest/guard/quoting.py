"""The spans of a command line's text: where a quote or a substitution ends, what an escape
of `$'...'` stands for, and the scripts `$(...)` and backticks run inside data."""

from __future__ import annotations

import re


class Unparseable(ValueError):
    """The command cannot be read with certainty; the message says why."""


# One escape of `$'...'`: a letter, \xHH, \NNN (octal), \uHHHH, \UHHHHHHHH, \cX.
ANSI_ESCAPE = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|c.|.)", re.DOTALL
)
_ANSI_LETTERS = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
                 "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}  # fmt: skip


def ansi_char(escape: str) -> str:
    head = escape[0]
    if head in "xuU" and len(escape) > 1:
        return chr(min(int(escape[1:], 16), 0x10FFFF))
    if head.isdigit() and head in "01234567":
        return chr(int(escape, 8) & 0xFF)
    if head == "c" and len(escape) == 2:
        return chr(ord(escape[1]) & 0x1F)
    return _ANSI_LETTERS.get(escape, "\\" + escape)


def closing(text: str, start: int, opener: str, closer: str, what: str, depth: int = 1) -> int:
    """The index just past the `closer` that ends what opens before `start` (`depth`
    openers deep), skipping quotes and nested pairs."""
    j = start
    while j < len(text):
        char = text[j]
        if char == "\\":
            j += 2
            continue
        if char in "'\"`":
            end = text.find(char, j + 1) if char == "'" else _quote_end(text, j, char)
            if end < 0:
                break
            j = end + 1
            continue
        if char == closer:
            depth -= 1
            if depth == 0:
                return j + 1
        elif char == opener:
            depth += 1
        j += 1
    raise Unparseable(f"{what} is never closed")


def _quote_end(text: str, start: int, quote: str) -> int:
    j = start + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == quote:
            return j
        j += 1
    return -1


def substitutions(body: str) -> list[str]:
    """The scripts `$(...)` and backticks run inside text that is otherwise data (the body
    of a here-document whose delimiter is not quoted)."""
    found: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\":
            i += 2
        elif body.startswith("$((", i):
            i = closing(body, i + 3, "(", ")", "an arithmetic expansion", depth=2)
        elif body.startswith("$(", i):
            end = closing(body, i + 2, "(", ")", "a $(...) substitution")
            found.append(body[i + 2 : end - 1])
            i = end
        elif body[i] == "`":
            end = _quote_end(body, i, "`")
            if end < 0:
                raise Unparseable("a backtick is never closed")
            found.append(body[i + 1 : end])
            i = end + 1
        else:
            i += 1
    return found
